package mechanism

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// laplace is the Laplace mechanism ([accounting.Laplace]) with scale b
// relative to the L1 sensitivity, unsampled or sampled.
type laplace struct {
	b float64
	sampling
}

func (l laplace) Name() string { return "Laplace" }

func (l laplace) Event() accounting.Event {
	return l.wrap(accounting.Laplace{NoiseMultiplier: l.b})
}

func (l laplace) order() []float64 { return l.sampling.order(l.b, 1) }

// PLD: unsampled or Poisson-sampled under add-remove, the pairs of
// [newLaplacePair].
func (l laplace) PLD() (*PLD, error) {
	if !l.classic() {
		return nil, errorf("no privacy-loss pair for a %s", l.describe("Laplace"))
	}
	q := l.rate
	rem, add := newLaplacePair(l.b, q, false), newLaplacePair(l.b, q, true)
	adj := l.adj
	// Attained: a query to which the differing record contributes 1 and
	// every other 0.
	return &PLD{Remove: rem, Add: add, Symmetric: q == 1, MaxLoss: math.Max(rem.lMax, -rem.lMin), Attained: true,
		// Adding independent noise that is 0 with probability (b/b')², else
		// Laplace(b'), turns Laplace(b) into Laplace(b') (b < b').
		Family: &Family{Name: "Laplace", Scale: l.b, Rate: q, With: func(scale, rate float64) Mechanism {
			return laplace{b: scale, sampling: poisson(rate, adj)}
		}}}, nil
}

// RDP: unsampled or Poisson-sampled under add-remove (see laplaceAlpha).
func (l laplace) RDP() (RDP, error) {
	if !l.classic() {
		return nil, errorf("no Rényi bound for a %s", l.describe("Laplace"))
	}
	return laplaceRDP{b: l.b, q: l.rate}, nil
}

// ZCDP: the Laplace mechanism is (1/b, 0)-DP (Dwork et al. 2006), hence
// ((1/b)²/2)-zCDP (Bun and Steinke 2016, Proposition 1.4).
func (l laplace) ZCDP() (rho, xi float64, err error) {
	return pureRho(pureScale(l.b)), 0, nil
}

// pureScale returns 1/b rounded up: the ε of a pure-DP mechanism of scale
// b at sensitivity 1.
func pureScale(b float64) float64 {
	e := 1 / b
	if e*b < 1 {
		e = math.Nextafter(e, math.Inf(1))
	}
	return e
}

// pureRho returns ε²/2 rounded up, and at least the smallest positive
// float64 (ε > 0): the ρ of an ε-DP step (Bun and Steinke 2016,
// Proposition 1.4).
func pureRho(e float64) float64 {
	return math.Max(math.Nextafter(e*e/2, math.Inf(1)), math.SmallestNonzeroFloat64)
}

// laplaceRDP is the Laplace mechanism's Rényi curve, Poisson-sampled at q.
type laplaceRDP struct{ b, q float64 }

func (r laplaceRDP) AbadiMoments() bool { return false }

func (r laplaceRDP) LogMoments(ctx context.Context, c *Cache, count float64, orders []float64) ([]float64, error) {
	out := make([]float64, len(orders))
	for i, l := range orders {
		out[i] = count * laplaceAlpha(r.b, r.q, l)
	}
	return out, nil
}

func (r laplaceRDP) LogMomentAt(ctx context.Context, c *Cache, count, lambda float64) (float64, error) {
	return count * laplaceAlpha(r.b, r.q, lambda), nil
}

// laplacePair is one direction of the dominating pair of the
// Poisson-subsampled Laplace mechanism with scale b (sensitivity 1) and
// sampling rate q under add/remove adjacency (Zhu, Dong, Wang 2022,
// Proposition 30, as for gaussianPair; Koskela et al. 2021 for the Laplace
// PLD):
//
//	remove: P = (1−q)Lap(0,b) + qLap(1,b),  Q = Lap(0,b);
//	add:    P = Lap(0,b),  Q = (1−q)Lap(0,b) + qLap(1,b).
//
// With r(x) = e^{(|x|−|x−1|)/b} the density ratio of Lap(1,b) to Lap(0,b)
// (e^{−1/b} for x ≤ 0, e^{(2x−1)/b} on [0, 1], e^{1/b} for x ≥ 1), the
// remove loss L(x) = log(1−q + q·r(x)) is non-decreasing: it has atoms at
// its two ends, L(0) and L(1), and is continuous between. L_add = −L.
type laplacePair struct {
	b, q   float64
	add    bool
	log1mq float64 // log(1−q); −Inf when q = 1
	logq   float64
	lMin   float64 // L(0) = log(1−q + q·e^{−1/b})
	lMax   float64 // L(1) = log(1−q + q·e^{1/b})
}

func newLaplacePair(b, q float64, add bool) *laplacePair {
	p := &laplacePair{b: b, q: q, add: add, log1mq: math.Log1p(-q), logq: logmath.Log(q)}
	p.lMin = logmath.Add(p.log1mq, p.logq-1/b)
	p.lMax = logmath.Add(p.log1mq, p.logq+1/b)
	return p
}

// xOf returns the x in [0, 1] with L(x) = l, for lMin ≤ l ≤ lMax:
// (2x−1)/b = log((e^l − (1−q))/q).
func (p *laplacePair) xOf(l float64) float64 {
	x := (p.b*(logmath.Sub(l, p.log1mq)-p.logq) + 1) / 2
	return math.Min(math.Max(x, 0), 1)
}

// logSF returns log P(X > x) and log P(X ≤ x) for X ~ Lap(mu, b), x in
// [0, 1] and mu ∈ {0, 1}, each without cancellation.
func (p *laplacePair) logSF(x, mu float64) (sf, cdf float64) {
	z := (x - mu) / p.b
	if z >= 0 {
		sf = z*-1 - math.Ln2
		return sf, math.Log1p(-math.Exp(sf))
	}
	cdf = z - math.Ln2
	return math.Log1p(-math.Exp(cdf)), cdf
}

// Tails returns the log tail and head masses of the direction's loss at l.
func (p *laplacePair) Tails(l float64) Tails {
	ninf := math.Inf(-1)
	lr := l // the remove loss whose upper set is the event
	if p.add {
		lr = -l
	}
	// Remove-loss events {L > lr} (or, for add, {L < lr}) are {X > x}
	// (or {X < x}) with x = xOf(lr), clamped at the atoms.
	var x float64
	switch {
	case !p.add && lr < p.lMin, p.add && lr > p.lMax:
		return Tails{0, 0, ninf, ninf} // everything is above l
	case !p.add && lr >= p.lMax, p.add && lr <= p.lMin:
		return Tails{ninf, ninf, 0, 0} // nothing is above l
	default:
		x = p.xOf(lr)
	}
	s0, c0 := p.logSF(x, 0)
	s1, c1 := p.logSF(x, 1)
	mixS := logmath.Add(p.log1mq+s0, p.logq+s1)
	mixC := logmath.Add(p.log1mq+c0, p.logq+c1)
	if !p.add {
		return Tails{PAbove: mixS, QAbove: s0, PBelow: mixC, QBelow: c0}
	}
	// add: P = Lap(0,b), Q = the mixture; L_add > l ⇔ X < x. At the atom
	// L(0) the event {L < lr} excludes X ≤ 0 only when lr = lMin exactly,
	// which the switch above sent to "nothing above".
	return Tails{PAbove: c0, QAbove: mixC, PBelow: s0, QBelow: mixS}
}

// Support: a density between the two ends of the loss, which are atoms.
func (p *laplacePair) Support() Support {
	s := continuous
	if p.add {
		s.Atoms = []float64{-p.lMax, -p.lMin}
	} else {
		s.Atoms = []float64{p.lMax, p.lMin}
	}
	return s
}

// TailsCost is 1: a closed form like the Gaussian pair's.
func (p *laplacePair) TailsCost() int { return 1 }

// Truncation returns the ends of the bounded loss, widened a little so
// that the atoms lie inside the grid.
func (p *laplacePair) Truncation(eta float64) (lLo, lHi float64) {
	lo, hi := p.lMin, p.lMax
	if p.add {
		lo, hi = -p.lMax, -p.lMin
	}
	pad := 1e-9 * math.Max(hi-lo, 1e-300)
	return lo - pad, hi + pad
}

// Moments returns the mean and variance of the loss under P by Simpson's
// rule on [0, 1] plus the atoms (steering only).
func (p *laplacePair) Moments() (mean, variance float64) {
	loss := func(x float64) float64 {
		var r float64
		switch {
		case x <= 0:
			r = -1 / p.b
		case x >= 1:
			r = 1 / p.b
		default:
			r = (2*x - 1) / p.b
		}
		l := logmath.Add(p.log1mq, p.logq+r)
		if p.add {
			return -l
		}
		return l
	}
	dens := func(x, mu float64) float64 { return math.Exp(-math.Abs(x-mu)/p.b) / (2 * p.b) }
	pdf := func(x float64) float64 {
		if p.add {
			return dens(x, 0)
		}
		return (1-p.q)*dens(x, 0) + p.q*dens(x, 1)
	}
	cdfAt := func(x, mu float64) float64 { // P(Lap(mu,b) ≤ x)
		z := (x - mu) / p.b
		if z < 0 {
			return math.Exp(z) / 2
		}
		return 1 - math.Exp(-z)/2
	}
	pLow, pHigh := cdfAt(0, 0), 1-cdfAt(1, 0)
	if !p.add {
		pLow = (1-p.q)*cdfAt(0, 0) + p.q*cdfAt(0, 1)
		pHigh = (1-p.q)*(1-cdfAt(1, 0)) + p.q*(1-cdfAt(1, 1))
	}
	m0 := pLow + pHigh
	m1 := pLow*loss(0) + pHigh*loss(1)
	m2 := pLow*loss(0)*loss(0) + pHigh*loss(1)*loss(1)
	const n = 200
	for i := 0; i <= n; i++ {
		x := float64(i) / n
		w := 2.0
		if i == 0 || i == n {
			w = 1
		} else if i%2 == 1 {
			w = 4
		}
		w *= pdf(x) / (3 * n)
		l := loss(x)
		m0 += w
		m1 += w * l
		m2 += w * l * l
	}
	mean = m1 / m0
	return mean, math.Max(m2/m0-mean*mean, 0)
}

// laplaceCells is the number of cells of [0, 1] in laplaceAlpha's bound.
const laplaceCells = 2048

// laplaceAlpha returns an upper bound on the log moment α(λ) = λ·D_{λ+1} of
// the Laplace mechanism with scale b (sensitivity 1), Poisson-sampled at
// rate q (q = 1: unsampled), under add/remove adjacency: the larger of
// log E_{P0}[(1−q+q·r)^{λ+1}] (remove) and log E_{P0}[(1−q+q·r)^{−λ}]
// (add), P0 = Lap(0, b) and r(x) = e^{(|x|−|x−1|)/b} the density ratio of
// Lap(1, b) to P0 (Mironov 2017, Table II, for q = 1; the two directions as
// Abadi et al.'s E1, E2 and Mironov, Talwar, Zhang 2019).
//
// r is e^{−1/b} on x ≤ 0 (P0-mass 1/2) and e^{1/b} on x ≥ 1 (mass
// e^{−1/b}/2), which give closed-form terms. On [0, 1] the integrand is
// e^{f(x)} with f(x) = −log 2b − x/b + p·log(1−q+q·e^{(2x−1)/b}), convex for
// p = λ+1 and concave for p = −λ. Its integral is bounded from above cell
// by cell: by the chord of a convex f and by the tangent at the midpoint of
// a concave one, each integrated in closed form. The result is raised by
// 1e-13 (the floating-point error of summing the cells, absolute in the
// log, which also covers the cancellation in log E ≈ 0 at tiny q) and
// rounded up; +Inf when it overflows.
func laplaceAlpha(b, q, l float64) float64 {
	if !(l > 0) {
		return 0
	}
	rem := laplaceLogMoment(b, q, l+1)
	add := laplaceLogMoment(b, q, -l)
	a := math.Max(rem, add)
	if math.IsNaN(a) {
		return math.Inf(1)
	}
	return search.Up(math.Max(a, 0)+1e-13, 8) + 1e-15*math.Abs(a)
}

// laplaceLogMoment returns an upper bound on log E_{P0}[(1−q+q·r(x))^p].
func laplaceLogMoment(b, q, p float64) float64 {
	log1mq, logq := math.Log1p(-q), logmath.Log(q)
	g := func(t float64) float64 { return p * logmath.Add(log1mq, logq+t) } // log (1−q+q e^t)^p
	// Closed-form parts: x ≤ 0 and x ≥ 1.
	lo := -math.Ln2 + g(-1/b)
	hi := -math.Ln2 - 1/b + g(1/b)
	f := func(x float64) float64 { return -math.Log(2*b) - x/b + g((2*x-1)/b) }
	// f′ for the tangents: −1/b + p·(2/b)·s(x), s the sampled share
	// q·e^t/(1−q+q·e^t) at t = (2x−1)/b.
	df := func(x float64) float64 {
		t := (2*x - 1) / b
		s := math.Exp(logq + t - logmath.Add(log1mq, logq+t))
		return -1/b + p*(2/b)*s
	}
	const h = 1.0 / laplaceCells
	mid := math.Inf(-1)
	fa := f(0)
	for i := 0; i < laplaceCells; i++ {
		a := float64(i) * h
		c := a + h
		fc := f(c)
		var cell float64 // log of the bound on ∫_a^c e^f
		if p > 0 {
			cell = logChordIntegral(fa, fc, h)
		} else {
			m := a + h/2
			fm, s := f(m), df(m)
			// ∫_a^c e^{fm + s(x−m)} dx = e^{fm}·(e^{sh/2} − e^{−sh/2})/s.
			cell = fm + logChordIntegral(-s*h/2, s*h/2, h)
		}
		mid = logmath.Add(mid, cell)
		fa = fc
	}
	return logmath.Add(logmath.Add(lo, hi), mid)
}

// logChordIntegral returns log ∫_0^h e^{fa + (fb−fa)x/h} dx =
// log(h·(e^{fb} − e^{fa})/(fb − fa)) (h·e^{fa} when fb = fa), without
// overflow.
func logChordIntegral(fa, fb, h float64) float64 {
	d := fb - fa
	if math.Abs(d) < 1e-12 {
		return fa + math.Log(h) + math.Log1p(d/2)
	}
	if d > 0 {
		// h·e^{fb}·(1 − e^{−d})/d
		return fb + math.Log(h) + math.Log(-math.Expm1(-d)) - math.Log(d)
	}
	return fa + math.Log(h) + math.Log(-math.Expm1(d)) - math.Log(-d)
}
