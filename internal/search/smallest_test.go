package search

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestLargestInt(t *testing.T) {
	for _, nstar := range []int{1, 2, 3, 17, 1024, 1025, 999999} {
		n, evals, err := LargestInt(func(n int) (bool, error) { return n <= nstar, nil }, 1<<30)
		if err != nil || n != nstar {
			t.Errorf("n* = %d: got %d, %v", nstar, n, err)
		}
		if lim := 2*int(math.Log2(float64(nstar))) + 3; evals > lim {
			t.Errorf("n* = %d: %d evaluations > %d", nstar, evals, lim)
		}
	}
	if n, _, _ := LargestInt(func(int) (bool, error) { return true, nil }, 100); n != 100 {
		t.Errorf("capped search = %d, want 100", n)
	}
}

func TestSmallestMonotoneStep(t *testing.T) {
	// A step function: f = 2 below x* = 3.7, 0.5 above. The answer must be
	// within tolerance above x*, never below.
	f := func(x float64) (float64, error) {
		if x < 3.7 {
			return 2, nil
		}
		return 0.5, nil
	}
	r, err := Smallest(f, 1, 100, Options{RelTol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if r.X < 3.7 || r.X > 3.7*(1+1e-9) {
		t.Errorf("X = %.15g, want in [3.7, 3.7(1+1e-9)]", r.X)
	}
	// +Inf values count as misses.
	g := func(x float64) (float64, error) {
		if x < 2 {
			return math.Inf(1), nil
		}
		return 1 / x, nil
	}
	r, err = Smallest(g, 0.25, 1, Options{})
	if err != nil || r.X < 4 || r.X > 4*(1+1e-6) {
		t.Errorf("X = %v, %v; want 4", r.X, err)
	}
}

// TestSearchErrors: the searches' own errors are *Error without a package
// prefix, which Prefix adds; an objective's error passes through unchanged.
func TestSearchErrors(t *testing.T) {
	_, err := Smallest(func(x float64) (float64, error) { return 2, nil }, 1, 1, Options{Max: 10})
	if !errors.Is(err, ErrUnreachable) || !strings.HasPrefix(err.Error(), "target unreachable: no value up to 10") {
		t.Errorf("unreachable: %v", err)
	}
	if p := Prefix("calibrate", err); !errors.Is(p, ErrUnreachable) || !strings.HasPrefix(p.Error(), "calibrate: target unreachable") {
		t.Errorf("prefixed: %v", p)
	}
	mine := errors.New("accounting: stopped")
	_, err = Smallest(func(x float64) (float64, error) { return 0, mine }, 1, 1, Options{})
	if err != mine || Prefix("calibrate", err) != mine {
		t.Errorf("objective error: %v", err)
	}
	if _, err := Smallest(func(x float64) (float64, error) { return math.NaN(), nil }, 1, 1, Options{}); err == nil || !strings.HasPrefix(err.Error(), "objective is NaN") {
		t.Errorf("NaN objective: %v", err)
	}
	if _, _, err := LargestInt(func(int) (bool, error) { return true, nil }, 0); err == nil {
		t.Error("LargestInt(max = 0) accepted")
	}
}

// TestSmallestErrorStatus: an objective's error (or NaN) ends the search
// with that error and status Failure, counting the failed evaluation;
// it used to be reported with the zero status, Converged.
func TestSmallestErrorStatus(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	f := func(x float64) (float64, error) {
		calls++
		if calls == 3 {
			return 0, boom
		}
		return 1 / x, nil
	}
	r, err := Smallest(f, 0.01, 1, Options{})
	if !errors.Is(err, boom) || r.Status != Failure || r.Evaluations != 3 {
		t.Errorf("objective error: %+v, %v; want boom, status failure, 3 evaluations", r, err)
	}
	r, err = Smallest(func(float64) (float64, error) { return math.NaN(), nil }, 0.01, 1, Options{})
	var se *Error
	if !errors.As(err, &se) || r.Status != Failure || r.Evaluations != 1 {
		t.Errorf("NaN objective: %+v, %v; want a search error, status failure, 1 evaluation", r, err)
	}
}

// TestSmallestNoProgress: on a step at 3.7 with a tolerance no float
// bracket meets, the search ends at adjacent floats around 3.7 with
// status NoProgress and evaluations to spare; it used to say
// IterationLimit, as if the budget had run out.
func TestSmallestNoProgress(t *testing.T) {
	f := func(x float64) (float64, error) {
		if x < 3.7 {
			return 2, nil
		}
		return 0.5, nil
	}
	r, err := Smallest(f, 1, 1, Options{RelTol: 1e-300, MaxEvaluations: 399})
	if err != nil || r.Status != NoProgress || r.X != 3.7 || r.Lo != math.Nextafter(3.7, 0) || r.Evaluations >= 399 {
		t.Errorf("got %+v, %v; want X = 3.7, Lo one ulp below, status no progress before 399 evaluations", r, err)
	}
}
