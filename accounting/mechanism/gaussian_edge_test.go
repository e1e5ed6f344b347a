package mechanism

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// edgeSigmas and edgeRates span the float64 range, the plan's floors and
// ceiling included.
var (
	edgeSigmas = []float64{5e-324, 1e-160, accounting.SigmaFloor, 1e-100, 0.005, 0.3, 4, 1e6, 0x1p33,
		accounting.SigmaCeiling, 6e307, 1e308, math.MaxFloat64}
	edgeRates = []float64{5e-324, accounting.RateFloor, 1e-12, 0.01, 0.999, 1}
)

// TestLogMomentsEdges: GaussianLogMoments answers every finite σ > 0, q ∈ (0, 1]
// and λ ≥ 1 without panicking (σ from about 6e307 used to panic with
// "makeslice: cap out of range": the partition width 3σ and range 9σ
// overflowed), never with NaN, and with an upper bound that is positive
// (q > 0: the step is not free) and not below the exact binomial log E2 at
// integer orders.
func TestLogMomentsEdges(t *testing.T) {
	t.Parallel()
	lambdas := []float64{1, 2.5, 32, 256, 1e5, 1e300}
	for _, s := range edgeSigmas {
		for _, q := range edgeRates {
			ms, err := GaussianLogMoments(s, q, lambdas)
			if err != nil {
				t.Fatalf("σ=%g q=%g: %v", s, q, err)
			}
			for _, m := range ms {
				name := fmt.Sprintf("σ=%g q=%g λ=%g", s, q, m.Lambda)
				if math.IsNaN(m.Alpha) || math.IsNaN(m.AbsError) || !(m.AbsError >= 0) || !(m.Upper() > 0) {
					t.Errorf("%s: %+v", name, m)
					continue
				}
				if m.Lambda == math.Trunc(m.Lambda) && m.Lambda <= 256 {
					if b := logMomentBinomial(s, q, int(m.Lambda)); !(m.Upper() >= b) {
						t.Errorf("%s: upper α %g below the binomial log E2 %g", name, m.Upper(), b)
					}
				}
			}
		}
	}
}

// TestLogMomentsClosedFormBound: where α is bounded in closed form (tiny α,
// huge σ), the bracket holds the exact integer-order values, and at the
// switch the integrator and the bound agree about α's size.
func TestLogMomentsClosedFormBound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ sigma, q float64 }{{1, 1e-150}, {4, 1e-140}, {1e9, 1e-150}, {0x1p33, 0.01}, {1e100, 0.5}} {
		ms, err := GaussianLogMoments(c.sigma, c.q, []float64{2, 3, 2.5})
		if err != nil {
			t.Fatal(err)
		}
		e2, e3 := logMomentBinomial(c.sigma, c.q, 2), logMomentBinomial(c.sigma, c.q, 3)
		// log E1 ≤ qλ(λ+1)/(2σ²) may dominate, so only the lower ends and
		// the upper bounds are pinned.
		for _, k := range []struct {
			m      GaussianMoment
			lo, hi float64
		}{{ms[0], e2, e2}, {ms[1], e3, e3}, {ms[2], e2, e3}} {
			if low := k.m.Alpha - k.m.AbsError; !(low <= k.lo) {
				t.Errorf("σ=%g q=%g λ=%g: lower end %g above log E2 %g", c.sigma, c.q, k.m.Lambda, low, k.lo)
			}
			e1 := c.q * k.m.Lambda * (k.m.Lambda + 1) / 2 / c.sigma / c.sigma
			if up := k.m.Upper(); !(up >= k.hi) || up > math.Max(e1, k.hi)*(1+1e-9)+1e-320 {
				t.Errorf("σ=%g q=%g λ=%g: upper %g, want in [%g, max(%g, %g)]", c.sigma, c.q, k.m.Lambda, up, k.hi, e1, k.hi)
			}
		}
	}
}

// TestLogMomentsCanceled: a done context stops the Gaussian's moments
// computation, integrated or in closed form, with an error wrapping
// ctx.Err().
func TestLogMomentsCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	orders := []float64{1, 1.5, 2, 4, 8, 16, 32, 64, 128, 256}
	if _, err := logMoments(ctx, 4, 0.01, orders); !errors.Is(err, context.Canceled) {
		t.Errorf("logMoments on a canceled context: err = %v", err)
	}
	if _, err := logMoments(ctx, 1e9, 1e-150, orders); !errors.Is(err, context.Canceled) {
		t.Errorf("logMoments (closed form) on a canceled context: err = %v", err)
	}
}
