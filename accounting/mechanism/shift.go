package mechanism

import (
	"math"
	"sync"

	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// integerNoise is a noise distribution on the integers, symmetric about 0
// and log-concave: the noise of an additive mechanism on an integer-valued
// query (the discrete Gaussian, the discrete Laplace).
type integerNoise interface {
	// logUpper returns log P(X ≥ k) for an integer k ≥ 1 (at most
	// log 1/2), within TailsRelError as a mass.
	logUpper(k float64) float64
	// logPMF returns log P(X = x) for an integer x (steering only).
	logPMF(x float64) float64
	// cost is the cost of one logUpper in units of [Pair.TailsCost].
	cost() int
}

// logLE returns log P(X ≤ m) and log P(X > m) for an integer m (±Inf
// allowed): the smaller of the two from logUpper, the other as its
// complement (accurate, since it is at least 1/2).
func logLE(n integerNoise, m float64) (le, gt float64) {
	switch {
	case m >= 1<<52:
		return 0, math.Inf(-1)
	case m <= -(1 << 52):
		return math.Inf(-1), 0
	case m >= 0:
		gt = n.logUpper(m + 1)
		return logmath.Log1mExp(gt), gt
	}
	le = n.logUpper(-m) // P(X ≤ m) = P(X ≥ −m)
	return le, logmath.Log1mExp(le)
}

// shiftPair is the pair of an additive mechanism on integers whose query
// moves by delta (an integer ≥ 1) between neighbouring data sets:
// P = the noise X, Q = X + delta. Its loss L(x) = log P[x]/Q[x] is
// non-increasing in x (the noise is log-concave), so {L > l} = {X ≤ m(l)}
// with m(l) the largest integer whose loss exceeds l, and every tail is a
// value of the noise's distribution function: P(L > l) = P(X ≤ m),
// Q(L > l) = P(X ≤ m − delta). By the noise's symmetry (x ↦ delta − x) the
// reversed pair has the same loss distribution, so one shiftPair serves
// both directions of the unsampled mechanism.
type shiftPair struct {
	noise integerNoise
	delta float64
	// loss returns L(x); threshold returns m(l) (−Inf: no integer has a
	// loss above l, +Inf: every integer has), non-increasing in l.
	loss      func(x float64) float64
	threshold func(l float64) float64
	// lMin and lMax bound the loss (±Inf when it is unbounded).
	lMin, lMax float64
	support    Support

	once     sync.Once
	mean, vr float64
}

// Tails returns the log masses of L on both sides of l.
func (p *shiftPair) Tails(l float64) Tails {
	m := p.threshold(l)
	pa, pb := logLE(p.noise, m)
	qa, qb := logLE(p.noise, m-p.delta)
	return Tails{PAbove: pa, QAbove: qa, PBelow: pb, QBelow: qb}
}

// quantile returns the smallest integer k ≥ 1 with P(X ≥ k) ≤ e^le (le <
// log 1/2), by doubling and bisection on the integers. Where even
// P(X ≥ 2^52) > e^le, it returns 2^52.
func (p *shiftPair) quantile(le float64) float64 {
	o, _ := search.Solve(search.Problem[float64]{
		Holds: func(k float64) (bool, error) { return p.noise.logUpper(k) <= le, nil },
		Side:  search.Upper,
		// P(X ≥ 0) ≥ 1/2 > e^le: 0 is below the quantile, not evaluated.
		Lo: 0, Hi: 1, LoKnown: true,
		Up:   func(k float64) (float64, bool) { return 2 * k, k < 1<<52 },
		Done: func(lo, hi float64) bool { return hi-lo <= 1 },
		Next: func(lo, hi float64) (float64, bool) { return math.Floor(lo + (hi-lo)/2), true },
	})
	return o.Hi // o.X, or 2^52 when the growth found no bracket
}

// Truncation returns losses lo < hi with P(L ≤ lo) ≤ eta and P(L > hi) ≤
// eta: with k the noise's eta-quantile, {L > L(−k)} ⊆ {X < −k} and
// {L ≤ lo} ⊆ {X > k} for lo below L(k) (L(k + delta) = −L(−k) for the
// pairs here, a symmetric range). A bounded loss is cut at its
// ends, widened a little so that its extreme atoms lie inside the grid.
func (p *shiftPair) Truncation(eta float64) (lo, hi float64) {
	k := p.quantile(math.Min(math.Log(eta), -1))
	hi, lo = p.loss(-k), p.loss(k+p.delta)
	lo, hi = math.Max(lo, p.lMin), math.Min(hi, p.lMax)
	pad := 1e-9 * math.Max(hi-lo, 1e-300)
	return lo - pad, hi + pad
}

// Moments returns the mean and variance of L under P, summed over the
// integers within the noise's 1e-12 quantiles (every stride-th one when
// they are many: steering only).
func (p *shiftPair) Moments() (mean, variance float64) {
	p.once.Do(func() {
		k := p.quantile(math.Log(1e-12))
		n := 2*k + p.delta + 1
		stride := math.Max(1, math.Floor(n/4096))
		var m0, m1, m2 float64
		for x := -k; x <= k+p.delta; x += stride {
			w := math.Exp(p.noise.logPMF(x)) * stride
			l := p.loss(x)
			m0 += w
			m1 += w * l
			m2 += w * l * l
		}
		p.mean = m1 / m0
		p.vr = math.Max(m2/m0-p.mean*p.mean, 0)
	})
	return p.mean, p.vr
}

// Support: atoms only (see the mechanism's constructor).
func (p *shiftPair) Support() Support { return p.support }

// TailsCost is the noise's: two distribution-function values per Tails.
func (p *shiftPair) TailsCost() int { return 2 * p.noise.cost() }

// settle returns the largest integer m in [lo, hi] with loss(m) > l,
// from an estimate m (loss non-increasing, loss(lo) > l): the thresholds
// are decided by the same float64 losses the atoms have, so an atom is
// never on the wrong side of a point by the rounding of an estimate.
func settle(m, l, lo, hi float64, loss func(float64) float64) float64 {
	m = math.Min(math.Max(math.Floor(m), lo), hi)
	for i := 0; i < 64 && m < hi && loss(m+1) > l; i++ {
		m++
	}
	for i := 0; i < 64 && m > lo && !(loss(m) > l); i++ {
		m--
	}
	return m
}
