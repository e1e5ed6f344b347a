package mechanism

import (
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestBinomTails: the binomial tails behind truncated Poisson sampling,
// against 40-digit mpmath sums (small n) and scipy's binom.sf (n 60,000):
// each tail within 1e-14 relative, and the two sum to 1.
func TestBinomTails(t *testing.T) {
	for _, c := range []struct {
		n    int
		q    float64
		k    int
		want float64 // P(X ≥ k)
		tol  float64
	}{
		{3, 0.5, 2, 0.5, 1e-15},
		{4, 0.5, 3, 0.3125, 1e-15},
		{1000, 0.3, 350, 0.0003738701054403883330401751, 1e-14},
		{1000, 0.3, 250, 0.9998014526737669589018978, 1e-14},
		{59999, 0.01, 650, 0.022146660489530526, 1e-12}, // scipy.stats.binom.sf(649, 59999, 0.01)
		{60000, 0.01, 651, 0.02014105409227391, 1e-12},  // scipy.stats.binom.sf(650, 60000, 0.01)
	} {
		hi, lo := binomTails(c.n, c.q, c.k)
		h, _ := hi.Float64()
		l, _ := lo.Float64()
		if math.Abs(h-c.want) > c.tol*c.want || math.Abs(h+l-1) > 1e-15 {
			t.Errorf("Binom(%d, %g): P(X ≥ %d) = %.17g, P(X < k) = %.17g; want %.17g", c.n, c.q, c.k, h, l, c.want)
		}
	}
	if hi, lo := binomTails(5, 0.5, 0); hi.Sign() == 0 || lo.Sign() != 0 {
		t.Error("k = 0: want P(X ≥ 0) = 1")
	}
}

// TestTruncatedPairs: a truncated-Poisson Gaussian states dominating pairs
// that are not attained, and a Poisson witness at the rate the differing
// record is kept at: N 4, q 0.5, cap 2 keeps it with probability
// q·P(K < 2) + 2·P(Binom(4, ½) > 2)/4 = ½·½ + 2·(5/16)/4 = 0.40625.
func TestTruncatedPairs(t *testing.T) {
	for _, adj := range []accounting.Adjacency{accounting.AddRemove, accounting.ReplaceOne} {
		m, err := Of(accounting.Step{Mechanism: accounting.MechGaussian, Leaf: accounting.Gaussian{NoiseMultiplier: 1}, Sigma: 1, Sampling: accounting.SamplingTruncatedPoisson, Rate: 0.5, DatasetSize: 4, SampleSize: 2, Adjacency: adj, Count: 1})
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.PLD()
		if err != nil {
			t.Fatal(err)
		}
		w, ok := p.Witness.(gaussian)
		if p.Attained || !ok || w.rate != 0.40625 || w.adj != adj || w.sigma != 1 || p.Symmetric != (adj == accounting.ReplaceOne) {
			t.Errorf("%v: pairs %+v, witness %+v", adj, p, p.Witness)
		}
		if _, err := m.RDP(); err == nil {
			t.Errorf("%v: a Rényi curve for truncated Poisson sampling; none is derived", adj)
		}
	}
}
