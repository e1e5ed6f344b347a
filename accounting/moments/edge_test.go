package moments

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/methodtest"
)

// edgeMomentsAccountants are MA and RDP on DefaultOrders.
func edgeMomentsAccountants(t *testing.T) []momentsAccountant {
	t.Helper()
	var out []momentsAccountant
	for _, k := range momentsKinds {
		out = append(out, k.make(nil))
	}
	return out
}

// TestMomentsAccountantEdges: ma and rdp answer T steps of
// PoissonSampled{q, Gaussian{σ}} at the edges of σ, q and T (up to 10¹²)
// with no panic, no NaN, ε > 0 at tiny δ and δ(ε) ∈ (0, 1]; σ from about
// 6e307 panicked on a3c3c5f.
func TestMomentsAccountantEdges(t *testing.T) {
	t.Parallel()
	for _, k := range momentsKinds {
		methodtest.Edges(t, k.name, func() accounting.Method { return k.make(nil) })
	}
}

// TestMomentsDeltaNeverZero is the reproduction `delta --sigma 1e6 --q 1
// --steps 1 --eps 1e4`, which gave δ = 0 from ma and rdp: exp(α − λε)
// underflows, and a Gaussian mechanism is never pure DP, so δ rounds up to
// the smallest positive float64.
func TestMomentsDeltaNeverZero(t *testing.T) {
	t.Parallel()
	for _, a := range edgeMomentsAccountants(t) {
		if err := a.Compose(accounting.SubsampledGaussian(1e6, 1, 1), 1); err != nil {
			t.Fatal(err)
		}
		d, err := a.Delta(t.Context(), 1e4)
		if err != nil || d != math.SmallestNonzeroFloat64 {
			t.Errorf("%s: δ(1e4) = %g, %v; want 5e-324", a.Kind(), d, err)
		}
	}
}

// TestRDPNotAboveMA: on the same ledger rdp's ε and δ are never above ma's,
// bit for bit ("rdp ≤ ma fails by 1e-12 relative in random sweeps"). The
// rows are where the conversion's rounding allowance exceeded its gain
// over the tail bound before RDP took the smaller of both (ε around 1e15;
// the first two are from such a sweep); then a seeded random sweep of
// compositions of up to three kinds of subsampled Gaussian steps.
func TestRDPNotAboveMA(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	check := func(name string, e accounting.Event, orders []float64, delta float64) {
		t.Helper()
		ma, rdp := must(NewMA(orders)), must(NewRDP(orders))
		if err := ma.Compose(e, 1); err != nil {
			t.Fatal(err)
		}
		if err := rdp.Compose(e, 1); err != nil {
			t.Fatal(err)
		}
		em, err1 := ma.Epsilon(ctx, delta)
		er, err2 := rdp.Epsilon(ctx, delta)
		// δ at ma's ε(δ): both near delta, where rounding decides.
		dm, err3 := ma.Delta(ctx, em)
		dr, err4 := rdp.Delta(ctx, em)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !(er <= em) || !(dr <= dm) {
			t.Errorf("%s δ=%g: rdp (ε, δ(ε_ma)) = (%.17g, %.17g) above ma (%.17g, %.17g)", name, delta, er, dr, em, dm)
		}
	}
	for _, c := range []struct {
		sigma, q float64
		steps    int
		orders   []float64
		delta    float64
	}{
		{0.053498314015496526, 0.045990035751291236, 735271527878, []float64{3.059877794449968}, 4.3305349596432653e-193},
		{0.013733985847917523, 0.00667370305275626, 208563828636, nil, 1.142262845466594e-65},
		{0.05, 0.05, 1e12, []float64{3}, 1e-100},
		{0.02, 0.01, 1e12, nil, 1e-10},
		{0.5, 1, 1e15, []float64{2}, 1e-300},
	} {
		check(fmt.Sprintf("σ=%g q=%g T=%d orders=%v", c.sigma, c.q, c.steps, c.orders),
			accounting.SubsampledGaussian(c.sigma, c.q, c.steps), c.orders, c.delta)
	}
	rng := rand.New(rand.NewPCG(10, 4))
	logU := func(lo, hi float64) float64 { return math.Exp(math.Log(lo) + rng.Float64()*math.Log(hi/lo)) }
	for i := 0; i < 200; i++ {
		orders := DefaultOrders
		if rng.IntN(3) == 0 {
			orders = []float64{1 + 3*rng.Float64()}
		}
		var events []accounting.Event
		for k := 1 + rng.IntN(3); k > 0; k-- {
			events = append(events, accounting.SubsampledGaussian(logU(0.3, 1e4), logU(1e-6, 1), int(logU(1, 1e12))))
		}
		check(fmt.Sprintf("%#v orders %v", events, orders), accounting.Composed{Events: events}, orders, logU(1e-300, 0.9))
	}
}

// TestMomentsCanceled: a done context stops the moments computation (a
// fresh (σ, q) has to be integrated) with an error wrapping ctx.Err(); the
// accountant stays usable.
func TestMomentsCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, a := range edgeMomentsAccountants(t) {
		if err := a.Compose(accounting.SubsampledGaussian(1.3, 0.02, 100), 1); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Epsilon(ctx, 1e-5); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Epsilon on a canceled context: err = %v", a.Kind(), err)
		}
		if _, err := a.Delta(ctx, 1); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Delta on a canceled context: err = %v", a.Kind(), err)
		}
		if e, err := a.Epsilon(t.Context(), 1e-5); err != nil || !(e > 0) {
			t.Errorf("%s: Epsilon after a canceled call = %g, %v", a.Kind(), e, err)
		}
	}
}
