// Package search holds dpcalc's numerical toolkit for bounds: root finding
// and bracketing, directed rounding, and one compensated sum. Every search
// returns the end of its bracket where the target was checked, and says
// why that end is the safe one for its callers.
package search

import "math"

// Up returns x raised by n ulps toward +Inf (0 stays 0, ±Inf and NaN
// unchanged), for the last few roundings of a closed-form bound.
func Up(x float64, n int) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	for i := 0; i < n; i++ {
		x = math.Nextafter(x, math.Inf(1))
	}
	return x
}

// Down returns x lowered by n ulps toward −Inf (0 stays 0, ±Inf and NaN
// unchanged).
func Down(x float64, n int) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	for i := 0; i < n; i++ {
		x = math.Nextafter(x, math.Inf(-1))
	}
	return x
}

// RoundUp returns x·(1 + 4u) for x ≥ 0 (u = 2⁻⁵²): x raised by about four
// ulps, for soundness of the last floating-point operations of a bound.
func RoundUp(x float64) float64 { return x * (1 + 4*0x1p-52) }

// Slack returns 8 ulps of the sum of the magnitudes of terms: an upper bound
// on the accumulated rounding error of a short floating-point sum of them,
// added where terms of both signs may cancel.
func Slack(terms ...float64) float64 {
	m := 0.0
	for _, t := range terms {
		m += math.Abs(t)
	}
	return 8 * 0x1p-52 * m
}

// Neumaier adds x to the compensated sum (s, c) and returns the new pair;
// the sum's value is s + c (Neumaier 1974, an improved Kahan summation).
func Neumaier(s, c, x float64) (float64, float64) {
	t := s + x
	if math.Abs(s) >= math.Abs(x) {
		c += (s - t) + x
	} else {
		c += (x - t) + s
	}
	return t, c
}

// MulUp returns the product x·y rounded toward +Inf (exact products of
// normal size are returned unchanged), for finite x, y.
func MulUp(x, y float64) float64 {
	p := x * y
	if math.IsInf(p, 0) || math.IsNaN(p) {
		return p
	}
	if math.Abs(p) < 0x1p-1022 && x != 0 && y != 0 {
		// Below the normal range the residual may not be representable;
		// step up unconditionally.
		return math.Nextafter(p, math.Inf(1))
	}
	if math.FMA(x, y, -p) > 0 {
		p = math.Nextafter(p, math.Inf(1))
	}
	return p
}

// AddUp returns the sum x + y rounded toward +Inf (exact sums are returned
// unchanged), for finite x, y (Knuth's TwoSum gives the rounding error).
func AddUp(x, y float64) float64 {
	s := x + y
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return s
	}
	bb := s - x
	if err := (x - (s - bb)) + (y - bb); err > 0 {
		s = math.Nextafter(s, math.Inf(1))
	}
	return s
}

// CertifyUp returns the smallest ε' ≥ eps on the sequence eps, eps + s,
// eps + 3s, … (s = 2⁻⁵²·eps, doubling) with deltaAt(ε') ≤ target, or +Inf.
// An accountant passes its own Delta as deltaAt, so that Delta(Epsilon(δ))
// ≤ δ holds exactly even where Epsilon's closed form and Delta's rounding
// allowances disagree in the last bits; normally the first ε' is eps.
func CertifyUp(eps, target float64, deltaAt func(float64) float64) float64 {
	step := 0x1p-52 * math.Max(eps, math.SmallestNonzeroFloat64)
	for k := 0; k < 2200 && !math.IsInf(eps, 1); k++ {
		if deltaAt(eps) <= target {
			return eps
		}
		eps += step
		step *= 2
	}
	return math.Inf(1)
}
