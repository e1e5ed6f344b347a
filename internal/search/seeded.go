package search

import (
	"fmt"
	"math"
)

// SmallestFrom is [Smallest] started from two guesses x0 and x1 near the
// root, for an f that costs seconds per evaluation (a pld accountant's ε
// at a small δ) and a cheap bound that predicts its root (rdp's σ, then
// rdp's σ for the target scaled by how far f was below it there). Its
// result meets the same contract: X was evaluated and meets the target,
// Lo was evaluated and misses it (or is 0 when X is the domain minimum),
// and (X − Lo)/X ≤ opt.RelTol unless the evaluations ran out.
//
// It works on u = log x and g = log f − log target, estimating the root
// by inverse quadratic interpolation through the three latest points when
// they lie within 25% of each other (the secant through the two latest
// otherwise, or when that estimate is off). Until the root is bracketed it
// steps past the estimate by a margin (opt.Margin) that grows fourfold per
// step that fails to cross it; then each step takes the secant root of the two latest points (the false-position
// root of the bracket when that one falls outside, the midpoint when a
// bracket end is not finite or three steps did not halve the bracket) and
// moves it 0.45·opt.RelTol past that estimate, or to 0.9·opt.RelTol from
// an end the estimate is within half the tolerance of. For an f smooth
// near its root two evaluations close the bracket once the estimate is
// within the tolerance; a step function or a noisy f still converges, as
// in Smallest, at no fewer than one halving per three evaluations.
func SmallestFrom(f func(x float64) (float64, error), target, x0, x1 float64, opt Options) (Result, error) {
	opt = opt.WithDefaults()
	if math.IsNaN(target) || math.IsInf(target, 0) || target <= 0 {
		return Result{Status: NoBracket}, &Error{Msg: fmt.Sprintf("target = %g, want finite and > 0", target)}
	}
	clampX := func(x, def float64) float64 {
		if !(x > 0) || math.IsInf(x, 0) {
			x = def
		}
		return math.Min(math.Max(x, opt.Min), opt.Max)
	}
	x0 = clampX(x0, 1)
	x1 = clampX(x1, x0*(1+1e-3))
	if x1 == x0 {
		x1 = clampX(x0*(1+1e-3), x0)
		if x1 == x0 {
			x1 = clampX(x0/(1+1e-3), x0)
		}
	}

	var r Result
	lgt := math.Log(target)
	// The bracket: lo misses (hasLo), hi meets (hasHi); g at both.
	var lo, hi, glo, ghi float64
	hasLo, hasHi := false, false
	// The three latest points, for secant and inverse quadratic estimates.
	var uz, gz, ua, ga, ub, gb float64
	n := 0
	eval := func(x float64) (bool, error) {
		r.Evaluations++
		v, err := f(x)
		if err != nil {
			return false, err
		}
		if math.IsNaN(v) {
			return false, &Error{Msg: fmt.Sprintf("objective is NaN at x = %g", x)}
		}
		g := math.Log(v) - lgt // −Inf at v = 0, +Inf at v = +Inf
		uz, gz, ua, ga, ub, gb = ua, ga, ub, gb, math.Log(x), g
		n++
		meets := v <= target
		if meets && (!hasHi || x < hi) {
			hi, ghi, hasHi = x, g, true
			r.Value = v
		}
		if !meets && (!hasLo || x > lo) {
			lo, glo, hasLo = x, g, true
		}
		return meets && v == target, nil
	}
	finite := func(g float64) bool { return !math.IsInf(g, 0) && !math.IsNaN(g) }
	// secant returns the root in u of the line through the two latest
	// points, ok false when they do not define one.
	secant := func() (float64, bool) {
		if n < 2 || !finite(ga) || !finite(gb) || ga == gb || ua == ub {
			return 0, false
		}
		if n >= 3 && finite(gz) && gz != ga && gz != gb && uz != ua && uz != ub {
			// Inverse quadratic interpolation through the three.
			u := uz*ga*gb/((gz-ga)*(gz-gb)) + ua*gz*gb/((ga-gz)*(ga-gb)) + ub*gz*ga/((gb-gz)*(gb-ga))
			lo, hi := math.Min(uz, math.Min(ua, ub)), math.Max(uz, math.Max(ua, ub))
			if w := hi - lo; finite(u) && w < 0.25 && u > lo-w && u < hi+w {
				return u, true
			}
		}
		u := ub - gb*(ub-ua)/(gb-ga)
		return u, finite(u)
	}
	done := func() (Result, error) {
		r.X, r.Lo = hi, lo
		switch {
		case r.Status == Exact:
		case hasLo && hi-lo > opt.RelTol*hi:
			r.Status = IterationLimit
		default:
			r.Status = Converged
		}
		return r, nil
	}

	for _, x := range []float64{x0, x1} {
		exact, err := eval(x)
		if err != nil {
			return r, err
		}
		if exact {
			r.Status = Exact
			return done()
		}
	}

	// Bracket the root.
	margin := opt.Margin
	if !(margin > 0) {
		margin = math.Max(4*opt.RelTol, 0.01)
	}
	for !(hasLo && hasHi) {
		if r.Evaluations >= opt.MaxEvaluations {
			if hasHi {
				return done()
			}
			r.Lo, r.Status = lo, NoBracket
			return r, &Error{Msg: fmt.Sprintf("%v: no value up to %g meets the target %g (%d evaluations)", ErrUnreachable, lo, target, r.Evaluations), Err: ErrUnreachable}
		}
		var x float64
		if !hasHi {
			// Every point misses: go up.
			if lo >= opt.Max {
				r.Lo, r.Status = lo, NoBracket
				return r, &Error{Msg: fmt.Sprintf("%v: no value up to %g meets the target %g (value at the maximum: %g)", ErrUnreachable, opt.Max, target, math.Exp(glo+lgt)), Err: ErrUnreachable}
			}
			x = lo * (1 + margin)
			if u, ok := secant(); ok && math.Exp(u)*(1+margin) > x {
				x = math.Exp(u) * (1 + margin)
			}
			x = math.Min(math.Min(x, lo*4), opt.Max)
		} else {
			// Every point meets: go down.
			if hi <= opt.Min {
				r.X, r.Lo, r.Status = hi, 0, AtLowerBound
				return r, nil
			}
			x = hi / (1 + margin)
			if u, ok := secant(); ok && math.Exp(u)/(1+margin) < x {
				x = math.Exp(u) / (1 + margin)
			}
			x = math.Max(math.Max(x, hi/4), opt.Min)
		}
		margin *= 4
		exact, err := eval(x)
		if err != nil {
			return r, err
		}
		if exact {
			r.Status = Exact
			return done()
		}
	}

	// Narrow [lo, hi].
	width := hi - lo
	sinceHalved := 0
	for hi-lo > opt.RelTol*hi && r.Evaluations < opt.MaxEvaluations {
		ulo, uhi := math.Log(lo), math.Log(hi)
		var u float64
		switch s, ok := secant(); {
		case sinceHalved >= 3 || !finite(glo) || !finite(ghi):
			u = 0.5 * (ulo + uhi)
		case ok && s > ulo && s < uhi:
			u = s
		default:
			u = uhi - ghi*(uhi-ulo)/(ghi-glo) // false position
		}
		e := math.Exp(u)
		tol := opt.RelTol * hi
		var x float64
		switch {
		case sinceHalved >= 3:
			x = e
		case e >= hi-0.5*tol:
			x = hi - 0.9*tol
		case e <= lo+0.5*tol:
			x = lo + 0.9*tol
		case hi-e > e-lo:
			x = e + 0.45*tol
		default:
			x = e - 0.45*tol
		}
		if !(x > lo && x < hi) {
			x = math.Sqrt(lo * hi)
			if !(x > lo && x < hi) {
				break // no representable point strictly inside
			}
		}
		exact, err := eval(x)
		if err != nil {
			return r, err
		}
		if exact {
			r.Status = Exact
			return done()
		}
		if hi-lo <= width/2 {
			width, sinceHalved = hi-lo, 0
		} else {
			sinceHalved++
		}
	}
	return done()
}
