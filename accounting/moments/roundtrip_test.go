package moments

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testenv"
)

// TestRoundTripExact: Delta(Epsilon(δ)) ≤ δ holds exactly for MA and RDP,
// on seeded random settings and where the log moments are so large (σ near
// SigmaFloor) that Delta's rounding allowance exceeds log(1/δ); there both
// used to return an ε whose δ was 1. RDP ≤ MA stays exact.
func TestRoundTripExact(t *testing.T) {
	type setting struct {
		sigma, q float64
		steps    int
		delta    float64
	}
	cases := []setting{
		{1.3e-150, 0.01, 1000, 1e-5},
		{1.3e-150, 0.01, 1000, 1e-300},
		{1e-140, 1, 1e12, 1e-5},
		{0.05, 0.05, 1e12, 1e-10},
	}
	rng := rand.New(rand.NewPCG(10, 10))
	n := testenv.Size(60, 300)
	for range n {
		cases = append(cases, setting{
			sigma: math.Exp(rng.Float64()*12 - 4), // 0.02 .. 3e3
			q:     math.Exp(-rng.Float64() * 16),  // 1e-7 .. 1
			steps: 1 + rng.IntN(1e6),
			delta: math.Exp(-rng.Float64() * 600),
		})
	}
	for _, c := range cases {
		e := accounting.SubsampledGaussian(c.sigma, c.q, c.steps)
		ma, _ := NewMA(nil)
		rdp, _ := NewRDP(nil)
		for _, m := range []accounting.Method{ma, rdp} {
			if err := m.Compose(e, 1); err != nil {
				t.Fatal(err)
			}
		}
		em, err := ma.Epsilon(t.Context(), c.delta)
		if err != nil {
			t.Fatal(err)
		}
		er, err := rdp.Epsilon(t.Context(), c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if er > em {
			t.Errorf("%+v: rdp ε %.17g > ma ε %.17g", c, er, em)
		}
		for _, p := range []struct {
			name string
			m    accounting.Method
			eps  float64
		}{{"ma", ma, em}, {"rdp", rdp, er}} {
			d, err := p.m.Delta(t.Context(), p.eps)
			if err != nil {
				t.Fatal(err)
			}
			if d > c.delta {
				t.Errorf("%+v: %s Delta(Epsilon(δ) = %.17g) = %.17g > δ", c, p.name, p.eps, d)
			}
		}
	}
}

// TestContinuousPureAndInverse: the continuous search gives answers that
// depend only on the plan and the query (a fresh accountant and one that
// answered other questions first agree bit for bit), and Epsilon and Delta
// invert each other both ways: Delta(Epsilon(δ)) ≤ δ exactly and
// Epsilon(Delta(ε)) ≤ ε up to a relative 1e-12, on seeded random settings
// over σ ∈ [4.5e-5, 4.9e8], q ∈ [1.4e-11, 1] (every fifth q = 1) and
// T ≤ 1e7, including the closed-form regimes of [LogMoments] and orders
// beyond 10⁴. The reverse trip is checked where Delta(ε) ≤ 0.9: near
// δ = 1 the float64 δ itself is coarser than 1e-12 relative in log δ,
// which the ε of the reverse trip inherits (about 1e-10 at δ = 0.99999).
func TestContinuousPureAndInverse(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	n := testenv.Size(40, 150)
	makers := []func() accounting.Method{
		func() accounting.Method { return must(NewMA(nil)) },
		func() accounting.Method { return must(NewRDP(nil)) },
	}
	for range n {
		sigma := math.Exp(rng.Float64()*30 - 10)
		q := math.Exp(-rng.Float64() * 25)
		if rng.IntN(5) == 0 {
			q = 1
		}
		steps := 1 + rng.IntN(1e7)
		e := accounting.SubsampledGaussian(sigma, q, steps)
		x := math.Exp(rng.Float64()*12 - 6)
		d := math.Exp(-rng.Float64() * 200)
		for _, mk := range makers {
			m := mk()
			if err := m.Compose(e, 1); err != nil {
				t.Fatal(err)
			}
			where := fmt.Sprintf("%T σ=%g q=%g T=%d", m, sigma, q, steps)
			dx, err1 := m.Delta(t.Context(), x)
			ed, err2 := m.Epsilon(t.Context(), d)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if dx > 0 && dx <= 0.9 {
				if back, err := m.Epsilon(t.Context(), dx); err != nil || back > x*(1+1e-12) {
					t.Errorf("%s: Delta(%g) = %g, Epsilon of it %.17g (relative %.3g above), %v", where, x, dx, back, back/x-1, err)
				}
			}
			if ed > 0 && !math.IsInf(ed, 1) {
				if back, err := m.Delta(t.Context(), ed); err != nil || back > d {
					t.Errorf("%s: Epsilon(%g) = %.17g, Delta of it %g > δ, %v", where, d, ed, back, err)
				}
			}
			fresh := mk()
			if err := fresh.Compose(e, 1); err != nil {
				t.Fatal(err)
			}
			ed2, err1 := fresh.Epsilon(t.Context(), d)
			dx2, err2 := fresh.Delta(t.Context(), x)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if ed2 != ed || dx2 != dx {
				t.Errorf("%s: fresh accountant Epsilon(%g) %.17g, Delta(%g) %.17g; after other queries %.17g, %.17g", where, d, ed2, x, dx2, ed, dx)
			}
		}
	}
}
