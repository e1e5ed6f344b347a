package pld

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestPLDLargeEpsilon is the regression test for ε beyond ~700 on the FFT
// path: there e^ε overflows and the masses times e^{−loss} underflow to 0,
// and the ε search used to return the left end of a grid cell whose bound
// was still above δ (σ = 0.03 gave an "upper bound" of 695 for a true
// ε = 696.78; σ = 0.02 gave 1455 for 1462.3). The upper bound must not be
// below the closed form.
func TestPLDLargeEpsilon(t *testing.T) {
	noClosedForm = true
	defer func() { noClosedForm = false }()
	for _, sigma := range []float64{0.05, 0.03, 0.025, 0.02} {
		t.Run(fmt.Sprint(sigma), func(t *testing.T) {
			a := accountantFor(t, accounting.Gaussian{NoiseMultiplier: sigma}, Options{})
			up, err := a.Epsilon(t.Context(), 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			_, up2, err := a.EpsilonBounds(t.Context(), 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			lo, _ := closedEpsilon(sigma, 1e-5)
			if up < lo || up2 < lo {
				t.Errorf("upper bounds %.10g, %.10g below the closed form %.10g", up, up2, lo)
			}
		})
	}
}

// TestPLDLargeLossMonotone is the regression test for losses beyond ~700
// in the hockey-stick sums: e^{−loss} was subnormal there, its recurrence
// rounded it up by large factors, and the upper δ(ε) dropped to 0 around
// ε = 708 before rising again, so ε came out at ~700 (σ = 0.598, q =
// 0.0785, δ = 5.3e-8, T = 30768: 707.6 from the curve against a certified
// lower bound of 915). The upper δ must be non-increasing in ε, and the
// curve's upper bound at least the pointwise lower bound.
func TestPLDLargeLossMonotone(t *testing.T) {
	const sigma, q, delta, steps = 0.598, 0.0785, 5.3e-8, 30768
	a := accountantFor(t, accounting.SelfComposed{Event: curveStep(sigma, q), Count: steps}, Options{})
	if _, err := a.Epsilon(t.Context(), delta); err != nil {
		t.Fatal(err)
	}
	for d := range a.res0(t).dirs {
		c, err := a.res0(t).get(t.Context(), d, true, 0)
		if err != nil {
			t.Fatal(err)
		}
		prev := math.Inf(1)
		for eps := 600.0; eps < 1000; eps += 0.25 {
			v := c.delta(eps, true)
			if v > prev {
				t.Fatalf("direction %d: upper δ(%g) = %g > δ(%g) = %g", d, eps, v, eps-0.25, prev)
			}
			prev = v
		}
	}
	lo, _, err := a.EpsilonBounds(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(Options{})
	curve, err := b.EpsilonCurve(t.Context(), curveStep(sigma, q), []int{steps / 2, steps}, delta)
	if err != nil {
		t.Fatal(err)
	}
	if curve[1] < lo {
		t.Errorf("curve ε = %g below the certified lower bound %g", curve[1], lo)
	}
}
