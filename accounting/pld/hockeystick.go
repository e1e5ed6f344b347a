package pld

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// buildSums precomputes the suffix sums used by δ(ε) queries.
func (c *composition) buildSums() {
	c.i0 = max(0, int(math.Floor(-c.shift/c.h))-c.lo) // first index with loss > 0
	for c.i0 > 0 && c.i0-1 < len(c.c) && c.loss(c.i0-1) > 0 {
		c.i0--
	}
	for c.i0 < len(c.c) && c.loss(c.i0) <= 0 {
		c.i0++
	}
	if c.i0 > len(c.c) {
		c.i0 = len(c.c)
	}
	m := len(c.c) - c.i0
	c.sA = resize(c.sA, m+1)
	c.sB = resize(c.sB, m+1)
	var a, ca, b, cb float64 // Neumaier sums
	// e^{−loss} by recurrence (×e^h per step down), re-anchored with an
	// exact exp every 64 entries: relative error < 100 ulps, far inside
	// relSlack. When the top loss L exceeds 700, e^{−loss} would be
	// subnormal or 0 near the top, where its relative error is unbounded
	// (and a b rounded up under-reports the upper δ): the terms are scaled
	// by e^{bScale}, bScale = L − 700, which at(·) and epsilon undo. Terms
	// more than 1400 below L would overflow: their factor is capped at
	// e^700, which lowers b (safe for the upper δ); cells that contain
	// them get the trivial lower bound 0 (see linear).
	c.bScale, c.capTop = 0, -1
	if m > 0 {
		if top := c.loss(len(c.c) - 1); top > 700 {
			c.bScale = top - 700
		}
	}
	const capV = 0x1p1009 // ≈ e^699.4 < e^700
	eh := math.Exp(c.h)
	var ex float64
	for i := len(c.c) - 1; i >= c.i0; i-- {
		if (len(c.c)-1-i)%64 == 0 {
			ex = math.Exp(math.Min(c.bScale-c.loss(i), 700))
		} else {
			ex *= eh
		}
		if ex > capV {
			ex = capV
			c.capTop = max(c.capTop, i)
		}
		v := c.c[i]
		w := v * ex
		a, ca = search.Neumaier(a, ca, v)
		b, cb = search.Neumaier(b, cb, w)
		c.sA[i-c.i0] = a + ca
		c.sB[i-c.i0] = b + cb
	}
}

// resize returns a zeroed slice of length n, reusing s when it is large
// enough.
func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// loss returns the loss at index i.
func (c *composition) loss(i int) float64 { return float64(c.lo+i)*c.h + c.shift }

// sums returns A = Σ c[k], B = Σ c[k]e^{bScale−loss_k} over k ≥ i (i ≥ i0)
// and the number of terms.
func (c *composition) sums(i int) (a, b float64, cnt int) {
	if i < c.i0 {
		i = c.i0
	}
	if i >= len(c.c) {
		return 0, 0, 0
	}
	return c.sA[i-c.i0], c.sB[i-c.i0], len(c.c) - i
}

// linear returns k and b such that, for ε in the cell where the terms with
// index ≥ i are those with loss > ε, the upper (or lower) bound on δ(ε)
// before clamping to [0, 1] is k − e^{ε−bScale}·b.
//
// With A = Σ_{k≥i} c_k, W_i = W(loss_i) (1 without tilt) and G_i =
// (Σ_{k≥i} (W_k/W_i)²)^{1/2} (√cnt without tilt; a geometric sum with it),
// the FFT error contributes at most e2·W_i·G_i (Cauchy–Schwarz, f ≤ 1),
// aliasing and dropped tilted mass at most their tilted mass times W_i,
// and mass above the window at most tailTop·W(top).
//
// Upper: (1+rho)·(Σ c(1 − e^{ε−loss}) + e2·W_i·G_i + lost·W_i + tailTop·W_top)
// + relSlack·A (summation round-off) + inf + cnt·1e-300 (entries whose
// W underflowed). Lower: (1−rho)·Σ c(1 − e^{ε−loss}) − relSlack·A −
// e2·W_i·G_i − (tailTop + tailBot)·W_i. Multiplying only the k-part by
// 1 ± rho is safe since the sum is non-negative in its cell.
//
// Above the top of the exact composition's support (i > top) the finite
// mass is exactly 0, so the upper bound is inf alone, with no error term
// (a direction whose losses stay below ε, such as the add direction of a
// small sampling rate, whose loss per step is at most −log(1−q)).
func (c *composition) linear(i int, upper bool) (k, b float64) {
	if upper && c.beyondTop(i) {
		return c.inf, 0
	}
	a, b, cnt := c.sums(i)
	if !upper && i <= c.capTop {
		return 0, 0 // b was lowered by the cap: only 0 is a safe lower bound
	}
	fft, wi, wTop := c.errTerms(i, cnt)
	if upper {
		e := fft + times(c.lost, wi) + times(c.tailTop, wTop)
		return (1+c.rho)*(a+e) + relSlack*a + c.inf + float64(cnt)*1e-300, b
	}
	return (1-c.rho)*a - relSlack*a - fft - times(c.tailTop+c.tailBot+c.lost, wi), b
}

// beyondTop reports whether every index from i on lies above the top of
// the exact composition's support (see composition.top).
func (c *composition) beyondTop(i int) bool { return c.topKnown && i > c.top }

// errTerms returns the FFT error bound e2·W_i·G_i of the δ sum over the cnt
// terms from index i, W_i and W at the top of the window (see linear).
func (c *composition) errTerms(i, cnt int) (fft, wi, wTop float64) {
	i = max(i, c.i0)
	wi = math.Exp(c.logWAt(i))
	g := math.Sqrt(float64(cnt))
	if c.lambda > 0 && cnt > 0 {
		g = math.Sqrt(math.Expm1(-2*c.lambda*c.h*float64(cnt)) / math.Expm1(-2*c.lambda*c.h))
	}
	wTop = 1.0
	if n := len(c.c); n > 0 {
		wTop = math.Exp(c.logWAt(n - 1))
	}
	return times(c.e2*g*(1+1e-12), wi), wi, wTop
}

// times returns x·w for x, w ≥ 0, with 0·∞ = 0 (a vanishing error term
// stays 0 where the tilt's weight overflows).
func times(x, w float64) float64 {
	if x == 0 {
		return 0
	}
	return x * w
}

// noisyAt reports whether the untilted error terms at eps move ε by more
// than noiseFrac of the target gap (see result.noisy), for this
// composition alone.
func (c *composition) noisyAt(eps, delta float64) bool {
	if math.IsInf(eps, 1) || math.IsNaN(eps) {
		return true
	}
	i := c.index(eps)
	s := 1e-3
	if d := c.at(eps, i, true); d > 0 {
		if _, b := c.linear(i, true); b > 0 {
			s = math.Max(s, math.Exp(eps-c.bScale)*b/d)
		}
	}
	return c.noise(eps) > noiseFrac*targetGap*math.Max(eps, 0.01)*s*delta
}

// noise returns the error terms of the upper δ at eps that a tilt can
// shrink (FFT round-off and the window tails), to decide whether to tilt.
func (c *composition) noise(eps float64) float64 {
	i := c.index(eps)
	if c.beyondTop(i) {
		return 0 // the upper δ is exact there (see linear)
	}
	_, _, cnt := c.sums(i)
	fft, wi, wTop := c.errTerms(i, cnt)
	return fft + times(c.tailBot+c.lost, wi) + times(c.tailTop, wTop)
}

// at returns the clamped bound at ε with terms i... (see linear).
func (c *composition) at(eps float64, i int, upper bool) float64 {
	if upper && c.lambda > 0 && i <= 0 {
		// Below a tilted window: the original mass between eps and the
		// window (tilted mass ≤ tailBot, but W is unbounded there) is not
		// bounded; only the trivial bound holds.
		return 1
	}
	k, b := c.linear(i, upper)
	d := k
	if b > 0 {
		d = k - expTimes(eps-c.bScale, b, !upper)
	}
	return math.Max(0, math.Min(d, 1))
}

// expTimes returns e^eps·b for b > 0, rounded up when up is set and down
// otherwise. For |eps| < 700 it is the plain product. Beyond, e^eps alone
// would overflow (at eps ≈ 709.78; an infinite product would drive δ(ε) to
// 0, an under-report) or underflow while b is large; the product is then
// formed as exp(eps + log b). The relative error of either form (a few
// times max(1, |eps + log b|)·u < 1e-12) is resolved by the same factor
// 1 ± 1e-12 in both, so that the result stays monotone in eps across the
// switch (δ bounds built from it are then non-increasing in ε).
func expTimes(eps, b float64, up bool) float64 {
	var v float64
	if eps < 700 && eps > -700 {
		v = math.Exp(eps) * b
	} else {
		v = math.Exp(eps + logmath.Log(b))
	}
	if up {
		return v * (1 + 1e-12)
	}
	return v * (1 - 1e-12)
}

// epsilonLower returns a certified lower bound on ε(delta): the largest ε
// at which the lower δ-bound exceeds delta (the true δ(ε) is
// non-increasing, so it exceeds delta at every smaller ε too). The lower
// bound need not be monotone in ε (its error terms are weighted by W at the
// cell, which grows toward small losses under a tilt), so the grid is
// scanned from the top for the last cell where it exceeds delta, and ε is
// solved for inside that cell.
func (c *composition) epsilonLower(delta float64) float64 {
	at := func(eps float64, i int) float64 { return c.at(eps, i, false) }
	// g(j) = bound at ε = loss(j) (terms > loss(j) are j+1...). It is at
	// most the mass A above loss(j) (see linear), so the cells where A ≤
	// delta are passed by A alone (a tilted window reaches far above ε:
	// σ 0.7985, q 0.0005428, T 821 scanned 265,000 cells of 280,000,
	// 9% of the ε query).
	j := len(c.c) - 1
	for ; j >= c.i0; j-- {
		if a, _, _ := c.sums(j + 1); a > delta {
			break
		}
	}
	for ; j >= c.i0; j-- {
		if at(c.loss(j), j+1) > delta {
			break
		}
	}
	if j == len(c.c)-1 {
		return c.loss(j) // exceeds delta at the top of the window
	}
	var left float64
	if j < c.i0 {
		// The cell (0, loss(i0)], with the terms of ε = 0.
		if j = c.i0 - 1; j >= len(c.c)-1 || at(0, c.i0) <= delta {
			return 0
		}
	} else {
		left = c.loss(j)
	}
	// The bound is K − e^ε·B on (left, loss(j+1)] with the terms ≥ j+1.
	right := c.loss(j + 1)
	kConst, b := c.linear(j+1, false)
	eps := left
	if b > 0 && kConst > delta {
		eps = logmath.Log(kConst-delta) - logmath.Log(b) + c.bScale
	}
	eps = math.Max(left, math.Min(eps, right))
	return math.Max(left, eps*(1-1e-12))
}

// index returns the first index whose loss is > eps.
func (c *composition) index(eps float64) int {
	i := int(math.Floor((eps-c.shift)/c.h)) - c.lo + 1
	// Guard the floating floor both ways.
	for i > 0 && i-1 < len(c.c) && c.loss(i-1) > eps {
		i--
	}
	for i < len(c.c) && i >= 0 && c.loss(i) <= eps {
		i++
	}
	return max(i, 0)
}

// delta returns δ(ε) bounded from above (upper = true) or below.
func (c *composition) delta(eps float64, upper bool) float64 {
	return c.at(eps, c.index(eps), upper)
}

// epsilon returns inf{ε ≥ 0 : bound(ε) ≤ δ} where bound is the upper or
// lower δ-bound; +Inf if there is none. bound is non-increasing in ε, so
// the grid cell is found by bisection and ε inside it in closed form
// (within a cell bound(ε) = const − e^ε·B). For the upper bound the result
// is rounded up.
func (c *composition) epsilon(delta float64, upper bool) float64 {
	if !upper {
		return c.epsilonLower(delta)
	}
	at := func(eps float64, i int) float64 { return c.at(eps, i, upper) }
	if at(0, c.index(0)) <= delta {
		return 0
	}
	// g(j) = bound at ε = loss(j) (terms > loss(j) are j+1...).
	lo, hi := c.i0, len(c.c)-1 // loss(lo) > 0
	if hi < lo || at(c.loss(hi), hi+1) > delta {
		return math.Inf(1)
	}
	// The bound at hi was just seen ≤ δ; lo is evaluated next (if it
	// holds there too, it is the answer: the bracket cannot grow down),
	// then the midpoint lo + (hi−lo)/2, the same index as (lo+hi)/2, until
	// the cell is one wide.
	o, _ := search.Solve(search.Problem[int]{
		Holds:   func(j int) (bool, error) { return at(c.loss(j), j+1) <= delta, nil },
		Lo:      lo,
		Hi:      hi,
		HiKnown: true,
		Done:    func(lo, hi int) bool { return hi-lo <= 1 },
	})
	hi = o.X
	// ε* ∈ (loss(hi−1), loss(hi)] (or (0, loss(hi)]), terms ≥ hi.
	left := 0.0
	if hi > c.i0 {
		left = c.loss(hi - 1)
	}
	right := c.loss(hi)
	if hi == 0 && c.lambda > 0 {
		return right // below a tilted window the bound is trivial (see at)
	}
	// Solve bound(ε) = δ with the terms i ≥ hi: bound = K − e^ε·B.
	kConst, b := c.linear(hi, upper)
	var eps float64
	switch {
	case kConst <= delta:
		eps = left
	case b <= 0:
		// The bound is kConst > δ throughout the cell (b underflows to 0
		// for losses beyond ~745): it first drops to δ at the right end.
		eps = right
	default:
		// In logs: b may be subnormal (it carries e^{bScale−loss} down to
		// e^{−1400}), and then the ratio overflows.
		eps = logmath.Log(kConst-delta) - logmath.Log(b) + c.bScale
	}
	eps = math.Max(left, math.Min(eps, right))
	if !upper {
		return math.Max(left, eps*(1-1e-12))
	}
	// The upper ε is certified by evaluating the very bound that delta
	// reports: step up (relative 1e-12, doubling) until it is at most δ,
	// else take the cell's right end, where the bisection showed it is.
	// The points tried are eps and its raises below right, at most 64.
	if !(eps < right) {
		return right
	}
	step := 1e-12 * math.Max(1, math.Abs(eps))
	k := 1 // points tried
	cert, _ := search.Solve(search.Problem[float64]{
		Holds: func(e float64) (bool, error) { return c.at(e, c.index(e), true) <= delta, nil },
		Lo:    eps,
		Hi:    eps,
		Up: func(e float64) (float64, bool) {
			e = math.Min(math.Nextafter(e+step, math.Inf(1)), right)
			step *= 2
			k++
			return e, k <= 64 && e < right
		},
		Done: func(lo, hi float64) bool { return true }, // the first point that holds
	})
	if cert.Status == search.NoBracket {
		return right
	}
	return cert.X
}
