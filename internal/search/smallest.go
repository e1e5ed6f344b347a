package search

import (
	"errors"
	"fmt"
	"math"
)

// Status says how a search ended.
type Status int

const (
	// Converged: the bracket [lo, X] is narrower than the tolerance.
	Converged Status = iota
	// Exact: f(X) equals the target.
	Exact
	// AtLowerBound: the lower end of the search domain already meets the
	// target; X is that end.
	AtLowerBound
	// IterationLimit: the evaluation budget ran out; X meets the target but
	// the bracket is wider than the tolerance.
	IterationLimit
	// NoBracket: no x in the search domain meets the target.
	NoBracket
	// AtUpperBound: the predicate holds up to the upper end of the search
	// domain (a search for the largest x where it holds); X is that end.
	AtUpperBound
	// NoProgress: no representable point lies strictly inside the bracket
	// although it is wider than the tolerance; X is its safe end.
	NoProgress
	// Failure: the objective returned an error (or NaN).
	Failure
	// Canceled: the context was canceled.
	Canceled
	// WorkLimit: the work meter of the context ran out (internal/work).
	WorkLimit
)

func (s Status) String() string {
	switch s {
	case Converged:
		return "converged"
	case Exact:
		return "exact"
	case AtLowerBound:
		return "at lower bound"
	case IterationLimit:
		return "iteration limit"
	case NoBracket:
		return "no bracket"
	case AtUpperBound:
		return "at upper bound"
	case NoProgress:
		return "no progress"
	case Failure:
		return "failure"
	case Canceled:
		return "canceled"
	case WorkLimit:
		return "work limit"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// ErrUnreachable is matched by errors.Is when no value in the search domain
// meets the target.
var ErrUnreachable = errors.New("target unreachable")

// Error is an error of a search itself (bad target, NaN objective, empty
// domain), as opposed to one returned by the objective, which the
// searches pass through unchanged. Its message has no package prefix: the
// caller adds its own (see [Error.Prefix]).
type Error struct {
	Msg string
	Err error // wrapped, for errors.Is (ErrUnreachable); may be nil
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Prefix returns err with "pkg: " in front if it is a search's own *Error,
// and err unchanged otherwise (an objective's error, nil).
func Prefix(pkg string, err error) error {
	var se *Error
	if errors.As(err, &se) {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	return err
}

// Result is the outcome of a search. X always meets the target unless Status
// is NoBracket or Failure (then X is 0).
type Result struct {
	X           float64 // the safe end of the final bracket
	Value       float64 // f(X)
	Lo          float64 // largest x evaluated that misses the target (0 if none)
	Status      Status
	Evaluations int
}

// Options tunes a search. The zero value means the defaults.
type Options struct {
	// RelTol is the relative width (X − Lo)/X at which the search stops.
	// Default 1e-6.
	RelTol float64
	// Min and Max bound the search domain; defaults 1e-6 and 1e6.
	Min, Max float64
	// MaxEvaluations caps calls to f. Default 200.
	MaxEvaluations int
	// Margin is how far (relative) [SmallestFrom] first steps past its
	// estimate of the root while it has not bracketed it (growing
	// fourfold per step that fails to cross). Default max(4·RelTol, 0.01);
	// a caller whose starting points come from a precise estimate sets a
	// few RelTol.
	Margin float64
}

// WithDefaults returns o with its zero fields set to the defaults.
func (o Options) WithDefaults() Options {
	if o.RelTol <= 0 {
		o.RelTol = 1e-6
	}
	if o.Min <= 0 {
		o.Min = 1e-6
	}
	if o.Max <= 0 {
		o.Max = 1e6
	}
	if o.MaxEvaluations <= 0 {
		o.MaxEvaluations = 200
	}
	return o
}

// Smallest returns the smallest x in [opt.Min, opt.Max] with f(x) ≤ target,
// for f non-increasing in x (such as ε as a function of σ), to relative
// tolerance opt.RelTol. The returned Result.X satisfies f(X) ≤ target: it
// is the upper (safe) end of the final bracket, and it was evaluated.
//
// f may return +Inf (no finite bound at that x); that counts as missing the
// target. An error from f, or a NaN value, ends the search with that error.
// guess is where the search starts; it is clamped into the domain.
func Smallest(f func(x float64) (float64, error), target, guess float64, opt Options) (Result, error) {
	opt = opt.WithDefaults()
	if math.IsNaN(target) || math.IsInf(target, 0) || target <= 0 {
		return Result{Status: NoBracket}, &Error{Msg: fmt.Sprintf("target = %g, want finite and > 0", target)}
	}
	if !(guess > 0) || math.IsInf(guess, 0) {
		guess = 1
	}
	guess = math.Min(math.Max(guess, opt.Min), opt.Max)

	var (
		r         Result
		vlo, vhi  float64 // f at the ends of the bracket
		glo, ghi  float64 // g at the ends, Illinois-scaled
		side      int     // the end moved last: +1 upper, −1 lower
		narrowing bool
		exact     bool
	)
	g := func(v float64) float64 { return math.Log(v) - math.Log(target) }
	holds := func(x float64) (bool, error) {
		v, err := f(x)
		if err != nil {
			return false, err
		}
		if math.IsNaN(v) {
			return false, &Error{Msg: fmt.Sprintf("objective is NaN at x = %g", x)}
		}
		switch {
		case narrowing && v == target:
			exact, vhi = true, v
			return true, nil
		case v <= target:
			vhi = v
			if narrowing {
				// The side that keeps its end twice in a row has its g
				// halved (Illinois) so both ends converge.
				ghi = g(v)
				if side == +1 {
					glo /= 2
				}
				side = +1
			}
			return true, nil
		}
		vlo = v
		if narrowing {
			glo = g(v)
			if side == -1 {
				ghi /= 2
			}
			side = -1
		}
		return false, nil
	}
	o, err := Solve(Problem[float64]{
		Holds: holds,
		// Bracket: walk from the guess by factors of 4, down while f meets
		// the target, up while it misses.
		Lo: guess,
		Hi: guess,
		Down: func(x float64) (float64, bool) {
			return math.Max(x/4, opt.Min), x > opt.Min
		},
		Up: func(x float64) (float64, bool) {
			return math.Min(x*4, opt.Max), x < opt.Max
		},
		// Narrow on u = log x: Illinois false position on g(u) = log f −
		// log target where both ends are finite and positive, bisection
		// otherwise.
		Next: func(lo, hi float64) (float64, bool) {
			if !narrowing {
				narrowing = true
				glo, ghi = g(vlo), g(vhi)
			}
			ulo, uhi := math.Log(lo), math.Log(hi)
			u := 0.5 * (ulo + uhi)
			if !math.IsInf(glo, 0) && !math.IsInf(ghi, 0) && !math.IsNaN(glo) && !math.IsNaN(ghi) && glo > 0 && ghi <= 0 && glo != ghi {
				u = uhi - ghi*(uhi-ulo)/(ghi-glo)
				// Keep the step strictly inside, away from the ends.
				w := uhi - ulo
				u = math.Min(math.Max(u, ulo+0.01*w), uhi-0.01*w)
			}
			x := math.Exp(u)
			if x <= lo || x >= hi {
				x = math.Sqrt(lo * hi)
				if x <= lo || x >= hi {
					return 0, false // no representable point strictly inside
				}
			}
			return x, true
		},
		Done:           func(lo, hi float64) bool { return exact || !((hi - lo) > opt.RelTol*hi) },
		MaxEvaluations: opt.MaxEvaluations,
	})
	r.Evaluations = o.Evaluations
	switch {
	case err != nil:
		r.Status = o.Status // Failure
		return r, err
	case o.Status == AtLowerBound:
		r.X, r.Value, r.Status = o.X, vhi, AtLowerBound
		return r, nil
	case o.Status == NoBracket:
		r.Lo, r.Status = o.Lo, NoBracket
		return r, &Error{Msg: fmt.Sprintf("%v: no value up to %g meets the target %g (value at the maximum: %g)", ErrUnreachable, opt.Max, target, vlo), Err: ErrUnreachable}
	case exact:
		r.X, r.Value, r.Lo, r.Status = o.X, vhi, o.Lo, Exact
		return r, nil
	}
	r.X, r.Value, r.Lo, r.Status = o.X, vhi, o.Lo, o.Status
	return r, nil
}

// LargestInt returns the largest integer n in [1, max] with ok(n), for ok
// monotone (true up to some n*, false after). It returns 0 when ok(1) is
// false. The search doubles n from 1 and then bisects, so it makes about
// 2·log2(n*) calls.
func LargestInt(ok func(n int) (bool, error), max int) (n int, evaluations int, err error) {
	if max < 1 {
		return 0, 0, &Error{Msg: fmt.Sprintf("max = %d, want >= 1", max)}
	}
	good, err := ok(1)
	if err != nil || !good {
		return 0, 1, err
	}
	n, evaluations, err = LargestIntFrom(ok, 1, max, 0)
	return n, evaluations + 1, err
}

// LargestIntFrom is [LargestInt] from a known lo ≥ 1 with ok(lo) true
// (not called again): it doubles n from lo and then bisects until the
// bracket is at most max(1, relTol·lo) wide, and returns its lower end,
// where ok is true (so with relTol = 0 the largest n exactly). Seeded by a
// cheaper bound that implies ok, it skips the doubling below it; a
// relTol > 0 bounds the calls to about log2(n*/lo) + log2(1/relTol) + 1.
func LargestIntFrom(ok func(n int) (bool, error), lo, max int, relTol float64) (n int, evaluations int, err error) {
	if lo < 1 || max < lo {
		return 0, 0, &Error{Msg: fmt.Sprintf("lo = %d, max = %d, want 1 <= lo <= max", lo, max)}
	}
	o, err := Solve(Problem[int]{
		Holds:   ok,
		Side:    Lower,
		Lo:      lo,
		Hi:      lo,
		LoKnown: true,
		Up: func(n int) (int, bool) {
			next := n * 2
			if next > max || next < n {
				next = max
			}
			return next, next != n
		},
		Done: func(lo, hi int) bool { return !(hi-lo > 1 && float64(hi-lo) > relTol*float64(lo)) },
	})
	if err != nil {
		return 0, o.Evaluations, err
	}
	return o.X, o.Evaluations, nil
}
