// Package methodtest holds checks shared by the tests of several accounting
// methods.
package methodtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testenv"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// CountLinearity checks that Compose(e, k), Compose(SelfComposed{e, k}, 1),
// k × Compose(e, 1) and Compose(Composed{e, …, e}, 1) give the same
// Epsilon(delta) and Delta(eps), to relative tolerance tol, for every event
// and every k.
func CountLinearity(t *testing.T, name string, newMethod func() accounting.Method, events []accounting.Event, ks []int, delta, eps, tol float64) {
	t.Helper()
	ctx := t.Context()
	for _, e := range events {
		for _, k := range ks {
			ways := make([]accounting.Method, 4)
			for i := range ways {
				ways[i] = newMethod()
			}
			many := make([]accounting.Event, k)
			for i := range many {
				many[i] = e
			}
			errs := []error{
				ways[0].Compose(e, k),
				ways[1].Compose(accounting.SelfComposed{Event: e, Count: k}, 1),
				nil,
				ways[3].Compose(accounting.Composed{Events: many}, 1),
			}
			for i := 0; i < k; i++ {
				if err := ways[2].Compose(e, 1); err != nil {
					errs[2] = err
				}
			}
			for i, err := range errs {
				if err != nil {
					t.Fatalf("%s %#v k=%d way %d: %v", name, e, k, i, err)
				}
			}
			e0, err0 := ways[0].Epsilon(ctx, delta)
			d0, err1 := ways[0].Delta(ctx, eps)
			if err0 != nil || err1 != nil {
				t.Fatalf("%s %#v k=%d: %v, %v", name, e, k, err0, err1)
			}
			for i, w := range ways[1:] {
				ei, _ := w.Epsilon(ctx, delta)
				di, _ := w.Delta(ctx, eps)
				if !(testref.Near(ei, e0, tol) || math.IsInf(ei, 1) && math.IsInf(e0, 1)) || !testref.Near(di, d0, tol) {
					t.Errorf("%s %#v k=%d way %d: (ε, δ) = (%g, %g), want (%g, %g)", name, e, k, i+1, ei, di, e0, d0)
				}
			}
		}
	}
}

// EdgeSigmas, EdgeRates and EdgeSteps span the float64 range and the
// boundary table of accounting.Normalize.
var (
	EdgeSigmas = []float64{0, 5e-324, 1e-160, accounting.SigmaFloor, 1e-100, 0.005, 4, 1e6,
		accounting.SigmaCeiling, 1e308, math.MaxFloat64}
	EdgeRates = []float64{5e-324, accounting.RateFloor, 1e-12, 0.01, 1}
	EdgeSteps = []int{1, 1_000_000, 1_000_000_000_000}
)

// Edges composes steps repetitions of PoissonSampled{q, Gaussian{σ}} for
// every σ, q and steps of the edge tables on a fresh method and checks
// that Epsilon and Delta answer without error or NaN, that ε > 0 at
// δ ≤ 1e-300 (a Gaussian step is private: ε = 0 would need δ at least its
// total variation), and that δ(ε) ∈ (0, 1] at every finite ε (a Gaussian
// step is never pure DP). Below accounting.SigmaFloor (σ = 0 included)
// every method must agree on the boundary table: ε = +Inf, δ = 1. The
// default run checks half of the table (every σ, q and steps, each with
// half of the others); the long test step (internal/testenv) all of it.
func Edges(t *testing.T, name string, newMethod func() accounting.Method) {
	t.Helper()
	ctx := t.Context()
	for i, s := range EdgeSigmas {
		for j, q := range EdgeRates {
			for k, steps := range EdgeSteps {
				if !testenv.Long() && (i+j+k)%2 != 0 {
					continue
				}
				m := newMethod()
				at := fmt.Sprintf("%s σ=%g q=%g T=%d", name, s, q, steps)
				if err := m.Compose(accounting.SubsampledGaussian(s, q, steps), 1); err != nil {
					t.Fatalf("%s: %v", at, err)
				}
				unbounded := s < accounting.SigmaFloor
				for _, d := range []float64{5e-324, 1e-300, 1e-5, 0.5} {
					e, err := m.Epsilon(ctx, d)
					if err != nil || math.IsNaN(e) || e < 0 || (d <= 1e-300 && !(e > 0)) || (unbounded && !math.IsInf(e, 1)) {
						t.Errorf("%s: ε(%g) = %g, %v", at, d, e, err)
					}
				}
				for _, e := range []float64{0, 1, 1e4} {
					d, err := m.Delta(ctx, e)
					if err != nil || !(d > 0 && d <= 1) || (unbounded && d != 1) {
						t.Errorf("%s: δ(%g) = %g, %v; want in (0, 1]", at, e, d, err)
					}
				}
			}
		}
	}
}
