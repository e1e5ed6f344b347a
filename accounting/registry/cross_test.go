package registry_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
)

// epsOf composes e into a fresh method of kind k and returns ε(δ), and for a
// BoundsReporter also the certified lower bound (else lower = ε).
func epsOf(t *testing.T, k accounting.Kind, e accounting.Event, delta float64) (lower, upper float64) {
	t.Helper()
	m, err := registry.New(k, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compose(e, 1); err != nil {
		t.Fatalf("%s: Compose: %v", k, err)
	}
	if b, ok := m.(accounting.BoundsReporter); ok {
		lo, hi, err := b.EpsilonBounds(t.Context(), delta)
		if err != nil {
			t.Fatalf("%s: EpsilonBounds(%g): %v", k, delta, err)
		}
		return lo, hi
	}
	v, err := m.Epsilon(t.Context(), delta)
	if err != nil {
		t.Fatalf("%s: Epsilon(%g): %v", k, delta, err)
	}
	return v, v
}

// TestCrossAccountantOrdering checks, exactly (no slack), on seeded random
// DP-SGD settings, the ordering that soundness and construction imply:
// pld lower ≤ pld upper ≤ rdp ≤ ma. rdp ≤ ma because the improved
// conversion of Canonne, Kamath and Steinke (2020) is never worse than
// Abadi et al.'s tail bound on the same moments and orders; pld upper ≤ rdp
// because pld takes the minimum with its own rdp bound where that is
// smaller. Both once failed by about 1e-12 relative. Monotonicity is
// in the conformance suite (accounting/accountingtest).
func TestCrossAccountantOrdering(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11))
	n := 30
	if testing.Short() {
		n = 10
	}
	for i := 0; i < n; i++ {
		sigma := math.Exp(rng.Float64()*math.Log(20/0.5)) * 0.5 // [0.5, 20]
		q := math.Exp(rng.Float64() * math.Log(1e-4))           // [1e-4, 1]
		steps := 1 + rng.IntN(10000)
		delta := math.Pow(10, -3-9*rng.Float64()) // [1e-12, 1e-3]
		e := accounting.SubsampledGaussian(sigma, q, steps)
		where := fmt.Sprintf("σ=%.17g q=%.17g T=%d δ=%.17g", sigma, q, steps, delta)
		lo, hi := epsOf(t, accounting.KindPLD, e, delta)
		_, rdp := epsOf(t, accounting.KindRDP, e, delta)
		_, ma := epsOf(t, accounting.KindMA, e, delta)
		if !(lo <= hi && hi <= rdp && rdp <= ma) {
			t.Errorf("%s: want pld lower %.17g ≤ pld upper %.17g ≤ rdp %.17g ≤ ma %.17g", where, lo, hi, rdp, ma)
		}
	}
}
