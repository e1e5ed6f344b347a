package search

import (
	"context"
	"errors"
	"math"
	"testing"
)

// TestSmallestLog: f(x) = −log x (decreasing): the root of f ≤ t is e^−t;
// the answer is at or above it (the checked side) within 1e-9 relative in
// log x; a non-monotone f is scanned; an unreachable target is not found.
func TestSmallestLog(t *testing.T) {
	ctx := t.Context()
	f := func(x float64) float64 { return -math.Log(x) }
	for _, target := range []float64{1, 10, 300, 600} {
		x, found, err := SmallestLog(ctx, f, target, 1e-300, 0.5)
		want := math.Exp(-target)
		if err != nil || !found || !(f(x) <= target) || math.Abs(math.Log(x)-math.Log(want)) > 1e-9*math.Max(1, target) {
			t.Errorf("target %g: x = %g (found %v, %v), want %g from above", target, x, found, err, want)
		}
	}
	if x, found, _ := SmallestLog(ctx, f, 1000, 1e-300, 0.5); !found || x != 1e-300 {
		t.Errorf("f(lo) meets: x = %g, %v; want lo", x, found)
	}
	if _, found, _ := SmallestLog(ctx, f, 0.1, 1e-300, 0.5); found {
		t.Error("unreachable target found")
	}
	// Not monotone: meets target only on [1e-100, 1e-50].
	g := func(x float64) float64 {
		if x >= 1e-100 && x <= 1e-50 {
			return 0
		}
		return 1
	}
	x, found, err := SmallestLog(ctx, g, 0.5, 1e-300, 0.5)
	if err != nil || !found || x < 1e-100 || x > 1e-100*(1+1e-6) {
		t.Errorf("non-monotone: x = %g, %v, %v; want just above 1e-100", x, found, err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := SmallestLog(canceled, f, 10, 1e-300, 0.5); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err = %v", err)
	}
}

// TestBisectLog: the returned x is one where meets was true, and the
// bracket stops at the requested width.
func TestBisectLog(t *testing.T) {
	root := math.Pi
	var checked []float64
	meets := func(x float64) bool { checked = append(checked, x); return x >= root }
	x, err := BisectLog(t.Context(), meets, 0, math.Log(10), func(lo, hi float64) bool { return hi-lo <= 1e-12 })
	if err != nil || x < root || x > root*(1+2e-12) {
		t.Errorf("x = %.17g, %v; want in [π, π(1+2e-12)]", x, err)
	}
	ok := false
	for _, c := range checked {
		ok = ok || c == x
	}
	if !ok {
		t.Errorf("x = %g was never evaluated", x)
	}
}

// TestSmallestNonNegative: f(x) = 1/(1+x) ≤ t has root 1/t − 1; u is at or
// above it within relTol, l below; f(0) ≤ t gives [0, 0]; a target f never
// reaches gives u = +Inf.
func TestSmallestNonNegative(t *testing.T) {
	f := func(x float64) float64 { return 1 / (1 + x) }
	for _, target := range []float64{0.9, 0.1, 1e-6, 1e-200} {
		l, u := SmallestNonNegative(f, target, 1e-13)
		want := 1/target - 1
		if !(f(u) <= target) || !(f(l) > target) || u-l > 1e-13*u || math.Abs(u-want) > 1e-12*want {
			t.Errorf("target %g: [%g, %g], want around %g", target, l, u, want)
		}
	}
	if l, u := SmallestNonNegative(f, 1, 1e-13); l != 0 || u != 0 {
		t.Errorf("f(0) meets: [%g, %g]", l, u)
	}
	if _, u := SmallestNonNegative(func(float64) float64 { return 1 }, 0.5, 1e-13); !math.IsInf(u, 1) {
		t.Errorf("unreachable: u = %g", u)
	}
}

// TestIllinois: the root of g(x) = e^−x − 0.3 is log(1/0.3); the answer is
// on the g ≤ 0 side within the tolerance.
func TestIllinois(t *testing.T) {
	g := func(x float64) float64 { return math.Exp(-x) - 0.3 }
	x := Illinois(g, 0, 10, g(0), g(10), 1e-13)
	want := math.Log(1 / 0.3)
	if !(g(x) <= 0) || x-want > 2e-13*want {
		t.Errorf("x = %.17g, want %.17g from above", x, want)
	}
}

// TestGridGolden: (x−1.234)² + 5 has its minimum 5 at 1.234; the grid
// finds the neighbourhood and the golden section the minimum.
func TestGridGolden(t *testing.T) {
	v := GridGolden(func(x float64) float64 { return (x-1.234)*(x-1.234) + 5 }, -30, 30, 1)
	if v < 5 || v > 5+1e-12 {
		t.Errorf("min = %.17g, want 5", v)
	}
}

// TestBisect: meets(x) = x ≥ √2 on [1, 2]: the answer is at or above √2
// within the tolerance.
func TestBisect(t *testing.T) {
	x := Bisect(func(x float64) bool { return x*x >= 2 }, 1, 2, 1e-12)
	if !(x*x >= 2) || x-math.Sqrt2 > 2e-12 {
		t.Errorf("x = %.17g, want √2 from above", x)
	}
}

// TestLastTrue: the largest n with n ≤ n*, for several n*; errors pass
// through.
func TestLastTrue(t *testing.T) {
	for _, nstar := range []int{0, 1, 5, 999, 1 << 40} {
		n, err := LastTrue(func(n int) (bool, error) { return n <= nstar, nil }, 0, 1<<41)
		if err != nil || n != nstar {
			t.Errorf("n* = %d: %d, %v", nstar, n, err)
		}
	}
	bad := errors.New("boom")
	if _, err := LastTrue(func(int) (bool, error) { return false, bad }, 0, 10); err != bad {
		t.Errorf("err = %v", err)
	}
}
