// Package search holds dpcalc's numerical toolkit for bounds: root finding
// and bracketing that return the safe end, directed rounding, and one
// compensated sum. Every calibration, inversion and bisection in the
// accounting and calibrate packages goes through it.
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
