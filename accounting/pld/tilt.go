package pld

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/internal/search"
)

// tiltParts returns the parts with their finite masses tilted by e^{lambda·l}
// and normalised to total mass at most 1, logW = Σ count·log(per-step
// normaliser), so that c = c̃·e^{logW − lambda·l} for the composed
// distributions, and a bound rho on the relative error that the rounding
// of the tilted masses and of the back-conversion puts on c (first order,
// doubled). ok is false when rho would exceed 1e-6 (too many steps for the
// tilt to pay), or the tilt is not finite.
//
// Each tilted mass is p_k·e^{y_k}/Z with y_k = lambda·(k − k*)·h, k* the
// index of the largest tilted mass: the relative rounding error of e^{y}
// is below (|y|+1)·u, of the product and the quotient 2u. Masses whose
// tilted value is below 2^−1000 of the total are set to 0; lost bounds the
// tilted mass of the composed paths through them (each such mass is below
// 2^−1000, the other factors sum to at most 1). Relative errors compound
// over the count steps of the part: (1+r)^count, first order count·r.
func tiltParts(parts []part, h, lambda float64) (out []part, logW, rho, lost float64, ok bool) {
	const u = 0x1p-53
	out = make([]part, len(parts))
	var relErr, logWErr float64
	for si, pt := range parts {
		m := &pt.pmf
		kStar := tiltArgmax(m.p, h, lambda)
		tp := pmf{lo: m.lo, off: m.off, inf: m.inf, p: make([]float64, len(m.p))}
		if kStar < 0 {
			out[si] = part{tp, pt.count}
			continue
		}
		var sum, comp, yMax float64
		for i, v := range m.p {
			if !(v > 0) {
				continue
			}
			y := lambda * float64(i-kStar) * h
			ay := math.Abs(y)
			var x float64
			if y < 700 {
				x = v * math.Exp(y)
			} else {
				// e^y alone would overflow; x ≤ p[k*] ≤ 1 by the choice of k*.
				lv := math.Log(v)
				x = math.Exp(lv + y)
				ay += math.Abs(lv)
			}
			tp.p[i] = x
			yMax = max(yMax, ay)
			sum, comp = search.Neumaier(sum, comp, x)
		}
		z := (sum + comp) * (1 + 0x1p-48) // Σ tp.p/z ≤ 1 despite rounding
		floor := z * 0x1p-1000
		for i, x := range tp.p {
			if x < floor {
				tp.p[i] = 0
				if x > 0 || m.p[i] > 0 {
					lost += float64(pt.count) * 0x1p-1000
				}
			} else {
				tp.p[i] = x / z
			}
		}
		lz := math.Log(z) + lambda*(float64(m.lo+kStar)*h+m.off)
		if math.IsInf(lz, 0) || math.IsNaN(lz) {
			return nil, 0, 0, 0, false
		}
		logW += float64(pt.count) * lz
		logWErr += float64(pt.count) * (math.Abs(lz) + 1)
		relErr += float64(pt.count) * (yMax + 4) * u
		out[si] = part{tp, pt.count}
	}
	// W(l) = e^{logW − lambda·l}: the exponent's rounding (the sum above,
	// the log, the product lambda·l for |l| up to the composed range) is a
	// relative error of W below 4u·(Σ count(|lz|+1) + |logW|) + that of the
	// product, added in untilt.
	rho = 2 * (relErr + 4*u*(logWErr+math.Abs(logW)))
	if !(rho <= 1e-6) {
		return nil, 0, 0, 0, false
	}
	return out, logW, rho, lost, true
}

// untilt turns the tilted composition in c (masses c̃) into the original
// one: c[i] = c̃[i]·W(loss_i), with the exponent capped at 700 (c̃ ≤ 1 at
// such a loss, where the true mass is at most 1, so capping only moves
// the entry toward its true value), and rebuilds the sums.
func (c *composition) untilt(lambda, logW, rho float64) {
	c.lambda, c.logW = lambda, logW
	var lMax float64 // the loss is monotone in i: its largest |·| is at an end
	if n := len(c.c); n > 0 {
		lMax = math.Max(math.Abs(c.loss(0)), math.Abs(c.loss(n-1)))
	}
	c.rho = rho + 8*0x1p-53*(lambda*lMax+1)
	for i, v := range c.c {
		if v > 0 {
			c.c[i] = v * math.Exp(min(c.logWAt(i), 700))
		}
	}
	c.buildSums()
}

// logWAt returns log W at the loss of index i (see composition).
func (c *composition) logWAt(i int) float64 {
	if c.lambda == 0 {
		return 0
	}
	return c.logW - c.lambda*c.loss(i)
}

// tiltArgmax returns the first index k of the largest log(p_k) +
// lambda·k·h over the positive masses (−1: none), each term rounded as
// written. It takes the logarithm only of the masses whose term can be
// within 2·ln 2 of the largest: the binary exponent of p_k bounds log p_k
// within ln 2 from above and below, and every other term is below the
// largest, so the index and its ties are those of a logarithm per mass.
func tiltArgmax(p []float64, h, lambda float64) int {
	// With v's exponent field e (v > 0 normal): (e−1023)·ln 2 ≤ log v <
	// (e−1022)·ln 2; a subnormal (e = 0) has log v < −1022·ln 2 and no
	// such lower bound, so the first pass, which finds a lower bound best
	// on the largest term, skips it. A term whose upper bound is more
	// than 4·slack below best is below the largest term, rounding
	// included: slack covers the rounding of the logs, products and sums
	// many times over (terms below 745 + |y| in magnitude).
	n := len(p)
	slack := 1e-9 * (4096 + math.Abs(lambda*float64(n)*h))
	best := math.Inf(-1)
	normal := false
	for i, v := range p {
		if v > 0 {
			e := int(math.Float64bits(v)>>52) & 0x7ff
			if e == 0 || e == 0x7ff {
				continue
			}
			normal = true
			if lb := float64(e-1023)*math.Ln2 + lambda*float64(i)*h; lb > best {
				best = lb
			}
		}
	}
	// Terms whose upper bound is below floor are below the largest.
	floor := math.Inf(-1)
	if normal && !math.IsInf(best, 0) && !math.IsNaN(best) {
		floor = best - 4*slack
	}
	kStar, top := -1, math.Inf(-1)
	for i, v := range p {
		if !(v > 0) {
			continue
		}
		y := lambda * float64(i) * h
		if e := int(math.Float64bits(v)>>52) & 0x7ff; e != 0x7ff && float64(e-1022)*math.Ln2+y < floor {
			continue // below the largest term: not the argmax
		}
		if l := math.Log(v) + y; l > top {
			kStar, top = i, l
		}
	}
	return kStar
}

// tiltedMean returns the mean loss of m's finite part tilted by
// e^{lambda·loss} (steering only: no bound depends on its accuracy). The
// weights e^{lambda·(k−k*)·h} come from an exact exp per 64 cells times a
// table of 64 (a few ulps, as one exp per cell gives; see tiltWeights).
func tiltedMean(m *pmf, h, lambda float64) float64 {
	kStar := tiltArgmax(m.p, h, lambda)
	if kStar < 0 {
		return 0
	}
	var s, s1 float64
	tiltWeights(m.p, kStar, h, lambda, func(i int, w float64) {
		s += w
		s1 += w * float64(i-kStar)
	})
	return float64(m.lo+kStar)*h + m.off + h*s1/s
}

// tiltBlock is the length of the blocks of tiltWeights.
const tiltBlock = 64

// tiltWeights calls f(i, p_i·e^{min(y_i, 700)}) in order of i for the
// positive p_i with y_i = lambda·(i−kStar)·h ≥ −745. Within a
// block of tiltBlock cells e^{y_i} is e^{y} at the block's start times
// e^{lambda·j·h} from a table (relative error a few ulps); a block that
// reaches beyond ±700 takes one exp per cell.
func tiltWeights(p []float64, kStar int, h, lambda float64, f func(i int, w float64)) {
	// The table is used only where its entries are finite (a block's y
	// spans less than 700) and y increases with i.
	fast := lambda >= 0 && lambda*float64(tiltBlock-1)*h < 700
	var table [tiltBlock]float64
	if fast {
		for j := range table {
			table[j] = math.Exp(lambda * float64(j) * h)
		}
	}
	for b := 0; b < len(p); b += tiltBlock {
		e := min(b+tiltBlock, len(p))
		yS, yE := lambda*float64(b-kStar)*h, lambda*float64(e-1-kStar)*h
		if fast && yE < -745 {
			continue // every y < −745: no weight
		}
		if !fast || yS < -700 || yE > 700 {
			for i := b; i < e; i++ {
				if v := p[i]; v > 0 {
					if y := lambda * float64(i-kStar) * h; y >= -745 {
						f(i, v*math.Exp(math.Min(y, 700)))
					}
				}
			}
			continue
		}
		eS := math.Exp(yS)
		for i := b; i < e; i++ {
			if v := p[i]; v > 0 {
				f(i, v*(eS*table[i-b]))
			}
		}
	}
}

// saddle returns the tilt λ ≥ 0 at which the tilted upper distribution of
// direction d has its mean at eps (the saddle point K'(λ) = eps of the
// composed cumulant K), rounded down to a power of 2^{1/4} so that nearby
// queries share one tilted composition; 0 when eps is below
// the mean (no tilt needed), the upper distribution is not computed, or
// eps is at or above the largest loss of the composed upper distribution
// (δ there is its mass at +∞ alone, exactly: see composition.linear; the
// add direction of a small sampling rate at an ε above T·(−log(1−q)),
// whose tilted mean never reaches ε, and whose tilt to the cap 2^30 did
// not fit, so that the other direction's tilt was dropped too).
// Any λ ≥ 0 gives a certified bound; this one makes it tight.
func (r *result) saddle(d int, eps float64) float64 {
	hi2 := 40
	if r.cut {
		hi2 = 120
	}
	return r.saddleUpTo(d, eps, hi2)
}

// tiltFor returns the tilt of direction d's compositions for a bound at
// eps: the saddle λ* (saddle), or, on a level with the tails cut at a
// query's δ, the tilt half an octave below it where the upper composition
// tilted there keeps its error terms small against its own upper δ (not
// noisy at a δ of tiltSlack times it) at λ*'s tilted mean, just below
// eps, and λ* is at most lowTiltMax. The choice depends on λ* alone and is cached, so that an ε query,
// whose first estimate of ε may be rdp's, and the δ query that certifies
// it pick the same tilt. With a small sampling rate the saddle tilt lifts
// the rare sampled tail of each step far above ε, and the window must
// hold several such steps: σ 0.7985, q 0.0005428, T 821 at ε 0.855:
// 243,000 cells at λ 11.3, 101,250 at λ 8, whose error terms are 1/75 of
// the noisy threshold. Any λ ≥ 0 gives a certified bound.
func (r *result) tiltFor(ctx context.Context, d int, eps float64) (float64, error) {
	lam := r.saddle(d, eps)
	if !r.cut || !(lam > 0) || lam > lowTiltMax {
		return lam, nil
	}
	dir := r.dirs[d]
	k := int(math.Round(4 * math.Log2(lam))) // lam = 2^{k/4} (see saddle)
	low := math.Exp2(float64(k-2) / 4)
	if use, ok := dir.lowTilt[k]; ok {
		if use {
			return low, nil
		}
		return lam, nil
	}
	c, err := r.get(ctx, d, true, low)
	if err != nil && err != errTooLarge {
		return 0, err
	}
	use := false
	if err == nil {
		e := r.meanAt(d, k)
		dl := c.delta(e, true)
		use = dl > 0 && !c.noisyAt(e, tiltSlack*dl)
	}
	if dir.lowTilt == nil {
		dir.lowTilt = map[int]bool{}
	}
	dir.lowTilt[k] = use
	if use {
		return low, nil
	}
	return lam, nil
}

// tiltSlack is the share of its own upper δ at which a tilt below the
// saddle must not be noisy to be used, and lowTiltMax the largest saddle
// tilt that tiltFor lowers. Both are set by the width sweep's 180
// queries: with 1/16 and no cap, the cut grids of σ 1, q 1e-4 (saddles
// 54–91 in the remove direction, 362–4096 in the add direction) gave
// brackets that sent the queries down other paths (σ 1, q 1e-4, T 1e4,
// δ 1e-10: 5,369 → 9,792 units, and 0.127% wide); with these, 12 queries
// take 8–50% less work, 2 take 2% and 25% more, all 180 stay ≤ 0.1% wide.
const (
	tiltSlack  = 1.0 / 64
	lowTiltMax = 32
)

// meanAt returns the composed tilted mean of direction d's upper parts at
// λ = 2^{k/4} (cached per k); the parts must be computed.
func (r *result) meanAt(d, k int) float64 {
	dir := r.dirs[d]
	h := dir.ph[1]
	if dir.means == nil || dir.meansH != h {
		dir.means, dir.meansH = map[int]float64{}, h
	}
	if m, ok := dir.means[k]; ok {
		return m
	}
	lambda := math.Exp2(float64(k) / 4)
	var m float64
	for _, pt := range dir.parts[1] {
		m += float64(pt.count) * tiltedMean(&pt.pmf, h, lambda)
	}
	dir.means[k] = m
	return m
}

// saddleUpTo is saddle with λ at most 2^{hi2/4}.
func (r *result) saddleUpTo(d int, eps float64, hi2 int) float64 {
	dir := r.dirs[d]
	if len(dir.parts[1]) == 0 {
		return 0
	}
	h := dir.ph[1]
	var kTop int
	var shift float64
	for _, pt := range dir.parts[1] {
		kTop += pt.count * (pt.pmf.lo + len(pt.pmf.p) - 1)
		shift += float64(pt.count) * pt.pmf.off
	}
	if eps >= float64(kTop)*h+shift {
		return 0
	}
	mean := func(k int) float64 { return r.meanAt(d, k) }
	// λ from 2^{−6} to 2^{hi2/4}, in quarter octaves: up to 2^{10} by
	// default, to 2^{30} when the tails are cut at the query's δ (tiny
	// losses of a small sampling rate, whose saddle tilts are large) and
	// where the bracket is still wide (see result.bigTilt).
	lo2 := -24
	if !(mean(lo2) < eps) {
		return 0
	}
	if mean(hi2) < eps {
		return math.Exp2(float64(hi2) / 4)
	}
	o, _ := search.Solve(search.Problem[int]{
		Holds:   func(k int) (bool, error) { return mean(k) < eps, nil },
		Side:    search.Lower,
		Lo:      lo2,
		Hi:      hi2,
		LoKnown: true,
		HiKnown: true,
		Next:    func(lo, hi int) (int, bool) { return (lo + hi) / 2, true },
		Done:    func(lo, hi int) bool { return hi-lo <= 1 },
	})
	lo := o.X
	// The largest quarter octave whose tilted mean is still below eps:
	// with small q the tilted mean can jump from about eps to far above
	// it within one quarter octave (the tilt moves the bulk of the mass
	// from the bulk of the loss onto the sampled component's tail), and a
	// window centred beyond eps would not bound δ(eps) at all.
	return math.Exp2(float64(lo) / 4)
}
