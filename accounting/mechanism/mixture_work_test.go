package mechanism

import (
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// userPairs returns the remove and add pairs of the user-level mixture
// (σ, q, k).
func userPairs(t *testing.T, sigma, q float64, k int) [2]*mixturePair {
	t.Helper()
	m := userMechanism(t, sigma, q, k)
	p, err := m.PLD()
	if err != nil {
		t.Fatal(err)
	}
	return [2]*mixturePair{p.Remove.(*mixturePair), p.Add.(*mixturePair)}
}

// gridLosses returns n+1 losses spread over the pair's truncation at eta,
// as the pld accountant's grid places them.
func gridLosses(p *mixturePair, eta float64, n int) []float64 {
	lo, hi := p.Truncation(eta)
	out := make([]float64, n+1)
	for i := range out {
		out[i] = lo + (hi-lo)*float64(i)/float64(n)
	}
	return out
}

// TestMixtureTailsWork bounds the work of the user-level mixture's Tails
// by counts, not clocks: for a user with K = 1000 examples at q = 0.0064
// and σ = 1 (260 components with a representable probability, the case
// that took 165 s of CPU in `dpcalc eps ... --examples-per-user 1000`), a
// Tails over the pld grid's range costs at most 16 loss evaluations and
// 600 component terms on average. Inverting the loss by bisection to
// adjacent floats took about 63 evaluations of all 260 terms each (about
// 16,000 terms per Tails); Newton's method on the loss of the shifted
// components, and sums that walk out from the peak of the concave core,
// take about 8 and 250.
func TestMixtureTailsWork(t *testing.T) {
	const maxLosses, maxTerms = 16, 600
	for _, p := range userPairs(t, 1, 0.0064, 1000) {
		w := &mixtureWork{}
		p.work = w
		ls := gridLosses(p, 1e-12, 400)
		for _, l := range ls {
			p.Tails(l)
		}
		p.work = nil
		n := float64(len(ls))
		if lp, tp := float64(w.losses)/n, float64(w.terms)/n; lp > maxLosses || tp > maxTerms {
			t.Errorf("add %v: %.1f loss evaluations and %.0f terms per Tails, want at most %d and %d", p.add, lp, tp, maxLosses, maxTerms)
		}
	}
}

// plainX and plainTails are references for the mixture pair's xOf and
// mixTails, computed the plain way: the loss summed over every component
// (largest term first) and inverted by bisection to adjacent floats from a
// wide bracket, and every component's normal tails summed.
func plainX(p *mixturePair, l float64) float64 {
	s2 := 2 * p.sigma * p.sigma
	loss := func(x float64) float64 {
		m := math.Inf(-1)
		for i, c := range p.c {
			m = math.Max(m, p.logp[i]+c*(2*x-c)/s2)
		}
		s := 0.0
		for i, c := range p.c {
			s += math.Exp(p.logp[i] + c*(2*x-c)/s2 - m)
		}
		return m + math.Log(s)
	}
	lo, hi := -1e6*p.sigma, 1e6*p.sigma+p.c[len(p.c)-1]
	for {
		mid := lo/2 + hi/2
		if !(mid > lo && mid < hi) {
			return lo
		}
		if loss(mid) > l {
			hi = mid
		} else {
			lo = mid
		}
	}
}

func plainTails(p *mixturePair, x float64) (below, above float64) {
	below, above = math.Inf(-1), math.Inf(-1)
	for i, c := range p.c {
		below = logmath.Add(below, p.logp[i]+logmath.NormCDF((x-c)/p.sigma))
		above = logmath.Add(above, p.logp[i]+logmath.NormSF((x-c)/p.sigma))
	}
	return below, above
}

// TestMixtureTailsPlain: for users from 2 to 10^9 examples, over the pld
// grid's range at η = 1e-12 and 1e-300 (where the sums reach the
// components whose probabilities are subnormal, outside the concave
// core), the user-level mixture's inverse loss agrees with plainX to
// 1e-13 relative (a few ulps: the two sum the loss in different orders)
// and its mixture tails at that point with plainTails to 1e-13 relative
// as masses, plus 8 ulps of the log tail (the plain sum's rounding: the
// new sums leave out only terms e^−50 below the largest).
func TestMixtureTailsPlain(t *testing.T) {
	for _, tc := range []struct {
		sigma, q float64
		k        int
	}{{1, 0.0064, 2}, {1, 0.0064, 1000}, {3, 0.3, 50}, {0.5, 0.01, 10000}, {1, 1e-9, 1_000_000_000}, {10, 0.5, 1000}} {
		p := userPairs(t, tc.sigma, tc.q, tc.k)[0]
		for _, eta := range []float64{1e-12, 1e-300} {
			for _, l := range gridLosses(p, eta, 60) {
				if l <= p.lMin() {
					continue
				}
				x, xr := p.xOf(l), plainX(p, l)
				if math.Abs(x-xr) > 1e-13*(math.Abs(xr)+p.sigma) {
					t.Errorf("σ %v q %v k %d l %v: x %v, plain %v", tc.sigma, tc.q, tc.k, l, x, xr)
				}
				b, a := p.mixTails(x)
				br, ar := plainTails(p, x)
				for j, v := range [2][2]float64{{b, br}, {a, ar}} {
					if !(v[0] == v[1] || math.Abs(v[0]-v[1]) <= 1e-13+8*0x1p-52*math.Abs(v[1])) {
						t.Errorf("σ %v q %v k %d x %v: tail %d is e^%v, plain e^%v", tc.sigma, tc.q, tc.k, x, j, v[0], v[1])
					}
				}
			}
		}
	}
}
