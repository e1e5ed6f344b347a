package search

import (
	"fmt"
	"math"
)

// Approach estimates the root of g, a function that costs seconds per
// evaluation and is smooth and decreasing near its root but may be flat,
// or even rise, far from it (pld's log δ at a target ε as a function of
// σ, whose δ floors far above the answer). It evaluates g at x0, steps to
// model(x, g(x)) from a point when it knows nothing better, and otherwise
// takes the inverse quadratic interpolation root of the three latest
// points where they lie within 10% of the latest (the secant root of the
// two latest otherwise, or when that one is unusable; the model's step
// where the secant does not fall),
// kept inside the bracket once g has changed sign (false position on its
// ends otherwise) and within a factor 4 of the latest point before. It
// stops when the next step is within tol (relative) of the latest point
// or its square is within 0.1·tol of the step before times the point
// (then the error left after it, about step²/(step before) where
// convergence is faster than linear, is),
// when the bracket is that narrow (status Converged; Exact where g is 0),
// or after maxEval evaluations or when no step is left (IterationLimit),
// and returns the last estimate; status NoBracket when no evaluation gave
// a finite value (g NaN ends the search; ±Inf counts for the bracket but
// not for interpolation). Nothing about the estimate is certified;
// a caller checks it (see [SmallestFrom]). An error from g ends the
// search with that error.
func Approach(g func(x float64) (float64, error), x0 float64, model func(x, gx float64) float64, tol float64, maxEval int) (x float64, evaluations int, status Status, err error) {
	finite := func(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }
	if !(x0 > 0) || !finite(x0) {
		return 0, 0, Failure, &Error{Msg: fmt.Sprintf("x0 = %g, want finite and > 0", x0)}
	}
	var pts []approachPoint // finite points, in order of evaluation
	var lo, hi approachPoint
	hasLo, hasHi := false, false // lo: g > 0 (left of the root), hi: g < 0
	// inside is the next point of a bracket: false position, or the
	// midpoint where an end is not finite.
	inside := func() float64 {
		if finite(lo.g) && finite(hi.g) {
			if x := lo.x + lo.g*(hi.x-lo.x)/(lo.g-hi.g); x > lo.x && x < hi.x {
				return x
			}
		}
		return 0.5 * (lo.x + hi.x)
	}
	x = x0
	prev := 0.0 // the step to x
loop:
	for evaluations < maxEval {
		evaluations++
		v, err := g(x)
		if err != nil {
			return 0, evaluations, Failure, err
		}
		switch {
		case math.IsNaN(v):
			if n := len(pts); n > 0 {
				x = pts[n-1].x
			}
			break loop
		case v == 0:
			return x, evaluations, Exact, nil
		}
		p := approachPoint{x, v}
		if finite(v) {
			pts = append(pts, p)
		}
		if v > 0 && (!hasLo || x > lo.x) {
			lo, hasLo = p, true
		}
		if v < 0 && (!hasHi || x < hi.x) {
			hi, hasHi = p, true
		}
		next, good := math.NaN(), false
		if n := len(pts); finite(v) && n >= 3 {
			a, b, c := pts[n-3], pts[n-2], pts[n-1]
			span := math.Max(a.x, math.Max(b.x, c.x)) - math.Min(a.x, math.Min(b.x, c.x))
			if span <= 0.1*c.x && a.g != b.g && a.g != c.g && b.g != c.g {
				next = a.x*b.g*c.g/((a.g-b.g)*(a.g-c.g)) + b.x*a.g*c.g/((b.g-a.g)*(b.g-c.g)) + c.x*a.g*b.g/((c.g-a.g)*(c.g-b.g))
				good = finite(next) && next > 0
			}
		}
		if n := len(pts); finite(v) && !good && n >= 2 {
			a, b := pts[n-2], pts[n-1]
			if s := (b.g - a.g) / (b.x - a.x); s < 0 && finite(s) {
				next = b.x - b.g/s
				good = finite(next) && next > 0
			}
		}
		if finite(v) && !good {
			next = model(x, v)
			good = finite(next) && next > 0
		}
		if hasLo && hasHi {
			if hi.x-lo.x <= tol*hi.x {
				return inside(), evaluations, Converged, nil
			}
			if !good || !(next > lo.x && next < hi.x) {
				next = inside()
			}
		} else if !good {
			break loop
		}
		next = math.Min(math.Max(next, x/4), 4*x)
		// The step is within tol, or it is so much shorter than the one
		// before that the estimate it reaches is (convergence faster than
		// linear leaves an error of about step²/previous step).
		step := math.Abs(next - x)
		if step <= tol*x || (prev > 0 && step*step <= 0.1*tol*x*prev) {
			return next, evaluations, Converged, nil
		}
		prev = step
		x = next
	}
	// x is the latest estimate (evaluated, if no step was left).
	if len(pts) == 0 {
		return x, evaluations, NoBracket, nil
	}
	return x, evaluations, IterationLimit, nil
}

// approachPoint is a point of [Approach] and g there.
type approachPoint struct{ x, g float64 }
