package search

import (
	"context"
	"errors"

	"github.com/dpcalc/dpcalc/internal/work"
)

// Number is what a search runs over: x itself, log x, or an integer (a
// step count, a grid index).
type Number interface{ ~int | ~int64 | ~float64 }

// Side names the end of a bracket where a search's predicate holds, the
// end it returns.
type Side int

const (
	// Upper: the predicate is false below a root and true from it upwards,
	// as ε(σ) ≤ target is in σ; the upper end of the bracket is returned.
	Upper Side = iota
	// Lower: the predicate is true up to a root and false above it, as
	// "n more steps keep ε within budget" is in n; the lower end is
	// returned.
	Lower
)

// Problem is a search for the point where a monotone predicate changes:
// a bracket [Lo, Hi] with the predicate false at one end and true at the
// other (grown first by Up and Down if it is not one yet) is narrowed
// until Done holds. The zero values of the optional fields mean: no
// growth, midpoint steps, no evaluation cap, no check.
type Problem[T Number] struct {
	// Holds is the predicate. An error from it ends the search (status
	// Failure) and is returned unchanged.
	Holds func(x T) (bool, error)
	// Side is the end at which Holds is true.
	Side Side
	// Lo ≤ Hi is the starting bracket. Lo == Hi is allowed: one
	// evaluation (or one known value) serves both ends, and growth makes
	// the bracket.
	Lo, Hi T
	// LoKnown and HiKnown say that the caller has evaluated Holds at that
	// end (or vouches for it, as for a domain end) and found what a
	// bracket needs there: true at the Side end, false at the other. An
	// end not known is evaluated, Hi first.
	LoKnown, HiKnown bool
	// Up returns the next point above x, or false when there is none (a
	// domain end, a cap on the growth). While Holds is on the Lo side's
	// value at Hi, the bracket moves up: Lo = Hi, Hi = Up(Hi). Nil: the
	// bracket does not grow upwards.
	Up func(x T) (T, bool)
	// Down is Up downwards: while Holds at Lo is the Hi side's value,
	// Hi = Lo, Lo = Down(Lo).
	Down func(x T) (T, bool)
	// Done reports whether the bracket is narrow enough; it is asked
	// before each narrowing step. Nil: never (the search ends on no
	// progress or on the cap).
	Done func(lo, hi T) bool
	// Next returns the point to evaluate inside [lo, hi], or false when
	// there is none (status NoProgress). Nil: the midpoint lo + (hi−lo)/2,
	// false unless it lies strictly inside. A point equal to an end is
	// evaluated like any other (the end stays a valid end).
	Next func(lo, hi T) (T, bool)
	// MaxEvaluations, if > 0, ends the narrowing (status IterationLimit)
	// once Holds has been called this many times, growth included.
	MaxEvaluations int
	// Check, if set, is called before each evaluation (during narrowing,
	// before Next); an error from it ends the search with status
	// WorkLimit if it wraps [work.ErrLimit], else Canceled, and is
	// returned unchanged. See [Checker].
	Check func() error
}

// Outcome is how a search ended.
type Outcome[T Number] struct {
	// X is the Side end of the final bracket: Holds was evaluated there
	// and was true, or the caller vouched for it. It is the answer to
	// report, on the safe side, unless Status is NoBracket or the search
	// failed (then X is the zero value).
	X T
	// Lo and Hi are the final bracket (both the bound for AtLowerBound
	// and AtUpperBound).
	Lo, Hi T
	// Status says why the search stopped.
	Status Status
	// Evaluations counts the calls of Holds.
	Evaluations int
}

// Checker returns a [Problem.Check] for ctx: each call reports one unit
// of work to ctx's meter ([work.Add]) and returns the meter's or ctx's
// error, if any.
func Checker(ctx context.Context) func() error {
	return func() error { return check(ctx) }
}

// Solve runs the search p and returns its outcome: X on p.Side of the
// final bracket, never a point where Holds was seen false. The statuses:
// Converged (Done held), IterationLimit, NoProgress (Next found no
// point), AtLowerBound or AtUpperBound (Holds is true all the way to the
// end growth could reach: X is that end, valid but perhaps loose),
// NoBracket (Holds is false all the way: no X), and, with an error,
// Failure, Canceled and WorkLimit.
func Solve[T Number](p Problem[T]) (Outcome[T], error) {
	var o Outcome[T]
	// Work in the orientation "false at lo, true at hi": q = Holds for an
	// upper Side, q = !Holds for a lower one.
	flip := p.Side == Lower
	stop := func(s Status, err error) (Outcome[T], error) {
		o.Status = s
		return o, err
	}
	q := func(x T) (bool, error) {
		if p.Check != nil {
			if err := p.Check(); err != nil {
				return false, checkErr(err)
			}
		}
		o.Evaluations++
		h, err := p.Holds(x)
		if err != nil {
			return false, failed{err}
		}
		return h != flip, nil
	}
	fail := func(err error) (Outcome[T], error) {
		var f failed
		if errors.As(err, &f) {
			return stop(Failure, f.err)
		}
		c := err.(checked)
		if errors.Is(c.err, work.ErrLimit) {
			return stop(WorkLimit, c.err)
		}
		return stop(Canceled, c.err)
	}
	// The safe answer on the Lo and Hi side, for the bound statuses.
	atBound := func(x T, upper bool) (Outcome[T], error) {
		o.Lo, o.Hi = x, x
		if upper == flip { // the bound is on the side where Holds is true
			o.X = x
			if upper {
				return stop(AtUpperBound, nil)
			}
			return stop(AtLowerBound, nil)
		}
		return stop(NoBracket, nil)
	}

	lo, hi := p.Lo, p.Hi
	// qlo, qhi: 0 unknown, 1 false, 2 true (in the q orientation).
	var qlo, qhi int8
	if p.LoKnown {
		qlo = 1
	}
	if p.HiKnown {
		qhi = 2
	}
	if lo == hi {
		switch {
		case qlo != 0:
			qhi = qlo
		case qhi != 0:
			qlo = qhi
		}
	}
	val := func(b bool) int8 {
		if b {
			return 2
		}
		return 1
	}
	if qhi == 0 {
		b, err := q(hi)
		if err != nil {
			return fail(err)
		}
		qhi = val(b)
		if lo == hi {
			qlo = qhi
		}
	}
	for qhi == 1 { // grow upwards
		lo, qlo = hi, 1
		next, ok := T(0), false
		if p.Up != nil {
			next, ok = p.Up(hi)
		}
		if !ok {
			return atBound(hi, true)
		}
		hi = next
		b, err := q(hi)
		if err != nil {
			return fail(err)
		}
		qhi = val(b)
	}
	if qlo == 0 {
		b, err := q(lo)
		if err != nil {
			return fail(err)
		}
		qlo = val(b)
	}
	for qlo == 2 { // grow downwards
		hi = lo
		next, ok := T(0), false
		if p.Down != nil {
			next, ok = p.Down(lo)
		}
		if !ok {
			return atBound(lo, false)
		}
		lo = next
		b, err := q(lo)
		if err != nil {
			return fail(err)
		}
		qlo = val(b)
	}

	for {
		if p.Done != nil && p.Done(lo, hi) {
			o.Status = Converged
			break
		}
		if p.MaxEvaluations > 0 && o.Evaluations >= p.MaxEvaluations {
			o.Status = IterationLimit
			break
		}
		if p.Check != nil {
			if err := p.Check(); err != nil {
				o.Lo, o.Hi = lo, hi
				return fail(checkErr(err))
			}
		}
		var x T
		ok := false
		if p.Next != nil {
			x, ok = p.Next(lo, hi)
		} else {
			x = lo + (hi-lo)/2
			ok = x > lo && x < hi
		}
		if !ok {
			o.Status = NoProgress
			break
		}
		o.Evaluations++
		h, err := p.Holds(x)
		if err != nil {
			o.Lo, o.Hi = lo, hi
			return stop(Failure, err)
		}
		if h != flip {
			hi = x
		} else {
			lo = x
		}
	}
	o.Lo, o.Hi = lo, hi
	if flip {
		o.X = lo
	} else {
		o.X = hi
	}
	return o, nil
}

// failed and checked tell Solve's two kinds of error apart internally.
type failed struct{ err error }

func (f failed) Error() string { return f.err.Error() }

type checked struct{ err error }

func (c checked) Error() string { return c.err.Error() }

func checkErr(err error) error { return checked{err} }
