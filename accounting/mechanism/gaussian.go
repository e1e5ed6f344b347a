package mechanism

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"gonum.org/v1/gonum/integrate/quad"
)

// gaussian is the Gaussian mechanism ([accounting.Gaussian]) with noise
// multiplier sigma relative to the relation's sensitivity, unsampled,
// Poisson-sampled or sampled without replacement.
type gaussian struct {
	sigma float64
	sampling
}

func (g gaussian) Name() string { return "Gaussian" }

func (g gaussian) Event() accounting.Event {
	return g.wrap(accounting.Gaussian{NoiseMultiplier: g.sigma})
}

func (g gaussian) order() []float64 { return g.sampling.order(g.sigma, 0) }

// PLD: unsampled, the Gaussian shift pair (symmetric); Poisson-sampled
// under add-remove, the pairs of [newGaussianPair], under replace-one the
// symmetric pair of [newReplacePair]; fixed-size under replace-one, the
// symmetric pair of [newFixedSizePair].
func (g gaussian) PLD() (*PLD, error) {
	switch {
	case g.fixedSize():
		if g.rate < 1 {
			p := newFixedSizePair(g.sigma, g.rate)
			// The symmetric pair only dominates. A fixed pair of neighbours
			// attains the Poisson pairs at rate γ: let every other record
			// contribute −Δ/2·e and the replaced one +Δ/2·e in D, −Δ/2·e in
			// D′ (Δ the replace-one sensitivity). The batch size is fixed,
			// so the others' sum is a constant, and a step releases
			// (1−γ)N(0,σ²) + γN(1,σ²) against N(0,σ²) in units of Δ,
			// shifted: the Poisson remove pair; (D′, D) gives the add pair.
			w := gaussian{sigma: g.sigma, sampling: poisson(g.rate, accounting.AddRemove)}
			return &PLD{Remove: p, Add: p, Symmetric: true, MaxLoss: math.Inf(1), Witness: w}, nil
		}
		// m = n: every record is in the batch, an unsampled release.
		rem, add := newGaussianPair(g.sigma, 1, false), newGaussianPair(g.sigma, 1, true)
		return &PLD{Remove: &rem, Add: &add, Symmetric: true, GaussianSigma: g.sigma, MaxLoss: math.Inf(1), Attained: true}, nil
	case g.kind == accounting.SamplingTruncatedPoisson:
		return g.truncatedPLD()
	case g.poissonReplaceOne():
		p := newReplacePair(g.sigma, g.rate)
		return &PLD{Remove: p, Add: p, Symmetric: true, MaxLoss: math.Inf(1), Attained: true}, nil
	case g.classic():
		q := g.rate
		rem, add := newGaussianPair(g.sigma, q, false), newGaussianPair(g.sigma, q, true)
		// Attained: the differing record contributes Δ·e, every other 0.
		p := &PLD{Remove: &rem, Add: &add, Symmetric: q == 1, MaxLoss: math.Inf(1), Family: g.family(), Attained: true}
		if q == 1 {
			p.GaussianSigma = g.sigma
		} else if g.adj == accounting.AddRemove {
			s := g.sigma
			p.Lower = func(count int) (CompositionLower, bool) { return newSumStatistic(s, q, count) }
		}
		return p, nil
	}
	return nil, errorf("no privacy-loss pair for a %s", g.describe("Gaussian"))
}

// family is the Gaussian family of scale σ and Poisson rate q: adding
// independent N(0, σ'² − σ²) noise turns the Gaussian of σ into that of
// σ' > σ, and sampling at q' ≥ q then passing each sampled record on with
// probability q/q' turns rate q' into q (both post-processings).
func (g gaussian) family() *Family {
	adj := g.adj
	return &Family{Name: "Gaussian", Scale: g.sigma, Rate: g.rate, With: func(scale, rate float64) Mechanism {
		return gaussian{sigma: scale, sampling: poisson(rate, adj)}
	}}
}

// RDP: unsampled and Poisson-sampled under add-remove, the log moments of
// Abadi et al. (2016) §3.2 ([GaussianLogMoments]); fixed-size under
// replace-one, the bound of Wang, Balle and Kasiviswanathan (2019) (see
// worAlpha); Poisson-sampled under replace-one, see replaceRDP.
func (g gaussian) RDP() (RDP, error) {
	switch {
	case g.fixedSize():
		return fixedSizeRDP{sigma: g.sigma, gamma: g.rate}, nil
	case g.poissonReplaceOne():
		return replaceRDP{sigma: g.sigma, q: g.rate}, nil
	case g.classic():
		return gaussianRDP{sigma: g.sigma, q: g.rate}, nil
	}
	return nil, errorf("no Rényi bound for a %s", g.describe("Gaussian"))
}

// ZCDP is ρ = Δ²/(2σ²) with Δ = 1 (Bun and Steinke 2016, Proposition 1.6);
// σ ≥ SigmaFloor keeps it finite.
func (g gaussian) ZCDP() (rho, xi float64, err error) {
	return 1 / (2 * g.sigma * g.sigma), 0, nil
}

// gaussianRDP is the Gaussian's Rényi curve, Poisson-sampled at q (q = 1:
// unsampled).
type gaussianRDP struct{ sigma, q float64 }

func (r gaussianRDP) AbadiMoments() bool { return true }

func (r gaussianRDP) LogMoments(ctx context.Context, c *Cache, count float64, orders []float64) ([]float64, error) {
	a, err := c.gaussianAlphas(ctx, r.sigma, r.q, orders)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(a))
	for i := range a {
		out[i] = count * a[i]
	}
	return out, nil
}

func (r gaussianRDP) LogMomentAt(ctx context.Context, c *Cache, count, lambda float64) (float64, error) {
	a, err := c.gaussianAlpha(ctx, r.sigma, r.q, lambda)
	if err != nil {
		return 0, err
	}
	return count * a, nil
}

// gaussianPair is one direction of the dominating pair of the
// Poisson-subsampled Gaussian mechanism with noise multiplier sigma and
// sampling rate q under add/remove adjacency (Zhu, Dong and Wang 2022,
// "Optimal Accounting of Differential Privacy via Characteristic Function",
// Proposition 30):
//
//	remove: P = (1−q)N(0,σ²) + qN(1,σ²),  Q = N(0,σ²);
//	add:    P = N(0,σ²),  Q = (1−q)N(0,σ²) + qN(1,σ²).
//
// The privacy loss L = log(dP/dQ) is monotone in the output x:
// L_remove(x) = log(1−q + q·e^{(2x−1)/(2σ²)}) and L_add = −L_remove.
type gaussianPair struct {
	sigma, q float64
	add      bool
	log1mq   float64 // log(1−q); −Inf when q = 1
	logq     float64
}

func newGaussianPair(sigma, q float64, add bool) gaussianPair {
	return gaussianPair{sigma: sigma, q: q, add: add, log1mq: math.Log1p(-q), logq: logmath.Log(q)}
}

// lRemove returns L_remove(x) = log(1−q + q·e^{(2x−1)/(2σ²)}).
func (p *gaussianPair) lRemove(x float64) float64 {
	return logmath.Add(p.log1mq, p.logq+(2*x-1)/(2*p.sigma*p.sigma))
}

// xRemove returns the x with L_remove(x) = l, for l > log(1−q).
func (p *gaussianPair) xRemove(l float64) float64 {
	return p.sigma*p.sigma*(logmath.Sub(l, p.log1mq)-p.logq) + 0.5
}

// logMix returns log of (1−q)·e^{a} + q·e^{b}.
func (p *gaussianPair) logMix(a, b float64) float64 {
	return logmath.Add(p.log1mq+a, p.logq+b)
}

// Tails returns the log tail and head masses of L under P and Q at l.
func (p *gaussianPair) Tails(l float64) Tails {
	ninf := math.Inf(-1)
	if !p.add {
		if l <= p.log1mq {
			return Tails{0, 0, ninf, ninf}
		}
		x := p.xRemove(l)
		if math.IsInf(x, 1) {
			return Tails{ninf, ninf, 0, 0}
		}
		c0, s0 := logPhiBoth(x / p.sigma)
		c1, s1 := logPhiBoth((x - 1) / p.sigma)
		return Tails{PAbove: p.logMix(s0, s1), QAbove: s0, PBelow: p.logMix(c0, c1), QBelow: c0}
	}
	// add: L > l  ⇔  L_remove < −l  ⇔  x < xRemove(−l).
	if -l <= p.log1mq {
		return Tails{ninf, ninf, 0, 0}
	}
	x := p.xRemove(-l)
	if math.IsInf(x, 1) {
		return Tails{0, 0, ninf, ninf}
	}
	c0, s0 := logPhiBoth(x / p.sigma)
	c1, s1 := logPhiBoth((x - 1) / p.sigma)
	return Tails{PAbove: c0, QAbove: p.logMix(c0, c1), PBelow: s0, QBelow: p.logMix(s0, s1)}
}

// TailsAbove returns Tails(l).PAbove and Tails(l).QAbove, bit for bit,
// without the heads: where a normal tail is direct (see logPhiBoth) its
// log1p(−e^x) complement and the heads' mixture are not computed.
func (p *gaussianPair) TailsAbove(l float64) (pAbove, qAbove float64) {
	ninf := math.Inf(-1)
	if !p.add {
		if l <= p.log1mq {
			return 0, 0
		}
		x := p.xRemove(l)
		if math.IsInf(x, 1) {
			return ninf, ninf
		}
		s0 := logPhiAbove(x / p.sigma)
		return p.logMix(s0, logPhiAbove((x-1)/p.sigma)), s0
	}
	if -l <= p.log1mq {
		return ninf, ninf
	}
	x := p.xRemove(-l)
	if math.IsInf(x, 1) {
		return 0, 0
	}
	c0 := logPhiBelow(x / p.sigma)
	return c0, p.logMix(c0, logPhiBelow((x-1)/p.sigma))
}

// logPhiAbove and logPhiBelow return logPhiBoth's log Φ̄(z) and log Φ(z)
// alone, bit for bit.
func logPhiAbove(z float64) float64 {
	if z < 0 {
		return math.Log1p(-math.Exp(logmath.NormCDF(z)))
	}
	return logmath.NormSF(z)
}

func logPhiBelow(z float64) float64 {
	if z < 0 {
		return logmath.NormCDF(z)
	}
	return math.Log1p(-math.Exp(logmath.NormSF(z)))
}

// MirrorOf reports whether o is p's other direction (the same σ and q):
// then o.Tails(−l) is p.Tails(l) with P and Q swapped, bit for bit, for
// every l whose negation is exact (see [Mirrored]).
func (p *gaussianPair) MirrorOf(o Pair) bool {
	m, ok := o.(*gaussianPair)
	return ok && m.add != p.add && m.sigma == p.sigma && m.q == p.q
}

// Mirrored is implemented by a pair whose tails are another pair's
// mirrored: when MirrorOf(o) holds, o.Tails(−l) equals [Tails.Mirror] of
// the pair's Tails(l) bit for bit. The two directions of the
// Poisson-sampled Gaussian are such pairs: both evaluate the same four
// normal tails at the same output x (add at l is remove at −l), so a grid
// of one direction gives the other's on the mirrored grid for free.
type Mirrored interface {
	Pair
	MirrorOf(o Pair) bool
}

// AboveTails is implemented by a pair that can give the two log tails
// above l, Tails(l).PAbove and Tails(l).QAbove bit for bit, at less cost
// than all four: pld's lower discretisation needs the heads only where a
// tail exceeds 1/2.
type AboveTails interface {
	Pair
	TailsAbove(l float64) (pAbove, qAbove float64)
}

// Mirror returns the tails of the mirrored pair at −l from t at l: the
// loss negated, P and Q swapped (L > −l under the mirror's P is L ≤ l
// under this Q, and so on).
func (t Tails) Mirror() Tails {
	return Tails{PAbove: t.QBelow, QAbove: t.PBelow, PBelow: t.QAbove, QBelow: t.PAbove}
}

// logPhiBoth returns log Φ(z) and log Φ̄(z): the smaller of the two
// directly (accurate deep in the tail), the other as log1p of minus it
// (accurate because that probability is at least 1/2).
func logPhiBoth(z float64) (lc, ls float64) {
	if z < 0 {
		lc = logmath.NormCDF(z)
		return lc, math.Log1p(-math.Exp(lc))
	}
	ls = logmath.NormSF(z)
	return math.Log1p(-math.Exp(ls)), ls
}

// Truncation returns the loss values lLo < lHi outside which P has mass at
// most eta on each side, using x-quantiles of the two Gaussian components.
func (p *gaussianPair) Truncation(eta float64) (lLo, lHi float64) {
	// Φ̄(z) ≤ e^{−z²/2} for z ≥ 1, so z = √(2 ln(1/η)) cuts ≤ η.
	z := math.Sqrt(2 * math.Log(1/eta))
	if z < 1 {
		z = 1
	}
	xLo, xHi := -p.sigma*z, 1+p.sigma*z
	if !p.add {
		// P(x > xHi) ≤ Φ̄(z) for both components; P(x < xLo) likewise.
		return p.lRemove(xLo), p.lRemove(xHi)
	}
	// P = N(0,σ²): L_add large ⇔ x small.
	return -p.lRemove(p.sigma * z), -p.lRemove(-p.sigma * z)
}

// hermiteT and hermiteW hold 40-point Gauss–Hermite nodes and weights,
// normalised so that Σ w_i f(t_i) = E f(Z) for Z ~ N(0, 1).
var hermiteT, hermiteW = func() ([]float64, []float64) {
	const n = 40
	t, w := hermiteNodes(n)
	for i := range t {
		t[i] *= math.Sqrt2
		w[i] /= math.Sqrt(math.Pi)
	}
	return t, w
}()

// Moments returns approximations of the mean and variance of L under P (by
// Gauss–Hermite quadrature). They only steer the choice of grid and window;
// no bound depends on their accuracy.
func (p *gaussianPair) Moments() (mean, variance float64) {
	var m1, m2 float64
	loss := func(x float64) float64 {
		l := p.lRemove(x)
		if p.add {
			return -l
		}
		return l
	}
	comp := func(mu, weight float64) {
		for i, t := range hermiteT {
			l := loss(mu + p.sigma*t)
			m1 += weight * hermiteW[i] * l
			m2 += weight * hermiteW[i] * l * l
		}
	}
	if p.add {
		comp(0, 1)
	} else {
		comp(0, 1-p.q)
		comp(1, p.q)
	}
	v := m2 - m1*m1
	if v < 0 || math.IsNaN(v) {
		v = 0
	}
	return m1, v
}

// Support: a density, no atoms.
func (p *gaussianPair) Support() Support { return continuous }

// TailsCost is 1: the unit.
func (p *gaussianPair) TailsCost() int { return 1 }

// hermiteNodes returns the n-point Gauss–Hermite rule for ∫ e^{−t²} f(t) dt.
func hermiteNodes(n int) (t, w []float64) {
	t, w = make([]float64, n), make([]float64, n)
	quad.Hermite{}.FixedLocations(t, w, math.Inf(-1), math.Inf(1))
	return t, w
}
