package pld

import (
	"context"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestSumStatAgainstGrid checks the sum statistic's lower bounds against
// pld's certified brackets where those are tight. One step: the sum is the
// output itself and the likelihood ratio is monotone in it, so the best
// threshold is the optimal test and the bound meets the bracket. Many
// steps: the bound stays below the upper end (sound) and is a real bound.
func TestSumStatAgainstGrid(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		sigma, q float64
		steps    int
		eps      float64
		minFrac  float64 // the sum bound on δ(eps) is at least this share of the bracket's lower end
	}{
		{1, 0.5, 1, 1, 0.999},
		{2, 0.01, 1000, 0.5, 0.3},
		{4, 0.001, 100000, 0.05, 0.3},
	} {
		a, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(accounting.SubsampledGaussian(c.sigma, c.q, c.steps), 1); err != nil {
			t.Fatal(err)
		}
		dl, du, _, err := a.deltaBounds(ctx, c.eps)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := pairsOf(t, sampled(c.q, gauss(c.sigma)), accounting.AddRemove).Lower(c.steps)
		if !ok {
			t.Fatalf("%+v: no sum statistic", c)
		}
		d, err := s.DeltaLower(ctx, c.eps)
		if err != nil {
			t.Fatal(err)
		}
		el, eu, _, err := a.epsilonBounds(ctx, dl)
		if err != nil {
			t.Fatal(err)
		}
		e, err := s.EpsilonLower(ctx, dl)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v: δ(ε) grid [%g, %g], sum %g; ε(%g) grid [%g, %g], sum %g", c, dl, du, d, dl, el, eu, e)
		if d > du || e > eu {
			t.Errorf("%+v: sum bounds δ %g, ε %g above the certified upper ends %g, %g", c, d, e, du, eu)
		}
		if d < c.minFrac*dl {
			t.Errorf("%+v: sum bound on δ %g below %g of the grid's lower end %g", c, d, c.minFrac, dl)
		}
	}
}

// TestTinyQLowerBound: σ 4, q 1e-8, T 1e9 at δ 1e-15. The grid's lower
// distributions round each step's loss (spread about 1e-9) down by up to a
// grid width, and the lower end was 0; the sum statistic gives a real one.
func TestTinyQLowerBound(t *testing.T) {
	if testing.Short() {
		t.Skip("composes 1e9 steps")
	}
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose(accounting.SubsampledGaussian(4, 1e-8, 1000000000), 1); err != nil {
		t.Fatal(err)
	}
	lo, up, err := a.EpsilonBounds(context.Background(), 1e-15)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[%g, %g]", lo, up)
	if !(lo > 0.15*up && lo <= up) {
		t.Errorf("ε(1e-15) in [%g, %g]: want a lower end above 0.15 of the upper", lo, up)
	}
}
