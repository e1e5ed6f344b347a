package pld

import (
	"strconv"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// laplaceAccountant returns a pld accountant holding steps Laplace steps of
// scale b, Poisson-sampled at q (q = 1: unsampled).
func laplaceAccountant(t *testing.T, b, q float64, steps int) *Accountant {
	t.Helper()
	var e accounting.Event = accounting.Laplace{NoiseMultiplier: b}
	if q < 1 {
		e = accounting.PoissonSampled{SamplingRate: q, Event: e}
	}
	return accountantFor(t, accounting.SelfComposed{Event: e, Count: steps}, Options{})
}

// TestLaplaceReferences checks the Laplace pair against
// testdata/pld/laplace_ref.csv (gen_laplace.py): one step exactly (mpmath,
// both orders), several steps against dp_accounting 0.6.0's pessimistic
// PLD at a 1e-5 grid, which must lie in our bracket (up to its own
// discretisation, 1e-4 relative) and at most 0.1% below our upper bound.
func TestLaplaceReferences(t *testing.T) {
	rows := testref.CSV(t, "pld/laplace_ref.csv")[1:]
	if len(rows) != 8 {
		t.Fatalf("%d rows, want 8", len(rows))
	}
	for _, r := range rows {
		b, _ := strconv.ParseFloat(r[1], 64)
		q, _ := strconv.ParseFloat(r[2], 64)
		steps, _ := strconv.Atoi(r[3])
		delta, _ := strconv.ParseFloat(r[4], 64)
		want, _ := strconv.ParseFloat(r[5], 64)
		a := laplaceAccountant(t, b, q, steps)
		lo, up, err := a.EpsilonBounds(t.Context(), delta)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s b %g q %g T %d δ %g: [%.8g, %.8g], reference %.8g", r[0], b, q, steps, delta, lo, up, want)
		switch r[0] {
		case "exact":
			if lo > want || up < want || up-lo > 0.005*up {
				t.Errorf("b %g q %g δ %g: [%.10g, %.10g], exact %.10g (want inside, ≤ 0.5%% wide)", b, q, delta, lo, up, want)
			}
		case "dp_accounting":
			if lo > want || up < want*(1-1e-4) || up > want*(1+1e-3) || up-lo > 0.005*up {
				t.Errorf("b %g q %g T %d δ %g: [%.10g, %.10g], dp_accounting %.10g", b, q, steps, delta, lo, up, want)
			}
		}
		if d, err := a.Delta(t.Context(), up); err != nil || d > delta {
			t.Errorf("Delta(%g) = %g, %v; want ≤ %g", up, d, err, delta)
		}
	}
}

// TestLaplacePure: at δ = 0 Laplace steps alone are pure DP with ε the sum
// of the steps' largest losses, log(1 + q(e^{1/b} − 1)) each (Balle,
// Barthe, Gaboardi 2018); δ is 0 from there on; a Gaussian step makes
// ε(0) infinite.
func TestLaplacePure(t *testing.T) {
	a := laplaceAccountant(t, 2, 0.1, 50)
	e, err := a.Epsilon(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	exact := 50 * pairsOf(t, sampled(0.1, accounting.Laplace{NoiseMultiplier: 2}), accounting.AddRemove).MaxLoss
	if e < exact || e > exact*(1+1e-11) {
		t.Errorf("ε(0) = %.15g, want %.15g rounded up", e, exact)
	}
	if d, err := a.Delta(t.Context(), e); err != nil || d != 0 {
		t.Errorf("δ(ε(0)) = %g, %v; want 0", d, err)
	}
	if err := a.Compose(accounting.Gaussian{NoiseMultiplier: 1}, 1); err != nil {
		t.Fatal(err)
	}
	if e, err := a.Epsilon(t.Context(), 0); err != nil || e < 1e308 {
		t.Errorf("with a Gaussian step ε(0) = %g, %v; want +Inf", e, err)
	}
}

// TestLaplaceGaussianSameKey: a Gaussian and a Laplace step with the same
// noise and rate are two kinds of step, composed in one fixed order
// whatever the order of Compose.
func TestLaplaceGaussianSameKey(t *testing.T) {
	g := accounting.PoissonSampled{SamplingRate: 0.05, Event: accounting.Gaussian{NoiseMultiplier: 1.5}}
	l := accounting.PoissonSampled{SamplingRate: 0.05, Event: accounting.Laplace{NoiseMultiplier: 1.5}}
	a := accountantFor(t, accounting.Composed{Events: []accounting.Event{accounting.SelfComposed{Event: g, Count: 100}, accounting.SelfComposed{Event: l, Count: 50}}}, Options{})
	b := accountantFor(t, accounting.Composed{Events: []accounting.Event{accounting.SelfComposed{Event: l, Count: 50}, accounting.SelfComposed{Event: g, Count: 100}}}, Options{})
	la, ua, err := a.EpsilonBounds(t.Context(), 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	lb, ub, err := b.EpsilonBounds(t.Context(), 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if la != lb || ua != ub || !(la > 0) || ua-la > 0.005*ua {
		t.Errorf("[%v, %v] and [%v, %v]: want the same bracket", la, ua, lb, ub)
	}
}
