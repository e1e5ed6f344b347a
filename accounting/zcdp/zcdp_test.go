package zcdp

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/methodtest"
	"github.com/dpcalc/dpcalc/internal/testref"
)

func TestZCDPClosedForms(t *testing.T) {
	t.Parallel()
	for _, c := range testref.LoadComposition(t).ZCDP {
		a := New()
		if err := a.Compose(accounting.Gaussian{NoiseMultiplier: c.Sigma}, c.Steps); err != nil {
			t.Fatal(err)
		}
		// Tolerances: Rho is c·1/(2σ²), two roundings; Epsilon and Delta are
		// rounded up by four ulps on top of a few roundings (Delta's exp
		// amplifies the relative error of its argument t²/(4ρ), at most ~80
		// here, to ~1e-14).
		if got := a.Rho(); !testref.Near(got, c.Rho, 1e-15) {
			t.Errorf("sigma=%g steps=%d: Rho = %.17g, want %.17g", c.Sigma, c.Steps, got, c.Rho)
		}
		eps, err := a.Epsilon(t.Context(), c.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if !testref.Near(eps, c.EpsOfDelta, 1e-14) || eps < c.EpsOfDelta*(1-1e-16) {
			t.Errorf("sigma=%g steps=%d: Epsilon(%g) = %.17g, want %.17g (and not below)", c.Sigma, c.Steps, c.Delta, eps, c.EpsOfDelta)
		}
		d, err := a.Delta(t.Context(), c.Eps)
		if err != nil {
			t.Fatal(err)
		}
		// Delta adds a rounding allowance to t and to the exponent (both
		// toward more δ): about 5e-13 relative at log δ ≈ −80.
		if !testref.Near(d, c.DeltaOfEps, 1e-12) || d < c.DeltaOfEps {
			t.Errorf("sigma=%g steps=%d: Delta(%g) = %.17g, want %.17g", c.Sigma, c.Steps, c.Eps, d, c.DeltaOfEps)
		}
	}
}

func TestZCDPRoundTrip(t *testing.T) {
	t.Parallel()
	for _, sigma := range []float64{0.5, 1, 4, 30} {
		for _, steps := range []int{1, 100, 100000} {
			for _, delta := range []float64{1e-12, 1e-5, 0.1} {
				a := New()
				if err := a.Compose(accounting.SubsampledGaussian(sigma, 0.01, steps), 1); err != nil {
					t.Fatal(err)
				}
				eps, _ := a.Epsilon(t.Context(), delta)
				back, _ := a.Delta(t.Context(), eps)
				// Each direction rounds its own result up, so the round trip
				// has no sign. Delta forms t = ε − ρ, which cancels when ρ ≫ t
				// (σ = 0.5, 1e5 steps: ρ = 2e5, t ≈ 5e3), and exp amplifies the
				// relative error by t²/(4ρ) ≤ 28: ~1e-12 worst case here.
				if !testref.Near(back, delta, 1e-11) {
					t.Errorf("sigma=%g steps=%d: Delta(Epsilon(%g)) = %.17g", sigma, steps, delta, back)
				}
			}
		}
	}
}

func TestZCDPEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		e       accounting.Event
		rho, xi float64
	}{
		{"gaussian", accounting.Gaussian{NoiseMultiplier: 2}, 1.0 / 8, 0},
		{"subsampled gaussian is bounded by the gaussian", accounting.PoissonSampled{SamplingRate: 0.01, Event: accounting.Gaussian{NoiseMultiplier: 2}}, 1.0 / 8, 0},
		{"pure dp", accounting.EpsilonDelta{Epsilon: 0.3}, 0.045, 0},
		{"zcdp", accounting.ZCDP{Rho: 0.25, Xi: 0.5}, 0.25, 0.5},
		{"noop", accounting.NoOp{}, 0, 0},
		{"composed", accounting.Composed{Events: []accounting.Event{accounting.Gaussian{NoiseMultiplier: 1}, accounting.ZCDP{Rho: 1, Xi: 2}, accounting.NoOp{}}}, 1.5, 2},
		{"self composed", accounting.SelfComposed{Event: accounting.EpsilonDelta{Epsilon: 1}, Count: 4}, 2, 0},
	}
	for _, tt := range tests {
		a := New()
		if err := a.Compose(tt.e, 1); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !testref.Near(a.Rho(), tt.rho, 1e-15) || !testref.Near(a.Xi(), tt.xi, 1e-15) {
			t.Errorf("%s: (rho, xi) = (%g, %g), want (%g, %g)", tt.name, a.Rho(), a.Xi(), tt.rho, tt.xi)
		}
	}
	// ξ shifts ε by ξ and δ(ε) by ξ (Bun and Steinke 2016, Prop. 1.3).
	a, b := New(), New()
	_ = a.Compose(accounting.ZCDP{Rho: 0.1, Xi: 0.7}, 1)
	_ = b.Compose(accounting.ZCDP{Rho: 0.1}, 1)
	ea, _ := a.Epsilon(t.Context(), 1e-6)
	eb, _ := b.Epsilon(t.Context(), 1e-6)
	if !testref.Near(ea-eb, 0.7, 1e-13) {
		t.Errorf("xi shift: %g - %g != 0.7", ea, eb)
	}
	da, _ := a.Delta(t.Context(), 2.7)
	db, _ := b.Delta(t.Context(), 2.0)
	if !testref.Near(da, db, 1e-13) {
		t.Errorf("xi shift: Delta %g != %g", da, db)
	}
}

func TestZCDPBoundaries(t *testing.T) {
	t.Parallel()
	empty := New()
	if e, _ := empty.Epsilon(t.Context(), 1e-5); e != 0 {
		t.Errorf("empty: Epsilon = %g, want 0", e)
	}
	if d, _ := empty.Delta(t.Context(), 0); d != 0 {
		t.Errorf("empty: Delta(0) = %g, want 0", d)
	}
	np := New()
	_ = np.Compose(accounting.Composed{Events: []accounting.Event{accounting.Gaussian{NoiseMultiplier: 1}, accounting.NonPrivate{}}}, 1)
	if e, _ := np.Epsilon(t.Context(), 0.5); !math.IsInf(e, 1) {
		t.Errorf("non-private: Epsilon = %g, want +Inf", e)
	}
	if d, _ := np.Delta(t.Context(), 1e6); d != 1 {
		t.Errorf("non-private: Delta = %g, want 1", d)
	}
	a := New()
	_ = a.Compose(accounting.ZCDP{Rho: 2}, 1)
	if d, _ := a.Delta(t.Context(), 1.9); d != 1 {
		t.Errorf("eps below rho: Delta = %g, want 1", d)
	}
	if d, _ := a.Delta(t.Context(), math.Inf(1)); d != 0 {
		t.Errorf("eps = +Inf: Delta = %g, want 0", d)
	}
	pure := New()
	_ = pure.Compose(accounting.ZCDP{Xi: 1}, 1)
	if d, _ := pure.Delta(t.Context(), 1); d != 0 {
		t.Errorf("rho = 0, eps = xi: Delta = %g, want 0", d)
	}
	if d, _ := pure.Delta(t.Context(), 0.99); d != 1 {
		t.Errorf("rho = 0, eps < xi: Delta = %g, want 1", d)
	}
	// Underflow: σ = 1e-160 makes ρ = +Inf, which must give ε = +Inf, not NaN.
	tiny := New()
	_ = tiny.Compose(accounting.Gaussian{NoiseMultiplier: 1e-160}, 1)
	if e, _ := tiny.Epsilon(t.Context(), 1e-5); !math.IsInf(e, 1) {
		t.Errorf("tiny sigma: Epsilon = %g, want +Inf", e)
	}
}

func TestZCDPBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		e     accounting.Event
		count int
		param string // "" for an unsupported event
		path  string
	}{
		{"count 0", accounting.Gaussian{NoiseMultiplier: 1}, 0, "count", ""},
		{"nan sigma", accounting.Gaussian{NoiseMultiplier: math.NaN()}, 1, "sigma", "Gaussian"},
		{"nested bad q", accounting.Composed{Events: []accounting.Event{accounting.NoOp{}, accounting.PoissonSampled{SamplingRate: 1.5, Event: accounting.Gaussian{NoiseMultiplier: 1}}}}, 1, "q", "Composed[1]/PoissonSampled"},
		{"nested bad count", accounting.SelfComposed{Event: accounting.SelfComposed{Event: accounting.NoOp{}, Count: -1}, Count: 2}, 1, "count", "SelfComposed/SelfComposed"},
		{"negative rho", accounting.ZCDP{Rho: -1}, 1, "rho", "ZCDP"},
		{"infinite xi", accounting.ZCDP{Rho: 1, Xi: math.Inf(1)}, 1, "xi", "ZCDP"},
		{"approximate dp", accounting.EpsilonDelta{Epsilon: 1, Delta: 1e-5}, 1, "", "EpsilonDelta"},
		{"nested approximate dp", accounting.Composed{Events: []accounting.Event{accounting.Gaussian{NoiseMultiplier: 1}, accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.EpsilonDelta{Epsilon: 1, Delta: 1e-5}}}}, 1, "", "Composed[1]/PoissonSampled/EpsilonDelta"},
		{"nil", accounting.Composed{Events: []accounting.Event{nil}}, 1, "", "Composed[0]"},
	}
	for _, tt := range tests {
		a := New()
		_ = a.Compose(accounting.Gaussian{NoiseMultiplier: 3}, 1)
		before := *a
		err := a.Compose(tt.e, tt.count)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if !reflect.DeepEqual(*a, before) {
			t.Errorf("%s: state changed on error", tt.name)
		}
		if !strings.HasPrefix(err.Error(), "accounting: ") || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("%s: error %q does not name path %q", tt.name, err, tt.path)
		}
		if tt.param != "" {
			var pe *accounting.ParamError
			if !errors.As(err, &pe) || pe.Name != tt.param || pe.Path != tt.path || !errors.Is(err, accounting.ErrInvalidParameter) {
				t.Errorf("%s: error %v is not a accounting.ParamError for %s", tt.name, err, tt.param)
			}
			continue
		}
		var ue *accounting.UnsupportedEventError
		if !errors.As(err, &ue) || ue.Path != tt.path || !errors.Is(err, accounting.ErrUnsupportedEvent) {
			t.Errorf("%s: error %v is not an accounting.UnsupportedEventError at %q", tt.name, err, tt.path)
		}
	}
	a := New()
	for _, d := range []float64{1, -1, math.NaN()} { // δ = 0 is in range (accountingtest)
		if _, err := a.Epsilon(t.Context(), d); !errors.Is(err, accounting.ErrInvalidParameter) {
			t.Errorf("Epsilon(%g): err = %v", d, err)
		}
	}
	for _, e := range []float64{-1, math.NaN()} {
		if _, err := a.Delta(t.Context(), e); !errors.Is(err, accounting.ErrInvalidParameter) {
			t.Errorf("Delta(%g): err = %v", e, err)
		}
	}
}

func TestZCDPCountLinearity(t *testing.T) {
	t.Parallel()
	events := []accounting.Event{
		accounting.Gaussian{NoiseMultiplier: 1.3},
		accounting.PoissonSampled{SamplingRate: 0.02, Event: accounting.Gaussian{NoiseMultiplier: 0.9}},
		accounting.EpsilonDelta{Epsilon: 0.2},
		accounting.ZCDP{Rho: 0.01, Xi: 0.03},
		accounting.NoOp{},
		accounting.NonPrivate{},
		accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: 5}, Count: 4},
		accounting.Composed{Events: []accounting.Event{accounting.Gaussian{NoiseMultiplier: 2}, accounting.ZCDP{Rho: 0.5}}},
	}
	// Tolerance: c·ρ versus a sum of c copies differs by a few roundings.
	methodtest.CountLinearity(t, "zcdp", func() accounting.Method { return New() }, events, []int{1, 3, 17}, 1e-6, 5, 1e-13)
}

func TestZCDPMonotone(t *testing.T) {
	t.Parallel()
	eps := func(sigma float64, steps int) float64 {
		a := New()
		_ = a.Compose(accounting.SubsampledGaussian(sigma, 0.01, steps), 1)
		e, _ := a.Epsilon(t.Context(), 1e-5)
		return e
	}
	for _, s := range []float64{0.5, 1, 2, 8} {
		if !(eps(s, 100) > eps(s*1.01, 100)) || !(eps(s, 100) < eps(s, 101)) {
			t.Errorf("sigma=%g: epsilon not decreasing in sigma or not increasing in steps", s)
		}
	}
}

func TestZCDPEdges(t *testing.T) {
	t.Parallel()
	methodtest.Edges(t, "zcdp", func() accounting.Method { return New() })
	// ε²/2 of a pure step with ε = 1e-200 underflowed to ρ = 0, so ε(δ)
	// was 0; ρ is now at least the smallest positive float64.
	a := New()
	if err := a.Compose(accounting.EpsilonDelta{Epsilon: 1e-200}, 1); err != nil {
		t.Fatal(err)
	}
	if e, err := a.Epsilon(t.Context(), 1e-5); err != nil || !(e > 0) {
		t.Errorf("pure 1e-200-DP step: ε(1e-5) = %g, %v; want > 0", e, err)
	}
	if d, err := a.Delta(t.Context(), 0); err != nil || !(d > 0) {
		t.Errorf("pure 1e-200-DP step: δ(0) = %g, %v; want > 0", d, err)
	}
	if d, err := a.Delta(t.Context(), 1e-200); err != nil || d != 0 {
		t.Errorf("pure 1e-200-DP step: δ(1e-200) = %g, %v; want 0", d, err)
	}
}

// TestZCDPPoissonReplaceOne: Poisson lots under replace-one, once refused,
// are bounded as the unsampled step under replace-one (no amplification):
// the same ε as an unsampled Gaussian of the same σ, T times.
func TestZCDPPoissonReplaceOne(t *testing.T) {
	ro := accounting.WithAdjacency(accounting.ReplaceOne)
	a := New(ro)
	if err := a.Compose(accounting.PoissonSampled{SamplingRate: 0.01, Event: accounting.Gaussian{NoiseMultiplier: 2}}, 100); err != nil {
		t.Fatalf("Compose: %v", err)
	}
	b := New(ro)
	if err := b.Compose(accounting.Gaussian{NoiseMultiplier: 2}, 100); err != nil {
		t.Fatal(err)
	}
	e1, err1 := a.Epsilon(t.Context(), 1e-5)
	e2, err2 := b.Epsilon(t.Context(), 1e-5)
	if err1 != nil || err2 != nil || e1 != e2 || !(e1 > 0) {
		t.Errorf("Poisson under replace-one ε = %v (%v), unsampled %v (%v): want equal", e1, err1, e2, err2)
	}
}
