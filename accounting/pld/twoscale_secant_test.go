package pld

import (
	"math"
	"testing"
)

// TestLogSecantEnds drives the two-scale ε searches (logSecant.root and
// rootBelow) on functions that break their model, log δ linear and
// decreasing: a sawtooth that is not monotone, a flat stretch at δ
// itself, a step from 1 to 0 (log δ = −∞, clamped), δ ≤ delta
// everywhere, a bracket of one point. Each end returned must be a given
// end or a point evaluated on its side, compared exactly: d(upper) ≤
// delta, d(lower) > delta; and the search must end within its cap.
func TestLogSecantEnds(t *testing.T) {
	const delta = 1e-10
	fs := map[string]func(e float64) float64{
		"sawtooth": func(e float64) float64 {
			return math.Min(1, delta*math.Exp(-40*(e-1))*(1+0.5*math.Sin(3e5*e)))
		},
		"flat at delta": func(e float64) float64 {
			switch {
			case e < 1:
				return 2 * delta
			case e < 1.2:
				return delta
			}
			return delta / 2
		},
		"step to 0": func(e float64) float64 {
			if e < 1.0000001 {
				return 1
			}
			return 0
		},
		"steep": func(e float64) float64 { return math.Min(1, delta*math.Exp(-1e6*(e-1))) },
		"tiny slope": func(e float64) float64 {
			return delta * (1 + 1e-13*(1-e))
		},
	}
	for name, f := range fs {
		for _, br := range [][2]float64{{0.5, 2}, {0.999, 1.001}, {1 - 1e-9, 1 + 1e-9}} {
			seen := map[float64]float64{}
			evals := 0
			d := func(e float64) (float64, error) {
				evals++
				v := f(e)
				seen[e] = v
				return v, nil
			}
			lo0, hi0 := br[0], br[1]
			dLo, dHi := f(lo0), f(hi0)
			if dLo > delta && dHi <= delta {
				r := newLogSecant(d, delta)
				lo, hi, err := r.root(lo0, hi0, dLo, dHi)
				if err != nil {
					t.Fatal(err)
				}
				if v, ok := seen[hi]; hi != hi0 && !(ok && v <= delta) {
					t.Errorf("%s %v: root's upper end %.17g has d %g (evaluated %v)", name, br, hi, v, ok)
				}
				if v, ok := seen[lo]; lo != lo0 && !(ok && v > delta) {
					t.Errorf("%s %v: root's lower end %.17g has d %g (evaluated %v)", name, br, lo, v, ok)
				}
				if !(lo <= hi) || evals > 200 {
					t.Errorf("%s %v: root ended at [%g, %g] after %d evaluations", name, br, lo, hi, evals)
				}
			}
			// rootBelow from the upper end hi0 (d ≤ delta there) with a
			// first guess inside.
			if dHi <= delta {
				for _, x := range []float64{lo0 + 0.9*(hi0-lo0), lo0 + 1e-3*(hi0-lo0)} {
					if !(x > lo0 && x < hi0) {
						continue
					}
					seen, evals = map[float64]float64{}, 0
					r := newLogSecant(d, delta)
					lo, hi, err := r.rootBelow(lo0, hi0, dHi, x)
					if err != nil {
						t.Fatal(err)
					}
					if v, ok := seen[lo]; lo != lo0 && !(ok && v > delta) {
						t.Errorf("%s %v from %g: rootBelow's lower end %.17g has d %g (evaluated %v)", name, br, x, lo, v, ok)
					}
					if v, ok := seen[hi]; hi != hi0 && !(ok && v <= delta) {
						t.Errorf("%s %v from %g: rootBelow's upper end %.17g has d %g (evaluated %v)", name, br, x, hi, v, ok)
					}
					if !(lo <= hi) || evals > 400 {
						t.Errorf("%s %v from %g: rootBelow ended at [%g, %g] after %d evaluations", name, br, x, lo, hi, evals)
					}
				}
			}
		}
	}
}
