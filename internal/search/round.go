// Package search holds dpcalc's numerical toolkit for bounds: root finding
// and bracketing, directed rounding, and one compensated sum.
//
// Every root finding and bracketing loop of dpcalc runs in one driver,
// [Solve]: a monotone predicate, a bracket grown by Up and Down until the
// predicate changes across it, narrowed by midpoint or caller-supplied
// steps until Done, with an evaluation cap, a cancellation and work check,
// and a [Status] saying how it ended. It returns the end of the bracket
// where the predicate was evaluated and held, the safe side for its
// callers. [Smallest], [BisectLog], [Bisect], [Illinois], [SmallestLog],
// [SmallestNonNegative], [LastTrue], [LargestIntFrom] and [CertifyUp] are
// thin wrappers that fix its options for one kind of search.
// [GridGolden] is a minimiser, not a root finder, and stays apart.
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
	if math.IsInf(eps, 1) {
		return eps
	}
	step := 0x1p-52 * math.Max(eps, math.SmallestNonzeroFloat64)
	n := 1 // points tried
	o, _ := Solve(Problem[float64]{
		Holds: func(e float64) (bool, error) { return deltaAt(e) <= target, nil },
		Lo:    eps,
		Hi:    eps,
		Up: func(e float64) (float64, bool) {
			e += step
			step *= 2
			n++
			return e, n <= 2200 && !math.IsInf(e, 1)
		},
		Done: func(lo, hi float64) bool { return true }, // the first point that holds
	})
	if o.Status == NoBracket {
		return math.Inf(1)
	}
	return o.X // AtLowerBound when eps itself holds
}
