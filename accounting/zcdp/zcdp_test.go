package zcdp

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compRefs are the mpmath references of testdata/composition/refs.json,
// written by testdata/composition/gen.py.
type compRefs struct {
	ZCDP []struct {
		Sigma      float64 `json:"sigma"`
		Steps      int     `json:"steps"`
		Delta      float64 `json:"delta"`
		Eps        float64 `json:"eps"`
		Rho        float64 `json:"rho"`
		EpsOfDelta float64 `json:"eps_of_delta"`
		DeltaOfEps float64 `json:"delta_of_eps"`
	} `json:"zcdp"`
	Advanced []struct {
		EpsS  float64 `json:"eps_s"`
		K     float64 `json:"k"`
		Slack float64 `json:"slack"`
		Eps   float64 `json:"eps"`
	} `json:"advanced"`
	AnalyticGaussian []struct {
		Sigma, Delta, Eps float64
	} `json:"analytic_gaussian"`
	Abadi []struct {
		Epochs int     `json:"epochs"`
		Steps  int     `json:"steps"`
		Mode   string  `json:"mode"`
		Eps    float64 `json:"eps"`
	} `json:"abadi"`
	Heterogeneous struct {
		Delta, Eps, Basic, Advanced float64
	} `json:"heterogeneous"`
	DPD []struct {
		Name      string   `json:"name"`
		Eps       float64  `json:"eps"`
		Delta     float64  `json:"delta"`
		Q         float64  `json:"q"`
		Epochs    int      `json:"epochs"`
		Steps     int      `json:"steps"`
		PaperAC   *float64 `json:"paper_ac"`
		PaperZCDP *float64 `json:"paper_zcdp"`
		SigmaAC   float64  `json:"sigma_ac"`
		SigmaZCDP float64  `json:"sigma_zcdp"`
	} `json:"dpd"`
}

func compLoadRefs(t *testing.T) *compRefs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "composition", "refs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r compRefs
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.ZCDP) == 0 || len(r.Advanced) == 0 || len(r.Abadi) == 0 || len(r.DPD) == 0 {
		t.Fatal("refs.json is missing sections")
	}
	return &r
}

// compNear reports whether got is within relative tolerance tol of want.
func compNear(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

func TestZCDPClosedForms(t *testing.T) {
	t.Parallel()
	for _, c := range compLoadRefs(t).ZCDP {
		a := NewZCDP()
		if err := a.Compose(Gaussian{NoiseMultiplier: c.Sigma}, c.Steps); err != nil {
			t.Fatal(err)
		}
		// Tolerances: Rho is c·1/(2σ²), two roundings; Epsilon and Delta are
		// rounded up by four ulps on top of a few roundings (Delta's exp
		// amplifies the relative error of its argument t²/(4ρ), at most ~80
		// here, to ~1e-14).
		if got := a.Rho(); !compNear(got, c.Rho, 1e-15) {
			t.Errorf("sigma=%g steps=%d: Rho = %.17g, want %.17g", c.Sigma, c.Steps, got, c.Rho)
		}
		eps, err := a.Epsilon(c.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if !compNear(eps, c.EpsOfDelta, 1e-14) || eps < c.EpsOfDelta*(1-1e-16) {
			t.Errorf("sigma=%g steps=%d: Epsilon(%g) = %.17g, want %.17g (and not below)", c.Sigma, c.Steps, c.Delta, eps, c.EpsOfDelta)
		}
		d, err := a.Delta(c.Eps)
		if err != nil {
			t.Fatal(err)
		}
		if !compNear(d, c.DeltaOfEps, 1e-13) {
			t.Errorf("sigma=%g steps=%d: Delta(%g) = %.17g, want %.17g", c.Sigma, c.Steps, c.Eps, d, c.DeltaOfEps)
		}
	}
}

func TestZCDPRoundTrip(t *testing.T) {
	t.Parallel()
	for _, sigma := range []float64{0.5, 1, 4, 30} {
		for _, steps := range []int{1, 100, 100000} {
			for _, delta := range []float64{1e-12, 1e-5, 0.1} {
				a := NewZCDP()
				if err := a.Compose(SubsampledGaussian(sigma, 0.01, steps), 1); err != nil {
					t.Fatal(err)
				}
				eps, _ := a.Epsilon(delta)
				back, _ := a.Delta(eps)
				// Each direction rounds its own result up, so the round trip
				// has no sign. Delta forms t = ε − ρ, which cancels when ρ ≫ t
				// (σ = 0.5, 1e5 steps: ρ = 2e5, t ≈ 5e3), and exp amplifies the
				// relative error by t²/(4ρ) ≤ 28: ~1e-12 worst case here.
				if !compNear(back, delta, 1e-11) {
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
		e       Event
		rho, xi float64
	}{
		{"gaussian", Gaussian{NoiseMultiplier: 2}, 1.0 / 8, 0},
		{"subsampled gaussian is bounded by the gaussian", PoissonSampled{SamplingRate: 0.01, Event: Gaussian{NoiseMultiplier: 2}}, 1.0 / 8, 0},
		{"pure dp", EpsilonDelta{Epsilon: 0.3}, 0.045, 0},
		{"zcdp", ZCDP{Rho: 0.25, Xi: 0.5}, 0.25, 0.5},
		{"noop", NoOp{}, 0, 0},
		{"composed", Composed{Events: []Event{Gaussian{NoiseMultiplier: 1}, ZCDP{Rho: 1, Xi: 2}, NoOp{}}}, 1.5, 2},
		{"self composed", SelfComposed{Event: EpsilonDelta{Epsilon: 1}, Count: 4}, 2, 0},
	}
	for _, tt := range tests {
		a := NewZCDP()
		if err := a.Compose(tt.e, 1); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !compNear(a.Rho(), tt.rho, 1e-15) || !compNear(a.Xi(), tt.xi, 1e-15) {
			t.Errorf("%s: (rho, xi) = (%g, %g), want (%g, %g)", tt.name, a.Rho(), a.Xi(), tt.rho, tt.xi)
		}
	}
	// ξ shifts ε by ξ and δ(ε) by ξ (Bun and Steinke 2016, Prop. 1.3).
	a, b := NewZCDP(), NewZCDP()
	_ = a.Compose(ZCDP{Rho: 0.1, Xi: 0.7}, 1)
	_ = b.Compose(ZCDP{Rho: 0.1}, 1)
	ea, _ := a.Epsilon(1e-6)
	eb, _ := b.Epsilon(1e-6)
	if !compNear(ea-eb, 0.7, 1e-13) {
		t.Errorf("xi shift: %g - %g != 0.7", ea, eb)
	}
	da, _ := a.Delta(2.7)
	db, _ := b.Delta(2.0)
	if !compNear(da, db, 1e-13) {
		t.Errorf("xi shift: Delta %g != %g", da, db)
	}
}

func TestZCDPBoundaries(t *testing.T) {
	t.Parallel()
	empty := NewZCDP()
	if e, _ := empty.Epsilon(1e-5); e != 0 {
		t.Errorf("empty: Epsilon = %g, want 0", e)
	}
	if d, _ := empty.Delta(0); d != 0 {
		t.Errorf("empty: Delta(0) = %g, want 0", d)
	}
	np := NewZCDP()
	_ = np.Compose(Composed{Events: []Event{Gaussian{NoiseMultiplier: 1}, NonPrivate{}}}, 1)
	if e, _ := np.Epsilon(0.5); !math.IsInf(e, 1) {
		t.Errorf("non-private: Epsilon = %g, want +Inf", e)
	}
	if d, _ := np.Delta(1e6); d != 1 {
		t.Errorf("non-private: Delta = %g, want 1", d)
	}
	a := NewZCDP()
	_ = a.Compose(ZCDP{Rho: 2}, 1)
	if d, _ := a.Delta(1.9); d != 1 {
		t.Errorf("eps below rho: Delta = %g, want 1", d)
	}
	if d, _ := a.Delta(math.Inf(1)); d != 0 {
		t.Errorf("eps = +Inf: Delta = %g, want 0", d)
	}
	pure := NewZCDP()
	_ = pure.Compose(ZCDP{Xi: 1}, 1)
	if d, _ := pure.Delta(1); d != 0 {
		t.Errorf("rho = 0, eps = xi: Delta = %g, want 0", d)
	}
	if d, _ := pure.Delta(0.99); d != 1 {
		t.Errorf("rho = 0, eps < xi: Delta = %g, want 1", d)
	}
	// Underflow: σ = 1e-160 makes ρ = +Inf, which must give ε = +Inf, not NaN.
	tiny := NewZCDP()
	_ = tiny.Compose(Gaussian{NoiseMultiplier: 1e-160}, 1)
	if e, _ := tiny.Epsilon(1e-5); !math.IsInf(e, 1) {
		t.Errorf("tiny sigma: Epsilon = %g, want +Inf", e)
	}
}

func TestZCDPBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		e     Event
		count int
		param string // "" for an unsupported event
		path  string
	}{
		{"count 0", Gaussian{NoiseMultiplier: 1}, 0, "count", ""},
		{"nan sigma", Gaussian{NoiseMultiplier: math.NaN()}, 1, "sigma", ""},
		{"nested bad q", Composed{Events: []Event{NoOp{}, PoissonSampled{SamplingRate: 1.5, Event: Gaussian{NoiseMultiplier: 1}}}}, 1, "q", "Composed.Events[1]"},
		{"nested bad count", SelfComposed{Event: SelfComposed{Event: NoOp{}, Count: -1}, Count: 2}, 1, "count", "SelfComposed.Event"},
		{"negative rho", ZCDP{Rho: -1}, 1, "rho", ""},
		{"infinite xi", ZCDP{Rho: 1, Xi: math.Inf(1)}, 1, "xi", ""},
		{"approximate dp", EpsilonDelta{Epsilon: 1, Delta: 1e-5}, 1, "", ""},
		{"nested approximate dp", Composed{Events: []Event{Gaussian{NoiseMultiplier: 1}, PoissonSampled{SamplingRate: 0.1, Event: EpsilonDelta{Epsilon: 1, Delta: 1e-5}}}}, 1, "", "Composed.Events[1].Event"},
		{"nil", Composed{Events: []Event{nil}}, 1, "", "Composed.Events[0]"},
	}
	for _, tt := range tests {
		a := NewZCDP()
		_ = a.Compose(Gaussian{NoiseMultiplier: 3}, 1)
		before := *a
		err := a.Compose(tt.e, tt.count)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if *a != before {
			t.Errorf("%s: state changed on error", tt.name)
		}
		if !strings.HasPrefix(err.Error(), "accounting: ") || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("%s: error %q does not name path %q", tt.name, err, tt.path)
		}
		if tt.param != "" {
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Name != tt.param || !errors.Is(err, ErrInvalidParameter) {
				t.Errorf("%s: error %v is not a ParamError for %s", tt.name, err, tt.param)
			}
			continue
		}
		var ue *UnsupportedEventError
		if !errors.As(err, &ue) || ue.Path != tt.path || !errors.Is(err, ErrUnsupportedEvent) {
			t.Errorf("%s: error %v is not an UnsupportedEventError at %q", tt.name, err, tt.path)
		}
	}
	a := NewZCDP()
	for _, d := range []float64{0, 1, -1, math.NaN()} {
		if _, err := a.Epsilon(d); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("Epsilon(%g): err = %v", d, err)
		}
	}
	for _, e := range []float64{-1, math.NaN()} {
		if _, err := a.Delta(e); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("Delta(%g): err = %v", e, err)
		}
	}
}

// compLinearity checks Compose(e, k) ≡ Compose(SelfComposed{e, k}, 1) ≡ k ×
// Compose(e, 1) ≡ Compose(Composed{e, …, e}, 1) through Epsilon and Delta.
func compLinearity(t *testing.T, name string, newAcc func() Accountant, events []Event, ks []int, delta, eps, tol float64) {
	t.Helper()
	for _, e := range events {
		for _, k := range ks {
			ways := make([]Accountant, 4)
			for i := range ways {
				ways[i] = newAcc()
			}
			many := make([]Event, k)
			for i := range many {
				many[i] = e
			}
			errs := []error{
				ways[0].Compose(e, k),
				ways[1].Compose(SelfComposed{Event: e, Count: k}, 1),
				nil,
				ways[3].Compose(Composed{Events: many}, 1),
			}
			for i := 0; i < k; i++ {
				if err := ways[2].Compose(e, 1); err != nil {
					errs[2] = err
				}
			}
			for i, err := range errs {
				if err != nil {
					t.Fatalf("%s %#v k=%d way %d: %v", name, e, k, i, err)
				}
			}
			e0, _ := ways[0].Epsilon(delta)
			d0, _ := ways[0].Delta(eps)
			for i, w := range ways[1:] {
				ei, _ := w.Epsilon(delta)
				di, _ := w.Delta(eps)
				if !(compNear(ei, e0, tol) || math.IsInf(ei, 1) && math.IsInf(e0, 1)) || !compNear(di, d0, tol) {
					t.Errorf("%s %#v k=%d way %d: (ε, δ) = (%g, %g), want (%g, %g)", name, e, k, i+1, ei, di, e0, d0)
				}
			}
		}
	}
}

func TestZCDPCountLinearity(t *testing.T) {
	t.Parallel()
	events := []Event{
		Gaussian{NoiseMultiplier: 1.3},
		PoissonSampled{SamplingRate: 0.02, Event: Gaussian{NoiseMultiplier: 0.9}},
		EpsilonDelta{Epsilon: 0.2},
		ZCDP{Rho: 0.01, Xi: 0.03},
		NoOp{},
		NonPrivate{},
		SelfComposed{Event: Gaussian{NoiseMultiplier: 5}, Count: 4},
		Composed{Events: []Event{Gaussian{NoiseMultiplier: 2}, ZCDP{Rho: 0.5}}},
	}
	// Tolerance: c·ρ versus a sum of c copies differs by a few roundings.
	compLinearity(t, "zcdp", func() Accountant { return NewZCDP() }, events, []int{1, 3, 17}, 1e-6, 5, 1e-13)
}

func TestZCDPMonotone(t *testing.T) {
	t.Parallel()
	eps := func(sigma float64, steps int) float64 {
		a := NewZCDP()
		_ = a.Compose(SubsampledGaussian(sigma, 0.01, steps), 1)
		e, _ := a.Epsilon(1e-5)
		return e
	}
	for _, s := range []float64{0.5, 1, 2, 8} {
		if !(eps(s, 100) > eps(s*1.01, 100)) || !(eps(s, 100) < eps(s, 101)) {
			t.Errorf("sigma=%g: epsilon not decreasing in sigma or not increasing in steps", s)
		}
	}
}
