package pld

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/moments"
	"github.com/dpcalc/dpcalc/internal/testenv"
)

// step returns count steps of σ sampled at q (q = 1: unsampled).
func step(sigma, q float64) accounting.Event {
	if q == 1 {
		return gauss(sigma)
	}
	return sampled(q, gauss(sigma))
}

// checkAnswer fails unless the bounds at δ and at ε = 1 are well formed:
// no NaN, lower ≤ upper, ε ≥ 0, δ in [0, 1] and Delta(1) > 0.
func checkAnswer(t *testing.T, a *Accountant, delta float64) (lo, up float64) {
	t.Helper()
	lo, up, err := a.EpsilonBounds(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(lo) || math.IsNaN(up) || lo < 0 || lo > up {
		t.Fatalf("EpsilonBounds(%g) = [%g, %g]", delta, lo, up)
	}
	if e, err := a.Epsilon(t.Context(), delta); err != nil || e != up {
		t.Errorf("Epsilon(%g) = %g, %v; EpsilonBounds upper %g", delta, e, err, up)
	}
	dlo, dup, err := a.DeltaBounds(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(dlo) || math.IsNaN(dup) || dlo < 0 || dlo > dup || dup > 1 || dup == 0 {
		t.Fatalf("DeltaBounds(1) = [%g, %g]", dlo, dup)
	}
	if d, err := a.Delta(t.Context(), up); !math.IsInf(up, 1) && (err != nil || !(d <= delta)) {
		t.Errorf("Delta(Epsilon(%g) = %g) = %g, %v", delta, up, d, err)
	}
	return lo, up
}

// TestPLDTinySigma: σ just above accounting.SigmaFloor at q = 1 and q < 1.
// Every answer is a finite ε with a loss, or +Inf; never 0 (a step with
// loss 1/(2σ²) ~ 1e300 is not free). The composed σ of T Gaussians,
// (Σ n/σ²)^{−1/2}, can fall below the floor even when each σ is above it:
// σ = 1e-149, T = 1e12 overflowed Σ n/σ² and reported ε = 0 (the closed
// form's σ became 0), as σ = 7e-155 at T = 1 did before the floor.
func TestPLDTinySigma(t *testing.T) {
	for _, c := range []struct {
		sigma, q float64
		steps    int
	}{
		{7e-155, 1, 1}, // below the floor: unbounded
		{1.3e-150, 1, 1},
		{1e-149, 1, 1},
		{1e-149, 1, 1e12},
		{1.3e-150, 1, 1e6},
		{1e-140, 1, 1e12},
		{1e-120, 1, 1},
		{1e-100, 1, 1000},
		{1.3e-150, 0.01, 1000},
		{1e-140, 0.5, 1},
		{1e-120, 0.01, 1000},
		{1e-100, 0.01, 1},
		{1e-100, 0.999, 1e12},
		{1e-160, 0.01, 1000}, // the issue's > 300 s case: unbounded
	} {
		t.Run(fmt.Sprintf("σ=%g,q=%g,T=%d", c.sigma, c.q, c.steps), func(t *testing.T) {
			a := accountantFor(t, self(step(c.sigma, c.q), c.steps), Options{})
			for _, delta := range []float64{1e-5, 1e-300} {
				lo, up := checkAnswer(t, a, delta)
				// ε(δ) ≥ 1/(2σ²) at q = 1; at q < 1 the loss is
				// 1/(2σ²) + log q + … with probability about q.
				if !(up >= 0.25/(c.sigma*c.sigma)) {
					t.Errorf("δ=%g: ε in [%g, %g]; the loss is 1/(2σ²) = %g", delta, lo, up, 0.5/(c.sigma*c.sigma))
				}
			}
		})
	}
}

// TestPLDHugeSigma: σ up to and beyond accounting.SigmaCeiling (where
// Normalize clamps it), q = 1 and q < 1, T from 1 to 1e12. σ = 1e308 used to
// panic (makeslice: cap out of range) on the FFT path.
func TestPLDHugeSigma(t *testing.T) {
	sigmas := []float64{1e100, accounting.SigmaCeiling, 1e308}
	qs := []float64{1, 0.5, 0.01, 1e-9}
	steps := []int{1, 1e6, 1e12}
	if !testenv.Long() {
		sigmas, steps = sigmas[1:], []int{1, 1e12}
	}
	for _, sigma := range sigmas {
		for _, q := range qs {
			for _, n := range steps {
				t.Run(fmt.Sprintf("σ=%g,q=%g,T=%d", sigma, q, n), func(t *testing.T) {
					a := accountantFor(t, self(step(sigma, q), n), Options{})
					_, up := checkAnswer(t, a, 1e-5)
					// At σ ≥ 1e100 a step's loss is below 1e-99: ε(1e-5) of 1e12
					// steps is RDP's floor (0.0194) at most.
					if !(up < 0.02) {
						t.Errorf("ε = %g", up)
					}
				})
			}
		}
	}
}

// TestPLDEpsilonIsBoundsUpper: Epsilon returns EpsilonBounds' upper bound
// exactly, on a fresh accountant and after any other query. EpsilonBounds
// used to refine the grid and Epsilon not, so `epochs --sigma 0.3 --q 0.01
// --eps 100` stopped at 1910 steps (Epsilon(1911) = 100.024) while
// EpsilonBounds gave 99.775 for 1911 steps; and at σ = 3e7, q = 1e-9,
// T = 1e9 Epsilon said 1.5e-4 while EpsilonBounds fell back to RDP's
// 0.0194 when its lower discretisation did not fit.
func TestPLDEpsilonIsBoundsUpper(t *testing.T) {
	const delta = 1e-5
	fresh := func(sigma, q float64, n int) *Accountant {
		return accountantFor(t, self(step(sigma, q), n), Options{})
	}
	eps := func(sigma, q float64, n int) float64 {
		e, err := fresh(sigma, q, n).Epsilon(t.Context(), delta)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		sigma, q float64
		steps    int
	}{{0.3, 0.01, 1911}, {3e7, 1e-9, 1e9}, {1e6, 1e-12, 1e8}, {1.1, 0.01, 10000}} {
		e := eps(c.sigma, c.q, c.steps)
		a := fresh(c.sigma, c.q, c.steps)
		_, up, err := a.EpsilonBounds(t.Context(), delta)
		if err != nil {
			t.Fatal(err)
		}
		// Queries at other δ first must not change the answer.
		b := fresh(c.sigma, c.q, c.steps)
		for _, d := range []float64{1e-3, 1e-8} {
			if _, _, err := b.EpsilonBounds(t.Context(), d); err != nil {
				t.Fatal(err)
			}
		}
		e2, _ := b.Epsilon(t.Context(), delta)
		e3, _ := a.Epsilon(t.Context(), delta)
		if e != up || e2 != up || e3 != up {
			t.Errorf("σ=%g q=%g T=%d: Epsilon fresh %.17g, after other δ %.17g, after EpsilonBounds %.17g; EpsilonBounds upper %.17g",
				c.sigma, c.q, c.steps, e, e2, e3, up)
		}
	}
	// The largest T with Epsilon(T) ≤ 100 at σ = 0.3, q = 0.01.
	if e := eps(0.3, 0.01, 1911); !(e <= 100) {
		t.Errorf("Epsilon(1911 steps) = %g > 100", e)
	}
	n := 1911
	for eps(0.3, 0.01, n+1) <= 100 {
		n++
	}
	if e, e1 := eps(0.3, 0.01, n), eps(0.3, 0.01, n+1); !(e <= 100 && e1 > 100) {
		t.Errorf("T = %d: ε = %g, T+1: %g", n, e, e1)
	}
	t.Logf("largest T with ε ≤ 100: %d", n)

	// σ = 1e6, q = 1e-12, budget ε = 1e-9: `epochs` showed ε = 0.0194 for
	// the T its search found. The largest T with Epsilon(T) ≤ 1e-9, found
	// by doubling and bisection, must show (EpsilonBounds) an ε within the
	// budget, and T+1 must exceed it.
	const budget = 1e-9
	ok := func(n int) bool { return eps(1e6, 1e-12, n) <= budget }
	// Since rdp's KL shortcut (ε = 0 where δ ≥ √(1 − e^−KL)), the upper end
	// stays 0 here up to the 2^40 steps pld composes: then that is the
	// largest T, and only its shown ε is checked.
	lo, hi := 1, 2
	for hi <= maxSteps && ok(hi) {
		lo, hi = hi, 2*hi
	}
	if hi > maxSteps && ok(maxSteps) {
		lo, hi = maxSteps, maxSteps
	}
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	_, shown, err := fresh(1e6, 1e-12, lo).EpsilonBounds(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	if !(shown <= budget) || lo < maxSteps && ok(lo+1) {
		t.Errorf("T = %d: shown ε = %g (budget %g), Epsilon(T+1) = %g", lo, shown, budget, eps(1e6, 1e-12, lo+1))
	}
	t.Logf("σ=1e6 q=1e-12: largest T with ε ≤ 1e-9: %d (ε = %g)", lo, shown)
}

// TestPLDUpperBelowRDP: the upper bounds are min(PLD, RDP): never above
// moments.RDP's value for the same steps, to the bit (the RDP value used to
// be stepped up by 1e-12 relative to make the round trip hold), while
// Delta(Epsilon(δ)) ≤ δ still holds exactly.
func TestPLDUpperBelowRDP(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 5))
	n := testenv.Size(8, 24)
	ctx := t.Context()
	for i := 0; i < n; i++ {
		sigma := 0.3 + 10*rng.Float64()
		q := math.Pow(10, -4*rng.Float64())
		if i%5 == 0 {
			q = 1
		}
		steps := 1 + rng.IntN(2000)
		delta := math.Pow(10, -3-27*rng.Float64())
		ev := self(step(sigma, q), steps)
		a := accountantFor(t, ev, Options{})
		rdp, err := moments.NewRDP(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := rdp.Compose(ev, 1); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("σ=%.17g q=%.17g T=%d δ=%.17g", sigma, q, steps, delta)
		e, err := a.Epsilon(ctx, delta)
		if err != nil {
			t.Fatal(err)
		}
		re, err := rdp.Epsilon(ctx, delta)
		if err != nil {
			t.Fatal(err)
		}
		if !(e <= re) {
			t.Errorf("%s: pld ε %.17g > rdp ε %.17g", name, e, re)
		}
		if d, err := a.Delta(ctx, e); err != nil || !(d <= delta) {
			t.Errorf("%s: Delta(Epsilon) = %.17g, %v; want ≤ δ", name, d, err)
		}
		d, err := a.Delta(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if rd, _ := rdp.Delta(ctx, 1); !(d <= rd) {
			t.Errorf("%s: pld δ(1) %.17g > rdp δ(1) %.17g", name, d, rd)
		}
	}
}

// TestPLDDeltaNeverZero: a Gaussian step is never pure DP, so Delta at a
// finite ε is at least the smallest float64 (`delta --sigma 1e6 --q 1
// --steps 1 --eps 1e4` gave 0 from the other accountants; the FFT path gave
// 0 as soon as ε exceeded the window), and no bound is NaN (the audit case
// σ = 6.55749e-10, q = 0.448916, δ = 6.3571e-159 had a NaN lower bound).
func TestPLDDeltaNeverZero(t *testing.T) {
	for _, c := range []struct {
		sigma, q float64
		steps    int
		eps      float64
	}{
		{1e6, 1, 1, 1e4},
		{1, 1, 1, 1e4},
		{2, 0.5, 10, 1e4},
		{0.8, 0.01, 100, 500},
		{6.55749e-10, 0.448916, 1, 1},
		{6.55749e-10, 0.448916, 1, 1e300},
	} {
		a := accountantFor(t, self(step(c.sigma, c.q), c.steps), Options{})
		lo, up, err := a.DeltaBounds(t.Context(), c.eps)
		if err != nil {
			t.Fatal(err)
		}
		if !(up > 0) || math.IsNaN(lo) || lo > up {
			t.Errorf("σ=%g q=%g T=%d: DeltaBounds(%g) = [%g, %g]", c.sigma, c.q, c.steps, c.eps, lo, up)
		}
		elo, eup, err := a.EpsilonBounds(t.Context(), 6.3571e-159)
		if err != nil || math.IsNaN(elo) || math.IsNaN(eup) || elo > eup {
			t.Errorf("σ=%g q=%g T=%d: EpsilonBounds(6.3571e-159) = [%g, %g], %v", c.sigma, c.q, c.steps, elo, eup, err)
		}
	}
	// An empty accountant releases nothing: δ = 0 is exact.
	a, _ := New(Options{})
	if d, err := a.Delta(t.Context(), 1); err != nil || d != 0 {
		t.Errorf("empty: Delta(1) = %g, %v", d, err)
	}
}

// TestPLDImpossibleGrid: a user grid width that cannot hold the composition
// (far too fine, far too coarse, subnormal) is a *ParamError naming
// GridWidth from every query, never a panic, a hang or a huge allocation;
// widths that work give well-formed bounds.
func TestPLDImpossibleGrid(t *testing.T) {
	for _, h := range []float64{5e-324, 1e-300, 1e-12, 1e-7, 1e3, 1e300, math.MaxFloat64} {
		for _, c := range []struct {
			sigma, q float64
			steps    int
		}{{1, 0.01, 1000}, {1, 1, 10}, {1e-100, 0.5, 1}, {1e100, 0.5, 1e12}, {0.1, 0.9, 1e9}} {
			name := fmt.Sprintf("h=%g σ=%g q=%g T=%d", h, c.sigma, c.q, c.steps)
			a := accountantFor(t, self(step(c.sigma, c.q), c.steps), Options{GridWidth: h})
			check := func(what string, err error, vals ...float64) {
				if err != nil {
					var pe *accounting.ParamError
					if !errors.As(err, &pe) || pe.Name != "GridWidth" {
						t.Errorf("%s: %s: err = %v, want a ParamError naming GridWidth", name, what, err)
					}
					return
				}
				for _, v := range vals {
					if math.IsNaN(v) || v < 0 {
						t.Errorf("%s: %s = %v", name, what, vals)
					}
				}
			}
			lo, up, err := a.EpsilonBounds(t.Context(), 1e-5)
			check("EpsilonBounds", err, lo, up, up-lo)
			d, err := a.Delta(t.Context(), 1)
			check("Delta", err, d, 1-d)
			b, _ := New(Options{GridWidth: h})
			cv, err := b.EpsilonCurve(t.Context(), step(c.sigma, c.q), []int{1, 100}, 1e-5)
			check("EpsilonCurve", err, cv...)
		}
	}
}
