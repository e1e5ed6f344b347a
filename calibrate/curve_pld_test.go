package calibrate

import (
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
)

// plainAccountant hides every optional interface of the accountant it
// wraps, so that EpsilonCurve takes the generic incremental path.
type plainAccountant struct{ accounting.Method }

// TestEpsilonCurvePLD: with KindPLD EpsilonCurve takes the accountant's
// fast curve. Each value must lie in [lower, upper·(1 + 1%)] of a fresh
// pointwise EpsilonBounds (below the certified lower bound it would be
// unsound; the 1% is the tightness allowance), agree with the generic
// incremental path to the same 1%, and be non-decreasing.
func TestEpsilonCurvePLD(t *testing.T) {
	const sigma, q, delta = 1.1, 0.02, 1e-6
	steps := []int{1, 5, 50, 50, 400, 1500}
	pld := func() (accounting.Method, error) { return registry.New(accounting.KindPLD, registry.Options{}) }
	plain := func() (accounting.Method, error) {
		a, err := pld()
		return plainAccountant{a}, err
	}
	if a, _ := pld(); a == nil {
		t.Fatal("no pld accountant")
	} else if _, ok := a.(accounting.CurveReporter); !ok {
		t.Fatal("pld accountant is not a CurveReporter")
	}
	fast, err := EpsilonCurve(t.Context(), pld, sigma, q, steps, delta)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := EpsilonCurve(t.Context(), plain, sigma, q, steps, delta)
	if err != nil {
		t.Fatal(err)
	}
	step := accounting.PoissonSampled{SamplingRate: q, Event: accounting.Gaussian{NoiseMultiplier: sigma}}
	for i, s := range steps {
		if i > 0 && fast[i] < fast[i-1] {
			t.Errorf("decreasing at T=%d: %g < %g", s, fast[i], fast[i-1])
		}
		a, _ := pld()
		if err := a.Compose(step, s); err != nil {
			t.Fatal(err)
		}
		lo, up, err := a.(accounting.BoundsReporter).EpsilonBounds(t.Context(), delta)
		if err != nil {
			t.Fatal(err)
		}
		if fast[i] < lo || fast[i] > up*1.01 {
			t.Errorf("T=%d: curve ε = %.10g outside [%.10g, %.10g·1.01]", s, fast[i], lo, up)
		}
		if math.Abs(fast[i]-slow[i]) > 0.01*slow[i] {
			t.Errorf("T=%d: fast ε = %.10g, incremental %.10g", s, fast[i], slow[i])
		}
	}
}

// TestEpsilonCurvePLDBadSteps: unsorted or non-positive steps are errors on
// the fast path as on the generic one.
func TestEpsilonCurvePLDBadSteps(t *testing.T) {
	pld := func() (accounting.Method, error) { return registry.New(accounting.KindPLD, registry.Options{}) }
	for _, steps := range [][]int{{3, 2}, {0, 4}, {-5}} {
		if got, err := EpsilonCurve(t.Context(), pld, 2, 0.01, steps, 1e-5); err == nil {
			t.Errorf("steps %v: got %v, want an error", steps, got)
		}
	}
}
