package moments

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
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
	n := 300
	if testing.Short() {
		n = 60
	}
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
