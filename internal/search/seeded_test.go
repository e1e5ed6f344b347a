package search

import (
	"errors"
	"math"
	"testing"
)

// TestSmallestFrom: the seeded search meets Smallest's contract (X meets
// the target, Lo misses it, the bracket within the tolerance) on smooth,
// step and unreachable objectives, and on a smooth one started near the
// root it needs a handful of evaluations where Smallest from 1 needs
// twice as many.
func TestSmallestFrom(t *testing.T) {
	root := 0.7336
	smooth := func(x float64) (float64, error) { return math.Pow(root/x, 1.7) * (1 + 0.01*math.Sin(x)), nil }
	for _, c := range []struct {
		name   string
		x0, x1 float64
		max    int
	}{
		{"near", 0.74, 0.733, 5},
		{"far above", 3, 2.9, 12},
		{"far below", 0.01, 0.0101, 14},
		{"same", 0.9, 0.9, 8},
	} {
		r, err := SmallestFrom(smooth, 1, c.x0, c.x1, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if v, _ := smooth(r.X); v > 1 || r.Value != v {
			t.Errorf("%s: f(X = %.12g) = %g, Value %g: want ≤ 1", c.name, r.X, v, r.Value)
		}
		if v, _ := smooth(r.Lo); !(v > 1) || r.X-r.Lo > 1e-6*r.X || r.Status != Converged {
			t.Errorf("%s: Lo %.12g (f %g), X %.12g, %v: want a miss within 1e-6", c.name, r.Lo, v, r.X, r.Status)
		}
		if r.Evaluations > c.max {
			t.Errorf("%s: %d evaluations, want ≤ %d", c.name, r.Evaluations, c.max)
		}
		old, _ := Smallest(smooth, 1, 1, Options{})
		t.Logf("%s: %d evaluations (Smallest from 1: %d), X %.12g vs %.12g", c.name, r.Evaluations, old.Evaluations, r.X, old.X)
	}
	step := func(x float64) (float64, error) {
		if x < 3.7 {
			return 2, nil
		}
		return 0.5, nil
	}
	r, err := SmallestFrom(step, 1, 3.5, 3.6, Options{RelTol: 1e-9})
	if err != nil || r.X < 3.7 || r.X > 3.7*(1+1e-9) {
		t.Errorf("step: X = %.15g, %v; want in [3.7, 3.7(1+1e-9)]", r.X, err)
	}
	inf := func(x float64) (float64, error) {
		if x < 2 {
			return math.Inf(1), nil
		}
		return 1 / x, nil
	}
	if r, err := SmallestFrom(inf, 0.25, 1, 1.1, Options{}); err != nil || r.X < 4 || r.X > 4*(1+1e-6) {
		t.Errorf("+Inf below 2: X = %v, %v; want 4", r.X, err)
	}
	if _, err := SmallestFrom(func(float64) (float64, error) { return 2, nil }, 1, 1, 2, Options{Max: 10}); !errors.Is(err, ErrUnreachable) {
		t.Errorf("unreachable: %v", err)
	}
	if r, err := SmallestFrom(func(float64) (float64, error) { return 0.5, nil }, 1, 1, 2, Options{Min: 1e-3}); err != nil || r.Status != AtLowerBound || r.X != 1e-3 {
		t.Errorf("at the lower bound: %+v, %v", r, err)
	}
	if _, err := SmallestFrom(func(float64) (float64, error) { return math.NaN(), nil }, 1, 1, 2, Options{}); err == nil {
		t.Error("NaN objective accepted")
	}
}
