package search

import (
	"errors"
	"math"
	"testing"
)

// FuzzSmallest runs the root finder on non-increasing functions
// f(x) = a·x^(−p) + c (and a step version of it) with fuzzed parameters,
// target, guess and options. Whatever it returns must be on the safe side:
// without error, X lies in [Min, Max], was evaluated, and f(X) ≤ target;
// Lo (when > 0) misses the target; Converged means the bracket is within
// the tolerance. Errors are ErrUnreachable (nothing meets the target) or
// a bad target.
func FuzzSmallest(f *testing.F) {
	f.Add(1.0, 2.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, false)
	f.Add(1.0, 2.0, 0.5, 0.6, 1e-3, 1e-6, 1e-9, 1e6, false)
	f.Add(1e10, 0.5, 0.0, 1e-300, 1e300, 1e-8, 0.0, 0.0, true)
	f.Add(1.0, 1e-9, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, false)
	f.Add(1.0, 2.0, 0.0, math.Inf(1), 1.0, 0.0, 0.0, 0.0, false)
	f.Add(1.0, 2.0, 0.0, math.NaN(), 1.0, 0.0, 0.0, 0.0, false)
	f.Add(1.0, 2.0, 0.0, 1.0, math.NaN(), 0.0, 5.0, 1.0, false)
	f.Fuzz(func(t *testing.T, a, p, c, target, guess, relTol, lo, hi float64, step bool) {
		if !(a > 0) || !(p > 0) || p > 50 || !(c >= 0) || math.IsInf(a, 0) || math.IsInf(c, 0) {
			t.Skip("not a non-increasing finite objective")
		}
		obj := func(x float64) float64 {
			if step {
				x = math.Floor(x*8) / 8 // flat pieces
				if x <= 0 {
					return math.Inf(1)
				}
			}
			return a*math.Pow(x, -p) + c
		}
		evaluated := map[float64]bool{}
		fn := func(x float64) (float64, error) { evaluated[x] = true; return obj(x), nil }
		opt := Options{RelTol: relTol, Min: lo, Max: hi, MaxEvaluations: 300}
		r, err := Smallest(fn, target, guess, opt)
		o := opt.WithDefaults()
		if err != nil {
			if !errors.Is(err, ErrUnreachable) && !(math.IsNaN(target) || math.IsInf(target, 0) || target <= 0) {
				t.Fatalf("unexpected error %v", err)
			}
			if errors.Is(err, ErrUnreachable) && obj(o.Max) <= target {
				t.Fatalf("ErrUnreachable, but f(Max = %g) = %g meets %g", o.Max, obj(o.Max), target)
			}
			return
		}
		if o.Min > o.Max {
			return // an inverted domain: the walk stops at one of its ends
		}
		if !(r.X >= o.Min && r.X <= o.Max) {
			t.Fatalf("X = %g outside [%g, %g]", r.X, o.Min, o.Max)
		}
		if !evaluated[r.X] {
			t.Fatalf("X = %g was never evaluated", r.X)
		}
		if v := obj(r.X); !(v <= target) || v != r.Value {
			t.Fatalf("f(X = %g) = %g (Value %g), target %g: not on the safe side", r.X, v, r.Value, target)
		}
		if r.Lo > 0 && obj(r.Lo) <= target && r.Status != Exact {
			t.Fatalf("Lo = %g meets the target (f = %g ≤ %g): the bracket is wrong", r.Lo, obj(r.Lo), target)
		}
		if r.Status == Converged && r.X-r.Lo > o.RelTol*r.X {
			t.Fatalf("Converged with bracket [%g, %g] wider than %g relative", r.Lo, r.X, o.RelTol)
		}
	})
}
