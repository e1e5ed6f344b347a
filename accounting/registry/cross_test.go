package registry

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCrossAccountantOrdering checks, on seeded random parameters in the
// common DP-SGD regime, the ordering that soundness and tightness imply:
// pld lower ≤ pld upper ≤ rdp ≤ ma (the improved RDP conversion is never
// worse than Abadi's tail bound on the same moments, and the PLD upper bound
// is tighter than RDP on the default order grid), and monotonicity of every
// sound accountant's ε in σ, q and T.
func TestCrossAccountantOrdering(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11))
	n := 20
	if testing.Short() {
		n = 10
	}
	eps := func(k Kind, sigma, q float64, steps int, delta float64) (float64, float64) {
		acc, err := New(k, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := acc.Compose(SubsampledGaussian(sigma, q, steps), 1); err != nil {
			t.Fatal(err)
		}
		if b, ok := acc.(BoundsReporter); ok {
			lo, hi, err := b.EpsilonBounds(delta)
			if err != nil {
				t.Fatal(err)
			}
			return lo, hi
		}
		e, err := acc.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		return e, e
	}
	for i := 0; i < n; i++ {
		sigma := math.Exp(rng.Float64()*math.Log(20/0.7)) * 0.7 // [0.7, 20]
		q := math.Exp(rng.Float64() * math.Log(1e-3))           // [1e-3, 1]
		steps := 1 + rng.IntN(5000)
		delta := math.Pow(10, -3-7*rng.Float64()) // [1e-10, 1e-3]
		lo, hi := eps(KindPLD, sigma, q, steps, delta)
		_, rdp := eps(KindRDP, sigma, q, steps, delta)
		_, ma := eps(KindMA, sigma, q, steps, delta)
		if !(lo <= hi && hi <= rdp*(1+1e-9) && rdp <= ma*(1+1e-9)) {
			t.Errorf("σ=%g q=%g T=%d δ=%g: want pld lower %g ≤ pld upper %g ≤ rdp %g ≤ ma %g",
				sigma, q, steps, delta, lo, hi, rdp, ma)
		}
		for _, k := range []Kind{KindMA, KindRDP, KindPLD, KindAC} {
			_, e0 := eps(k, sigma, q, steps, delta)
			_, eSigma := eps(k, sigma*1.3, q, steps, delta)
			_, eQ := eps(k, sigma, math.Min(1, q*1.5), steps, delta)
			_, eT := eps(k, sigma, q, steps*2, delta)
			// Grid-based accountants may wiggle by their resolution; 1e-9
			// relative for the order-minimising ones, 1e-3 for pld.
			tol := 1e-9
			if k == KindPLD {
				tol = 1e-3
			}
			if eSigma > e0*(1+tol) || eQ < e0*(1-tol) || eT < e0*(1-tol) {
				t.Errorf("%s σ=%g q=%g T=%d δ=%g: ε=%g; σ×1.3→%g (want ≤), q×1.5→%g (want ≥), T×2→%g (want ≥)",
					k, sigma, q, steps, delta, e0, eSigma, eQ, eT)
			}
		}
	}
}
