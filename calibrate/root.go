package calibrate

import "github.com/dpcalc/dpcalc/internal/search"

// The root finders live in internal/search, dpcalc's one search toolkit;
// these names keep calibrate's API.

// Status says how a search ended.
type Status = search.Status

// The statuses of a search.
const (
	Converged      = search.Converged
	Exact          = search.Exact
	AtLowerBound   = search.AtLowerBound
	IterationLimit = search.IterationLimit
	NoBracket      = search.NoBracket
	NoProgress     = search.NoProgress
	Failure        = search.Failure
)

// ErrUnreachable is matched by errors.Is when no value in the search domain
// meets the target.
var ErrUnreachable = search.ErrUnreachable

// Result is the outcome of a search. X always meets the target unless Status
// is NoBracket or Failure (then X is 0).
type Result = search.Result

// Options tunes a search. The zero value means the defaults (relative
// tolerance 1e-6, domain [1e-6, 1e6], 200 evaluations).
type Options = search.Options

// Smallest returns the smallest x in [opt.Min, opt.Max] with f(x) ≤ target
// for f non-increasing in x; see [search.Smallest]. X is the upper end of
// the final bracket, where f was evaluated and meets the target: the safe
// side for a noise multiplier.
func Smallest(f func(x float64) (float64, error), target, guess float64, opt Options) (Result, error) {
	r, err := search.Smallest(f, target, guess, opt)
	return r, search.Prefix("calibrate", err)
}

// LargestInt returns the largest integer n in [1, max] with ok(n), for ok
// monotone (true up to some n*, false after), or 0 when ok(1) is false; see
// [search.LargestInt].
func LargestInt(ok func(n int) (bool, error), max int) (n int, evaluations int, err error) {
	n, evaluations, err = search.LargestInt(ok, max)
	return n, evaluations, search.Prefix("calibrate", err)
}

// LargestIntFrom is [search.LargestIntFrom]: [LargestInt] from a known lo
// with ok(lo) true, to a relative tolerance relTol (0: exactly).
func LargestIntFrom(ok func(n int) (bool, error), lo, max int, relTol float64) (n int, evaluations int, err error) {
	n, evaluations, err = search.LargestIntFrom(ok, lo, max, relTol)
	return n, evaluations, search.Prefix("calibrate", err)
}
