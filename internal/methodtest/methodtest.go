// Package methodtest holds checks shared by the tests of several accounting
// methods.
package methodtest

import (
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
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
