package calibrate

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
)

// TestEpsilonCurvePLD: every value of EpsilonCurve under pld is exactly the
// Epsilon of a fresh accountant holding that many steps (and so exactly what
// the CLI's eps prints), inside pld's certified interval, and the curve is
// non-decreasing. The σ = 0.3 case is where pld's shared-grid curve sat
// 0.25% above Epsilon (100.024 against 99.775 at T = 1911).
func TestEpsilonCurvePLD(t *testing.T) {
	pld := func() (accounting.Method, error) { return registry.New(accounting.KindPLD, registry.Options{}) }
	for _, tc := range []struct {
		sigma, q, delta float64
		steps           []int
	}{
		{1.1, 0.02, 1e-6, []int{1, 5, 50, 50, 400, 1500}},
		{0.3, 0.01, 1e-5, []int{1000, 1911}},
	} {
		curve, err := EpsilonCurve(t.Context(), pld, tc.sigma, tc.q, tc.steps, tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		step := accounting.PoissonSampled{SamplingRate: tc.q, Event: accounting.Gaussian{NoiseMultiplier: tc.sigma}}
		for i, s := range tc.steps {
			if i > 0 && curve[i] < curve[i-1] {
				t.Errorf("σ=%g: decreasing at T=%d: %g < %g", tc.sigma, s, curve[i], curve[i-1])
			}
			a, _ := pld()
			if err := a.Compose(step, s); err != nil {
				t.Fatal(err)
			}
			e, err := a.Epsilon(t.Context(), tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			lo, up, err := a.(accounting.BoundsReporter).EpsilonBounds(t.Context(), tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			if curve[i] != e || e != up || !(lo <= e) {
				t.Errorf("σ=%g T=%d: curve ε = %.17g, Epsilon %.17g, bounds [%.17g, %.17g]; want curve = Epsilon = upper", tc.sigma, s, curve[i], e, lo, up)
			}
		}
	}
}

// TestEpsilonCurvePLDBadSteps: unsorted or non-positive steps are errors.
func TestEpsilonCurvePLDBadSteps(t *testing.T) {
	pld := func() (accounting.Method, error) { return registry.New(accounting.KindPLD, registry.Options{}) }
	for _, steps := range [][]int{{3, 2}, {0, 4}, {-5}} {
		if got, err := EpsilonCurve(t.Context(), pld, 2, 0.01, steps, 1e-5); err == nil {
			t.Errorf("steps %v: got %v, want an error", steps, got)
		}
	}
}
