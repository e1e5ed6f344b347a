package mechanism

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/search"
)

// allocation is the Gaussian mechanism run on a 1-out-of-t random
// allocation (balls-in-bins) under add-remove: one repetition is one group
// of t steps in which the record is used in exactly one, chosen uniformly.
// k-out-of-t epochs reach the accountants as k such groups
// ([accounting.Plan.Bounded], [accounting.AllocationGroups]).
//
// Its pair: with μ = 1/σ, the record's contribution to the one step it is
// used in is a unit vector, so one group releases
// P = (1/t)·Σ_i N(μe_i, I_t) against Q = N(0, I_t) (remove; add is the
// reverse). This pair dominates the group for adaptively chosen
// sensitivity-1 queries (Chua et al. 2024, arXiv 2412.16802, the
// dominating pair of balls-and-bins sampling; Feldman and Shenfeld 2025,
// arXiv 2502.08202, §3), and a linear query attains it, so its ε is the
// group's true ε. Its privacy loss is L = log(S/t) with S = Σ_i Y_i,
// Y_i = exp(μX_i − μ²/2), the X_i independent N(0, 1) under Q, and
// dP/dQ = S/t. See [AllocationPairs] for how it is discretised.
type allocation struct {
	sigma float64
	sampling
}

func (a allocation) Name() string { return "Gaussian" }

func (a allocation) Event() accounting.Event {
	return a.wrap(accounting.Gaussian{NoiseMultiplier: a.sigma})
}

func (a allocation) order() []float64 { return a.sampling.order(a.sigma, 0) }

// PLD: the dominating discrete pair of [AllocationPairs] (upper), for a
// 1-out-of-t group, or the unsampled Gaussian's where the grid is too
// coarse for it; k-out-of-t epochs are bounded as k groups (see
// [accounting.Plan.Bounded]).
func (a allocation) PLD() (*PLD, error) {
	if a.m != 1 {
		return nil, errorf("no privacy-loss pair for a %d-out-of-%d allocation: bound the plan (k groups of 1-out-of-t/k) first", a.m, a.n)
	}
	// The unsampled Gaussian pair dominates the group in both directions
	// too (H_γ is jointly convex, so a mixture of shifted Gaussians
	// against N(0, I) is no worse than one of them); it is the one used
	// where the spread pair's grid is too coarse to amplify (the grid is
	// capped: σ below about 0.9, or few steps at σ near 1).
	//
	// Neither stated pair is attained: the Gaussian's dominates the group's
	// pair, and the spread pair is its upper discretisation. The group's
	// own pair is attained (a linear query: the differing record
	// contributes a unit vector in its step, every other record 0), so
	// the witness is a post-processing of it ([allocationLower]).
	rem, add := newGaussianPair(a.sigma, 1, false), newGaussianPair(a.sigma, 1, true)
	if a.n < 2 {
		// One step: the record is in it, an unsampled release.
		return &PLD{Remove: &rem, Add: &add, Symmetric: true, GaussianSigma: a.sigma, MaxLoss: math.Inf(1), Attained: true}, nil
	}
	wit := allocationLower(a)
	gauss := &PLD{Remove: &rem, Add: &add, Symmetric: true, GaussianSigma: a.sigma, MaxLoss: math.Inf(1), Witness: wit}
	if _, d := allocGrid(1 / a.sigma); d > 1/a.sigma {
		return gauss, nil
	}
	up, err := AllocationPairs(1/a.sigma, a.n, false)
	if err != nil {
		return nil, err
	}
	if !amplifies(up.Remove, &rem) {
		return gauss, nil
	}
	return &PLD{Remove: up.Remove, Add: up.Add, MaxLoss: math.Inf(1), Witness: wit}, nil
}

// allocationLower is the witness of a 1-out-of-t group's pld (t ≥ 2): the
// dominated discrete pairs of [AllocationPairs] (lower), which reveal only
// a post-processing of the group's attained pair, so that a lower bound on
// their composition is one on the true ε of the run. Where those pairs
// cannot be made (σ < 0.25, too much work, a grid too coarse), it is the
// sum of the group's t outputs of the query: N(μ, t) against N(0, t), an
// unsampled Gaussian of noise σ√t (rounded up: less loss, still a lower
// bound).
type allocationLower allocation

func (a allocationLower) Name() string { return "Gaussian" }

func (a allocationLower) Event() accounting.Event { return allocation(a).Event() }

func (a allocationLower) order() []float64 { return a.sampling.order(a.sigma, 6) }

// PLD: the dominated pairs, stated as attained (post-processings of the
// group's attained pair), or the sum's Gaussian pair.
func (a allocationLower) PLD() (*PLD, error) {
	if 1/a.sigma <= 4 {
		if lo, err := AllocationPairs(1/a.sigma, a.n, true); err == nil {
			return &PLD{Remove: lo.Remove, Add: lo.Add, MaxLoss: math.Inf(1), Attained: true}, nil
		}
	}
	return AllocationProjection(a.sigma, a.n, 1, a.adj).PLD()
}

// RDP and ZCDP are the group's (which bound its post-processings too).
func (a allocationLower) RDP() (RDP, error) { return allocation(a).RDP() }

func (a allocationLower) ZCDP() (rho, xi float64, err error) { return allocation(a).ZCDP() }

// AllocationProjection returns the post-processing of one epoch of
// k-out-of-t random allocation of the Gaussian with noise multiplier
// sigma that keeps only the sum of the epoch's t outputs of a linear
// query to which the differing record contributes a unit vector in each
// of its k steps and every other record 0: N(k/σ, t) against N(0, t), the
// unsampled Gaussian of noise σ√t/k (rounded up: less loss, so a lower
// bound on it is one on the epoch's true ε). Its pairs are attained by
// that query.
func AllocationProjection(sigma float64, t, k int, adj accounting.Adjacency) Mechanism {
	s := sigma * math.Sqrt(float64(t)) / float64(k)
	return gaussian{sigma: search.Up(s, 4), sampling: poisson(1, adj)}
}

// amplifies reports whether the spread pair p (one pair for both
// directions) has a smaller hockey-stick divergence than the Gaussian
// pair g at the ε where g's is 1e-2, 1e-4 and 1e-6 (a choice between two
// dominating pairs: either is sound).
func amplifies(p, g Pair) bool {
	hs := func(x Pair, eps float64) float64 {
		t := x.Tails(eps)
		return math.Exp(t.PAbove) - math.Exp(eps+t.QAbove)
	}
	rev := p.(*discretePair).reverse()
	for _, target := range []float64{1e-2, 1e-4, 1e-6} {
		// The ε where g's divergence falls to target: doubling from 1
		// (ε = 0 is below it, not evaluated) up to 1024, the first
		// doubling ≥ 1e3, which is taken as the end if g's is still
		// above there; then 60 bisections at (lo + hi)/2, evaluated
		// even where that rounds to an end.
		const eMax = 1024
		steps := 0
		o, _ := search.Solve(search.Problem[float64]{
			Holds:   func(e float64) (bool, error) { return !(hs(g, e) > target) || e >= eMax, nil },
			Side:    search.Upper,
			Lo:      0,
			Hi:      1,
			LoKnown: true,
			Up:      func(e float64) (float64, bool) { return 2 * e, true },
			Next: func(lo, hi float64) (float64, bool) {
				steps++
				return (lo + hi) / 2, steps <= 60
			},
		})
		hi := o.X
		if math.Max(hs(p, hi), hs(rev, hi)) >= hs(g, hi) {
			return false
		}
	}
	return true
}

// RDP: for a 1-out-of-t group, the curve of [allocRDP]. (A k-out-of-t
// step not yet bounded as groups gets the unsampled Gaussian's: by joint
// convexity of exp((α−1)D_α), van Erven and Harremoës 2014, Theorem 13, a
// mixture of shifted Gaussians against N(0, I) is no worse than its
// worst component.)
func (a allocation) RDP() (RDP, error) {
	if a.m != 1 || a.n < 2 {
		return gaussianRDP{sigma: a.sigma, q: 1}, nil
	}
	return allocRDP{mu: 1 / a.sigma, t: a.n}, nil
}

// ZCDP is the unsampled Gaussian's ρ = 1/(2σ²), by the same convexity.
func (a allocation) ZCDP() (rho, xi float64, err error) {
	return 1 / (2 * a.sigma * a.sigma), 0, nil
}

// AllocPLDPairs are the two direction pairs of one 1-out-of-t group.
type AllocPLDPairs struct{ Remove, Add Pair }

// allocKey caches the pairs per (μ, t, lower).
type allocKey struct {
	mu    float64
	t     int
	lower bool
}

// allocCache holds the pairs of the last allocCacheSize keys (a σ
// calibration tries a few dozen).
var (
	allocCacheMu sync.Mutex
	allocCache   = map[allocKey]AllocPLDPairs{}
)

const allocCacheSize = 64

// The discretisation of the allocation pair: Y is kept on [0, yMax] with
// yMax = exp(μ·(μ + allocTail) − μ²/2) (the mass above it,
// Φ̄(allocTail) under P, is charged in full), on a grid of width μ/50,
// coarsened so that it has at most allocMaxCells cells.
const (
	allocTail     = 8.5
	allocMaxCells = 1 << 14
	allocDrop     = 1e-30 // masses below this at either end of a partial sum are dropped
	allocMaxWork  = 2e10  // the most multiply-adds the convolutions may take (about 20 s)
)

// AllocationPairs returns discrete pairs for the 1-out-of-t random
// allocation of the Gaussian with μ = 1/σ (see [allocation]), t ≥ 2.
//
// upper (lower false) returns one discrete pair that dominates the true
// pair in both directions (Remove = (P', Q'), Add = (Q', P')). Proof: on a
// grid {jΔ}, spread each Y (restricted to Y ≤ yMax) to the two ends of its
// cell with the probabilities that keep its mean: Y' is a mean-preserving
// spread of Y, so S' = ΣY'_i is one of S in the convex order (the sum of
// independent martingale couplings; Shaked and Shanthikumar 2007,
// Theorem 3.A.12). Both hockey-stick divergences are convex functions of
// S: H_γ(P‖Q) = E_Q[(S/t − γ)₊] and H_γ(Q‖P) = E_Q[(1 − γS/t)₊], so each
// is at most its value at S'. The outputs with some Y_i > yMax, and the
// mass dropped from the ends of partial sums (a randomised event given S'
// whose law is the same under both, so revealing it is free), form an
// event A that the pair reveals: H_γ(P‖Q) ≤ E_Q[(S'/t−γ)₊; A^c] + P(A)
// and H_γ(Q‖P) ≤ E_Q[(1−γS'/t)₊; A^c] + Q(A), which is what the pair
// with a P-only atom of mass P(A) (loss +∞) and a Q-only atom of mass
// Q(A) (loss −∞) gives. P(A) and Q(A) are 1 minus the kept masses. The
// pair dominates for every γ ≥ 0, so its compositions dominate those of
// the true pair (Zhu, Dong and Wang 2022, Theorem 10). The spread adds at
// most Δ²/4 to each Y's variance: the error is of second order in Δ.
//
// lower (lower true) returns two pairs dominated by the true ones:
// post-processings that reveal only which interval of a partition each
// Y_i falls in, merged by the sum of the intervals' conditional means
// (the exact likelihood ratio of that output is the mean of the
// conditional means). The partition is chosen so that each conditional
// mean lies just above a grid point (remove) or just below one (add), and
// it is rounded to that point, down for remove and up for add: rounding
// the mean down lowers P's masses, rounding up raises the add pair's
// second measure, and dropping outputs (the tails, Y > yMax) removes
// nonnegative terms; each only lowers both hockey-stick divergences, for
// one group and for any composition.
//
// Masses are computed in float64 from closed forms (differences of Φ)
// and direct (positive, cancellation-free) convolution; the upper pair's
// +∞ and −∞ atoms carry a margin of 1e-12 for their rounding; the lower
// pairs' first measures are scaled down and their second up by 1e-9, more
// than their rounding. It costs O(c²·log t) for c ≤ 2^14 cells and is
// cached.
func AllocationPairs(mu float64, t int, lower bool) (AllocPLDPairs, error) {
	if t < 2 || !(mu > 0) || math.IsInf(mu, 1) {
		return AllocPLDPairs{}, fmt.Errorf("mechanism: allocation pair needs t >= 2 and finite μ > 0 (t %d, μ %g)", t, mu)
	}
	if mu > 4 {
		// yMax = e^{μ²/2 + 8.5μ} is beyond any grid: bound without
		// amplification would be the honest answer, which the caller's
		// other rows give; refuse here.
		return AllocPLDPairs{}, errorf("random allocation with σ = %g < 0.25 is not supported by the pld pair (its loss range is too wide); use rdp", 1/mu)
	}
	// The work of the convolutions: the sum's window is about
	// (yMax + 20μ√t)/Δ cells, squared, log2(t) times.
	yMax, d := allocGrid(mu)
	if w := (yMax + 20*mu*math.Sqrt(float64(t))) / d; w*w*math.Log2(float64(t)) > allocMaxWork {
		return AllocPLDPairs{}, errorf("a 1-out-of-%d random allocation at σ = %g is too large for the pld pair (about %.3g operations); rdp bounds it", t, 1/mu, w*w*math.Log2(float64(t)))
	}
	key := allocKey{mu, t, lower}
	allocCacheMu.Lock()
	v, ok := allocCache[key]
	allocCacheMu.Unlock()
	if ok {
		return v, nil
	}
	var out AllocPLDPairs
	if lower {
		rem := allocLowerPair(mu, t, false)
		add := allocLowerPair(mu, t, true)
		if len(rem.loss) < 2 || len(add.loss) < 2 {
			// The grid is coarser than the mass of Y (Δ near its mean 1):
			// no partition has its conditional means on it.
			return AllocPLDPairs{}, errorf("the dominated pair of a 1-out-of-%d random allocation at σ = %g does not fit its grid", t, 1/mu)
		}
		out = AllocPLDPairs{Remove: rem, Add: add}
	} else {
		p := allocUpperPair(mu, t)
		out = AllocPLDPairs{Remove: p, Add: p.reverse()}
	}
	allocCacheMu.Lock()
	if len(allocCache) >= allocCacheSize {
		clear(allocCache)
	}
	allocCache[key] = out
	allocCacheMu.Unlock()
	return out, nil
}

// allocGrid returns yMax and the grid width Δ.
func allocGrid(mu float64) (yMax, delta float64) {
	yMax = math.Exp(mu*mu/2 + allocTail*mu)
	delta = mu / 50
	if yMax/delta > allocMaxCells {
		delta = yMax / allocMaxCells
	}
	return yMax, delta
}

// lnDensity is the density of Y = exp(μX − μ²/2), X ~ N(0, 1), at y > 0.
func lnDensity(mu, y float64) float64 {
	z := (math.Log(y) + mu*mu/2) / mu
	return math.Exp(-z*z/2) / (math.Sqrt(2*math.Pi) * mu * y)
}

// phiDiff returns Φ(b) − Φ(a) for a ≤ b, from whichever tails avoid
// cancellation.
func phiDiff(a, b float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	switch {
	case b <= 0:
		return phi(b) - phi(a)
	case a >= 0:
		return phi(-a) - phi(-b)
	}
	return 1 - phi(a) - phi(-b)
}

// cellMoments returns ∫_a^b f and ∫_a^b (y − c)·f, f the density of Y
// (0 ≤ a < b), in closed form: with z(y) = (log y + μ²/2)/μ,
// ∫_a^b f = Φ(z(b)) − Φ(z(a)) and ∫_a^b y·f = Φ(z(b) − μ) − Φ(z(a) − μ)
// (y·f is the density of Y under the shifted X ~ N(μ, 1)).
func cellMoments(mu, a, b, c float64) (m0, m1 float64) {
	z := func(y float64) float64 {
		if y <= 0 {
			return math.Inf(-1)
		}
		return (math.Log(y) + mu*mu/2) / mu
	}
	za, zb := z(a), z(b)
	m0 = phiDiff(za, zb)
	my := phiDiff(za-mu, zb-mu)
	return m0, my - c*m0
}

// convolve returns the convolution of a (offset oa) and b (offset ob)
// with its offset, trimmed of entries below allocDrop at both ends.
func convolve(a []float64, oa int, b []float64, ob int) ([]float64, int) {
	out := make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		if x == 0 {
			continue
		}
		row := out[i : i+len(b)]
		for j, y := range b {
			row[j] += x * y
		}
	}
	lo, hi := 0, len(out)
	for lo < hi-1 && out[lo] < allocDrop {
		lo++
	}
	for hi-1 > lo && out[hi-1] < allocDrop {
		hi--
	}
	return out[lo:hi], oa + ob + lo
}

// selfConvolve returns the t-fold convolution of a (offset oa) by
// binary powering.
func selfConvolve(a []float64, oa, t int) ([]float64, int) {
	var res []float64
	ro := 0
	pw, po := a, oa
	for t > 0 {
		if t&1 == 1 {
			if res == nil {
				res, ro = append([]float64(nil), pw...), po
			} else {
				res, ro = convolve(res, ro, pw, po)
			}
		}
		t >>= 1
		if t > 0 {
			pw, po = convolve(pw, po, pw, po)
		}
	}
	return res, ro
}

// allocUpperPair builds the dominating pair of AllocationPairs.
func allocUpperPair(mu float64, t int) *discretePair {
	yMax, d := allocGrid(mu)
	n := int(math.Ceil(yMax / d))
	// Spread each cell [jΔ, (j+1)Δ] to its ends, keeping mass and mean.
	y := make([]float64, n+1)
	for j := 0; j < n; j++ {
		a, b := float64(j)*d, float64(j+1)*d
		m0, m1 := cellMoments(mu, a, b, a) // m1 = ∫(y − a)f
		if m0 <= 0 {
			continue
		}
		wb := math.Min(math.Max(m1/d, 0), m0)
		y[j+1] += wb
		y[j] += m0 - wb
	}
	lo := 0
	for lo < len(y)-1 && y[lo] < allocDrop {
		lo++
	}
	s, off := selfConvolve(y[lo:], lo, t)
	loss := make([]float64, 0, len(s))
	lp := make([]float64, 0, len(s))
	lq := make([]float64, 0, len(s))
	var sp, sq kahan
	for i, q := range s {
		j := off + i
		if q <= 0 {
			continue
		}
		if j == 0 {
			continue // S' = 0: no P-mass; its Q-mass goes to the −∞ atom
		}
		v := float64(j) * d / float64(t)
		p := q * v
		loss = append(loss, math.Log(v))
		lp = append(lp, math.Log(p))
		lq = append(lq, math.Log(q))
		sp.add(p)
		sq.add(q)
	}
	// The revealed event A: what the kept masses miss, with a margin for
	// the rounding of the masses (each within about 1e-12 of itself, the
	// spread weights being differences of closed forms) and of the sums.
	const margin = 1e-12
	pInf := math.Max(1-sp.sum(), 0) + margin
	qInf := math.Max(1-sq.sum(), 0) + margin
	return newDiscretePair(loss, lp, lq, math.Log(pInf), math.Log(qInf))
}

// allocLowerPair builds a dominated pair of AllocationPairs: remove (add
// false) or add (add true).
func allocLowerPair(mu float64, t int, add bool) *discretePair {
	yMax, d := allocGrid(mu)
	n := int(math.Ceil(yMax / d))
	y := make([]float64, n+1)
	// Start where the Q-mass below is negligible (dropped).
	e := math.Exp(-40*mu - mu*mu/2)
	tau := 1e-6 * d
	for e < yMax {
		g := (math.Floor(e/d) + 1) * d // the next grid point above e
		target := g + tau
		if add {
			target = g - tau
		}
		if target <= e {
			g += d
			target += d
		}
		// Solve ∫_e^x (y − target) f dy = 0 for x > target by Newton
		// from the bracket's midpoint, safeguarded by bisection. The
		// bracket [target, target + 4(target − e) + 4d] (f ≤ 0 at
		// target, not evaluated) grows by hi += 2(hi − e) until f > 0 at
		// hi, at most 60 evaluations (then one more step, not
		// evaluated); the Newton phase ends on a step ≤ 1e-15·x or after
		// 60 evaluations, at its last step x.
		var f float64 // f at the last point evaluated
		positive := func(x float64) (bool, error) {
			_, f = cellMoments(mu, e, x, target)
			return f > 0, nil
		}
		grows := 0
		br, _ := search.Solve(search.Problem[float64]{
			Holds:   positive,
			Side:    search.Upper,
			Lo:      target,
			Hi:      target + 4*(target-e) + 4*d,
			LoKnown: true,
			Up: func(h float64) (float64, bool) {
				grows++
				return h + 2*(h-e), grows < 60
			},
			Done: func(lo, hi float64) bool { return true },
		})
		lo, hi := br.Lo, br.Hi
		if br.Status == search.NoBracket {
			lo, hi = br.Hi, br.Hi+2*(br.Hi-e)
		}
		x, steps := 0.0, 0
		search.Solve(search.Problem[float64]{
			Holds:   positive,
			Side:    search.Upper,
			Lo:      lo,
			Hi:      hi,
			LoKnown: true,
			HiKnown: true,
			Next: func(lo, hi float64) (float64, bool) {
				steps++
				if steps == 1 {
					x = lo + (hi-lo)/2
					return x, true
				}
				// The step from x, where f was just evaluated.
				fp := (x - target) * lnDensity(mu, x)
				nx := x - f/fp
				if !(nx > lo && nx < hi) || fp == 0 {
					nx = lo + (hi-lo)/2
				}
				done := math.Abs(nx-x) <= 1e-15*x || steps > 60
				x = nx
				return x, !done
			},
		})
		if x > yMax {
			break // the tail above yMax is dropped
		}
		m0, m1 := cellMoments(mu, e, x, target)
		if m0 > 0 {
			mean := target + m1/m0
			// The conditional mean must round to g: at or above it for
			// remove (rounded down), at or below for add (rounded up).
			j := int(math.Round(g / d))
			if (!add && mean >= g) || (add && mean <= g) {
				y[j] += m0
			} else if !add {
				y[j-1] += m0
			} else if j+1 < len(y) {
				y[j+1] += m0
			}
		}
		e = x
	}
	lo := 0
	for lo < len(y)-1 && y[lo] < allocDrop {
		lo++
	}
	s, off := selfConvolve(y[lo:], lo, t)
	var loss, lp, lq []float64
	for i, q := range s {
		j := off + i
		if q <= 0 || j == 0 {
			continue
		}
		v := float64(j) * d / float64(t)
		p := q * v
		if !add {
			loss, lp, lq = append(loss, math.Log(v)), append(lp, math.Log(p)), append(lq, math.Log(q))
		} else {
			// The add pair: first measure Q, second P, loss −log(S/t).
			loss, lp, lq = append(loss, -math.Log(v)), append(lp, math.Log(q)), append(lq, math.Log(p))
		}
	}
	// The masses carry float64 rounding: differences of Φ and positive
	// convolutions of at most allocMaxCells cells, log2(t) times, each
	// within about cells·log2(t)·2^-53 < 2e-11 relative. A lower pair must
	// not gain from it, so the first measure is scaled down and the second
	// up by lowerMargin (each then at most the true mass, and at least it):
	// every (p − γq)₊ can only fall, here and in any composition.
	dp, dq := math.Log1p(-lowerMargin), math.Log1p(lowerMargin)
	for i := range loss {
		lp[i] += dp
		lq[i] += dq
		loss[i] += dp - dq
	}
	if add {
		for i, j := 0, len(loss)-1; i < j; i, j = i+1, j-1 {
			loss[i], loss[j] = loss[j], loss[i]
			lp[i], lp[j] = lp[j], lp[i]
			lq[i], lq[j] = lq[j], lq[i]
		}
	}
	return newDiscretePair(loss, lp, lq, math.Inf(-1), math.Inf(-1))
}

// lowerMargin is the relative margin of a lower pair's masses for their
// rounding (see allocLowerPair), fifty times the bound on it.
const lowerMargin = 1e-9

// kahan is a compensated (Neumaier) sum.
type kahan struct{ s, c float64 }

func (k *kahan) add(x float64) {
	t := k.s + x
	if math.Abs(k.s) >= math.Abs(x) {
		k.c += (k.s - t) + x
	} else {
		k.c += (x - t) + k.s
	}
	k.s = t
}

func (k *kahan) sum() float64 { return k.s + k.c }

// discretePair is a pair with finitely many atoms: P-mass e^{lp[i]} and
// Q-mass e^{lq[i]} at loss[i] (ascending), plus P-mass e^{logPInf} at loss
// +∞ and Q-mass e^{logQNegInf} at loss −∞. Its tails are compensated sums,
// within a few ulps.
type discretePair struct {
	loss, lp, lq       []float64
	logPInf, logQNeg   float64
	pAbove, qAbove     []float64 // log Σ_{j ≥ i} (P with +∞ atom, Q)
	pBelow, qBelow     []float64 // log Σ_{j < i} (P, Q with −∞ atom)
	mean, variance     float64
	logPNegIn, logQInf float64 // reverse pairs' atoms: P-mass at −∞, Q-mass at +∞
}

func newDiscretePair(loss, lp, lq []float64, logPInf, logQNeg float64) *discretePair {
	return newDiscretePairFull(loss, lp, lq, logPInf, logQNeg, math.Inf(-1), math.Inf(-1))
}

func newDiscretePairFull(loss, lp, lq []float64, logPInf, logQNeg, logPNeg, logQInf float64) *discretePair {
	n := len(loss)
	p := &discretePair{loss: loss, lp: lp, lq: lq, logPInf: logPInf, logQNeg: logQNeg, logPNegIn: logPNeg, logQInf: logQInf}
	p.pAbove, p.qAbove = make([]float64, n+1), make([]float64, n+1)
	p.pBelow, p.qBelow = make([]float64, n+1), make([]float64, n+1)
	var a, b kahan
	a.add(math.Exp(logPInf))
	b.add(math.Exp(logQInf))
	p.pAbove[n], p.qAbove[n] = math.Log(a.sum()), math.Log(b.sum())
	for i := n - 1; i >= 0; i-- {
		a.add(math.Exp(lp[i]))
		b.add(math.Exp(lq[i]))
		p.pAbove[i], p.qAbove[i] = math.Log(a.sum()), math.Log(b.sum())
	}
	a, b = kahan{}, kahan{}
	a.add(math.Exp(logPNeg))
	b.add(math.Exp(logQNeg))
	p.pBelow[0], p.qBelow[0] = math.Log(a.sum()), math.Log(b.sum())
	var m0, m1, m2 float64
	for i := 0; i < n; i++ {
		a.add(math.Exp(lp[i]))
		b.add(math.Exp(lq[i]))
		p.pBelow[i+1], p.qBelow[i+1] = math.Log(a.sum()), math.Log(b.sum())
		w := math.Exp(lp[i])
		m0 += w
		m1 += w * loss[i]
		m2 += w * loss[i] * loss[i]
	}
	if m0 > 0 {
		p.mean = m1 / m0
		p.variance = math.Max(m2/m0-p.mean*p.mean, 0)
	}
	return p
}

// reverse returns the pair with P and Q swapped (loss −L).
func (p *discretePair) reverse() *discretePair {
	n := len(p.loss)
	loss, lp, lq := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		loss[i], lp[i], lq[i] = -p.loss[n-1-i], p.lq[n-1-i], p.lp[n-1-i]
	}
	// P's +∞ atom becomes the reverse's Q-mass at +∞... of loss −∞ for P':
	// the reverse has P'-mass e^{logQNeg} at loss +∞ and Q'-mass e^{logPInf}
	// at loss −∞.
	return newDiscretePairFull(loss, lp, lq, p.logQNeg, p.logPInf, p.logQInf, p.logPNegIn)
}

func (p *discretePair) Tails(l float64) Tails {
	i := sort.Search(len(p.loss), func(i int) bool { return p.loss[i] > l })
	return Tails{PAbove: p.pAbove[i], QAbove: p.qAbove[i], PBelow: p.pBelow[i], QBelow: p.qBelow[i]}
}

func (p *discretePair) Truncation(eta float64) (lo, hi float64) {
	n := len(p.loss)
	if n == 0 {
		return 0, 1 // no finite loss (not made by AllocationPairs)
	}
	le := math.Log(eta)
	i := 0
	for i < n-1 && p.pBelow[i+1] <= le {
		i++
	}
	j := n - 1
	for j > 0 && p.pAbove[j] <= le {
		j--
	}
	lo, hi = p.loss[i], p.loss[j]
	if !(lo < hi) {
		hi = lo + 1
	}
	return lo, hi
}

func (p *discretePair) Moments() (mean, variance float64) { return p.mean, p.variance }

// Support: finitely many atoms, listed only in count (a lattice of the
// grid); the +∞ atom's P-mass.
func (p *discretePair) Support() Support { return Support{Lattice: true, LogInf: p.logPInf} }

// TailsCost: a binary search, cheaper than the Gaussian's erfc.
func (p *discretePair) TailsCost() int { return 1 }
