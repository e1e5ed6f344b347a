package pld

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testenv"
)

// curveStep is the DP-SGD step of the curve tests.
func curveStep(sigma, q float64) accounting.Event {
	return accounting.PoissonSampled{SamplingRate: q, Event: accounting.Gaussian{NoiseMultiplier: sigma}}
}

// TestPLDEpsilonCurveBracket compares the fast curve with fresh pointwise
// accountants on seeded random (σ, q, δ, steps): at each point the fast
// value is at least the certified lower bound of EpsilonBounds (a fast
// upper bound below a certified lower bound would prove it unsound) and at
// most the pointwise upper bound × (1 + 1%) (tightness); the curve is
// non-decreasing in T.
func TestPLDEpsilonCurveBracket(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	cases := testenv.Size(2, 6)
	for c := 0; c < cases; c++ {
		sigma := 0.7 + 5*rng.Float64()          // [0.7, 5.7]
		q := math.Pow(10, -3+2.5*rng.Float64()) // [1e-3, 0.3]
		delta := math.Pow(10, -3-5*rng.Float64())
		tMax := 10 + rng.IntN(3000)
		steps := []int{1 + rng.IntN(tMax), 1 + rng.IntN(tMax), tMax, 1 + rng.IntN(tMax)}
		sort.Ints(steps)
		name := fmt.Sprintf("σ=%.3g,q=%.3g,δ=%.2g,T=%v", sigma, q, delta, steps)
		t.Run(name, func(t *testing.T) {
			a, err := New(Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.EpsilonCurve(t.Context(), curveStep(sigma, q), steps, delta)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range steps {
				if i > 0 && got[i] < got[i-1] {
					t.Errorf("decreasing: ε(%d) = %g < ε(%d) = %g", s, got[i], steps[i-1], got[i-1])
				}
				p := accountantFor(t, accounting.SelfComposed{Event: curveStep(sigma, q), Count: s}, Options{})
				lo, up, err := p.EpsilonBounds(t.Context(), delta)
				if err != nil {
					t.Fatal(err)
				}
				// 1e-9 absolute: ε near 0, where a relative tolerance is empty.
				if got[i] < lo || got[i] > up*1.01+1e-9 {
					t.Errorf("T=%d: fast ε = %.10g outside [%.10g, %.10g·1.01]", s, got[i], lo, up)
				}
			}
		})
	}
}

// TestPLDEpsilonCurveMatchesEpsilon: on the curve of the benchmark (σ = 4,
// q = 0.01) the default grid width does not depend on T, so the fast value
// is Epsilon's bound up to the round-off terms (which differ only by the
// accounting of the chained powers).
func TestPLDEpsilonCurveMatchesEpsilon(t *testing.T) {
	steps := []int{1, 2, 10, 100, 100, 1000, 5000}
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.EpsilonCurve(t.Context(), curveStep(4, 0.01), steps, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		p := accountantFor(t, accounting.SelfComposed{Event: curveStep(4, 0.01), Count: s}, Options{})
		want, err := p.Epsilon(t.Context(), 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		// 1e-6 relative: the bounds agree to ~1e-7 here (the e2 term of the
		// chained powers is a little larger); a different grid or window
		// would show at 1e-4 or more.
		if math.Abs(got[i]-want) > 1e-6*want {
			t.Errorf("T=%d: fast ε = %.12g, Epsilon = %.12g", s, got[i], want)
		}
	}
}

// TestPLDEpsilonCurveFallback covers the paths that compose a copy: a
// non-empty accountant, q = 1 (closed form), NoOp, NonPrivate, several
// (σ, q) per step. They must equal incremental Compose + Epsilon exactly and
// leave the accountant unchanged.
func TestPLDEpsilonCurveFallback(t *testing.T) {
	steps := []int{1, 3, 3, 20}
	for _, tc := range []struct {
		name  string
		pre   accounting.Event // composed before the curve, or nil
		step  accounting.Event
		delta float64
	}{
		{"non-empty state", curveStep(2, 0.05), curveStep(3, 0.02), 1e-5},
		{"gaussian q=1", nil, accounting.Gaussian{NoiseMultiplier: 5}, 1e-6},
		{"noop", nil, accounting.NoOp{}, 1e-5},
		{"noop on state", curveStep(2, 0.05), accounting.NoOp{}, 1e-5},
		{"non-private", nil, accounting.NonPrivate{}, 1e-5},
		{"two pairs", nil, composed(curveStep(3, 0.02), curveStep(6, 0.1)), 1e-5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.pre != nil {
				if err := a.Compose(tc.pre, 2); err != nil {
					t.Fatal(err)
				}
			}
			before, err := a.Epsilon(t.Context(), tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.EpsilonCurve(t.Context(), tc.step, steps, tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			after, err := a.Epsilon(t.Context(), tc.delta)
			if err != nil || after != before {
				t.Errorf("state changed: Epsilon %g → %g, %v", before, after, err)
			}
			b, _ := New(Options{})
			if tc.pre != nil {
				_ = b.Compose(tc.pre, 2)
			}
			done := 0
			for i, s := range steps {
				if s > done {
					if err := b.Compose(tc.step, s-done); err != nil {
						t.Fatal(err)
					}
					done = s
				}
				want, _ := b.Epsilon(t.Context(), tc.delta)
				if got[i] != want && !(math.IsInf(got[i], 1) && math.IsInf(want, 1)) {
					t.Errorf("T=%d: curve ε = %g, incremental %g", s, got[i], want)
				}
			}
		})
	}
}

// TestPLDEpsilonCurveSelfComposedStep: a step of k repetitions is the
// curve at k·T.
func TestPLDEpsilonCurveSelfComposedStep(t *testing.T) {
	a, _ := New(Options{})
	got, err := a.EpsilonCurve(t.Context(), accounting.SelfComposed{Event: curveStep(2, 0.03), Count: 3}, []int{2, 50}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	want, err := a.EpsilonCurve(t.Context(), curveStep(2, 0.03), []int{6, 150}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("point %d: %g, want %g", i, got[i], want[i])
		}
	}
}

func TestPLDEpsilonCurveBadInput(t *testing.T) {
	a, _ := New(Options{})
	step := curveStep(2, 0.01)
	for _, tc := range []struct {
		name  string
		step  accounting.Event
		steps []int
		delta float64
		want  error
	}{
		{"unsorted", step, []int{5, 3}, 1e-5, accounting.ErrInvalidParameter},
		{"zero steps", step, []int{0, 3}, 1e-5, accounting.ErrInvalidParameter},
		{"negative steps", step, []int{-1}, 1e-5, accounting.ErrInvalidParameter},
		{"delta 0", step, []int{1}, 0, accounting.ErrInvalidParameter},
		{"delta 1", step, []int{1}, 1, accounting.ErrInvalidParameter},
		{"delta NaN", step, []int{1}, math.NaN(), accounting.ErrInvalidParameter},
		{"bad q", curveStep(2, 1.5), []int{1}, 1e-5, accounting.ErrInvalidParameter},
		{"unsupported", sampled(0.1, accounting.ZCDP{Rho: 1}), []int{1}, 1e-5, accounting.ErrUnsupportedEvent},
		{"too many steps", accounting.SelfComposed{Event: step, Count: 1 << 30}, []int{1 << 20}, 1e-5, accounting.ErrInvalidParameter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a.EpsilonCurve(t.Context(), tc.step, tc.steps, tc.delta)
			if !errors.Is(err, tc.want) {
				t.Errorf("EpsilonCurve = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	if got, err := a.EpsilonCurve(t.Context(), step, nil, 1e-5); err != nil || len(got) != 0 {
		t.Errorf("no steps: %v, %v", got, err)
	}
	// accounting.Normalize: a sampled NoOp is free (it was refused as an
	// unsupported event before the boundary table).
	if got, err := a.EpsilonCurve(t.Context(), sampled(0.1, accounting.NoOp{}), []int{1, 5}, 1e-5); err != nil || got[0] != 0 || got[1] != 0 {
		t.Errorf("sampled NoOp: %v, %v; want [0 0]", got, err)
	}
}

var benchSinkCurve []float64

// BenchmarkPLDEpsilonCurve is the curve of `dpcalc curve epochs --sigma 4
// --q 0.01 --delta 1e-5 --from 1 --to 400` (400 points, T = 100..40,000):
// the fast path next to one Compose + Epsilon per point. cpu-s/op is the
// process CPU time per curve (user + system, so it includes the garbage
// collector), steadier than ns/op on a shared machine.
func BenchmarkPLDEpsilonCurve(b *testing.B) {
	step := curveStep(4, 0.01)
	steps := make([]int, 400)
	for i := range steps {
		steps[i] = 100 * (i + 1)
	}
	b.Run("fast", func(b *testing.B) {
		defer reportCPU(b)()
		for i := 0; i < b.N; i++ {
			a, _ := New(Options{})
			out, err := a.EpsilonCurve(b.Context(), step, steps, 1e-5)
			if err != nil {
				b.Fatal(err)
			}
			benchSinkCurve = out
		}
	})
	b.Run("pointwise", func(b *testing.B) {
		defer reportCPU(b)()
		for i := 0; i < b.N; i++ {
			a, _ := New(Options{})
			out := make([]float64, len(steps))
			done := 0
			for j, s := range steps {
				if err := a.Compose(step, s-done); err != nil {
					b.Fatal(err)
				}
				done = s
				var err error
				if out[j], err = a.Epsilon(b.Context(), 1e-5); err != nil {
					b.Fatal(err)
				}
			}
			benchSinkCurve = out
		}
	})
}

// reportCPU starts a CPU clock; the function it returns reports cpu-s/op.
func reportCPU(b *testing.B) func() {
	start := cpuSeconds()
	return func() { b.ReportMetric((cpuSeconds()-start)/float64(b.N), "cpu-s/op") }
}
