package mechanism

import (
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestReplacePairLossInverse: xAt inverts the loss of the replace-one pair
// to a few ulps across losses from −700 to 700, on both sides of 0.
func TestReplacePairLossInverse(t *testing.T) {
	for _, c := range []struct{ sigma, q float64 }{{2, 0.01}, {0.5, 0.3}, {1, 1e-6}, {8, 0.9}} {
		p := newReplacePair(c.sigma, c.q)
		for _, l := range []float64{-700, -30, -1, -1e-3, -1e-9, 0, 1e-9, 1e-3, 1, 30, 700} {
			x := p.xAt(l)
			if got := p.loss(x); math.Abs(got-l) > 1e-9*math.Max(1, math.Abs(l)) {
				t.Errorf("σ %g q %g: L(xAt(%g)) = %g", c.sigma, c.q, l, got)
			}
		}
	}
}

// TestReplaceRDPAboveExact: the Rényi curve of Poisson lots under
// replace-one bounds the pair's exact divergence, from 30-digit mpmath
// quadrature of ∫p^α q^{1−α} (P = (1−q)N(0,σ²) + qN(−½,σ²), Q its mirror):
// (σ, q, α) → D_α.
func TestReplaceRDPAboveExact(t *testing.T) {
	c := NewCache()
	for _, r := range []struct{ sigma, q, alpha, exact float64 }{
		{1, 0.1, 2, 0.00984670323366939},
		{1, 0.1, 8, 0.0411263806100137},
		{0.5, 0.05, 4, 0.023933461578839},
		{2, 0.01, 16, 0.000200025170589988},
		{2, 0.01, 32.5, 0.000406477755777377},
	} {
		m, err := Of(accounting.Step{Mechanism: accounting.MechGaussian, Leaf: accounting.Gaussian{NoiseMultiplier: r.sigma}, Sigma: r.sigma, Sampling: accounting.SamplingPoisson, Rate: r.q, Adjacency: accounting.ReplaceOne, Count: 1})
		if err != nil {
			t.Fatal(err)
		}
		curve, err := m.RDP()
		if err != nil {
			t.Fatal(err)
		}
		v, err := curve.LogMomentAt(t.Context(), c, 1, r.alpha-1)
		if err != nil {
			t.Fatal(err)
		}
		d := v / (r.alpha - 1)
		// Sound always; the doubled order makes it loose at small σ (×36
		// at σ 0.5, α 4), within 10% at DP-SGD's σ ≥ 2.
		if !(d >= r.exact) || r.sigma >= 2 && d > 1.1*r.exact {
			t.Errorf("σ %g q %g α %g: bound %g, exact %g", r.sigma, r.q, r.alpha, d, r.exact)
		}
		t.Logf("σ %g q %g α %g: bound %.6g exact %.6g (×%.3f)", r.sigma, r.q, r.alpha, d, r.exact, d/r.exact)
	}
}
