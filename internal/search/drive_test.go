package search

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpcalc/dpcalc/internal/work"
)

// TestSolveStatuses reaches every status Solve returns, and checks X, the
// final bracket, the evaluation count and the error of each.
func TestSolveStatuses(t *testing.T) {
	boom := errors.New("boom")
	above := func(root float64) func(float64) (bool, error) {
		return func(x float64) (bool, error) { return x >= root, nil }
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	metered := work.With(context.Background(), work.NewMeter(5))
	width := func(tol float64) func(lo, hi float64) bool {
		return func(lo, hi float64) bool { return hi-lo <= tol }
	}
	tests := []struct {
		name    string
		p       Problem[float64]
		status  Status
		x       float64 // want X (NaN: do not check)
		lo, hi  float64 // want the final bracket (NaN: do not check)
		evals   int     // want Evaluations (−1: do not check)
		wantErr error
	}{
		{"converged", Problem[float64]{Holds: above(0.3), Lo: 0, Hi: 1, LoKnown: true, HiKnown: true, Done: width(0.25)},
			Converged, 0.5, 0.25, 0.5, 2, nil},
		{"iteration limit", Problem[float64]{Holds: above(0.3), Lo: 0, Hi: 1, LoKnown: true, HiKnown: true, Done: width(1e-9), MaxEvaluations: 3},
			IterationLimit, 0.375, 0.25, 0.375, 3, nil},
		{"no progress: adjacent floats", Problem[float64]{Holds: above(1), Lo: math.Nextafter(1, 0), Hi: 1, LoKnown: true, HiKnown: true},
			NoProgress, 1, math.Nextafter(1, 0), 1, 0, nil},
		{"no progress: Next gives up", Problem[float64]{Holds: above(0.3), Lo: 0, Hi: 1, LoKnown: true, HiKnown: true,
			Next: func(lo, hi float64) (float64, bool) { return 0, false }},
			NoProgress, 1, 0, 1, 0, nil},
		{"at lower bound", Problem[float64]{Holds: above(0.3), Lo: 2, Hi: 2,
			Down: func(x float64) (float64, bool) { return x / 2, x > 1 }},
			AtLowerBound, 1, 1, 1, 2, nil},
		{"at lower bound without Down", Problem[float64]{Holds: above(0.3), Lo: 0.5, Hi: 1, HiKnown: true},
			AtLowerBound, 0.5, 0.5, 0.5, 1, nil},
		{"no bracket: never holds", Problem[float64]{Holds: above(100), Lo: 1, Hi: 1,
			Up: func(x float64) (float64, bool) { return 2 * x, x < 8 }},
			NoBracket, 0, 8, 8, 4, nil},
		{"grows up then converges", Problem[float64]{Holds: above(5), Lo: 1, Hi: 1,
			Up:   func(x float64) (float64, bool) { return 2 * x, true },
			Done: width(1)},
			Converged, 5, 4, 5, 6, nil},
		{"grows down then converges", Problem[float64]{Holds: above(0.3), Lo: 1, Hi: 1,
			Down: func(x float64) (float64, bool) { return x / 2, true },
			Done: width(0.1)},
			Converged, 0.3125, 0.25, 0.3125, 5, nil},
		{"failure in growth", Problem[float64]{Holds: func(float64) (bool, error) { return false, boom }, Lo: 1, Hi: 1},
			Failure, 0, NaN(), NaN(), 1, boom},
		{"failure in narrowing", Problem[float64]{Holds: func(x float64) (bool, error) { return false, boom }, Lo: 0, Hi: 1, LoKnown: true, HiKnown: true},
			Failure, 0, 0, 1, 1, boom},
		{"canceled", Problem[float64]{Holds: above(0.3), Lo: 0, Hi: 1, LoKnown: true, HiKnown: true, Check: Checker(canceled)},
			Canceled, 0, 0, 1, 0, context.Canceled},
		{"work limit", Problem[float64]{Holds: above(0.3), Lo: 0, Hi: 1, LoKnown: true, HiKnown: true, Check: Checker(metered)},
			WorkLimit, 0, NaN(), NaN(), 5, work.ErrLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Solve(tt.p)
			if o.Status != tt.status || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("status %v, err %v; want %v, %v", o.Status, err, tt.status, tt.wantErr)
			}
			if !math.IsNaN(tt.x) && o.X != tt.x {
				t.Errorf("X = %g, want %g", o.X, tt.x)
			}
			if !math.IsNaN(tt.lo) && (o.Lo != tt.lo || o.Hi != tt.hi) {
				t.Errorf("bracket [%g, %g], want [%g, %g]", o.Lo, o.Hi, tt.lo, tt.hi)
			}
			if tt.evals >= 0 && o.Evaluations != tt.evals {
				t.Errorf("%d evaluations, want %d", o.Evaluations, tt.evals)
			}
		})
	}
}

// NaN is math.NaN, short for the tables.
func NaN() float64 { return math.NaN() }

// TestSolveLower: a predicate true up to a root (n ≤ 37) on integers; the
// lower end is returned, and growth past the last point where it holds
// ends at the bound (AtUpperBound), not with an unsafe X.
func TestSolveLower(t *testing.T) {
	ok := func(n int) (bool, error) { return n <= 37, nil }
	o, err := Solve(Problem[int]{Holds: ok, Side: Lower, Lo: 1, Hi: 1, LoKnown: true,
		Up:   func(n int) (int, bool) { return 2 * n, true },
		Done: func(lo, hi int) bool { return hi-lo <= 1 }})
	if err != nil || o.Status != Converged || o.X != 37 || o.Lo != 37 || o.Hi != 38 {
		t.Errorf("got %+v, %v; want X = 37 in [37, 38], converged", o, err)
	}
	o, err = Solve(Problem[int]{Holds: ok, Side: Lower, Lo: 1, Hi: 1, LoKnown: true,
		Up: func(n int) (int, bool) { return min(2*n, 16), n < 16 }})
	if err != nil || o.Status != AtUpperBound || o.X != 16 {
		t.Errorf("capped growth: %+v, %v; want X = 16 at the upper bound", o, err)
	}
	o, err = Solve(Problem[int]{Holds: ok, Side: Lower, Lo: 50, Hi: 60, HiKnown: true,
		Down: func(n int) (int, bool) { return n - 10, n > 40 }})
	if err != nil || o.Status != NoBracket {
		t.Errorf("nothing holds: %+v, %v; want no bracket", o, err)
	}
}

// TestSolveCancelMidway: a context canceled by the predicate's fourth
// call ends the search at the next check with the bracket so far, whose
// safe end still holds.
func TestSolveCancelMidway(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	o, err := Solve(Problem[float64]{
		Holds: func(x float64) (bool, error) {
			calls++
			if calls == 4 {
				cancel()
			}
			return x >= 0.3, nil
		},
		Lo: 0, Hi: 1, LoKnown: true, HiKnown: true,
		Done:  func(lo, hi float64) bool { return hi-lo <= 1e-12 },
		Check: Checker(ctx),
	})
	if !errors.Is(err, context.Canceled) || o.Status != Canceled || o.Evaluations != 4 {
		t.Fatalf("got %+v, %v; want canceled after 4 evaluations", o, err)
	}
	if !(o.Hi >= 0.3 && o.Lo < 0.3) || o.Hi-o.Lo != 1.0/16 {
		t.Errorf("bracket [%g, %g], want 1/16 wide around 0.3", o.Lo, o.Hi)
	}
}

// TestSolveWorkLimitCounts: each evaluation is one unit on the meter, so
// a limit of n stops the search after exactly n evaluations.
func TestSolveWorkLimitCounts(t *testing.T) {
	for _, limit := range []int64{1, 7, 30} {
		m := work.NewMeter(limit)
		o, err := Solve(Problem[float64]{
			Holds: func(x float64) (bool, error) { return x >= 1.0/3, nil },
			Lo:    0, Hi: 1, LoKnown: true, HiKnown: true,
			Done:  func(lo, hi float64) bool { return hi-lo <= 1e-300 },
			Check: Checker(work.With(context.Background(), m)),
		})
		if !errors.Is(err, work.ErrLimit) || o.Status != WorkLimit || int64(o.Evaluations) != limit {
			t.Errorf("limit %d: %+v, %v; want %d evaluations and a work-limit error", limit, o, err, limit)
		}
	}
}

// TestSolveMonotoneProperty: for random thresholds, starting brackets,
// growth rules and both sides, on floats and integers, whatever X Solve
// returns was evaluated (or vouched for) and holds, the other end of the
// final bracket fails, and a converged bracket straddles the threshold.
func TestSolveMonotoneProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		root := math.Exp(rng.Float64()*40 - 20)
		side := Side(rng.IntN(2))
		holdsAt := func(x float64) bool {
			if side == Upper {
				return x >= root
			}
			return x < root
		}
		seen := map[float64]bool{}
		start := math.Exp(rng.Float64()*40 - 20)
		tol := math.Pow(10, -1-rng.Float64()*14)
		o, err := Solve(Problem[float64]{
			Holds: func(x float64) (bool, error) { seen[x] = true; return holdsAt(x), nil },
			Side:  side,
			Lo:    start, Hi: start,
			Up:             func(x float64) (float64, bool) { return x * 3, x < 1e12 },
			Down:           func(x float64) (float64, bool) { return x / 3, x > 1e-12 },
			Done:           func(lo, hi float64) bool { return hi-lo <= tol*hi },
			MaxEvaluations: 1 + rng.IntN(400),
		})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if o.Status == NoBracket {
			t.Fatalf("case %d: root %g in range but no bracket", i, root)
		}
		if !seen[o.X] || !holdsAt(o.X) {
			t.Fatalf("case %d (side %d, root %g): X = %g evaluated %v, holds %v", i, side, root, o.X, seen[o.X], holdsAt(o.X))
		}
		other := o.Lo
		if side == Lower {
			other = o.Hi
		}
		if o.Status == Converged || o.Status == IterationLimit || o.Status == NoProgress {
			if holdsAt(other) || !seen[other] {
				t.Fatalf("case %d: other end %g holds or was not evaluated", i, other)
			}
			if o.Status == Converged && !(o.Hi-o.Lo <= tol*o.Hi) {
				t.Fatalf("case %d: converged bracket [%g, %g] wider than %g", i, o.Lo, o.Hi, tol)
			}
		}
	}
	for i := 0; i < 2000; i++ {
		nstar := rng.IntN(1 << 20)
		lo := rng.IntN(nstar + 1)
		o, err := Solve(Problem[int]{
			Holds:   func(n int) (bool, error) { return n <= nstar, nil },
			Side:    Lower,
			Lo:      lo,
			Hi:      lo,
			LoKnown: true,
			Up:      func(n int) (int, bool) { return 2*n + 1, true },
			Done:    func(lo, hi int) bool { return hi-lo <= 1 },
		})
		if err != nil || o.Status != Converged || o.X != nstar {
			t.Fatalf("n* = %d from %d: %+v, %v", nstar, lo, o, err)
		}
	}
}
