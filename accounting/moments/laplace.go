package moments

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

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
