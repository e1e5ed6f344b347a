package pld

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// logMGF returns log Σ p_k e^{λ·k·h} over the finite part of m, by Horner's
// rule in r = e^{−|λ|h} from the end with the largest exponent (so nothing
// overflows).
func logMGF(m *pmf, h, lambda float64) float64 {
	// Trim zero masses at both ends so that the anchor term is positive
	// and the Horner sum cannot underflow to 0.
	lo, hi := 0, len(m.p)-1
	for lo <= hi && !(m.p[lo] > 0) {
		lo++
	}
	for hi >= lo && !(m.p[hi] > 0) {
		hi--
	}
	if lo > hi {
		return math.Inf(-1)
	}
	r := math.Exp(-math.Abs(lambda) * h)
	ref := m.lo + lo
	var s float64
	if lambda > 0 {
		ref = m.lo + hi
		s = horner(m.p[lo:hi+1], r, true)
	} else {
		s = horner(m.p[lo:hi+1], r, false)
	}
	return lambda*float64(ref)*h + logmath.Log(s)
}

// horner returns Σ_i p_i·r^(n−1−i) (up: the last term is the anchor,
// r^0) or Σ_i p_i·r^i (the first is), for 0 < r ≤ 1 and p ≥ 0, by
// Horner's rule on four interleaved chains with r^4, joined at the end:
// one chain's additions wait on each other (the window search's
// cumulants, 8% of a σ search's CPU at σ 1, q 1e-4, T 1e5, δ 1e-15,
// were this wait), four overlap. Every term is nonnegative, so each
// chain's rounding stays relative to its sum, as one chain's does.
func horner(p []float64, r float64, up bool) float64 {
	n := len(p)
	if n < 64 {
		var s float64
		if up {
			for _, v := range p {
				s = s*r + v
			}
		} else {
			for i := n - 1; i >= 0; i-- {
				s = s*r + p[i]
			}
		}
		return s
	}
	r2 := r * r
	r4 := r2 * r2
	var s0, s1, s2, s3 float64
	if up {
		// Chains by i mod 4 over the first n − n%4 terms (anchored at
		// their last), then the rest one by one.
		m := n - n%4
		for i := 0; i < m; i += 4 {
			s0 = s0*r4 + p[i]
			s1 = s1*r4 + p[i+1]
			s2 = s2*r4 + p[i+2]
			s3 = s3*r4 + p[i+3]
		}
		s := ((s0*r+s1)*r+s2)*r + s3
		for i := m; i < n; i++ {
			s = s*r + p[i]
		}
		return s
	}
	// Mirror image: chains over the last n − n%4 terms from the top down,
	// anchored at index n%4, then the first n%4 terms.
	k := n % 4
	for i := n - 4; i >= k; i -= 4 {
		s0 = s0*r4 + p[i+3]
		s1 = s1*r4 + p[i+2]
		s2 = s2*r4 + p[i+1]
		s3 = s3*r4 + p[i]
	}
	s := ((s0*r+s1)*r+s2)*r + s3
	for i := k - 1; i >= 0; i-- {
		s = s*r + p[i]
	}
	return s
}

// logMGFBoth returns logMGF(m, h, lambda) and logMGF(m, h, −lambda) for
// lambda > 0 in one pass (hornerBoth), bit for bit as the two calls.
func logMGFBoth(m *pmf, h, lambda float64) (pos, neg float64) {
	if !(lambda > 0) {
		return logMGF(m, h, lambda), logMGF(m, h, -lambda)
	}
	lo, hi := 0, len(m.p)-1
	for lo <= hi && !(m.p[lo] > 0) {
		lo++
	}
	for hi >= lo && !(m.p[hi] > 0) {
		hi--
	}
	if lo > hi {
		return math.Inf(-1), math.Inf(-1)
	}
	r := math.Exp(-math.Abs(lambda) * h) // the same for ±lambda
	up, down := hornerBoth(m.p[lo:hi+1], r)
	pos = lambda*float64(m.lo+hi)*h + logmath.Log(up)
	neg = -lambda*float64(m.lo+lo)*h + logmath.Log(down)
	return pos, neg
}

// hornerBoth returns horner(p, r, true) and horner(p, r, false), each
// with the same operations in the same order, the two sums' chains
// interleaved (eight chains overlap where four did).
func hornerBoth(p []float64, r float64) (up, down float64) {
	n := len(p)
	if n < 64 {
		for i, v := range p {
			up = up*r + v
			down = down*r + p[n-1-i]
		}
		return up, down
	}
	r2 := r * r
	r4 := r2 * r2
	var s0, s1, s2, s3, d0, d1, d2, d3 float64
	m, k := n-n%4, n%4
	for i, j := 0, n-4; i < m; i, j = i+4, j-4 {
		s0 = s0*r4 + p[i]
		s1 = s1*r4 + p[i+1]
		s2 = s2*r4 + p[i+2]
		s3 = s3*r4 + p[i+3]
		d0 = d0*r4 + p[j+3]
		d1 = d1*r4 + p[j+2]
		d2 = d2*r4 + p[j+1]
		d3 = d3*r4 + p[j]
	}
	up = ((s0*r+s1)*r+s2)*r + s3
	for i := m; i < n; i++ {
		up = up*r + p[i]
	}
	down = ((d0*r+d1)*r+d2)*r + d3
	for i := k - 1; i >= 0; i-- {
		down = down*r + p[i]
	}
	return up, down
}

// cumulantBoth returns cumulant(parts, h, lambda) and cumulant(parts, h,
// −lambda), bit for bit, in one pass over each part (logMGFBoth).
func cumulantBoth(parts []part, h, lambda float64) (pos, neg float64) {
	for _, pt := range parts {
		kp, kn := logMGFBoth(&pt.pmf, h, lambda)
		pos += float64(pt.count) * kp
		neg += float64(pt.count) * kn
	}
	return roundUp(pos), roundUp(neg)
}

// cumulant returns Σ count·log M(λ), the log-MGF of the composed finite part.
func cumulant(parts []part, h, lambda float64) float64 {
	var k float64
	for _, pt := range parts {
		k += float64(pt.count) * logMGF(&pt.pmf, h, lambda)
	}
	return roundUp(k) // logs of sums: allow rounding, upward (also for k < 0)
}

// roundUp adds 1e-14·|x| to x, the rounding allowance of a log-MGF (a
// log of a sum, times a count), in the direction of a larger tail bound.
func roundUp(x float64) float64 { return x + 1e-14*math.Abs(x) }

// chernoffWindow returns the λ values tried, the composed cumulants K(±λ)
// there, and the loss range [bot, top] outside which the composed finite
// part has mass at most e^{windowLogEta} on each side (Chernoff).
func chernoffWindow(parts []part, h float64) (lams, kPos, kNeg []float64, top, bot float64) {
	// Moments of the composition, for the λ search.
	var vr float64
	for _, pt := range parts {
		var s, s1, s2 float64
		for i, v := range pt.pmf.p {
			x := float64(pt.pmf.lo+i) * h
			s += v
			s1 += v * x
			s2 += v * x * x
		}
		if s > 0 {
			m := s1 / s
			vr += float64(pt.count) * math.Max(s2/s-m*m, h*h)
		}
	}
	lam0 := math.Sqrt(-2*windowLogEta) / math.Sqrt(vr)
	lams = make([]float64, 0, 25)
	for i := -16; i <= 8; i++ {
		lams = append(lams, lam0*math.Pow(2, float64(i)/2))
	}
	kPos = make([]float64, len(lams))
	kNeg = make([]float64, len(lams))
	top, bot = math.Inf(1), math.Inf(-1)
	for i, l := range lams {
		kPos[i], kNeg[i] = cumulantBoth(parts, h, l)
		top = math.Min(top, (kPos[i]-windowLogEta)/l)
		bot = math.Max(bot, (windowLogEta-kNeg[i])/l)
	}
	return lams, kPos, kNeg, top, bot
}

// tailBound returns min over λ of exp(K(λ) − λ·edge·h), the Chernoff bound
// on the composed mass at or beyond index edge (signed h selects the side),
// or 0 when edge is beyond the support end lim (in the same orientation).
func tailBound(ks, lams []float64, h float64, edge, lim int) float64 {
	e := edge
	if h < 0 {
		e = -edge
	}
	if e > lim {
		return 0
	}
	best := math.Inf(1)
	for i, l := range lams {
		best = math.Min(best, ks[i]-l*float64(edge)*h)
	}
	return math.Min(1, math.Exp(best)*(1+1e-12))
}
