package search

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/internal/work"
)

// check reports one step to ctx's work meter and returns the meter's or
// ctx's error, if any.
func check(ctx context.Context) error {
	if err := work.Add(ctx, 1); err != nil {
		return err
	}
	return ctx.Err()
}

// BisectLog narrows a bracket on u = log x in which meets(e^lo) is false
// (or e^lo is the domain's lower end) and meets(e^hi) is true, halving it
// until done(lo, hi) holds or after 200 halvings, and returns e^hi. meets
// holds there (it was evaluated at exactly that x, or given): for a
// predicate true from its root upwards, such as ε(δ) ≤ target or
// ε(σ) ≤ target, the answer is never a point where the target was missed,
// which is the safe side. ctx is checked before each evaluation (and each
// counts one unit of work, see [work.Add]); on cancellation BisectLog
// returns ctx.Err().
func BisectLog(ctx context.Context, meets func(x float64) bool, lo, hi float64, done func(lo, hi float64) bool) (float64, error) {
	o, err := Solve(Problem[float64]{
		Holds:          func(u float64) (bool, error) { return meets(math.Exp(u)), nil },
		Lo:             lo,
		Hi:             hi,
		LoKnown:        true,
		HiKnown:        true,
		Done:           done,
		MaxEvaluations: 200,
		Check:          Checker(ctx),
	})
	if err != nil {
		return 0, err
	}
	return math.Exp(o.X), nil
}

// SmallestLog returns the smallest x in [lo, hi] (0 < lo < hi) with
// f(x) ≤ target that bisection on log x finds, to relative precision 1e-9
// in log x, for f non-increasing; found is false when no x it tries meets
// target. The x returned is one where f was evaluated and met target (the
// upper end of the final bracket), so it is the safe side for an inverse
// such as δ(ε) from ε(δ): never a δ whose ε exceeds the target.
//
// If f(lo) ≤ target it returns lo (a valid x; the true one may be
// smaller). If f(hi) > target although f(lo) > target too, f is not
// monotone (the DPD procedures do not promise it): a coarse scan upwards
// from lo by factors of 1e5 looks for the first x that meets target and
// bisects below it. ctx is checked before each evaluation.
func SmallestLog(ctx context.Context, f func(float64) float64, target, lo, hi float64) (x float64, found bool, err error) {
	if f(lo) <= target {
		return lo, true, nil
	}
	l, h := math.Log(lo), math.Log(hi)
	if f(hi) > target {
		// Scan only (Done at once): the first u = l + k·step below h that
		// meets target ends the growth.
		const step = 5 * math.Ln10
		top := h
		o, err := Solve(Problem[float64]{
			Holds:   func(u float64) (bool, error) { return f(math.Exp(u)) <= target, nil },
			Lo:      l,
			Hi:      l,
			LoKnown: true,
			Up: func(u float64) (float64, bool) {
				u += step
				return u, u < top
			},
			Done:  func(lo, hi float64) bool { return true },
			Check: Checker(ctx),
		})
		if err != nil {
			return 0, false, err
		}
		if o.Status == NoBracket {
			return 0, false, nil
		}
		l, h = o.Lo, o.Hi
	}
	x, err = BisectLog(ctx, func(x float64) bool { return f(x) <= target }, l, h,
		func(lo, hi float64) bool { return hi-lo <= 1e-9*math.Max(1, math.Abs(hi)) })
	return x, err == nil, err
}

// SmallestNonNegative returns a bracket [l, u] on the smallest x ≥ 0 with
// f(x) ≤ target, for f non-increasing: f(u) ≤ target was checked (u is the
// safe end, the one to report as an upper bound), and f(l) > target unless
// l = u = 0 (f(0) already meets target). The bracket grows by doubling from
// [0, 1] and is then bisected linearly to u − l ≤ relTol·u; if f exceeds
// target up to the largest float64, u = +Inf (no finite x meets it, as far
// as f can tell). It serves pld's closed-form ε(δ) of the Gaussian.
func SmallestNonNegative(f func(float64) float64, target, relTol float64) (l, u float64) {
	if f(0) <= target {
		return 0, 0
	}
	o, _ := Solve(Problem[float64]{
		Holds:   func(x float64) (bool, error) { return f(x) <= target, nil },
		Lo:      0,
		Hi:      1,
		LoKnown: true,
		Up: func(u float64) (float64, bool) {
			return u * 2, !(u > math.MaxFloat64/2)
		},
		Done: func(l, u float64) bool { return !(u-l > relTol*u) },
	})
	if o.Status == NoBracket {
		return o.Lo, math.Inf(1)
	}
	return o.Lo, o.Hi
}

// Illinois returns a root of g, decreasing on [lo, hi] with g(lo) = glo > 0
// ≥ g(hi) = ghi, by the Illinois variant of false position (the end kept
// twice in a row has its g halved), each step kept 1e-3 of the bracket
// width away from its ends, until hi − lo ≤ relTol·hi or after 200 steps.
// It returns hi, where g ≤ 0 was checked: for g(x) = log δ(x) − log δ, the
// upper end is an x whose δ is verified, the safe side for an ε.
func Illinois(g func(float64) float64, lo, hi, glo, ghi, relTol float64) float64 {
	side := 0
	o, _ := Solve(Problem[float64]{
		Holds: func(x float64) (bool, error) {
			gx := g(x)
			if gx <= 0 {
				ghi = gx
				if side == -1 {
					glo /= 2
				}
				side = -1
				return true, nil
			}
			glo = gx
			if side == 1 {
				ghi /= 2
			}
			side = 1
			return false, nil
		},
		Lo:      lo,
		Hi:      hi,
		LoKnown: true,
		HiKnown: true,
		Next: func(lo, hi float64) (float64, bool) {
			x := hi - ghi*(hi-lo)/(ghi-glo)
			if !(x > lo && x < hi) {
				x = lo + (hi-lo)/2
			}
			// Keep the step away from the ends so the bracket always shrinks.
			w := hi - lo
			return math.Min(math.Max(x, lo+w*1e-3), hi-w*1e-3), true
		},
		Done:           func(lo, hi float64) bool { return !(hi-lo > relTol*hi) },
		MaxEvaluations: 200,
	})
	return o.X
}

// GridGolden returns the smallest value of eval it finds on the grid lo,
// lo+step, …, ≤ hi and by 35 golden-section steps in [b−step, b+step]
// around the best grid point b. Callers use it where every evaluated value
// is itself valid (every δ split of advanced composition gives a sound ε),
// so the minimum found is never unsafe, only possibly loose.
func GridGolden(eval func(float64) float64, lo, hi, step float64) float64 {
	bx, bv := 0.0, math.Inf(1)
	for x := lo; x <= hi; x += step {
		if v := eval(x); v < bv {
			bx, bv = x, v
		}
	}
	l, r := bx-step, bx+step
	g := (math.Sqrt(5) - 1) / 2
	x1, x2 := r-g*(r-l), l+g*(r-l)
	v1, v2 := eval(x1), eval(x2)
	for i := 0; i < 35; i++ {
		if v1 <= v2 {
			r, x2, v2 = x2, x1, v1
			x1 = r - g*(r-l)
			v1 = eval(x1)
		} else {
			l, x1, v1 = x1, x2, v2
			x2 = l + g*(r-l)
			v2 = eval(x2)
		}
	}
	return math.Min(bv, math.Min(v1, v2))
}

// Bisect halves a bracket [lo, hi] with meets(lo) false and meets(hi) true
// until hi − lo ≤ relTol·hi (or no float lies strictly inside) and returns
// hi, where meets was checked: the safe side when meets(x) says x is
// enough (an ε whose δ is small enough). It serves pld's two-scale ε
// bounds.
func Bisect(meets func(float64) bool, lo, hi, relTol float64) float64 {
	o, _ := Solve(Problem[float64]{
		Holds:   func(x float64) (bool, error) { return meets(x), nil },
		Lo:      lo,
		Hi:      hi,
		LoKnown: true,
		HiKnown: true,
		Done:    func(lo, hi float64) bool { return !(hi-lo > relTol*hi) },
	})
	return o.X
}

// LastTrue returns the largest n in [lo, hi) with ok(n), given ok(lo) true
// and ok(hi) false, for ok true up to some n* and false after, by
// bisection (about log2(hi − lo) calls). The n returned was checked true:
// for "n more steps keep ε within budget" it is the safe side, never a
// count that was seen to overspend. An error from ok ends the search.
// It serves the trainer's budget (budgetSteps).
func LastTrue(ok func(n int) (bool, error), lo, hi int) (int, error) {
	o, err := Solve(Problem[int]{
		Holds:   ok,
		Side:    Lower,
		Lo:      lo,
		Hi:      hi,
		LoKnown: true,
		HiKnown: true,
		Done:    func(lo, hi int) bool { return hi-lo <= 1 },
	})
	if err != nil {
		return 0, err
	}
	return o.X, nil
}
