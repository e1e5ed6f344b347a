package registry_test

import (
	"context"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
)

// rrSide is binary randomized response at ε = k·0.25 as one direction of
// a PMF on the grid 0.25.
func rrSide(k int) accounting.PmfSide {
	eps := float64(k) * 0.25
	a := math.Exp(eps) / (1 + math.Exp(eps))
	p := make([]float64, 2*k+1)
	p[0], p[2*k] = 1-a, a
	return accounting.PmfSide{LowerLoss: -k, Probs: p}
}

// TestCustomPMFDirections: pld composes both directions of a PMF that is
// not symmetric and reports the worse: remove at ε 0.5 and add at ε 1
// compose 20 times to what the symmetric PMF at ε 1 gives, and a PMF whose
// two directions are equal to what the symmetric one gives.
func TestCustomPMFDirections(t *testing.T) {
	ctx := context.Background()
	eps := func(e accounting.Event) float64 {
		t.Helper()
		a, err := registry.NewAccountant(accounting.KindPLD, registry.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(e, 20); err != nil {
			t.Fatal(err)
		}
		v, err := a.Epsilon(ctx, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	pmf := func(rem, add accounting.PmfSide, sym bool) accounting.Event {
		return accounting.PldPmf{DiscretizationInterval: 0.25, Pessimistic: true, Symmetric: sym, Remove: rem, Add: add}
	}
	sym1, sym2 := eps(pmf(rrSide(2), accounting.PmfSide{}, true)), eps(pmf(rrSide(4), accounting.PmfSide{}, true))
	if both := eps(pmf(rrSide(2), rrSide(2), false)); math.Abs(both-sym1) > 1e-9*sym1 {
		t.Errorf("equal directions: %g, symmetric %g", both, sym1)
	}
	if mixed := eps(pmf(rrSide(2), rrSide(4), false)); math.Abs(mixed-sym2) > 1e-9*sym2 || !(sym2 > sym1) {
		t.Errorf("remove 0.5, add 1: %g, want the symmetric ε 1's %g (ε 0.5's: %g)", mixed, sym2, sym1)
	}
}

// TestCustomCurveNoExtrapolation: rdp uses no order above a curve's
// largest: the Gaussian's curve (σ 2) given up to α = 3 only, composed 10
// times, bounds ε at δ = 1e-10 by its largest order, where the conversion
// of Canonne, Kamath and Steinke (Prop. 12) gives 10·3/8 + log(2/3) −
// (log 1e-10 + log 3)/2 = 14.308154 (the curve decreases up to there);
// the curve up to α = 256 gives 11.5645 (at α = 6).
func TestCustomCurveNoExtrapolation(t *testing.T) {
	ctx := context.Background()
	eps := func(orders []float64) float64 {
		t.Helper()
		rdp := make([]float64, len(orders))
		for i, a := range orders {
			rdp[i] = a / 8
		}
		a, err := registry.NewAccountant(accounting.KindRDP, registry.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(accounting.RdpCurve{Orders: orders, RDP: rdp}, 10); err != nil {
			t.Fatal(err)
		}
		v, err := a.Epsilon(ctx, 1e-10)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	short := eps([]float64{1.5, 2, 2.5, 3})
	long := eps([]float64{1.5, 2, 2.5, 3, 4, 6, 8, 12, 16, 32, 64, 256})
	at3 := 10*3.0/8 + math.Log(2.0/3) - (math.Log(1e-10)+math.Log(3))/2
	if short < at3*(1-1e-12) || short > at3*(1+1e-9) {
		t.Errorf("ε up to α 3: %.9g, want %.9g (α = 3)", short, at3)
	}
	if long < 11.5644 || long > 11.5646 {
		t.Errorf("ε up to α 256: %.9g, want 11.5645", long)
	}
}
