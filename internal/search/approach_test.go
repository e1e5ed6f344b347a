package search

import (
	"errors"
	"math"
	"testing"
)

// TestApproach: on a function close to linear near its root, flat (a
// floor) far above it and curved far below, Approach gets within the
// tolerance of the root in a handful of evaluations from either side, and
// it stops without an estimate where g has no finite value.
func TestApproach(t *testing.T) {
	const root = 0.7336
	// log δ(σ) − log δ*: slope about −50 near the root, floored at −30.
	g := func(x float64) (float64, error) {
		return math.Max(-50*(x-root)-8*(x-root)*(x-root), -30), nil
	}
	// The model of a δ of 1e-10: −log δ ∝ x², and twice x where δ ≥ 1.
	sq := func(x, gx float64) float64 {
		if ld := gx - 23; ld < 0 {
			return x * math.Sqrt(-23/ld)
		}
		return 2 * x
	}
	for _, c := range []struct {
		name string
		x0   float64
		max  int
	}{
		{"near above", 0.75, 4},
		{"near below", 0.7, 5},
		{"on the floor", 2.5, 8},
		{"far below", 0.2, 7},
	} {
		var n int
		counted := func(x float64) (float64, error) { n++; return g(x) }
		x, evals, st, err := Approach(counted, c.x0, sq, 1e-7, 20)
		if err != nil || (st != Converged && st != Exact) || math.Abs(x-root) > 1e-7*root {
			t.Errorf("%s: x %.12g, %v, %v; want within 1e-7 of %g", c.name, x, st, err, root)
		}
		if evals != n || n > c.max {
			t.Errorf("%s: %d evaluations (reported %d), want ≤ %d", c.name, n, evals, c.max)
		}
		t.Logf("%s: %d evaluations, x %.12g", c.name, n, x)
	}
	if _, _, st, err := Approach(func(float64) (float64, error) { return math.NaN(), nil }, 1, sq, 1e-6, 8); err != nil || st != NoBracket {
		t.Errorf("NaN everywhere: %v, %v; want NoBracket", st, err)
	}
	boom := errors.New("boom")
	if _, _, _, err := Approach(func(float64) (float64, error) { return 0, boom }, 1, sq, 1e-6, 8); !errors.Is(err, boom) {
		t.Errorf("error from g: %v", err)
	}
	if x, _, st, _ := Approach(g, 2.5, sq, 1e-7, 2); st != IterationLimit || !(x > 0) {
		t.Errorf("two evaluations from the floor: x %g, %v; want IterationLimit", x, st)
	}
}
