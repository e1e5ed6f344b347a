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
	var s float64
	ref := m.lo + lo
	if lambda > 0 {
		ref = m.lo + hi
		for i := lo; i <= hi; i++ {
			s = s*r + m.p[i]
		}
	} else {
		for i := hi; i >= lo; i-- {
			s = s*r + m.p[i]
		}
	}
	return lambda*float64(ref)*h + logmath.Log(s)
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
		kPos[i] = cumulant(parts, h, l)
		kNeg[i] = cumulant(parts, h, -l)
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
