package pld

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestPLDEpsilonBackedByDelta checks that on one accountant the upper ε is
// certified by the accountant's own upper δ: Delta(Epsilon(δ)) ≤ δ with no
// slack. The first case is the soundness sweep's set 128 (seed 20261122,
// printed with %.17g): there the top cell's sum B = Σ c·e^{bScale−loss} was
// subnormal (2.05e-320), math.Log(B) came out 27 too large (golang/go#56600),
// and Epsilon returned the cell's left end, 4611.049, where its own Delta is
// 2.005e-11 = 1.41·δ.
func TestPLDEpsilonBackedByDelta(t *testing.T) {
	cases := []struct {
		name     string
		sigma, q float64
		steps    int
		delta    float64
	}{
		{"sweep set 128, subnormal B", 0.49872718071417144, 0.12555597304757998, 42948, 1.4217419864957683e-11},
		{"dp-sgd", 1.1, 0.01, 10000, 1e-5},
		{"small sigma", 0.6, 0.05, 3000, 1e-8},
		{"one step", 0.8, 0.3, 1, 1e-6},
		{"large sigma", 8, 0.2, 500, 1e-10},
		{"gaussian closed form", 2, 1, 50, 1e-9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := accountantFor(t, accounting.SubsampledGaussian(c.sigma, c.q, c.steps), Options{})
			e, err := a.Epsilon(t.Context(), c.delta)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsInf(e, 1) {
				t.Fatalf("Epsilon(%g) = +Inf", c.delta)
			}
			d, err := a.Delta(t.Context(), e)
			if err != nil {
				t.Fatal(err)
			}
			if !(d <= c.delta) {
				t.Errorf("Delta(Epsilon(%.17g) = %.17g) = %.17g = δ·%.6g, want ≤ δ", c.delta, e, d, d/c.delta)
			}
			r, err := a.result(t.Context())
			if err != nil || r == nil || r.closed {
				return
			}
			for di := range r.dirs {
				cp, err := r.get(t.Context(), di, true, 0)
				if err != nil {
					t.Fatal(err)
				}
				ed := cp.epsilon(c.delta, true)
				if math.IsInf(ed, 1) {
					continue
				}
				if dd := cp.delta(ed, true); !(dd <= c.delta) {
					t.Errorf("direction %d: delta(epsilon(%.17g) = %.17g) = %.17g, want ≤ δ", di, c.delta, ed, dd)
				}
				// The lower ε must not exceed the upper one.
				if el := cp.epsilon(c.delta, false); el > ed {
					t.Errorf("direction %d: lower ε %.17g > upper %.17g", di, el, ed)
				}
			}
		})
	}
}

// TestPLDGoodSizeFactors checks that every FFT length goodSize picks is
// ≥ n, at most the next power of two, 5-smooth, and has at most 13 factors
// in fftpack's factorisation (4s, then one 2, 3s, 5s; its ifac array holds
// 13). n = 4251528 = 2^3·3^12 has 14 and made gonum panic.
func TestPLDGoodSizeFactors(t *testing.T) {
	check := func(n int) {
		m := goodSize(n)
		if m < n || m > 1<<bits.Len(uint(n-1)) {
			t.Fatalf("goodSize(%d) = %d, want in [n, next power of two]", n, m)
		}
		r, f := m, 0
		for r%4 == 0 {
			r /= 4
			f++
		}
		for _, p := range []int{2, 3, 5} {
			for r%p == 0 {
				r /= p
				f++
			}
		}
		if r != 1 || f > 13 {
			t.Fatalf("goodSize(%d) = %d: rest %d, %d fftpack factors; want 5-smooth with ≤ 13", n, m, r, f)
		}
	}
	for n := 1; n <= 1<<14; n++ {
		check(n)
	}
	for _, n := range []int{4251528, 4251527, 3 * 1 << 20, 1<<23 - 1, 1 << 23, 6377292} {
		check(n)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		check(1 + rng.IntN(1<<23))
	}
}
