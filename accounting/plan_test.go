package accounting

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

// alienEvent is an Event type Normalize does not know.
type alienEvent struct{}

func (alienEvent) isEvent() {}

// outcome classes of one row of Normalize's boundary table.
const (
	outParam       = "param"       // *ParamError naming want.name at want.path
	outUnsupported = "unsupported" // *UnsupportedEventError at want.path
	outFree        = "free"        // empty plan
	outUnbounded   = "unbounded"   // Unbounded at want.path, no steps
	outStep        = "step"        // one step with want.sigma (and want.rate, unwrapped)
)

type planRow struct {
	name  string
	e     Event
	out   string
	param string  // outParam: the parameter name
	path  string  // path of the error, the unbounded event or the step
	sigma float64 // outStep with a Gaussian: the σ the step holds
	rate  float64 // outStep: the rate the step holds when not wrapped (0: 1)
	ulps  int     // outStep: rate may exceed rate by this many ulps (nested products round up)
	// composite rows are compositions themselves and are not wrapped in
	// PoissonSampled (that is a row of its own).
	composite bool
}

// boundaryRows has every row of Normalize's doc table, with its edges.
func boundaryRows() []planRow {
	g := func(s float64) Event { return Gaussian{NoiseMultiplier: s} }
	ps := func(q float64, e Event) Event { return PoissonSampled{SamplingRate: q, Event: e} }
	return []planRow{
		// Gaussian σ NaN or < 0, q NaN or outside [0, 1], count < 1, ε, δ, ρ, ξ out of range → *ParamError.
		{name: "sigma NaN", e: g(math.NaN()), out: outParam, param: "sigma", path: "Gaussian"},
		{name: "sigma -1", e: g(-1), out: outParam, param: "sigma", path: "Gaussian"},
		{name: "sigma -Inf", e: g(math.Inf(-1)), out: outParam, param: "sigma", path: "Gaussian"},
		{name: "sigma -5e-324", e: g(-5e-324), out: outParam, param: "sigma", path: "Gaussian"},
		{name: "q NaN", e: ps(math.NaN(), g(1)), out: outParam, param: "q", path: "PoissonSampled"},
		{name: "q -1e-300", e: ps(-1e-300, g(1)), out: outParam, param: "q", path: "PoissonSampled"},
		{name: "q 1+ulp", e: ps(math.Nextafter(1, 2), g(1)), out: outParam, param: "q", path: "PoissonSampled"},
		{name: "q +Inf", e: ps(math.Inf(1), g(1)), out: outParam, param: "q", path: "PoissonSampled"},
		{name: "q 0 validates inner", e: ps(0, g(-1)), out: outParam, param: "sigma", path: "PoissonSampled/Gaussian"},
		{name: "SelfComposed count 0", e: SelfComposed{Event: g(1), Count: 0}, out: outParam, param: "count", path: "SelfComposed", composite: true},
		{name: "SelfComposed count -3", e: SelfComposed{Event: g(1), Count: -3}, out: outParam, param: "count", path: "SelfComposed", composite: true},
		{name: "eps NaN", e: EpsilonDelta{Epsilon: math.NaN(), Delta: 0.1}, out: outParam, param: "eps", path: "EpsilonDelta"},
		{name: "eps -1", e: EpsilonDelta{Epsilon: -1, Delta: 0.1}, out: outParam, param: "eps", path: "EpsilonDelta"},
		{name: "eps +Inf", e: EpsilonDelta{Epsilon: math.Inf(1), Delta: 0.1}, out: outParam, param: "eps", path: "EpsilonDelta"},
		{name: "delta -0.1", e: EpsilonDelta{Epsilon: 1, Delta: -0.1}, out: outParam, param: "delta", path: "EpsilonDelta"},
		{name: "delta NaN", e: EpsilonDelta{Epsilon: 1, Delta: math.NaN()}, out: outParam, param: "delta", path: "EpsilonDelta"},
		{name: "delta 1.5", e: EpsilonDelta{Epsilon: 1, Delta: 1.5}, out: outParam, param: "delta", path: "EpsilonDelta"},
		{name: "rho -1", e: ZCDP{Rho: -1}, out: outParam, param: "rho", path: "ZCDP"},
		{name: "rho +Inf", e: ZCDP{Rho: math.Inf(1)}, out: outParam, param: "rho", path: "ZCDP"},
		{name: "rho NaN", e: ZCDP{Rho: math.NaN()}, out: outParam, param: "rho", path: "ZCDP"},
		{name: "xi -1", e: ZCDP{Rho: 1, Xi: -1}, out: outParam, param: "xi", path: "ZCDP"},
		{name: "xi +Inf", e: ZCDP{Rho: 1, Xi: math.Inf(1)}, out: outParam, param: "xi", path: "ZCDP"},

		// Gaussian σ = +Inf, PoissonSampled q = 0, ZCDP ρ = ξ = 0, EpsilonDelta (0, 0), NoOp → no step.
		{name: "sigma +Inf", e: g(math.Inf(1)), out: outFree},
		{name: "q 0", e: ps(0, g(1)), out: outFree},
		{name: "q 0 of NonPrivate", e: ps(0, NonPrivate{}), out: outFree},
		{name: "zcdp 0 0", e: ZCDP{}, out: outFree},
		{name: "eps-delta 0 0", e: EpsilonDelta{}, out: outFree},
		{name: "NoOp", e: NoOp{}, out: outFree},
		{name: "empty Composed", e: Composed{}, out: outFree, composite: true},

		// Gaussian 0 ≤ σ < SigmaFloor, NonPrivate, EpsilonDelta δ = 1 → Unbounded.
		{name: "sigma 0", e: g(0), out: outUnbounded, path: "Gaussian"},
		{name: "sigma -0", e: g(math.Copysign(0, -1)), out: outUnbounded, path: "Gaussian"},
		{name: "sigma 5e-324", e: g(5e-324), out: outUnbounded, path: "Gaussian"},
		{name: "sigma 1e-200", e: g(1e-200), out: outUnbounded, path: "Gaussian"},
		{name: "sigma 7e-155", e: g(7e-155), out: outUnbounded, path: "Gaussian"},
		{name: "sigma floor-ulp", e: g(math.Nextafter(SigmaFloor, 0)), out: outUnbounded, path: "Gaussian"},
		{name: "sigma floor", e: g(SigmaFloor), out: outStep, path: "Gaussian", sigma: SigmaFloor},
		{name: "NonPrivate", e: NonPrivate{}, out: outUnbounded, path: "NonPrivate"},
		{name: "eps-delta delta 1", e: EpsilonDelta{Epsilon: 3, Delta: 1}, out: outUnbounded, path: "EpsilonDelta"},
		{name: "eps-delta 0 delta 1", e: EpsilonDelta{Delta: 1}, out: outUnbounded, path: "EpsilonDelta"},

		// Gaussian σ > SigmaCeiling → σ = SigmaCeiling.
		{name: "sigma ceiling", e: g(SigmaCeiling), out: outStep, path: "Gaussian", sigma: SigmaCeiling},
		{name: "sigma ceiling+ulp", e: g(math.Nextafter(SigmaCeiling, math.Inf(1))), out: outStep, path: "Gaussian", sigma: SigmaCeiling},
		{name: "sigma 1e308", e: g(1e308), out: outStep, path: "Gaussian", sigma: SigmaCeiling},
		{name: "sigma MaxFloat64", e: g(math.MaxFloat64), out: outStep, path: "Gaussian", sigma: SigmaCeiling},
		{name: "sigma 1", e: g(1), out: outStep, path: "Gaussian", sigma: 1},

		// PoissonSampled 0 < q < RateFloor → q = RateFloor.
		{name: "q 5e-324", e: ps(5e-324, g(1)), out: outStep, path: "PoissonSampled/Gaussian", sigma: 1, rate: RateFloor},
		{name: "q 1e-300", e: ps(1e-300, g(1)), out: outStep, path: "PoissonSampled/Gaussian", sigma: 1, rate: RateFloor},
		{name: "q floor", e: ps(RateFloor, g(1)), out: outStep, path: "PoissonSampled/Gaussian", sigma: 1, rate: RateFloor},
		{name: "q 1e-100", e: ps(1e-100, g(1)), out: outStep, path: "PoissonSampled/Gaussian", sigma: 1, rate: 1e-100},
		{name: "q 1", e: ps(1, g(2)), out: outStep, path: "PoissonSampled/Gaussian", sigma: 2, rate: 1},

		// PoissonSampled{q1, PoissonSampled{q2, e}} → rate q1·q2, rounded up (checked in TestNormalizeNestedRate).
		{name: "nested q 1 1", e: ps(1, ps(1, g(3))), out: outStep, path: "PoissonSampled/PoissonSampled/Gaussian", sigma: 3, rate: 1, ulps: 1},
		{name: "nested q tiny", e: ps(1e-200, ps(1e-200, g(3))), out: outStep, path: "PoissonSampled/PoissonSampled/Gaussian", sigma: 3, rate: RateFloor, ulps: 1},

		// PoissonSampled{q, Composed or SelfComposed} → *UnsupportedEventError.
		{name: "sampled Composed", e: ps(0.5, Composed{Events: []Event{g(1)}}), out: outUnsupported, path: "PoissonSampled/Composed", composite: true},
		{name: "sampled SelfComposed", e: ps(0.5, SelfComposed{Event: g(1), Count: 2}), out: outUnsupported, path: "PoissonSampled/SelfComposed", composite: true},
		{name: "sampled q 1 Composed", e: ps(1, Composed{}), out: outUnsupported, path: "PoissonSampled/Composed", composite: true},
		{name: "sampled q 0 SelfComposed", e: ps(0, SelfComposed{Event: g(1), Count: 1}), out: outUnsupported, path: "PoissonSampled/SelfComposed", composite: true},

		// Nil event, unknown event type → *UnsupportedEventError.
		{name: "nil", e: nil, out: outUnsupported, path: ""},
		{name: "sampled nil", e: ps(0.5, nil), out: outUnsupported, path: "PoissonSampled"},
		{name: "alien", e: alienEvent{}, out: outUnsupported, path: "alienEvent"},
		{name: "sampled alien", e: ps(0.5, alienEvent{}), out: outUnsupported, path: "PoissonSampled/alienEvent"},
	}
}

// TestNormalizeBoundaryTable checks every row of Normalize's boundary table,
// bare and under each wrapper (the table says each row holds under sampling
// and composition): Composed{NoOp, e}, SelfComposed{e, 3} and
// PoissonSampled{0.5, e}. Errors carry the row's path behind the wrapper's
// prefix.
func TestNormalizeBoundaryTable(t *testing.T) {
	type wrapper struct {
		name   string
		wrap   func(Event) Event
		prefix string
		mult   int
		rate   float64 // the sampling rate the wrapper adds (0: none)
	}
	wrappers := []wrapper{
		{"bare", func(e Event) Event { return e }, "", 1, 0},
		{"Composed", func(e Event) Event { return Composed{Events: []Event{NoOp{}, e}} }, "Composed[1]/", 1, 0},
		{"SelfComposed", func(e Event) Event { return SelfComposed{Event: e, Count: 3} }, "SelfComposed/", 3, 0},
		{"PoissonSampled", func(e Event) Event { return PoissonSampled{SamplingRate: 0.5, Event: e} }, "PoissonSampled/", 1, 0.5},
	}
	for _, row := range boundaryRows() {
		for _, w := range wrappers {
			if w.rate != 0 && row.composite {
				continue
			}
			t.Run(row.name+"/"+w.name, func(t *testing.T) {
				e := w.wrap(row.e)
				path := row.path
				if path != "" || row.out != outUnsupported || w.prefix == "" {
					path = w.prefix + path
				} else {
					path = strings.TrimSuffix(w.prefix, "/")
				}
				for _, count := range []int{1, 2} {
					p, err := Normalize(e, count)
					switch row.out {
					case outParam:
						var pe *ParamError
						if !errors.As(err, &pe) || pe.Name != row.param || pe.Path != path {
							t.Fatalf("Normalize(%#v) = %+v, %v; want *ParamError %q at %q", e, p, err, row.param, path)
						}
						if !errors.Is(err, ErrInvalidParameter) || !strings.Contains(err.Error(), path) {
							t.Errorf("error %q does not match ErrInvalidParameter or name %q", err, path)
						}
						continue
					case outUnsupported:
						var ue *UnsupportedEventError
						if !errors.As(err, &ue) || ue.Path != path {
							t.Fatalf("Normalize(%#v) = %+v, %v; want *UnsupportedEventError at %q", e, p, err, path)
						}
						if !errors.Is(err, ErrUnsupportedEvent) {
							t.Errorf("error %v does not match ErrUnsupportedEvent", err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("Normalize(%#v, %d): %v", e, count, err)
					}
					switch row.out {
					case outFree:
						if !p.Empty() || len(p.Steps) != 0 || p.Total() != 0 {
							t.Errorf("plan %+v, want empty", p)
						}
					case outUnbounded:
						if !p.Unbounded || p.UnboundedPath != path || len(p.Steps) != 0 || p.Empty() {
							t.Errorf("plan %+v, want Unbounded at %q with no steps", p, path)
						}
					case outStep:
						if p.Unbounded || len(p.Steps) != 1 {
							t.Fatalf("plan %+v, want one bounded step", p)
						}
						s := p.Steps[0]
						if s.Mechanism != MechGaussian || s.Sigma != row.sigma || s.Path != path ||
							s.Count != count*w.mult || s.Adjacency != AddRemove {
							t.Errorf("step %+v, want Gaussian σ=%g at %q, count %d", s, row.sigma, path, count*w.mult)
						}
						want := row.rate
						if want == 0 {
							want = 1
						}
						ulps := row.ulps
						if w.rate != 0 {
							// Product rounded up (see TestNormalizeNestedRate).
							want, ulps = math.Max(w.rate*want, RateFloor), ulps+1
						}
						hi := want
						for i := 0; i < ulps; i++ {
							hi = math.Nextafter(hi, 2)
						}
						if s.Rate < want || s.Rate > math.Min(hi, 1) {
							t.Errorf("rate %v, want %v rounded up by at most %d ulps", s.Rate, want, ulps)
						}
						if wantS := SamplingPoisson; s.Rate == 1 && s.Sampling != SamplingNone || s.Rate < 1 && s.Sampling != wantS {
							t.Errorf("sampling %v with rate %v", s.Sampling, s.Rate)
						}
					}
				}
			})
		}
	}
}

// TestNormalizeCount: the count argument and the total step count.
func TestNormalizeCount(t *testing.T) {
	g1, g2, g3 := Gaussian{NoiseMultiplier: 1}, Gaussian{NoiseMultiplier: 2}, Gaussian{NoiseMultiplier: 3}
	tests := []struct {
		name  string
		e     Event
		count int
		total int    // want this total, or
		path  string // want a *ParamError "count" at this path ("-" for none)
	}{
		{"count 0", g1, 0, 0, ""},
		{"count -1", g1, -1, 0, ""},
		{"count MaxCount", g1, MaxCount, MaxCount, "-"},
		{"count MaxCount+1", g1, MaxCount + 1, 0, "Gaussian"},
		{"count MaxInt", g1, math.MaxInt, 0, "Gaussian"},
		{"NoOp MaxInt", NoOp{}, math.MaxInt, 0, "-"},
		{"NonPrivate MaxInt", NonPrivate{}, math.MaxInt, 0, "-"},
		{"two halves", Composed{Events: []Event{g1, g2}}, MaxCount / 2, MaxCount, "-"},
		{"three halves", Composed{Events: []Event{g1, g2, g3}}, MaxCount / 2, 0, "Composed[2]/Gaussian"},
		{"self product at MaxCount", SelfComposed{Event: g1, Count: 1 << 30}, 1 << 23, MaxCount, "-"},
		{"self product past MaxCount", SelfComposed{Event: g1, Count: 1 << 30}, 1 << 24, 0, "SelfComposed"},
		{"self product past MaxInt", SelfComposed{Event: SelfComposed{Event: g1, Count: math.MaxInt}, Count: 2}, 1, 0, "SelfComposed/SelfComposed"},
		{"repeated step merges", Composed{Events: []Event{g1, SelfComposed{Event: g1, Count: MaxCount - 1}}}, 1, MaxCount, "-"},
		{"repeated step overflows", Composed{Events: []Event{g1, SelfComposed{Event: g1, Count: MaxCount}}}, 1, 0, "Composed[1]/SelfComposed/Gaussian"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Normalize(tc.e, tc.count)
			if tc.path == "-" {
				if err != nil || p.Total() != tc.total {
					t.Fatalf("Normalize: %v, total %d; want total %d", err, p.Total(), tc.total)
				}
				return
			}
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Name != "count" || pe.Path != tc.path {
				t.Fatalf("Normalize = %+v, %v; want *ParamError count at %q", p, err, tc.path)
			}
			if !reflect.DeepEqual(p, Plan{}) {
				t.Errorf("plan %+v returned with the error", p)
			}
		})
	}
}

// TestNormalizeNestedRate: nested Poisson sampling is Poisson sampling at the
// product rate, which is rounded up: never below the exact product of the
// two float64 rates (checked in big.Float), at most 2 ulps above it, and
// never below RateFloor.
func TestNormalizeNestedRate(t *testing.T) {
	qs := []float64{1, 0.999999, 0.5, 0.3, 0.1, 1.0 / 3, 0.01, 1e-6, 0.7071067811865476, 1e-100, 1e-140, 1e-160, 5e-324}
	for _, q1 := range qs {
		for _, q2 := range qs {
			for _, q3 := range []float64{0, 0.37} {
				e := Event(Gaussian{NoiseMultiplier: 1})
				rates := []float64{q2, q1}
				e = PoissonSampled{SamplingRate: q2, Event: e}
				if q3 != 0 {
					e = PoissonSampled{SamplingRate: q3, Event: e}
					rates = []float64{q2, q3, q1}
				}
				e = PoissonSampled{SamplingRate: q1, Event: e}
				p, err := Normalize(e, 1)
				if err != nil || len(p.Steps) != 1 {
					t.Fatalf("q=%v: %+v, %v", rates, p, err)
				}
				exact := new(big.Float).SetPrec(2000).SetFloat64(1)
				for _, r := range rates {
					exact.Mul(exact, new(big.Float).SetFloat64(math.Max(r, RateFloor)))
				}
				ex, _ := exact.Float64()
				got := p.Steps[0].Rate
				if new(big.Float).SetFloat64(got).Cmp(exact) < 0 {
					t.Errorf("rates %v: plan rate %v below the exact product %v", rates, got, exact.Text('g', 30))
				}
				hi := math.Max(ex, RateFloor)
				for i := 0; i < len(rates); i++ {
					hi = math.Nextafter(hi, 2)
				}
				if got > math.Min(hi, 1) {
					t.Errorf("rates %v: plan rate %v more than %d ulps above the exact product %v", rates, got, len(rates), ex)
				}
				if wantNone := got == 1; wantNone != (p.Steps[0].Sampling == SamplingNone) {
					t.Errorf("rates %v: rate %v with sampling %v", rates, got, p.Steps[0].Sampling)
				}
			}
		}
	}
}

// TestNormalizePaths: steps merge across the tree, keep the path of their
// first occurrence and their order of first appearance; Step.Event
// normalises back to the same step; Step.Unsupported names the path.
func TestNormalizePaths(t *testing.T) {
	a := PoissonSampled{SamplingRate: 0.25, Event: Gaussian{NoiseMultiplier: 2}}
	b := ZCDP{Rho: 0.5, Xi: 0.1}
	e := Composed{Events: []Event{
		NoOp{},
		SelfComposed{Event: Composed{Events: []Event{b, a}}, Count: 3},
		a,
		Composed{Events: []Event{EpsilonDelta{Epsilon: 1, Delta: 1e-6}, NonPrivate{}, NonPrivate{}}},
		b,
	}}
	p, err := Normalize(e, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		path  string
		count int
	}{
		{"Composed[1]/SelfComposed/Composed[0]/ZCDP", 2 * (3 + 1)},
		{"Composed[1]/SelfComposed/Composed[1]/PoissonSampled/Gaussian", 2 * (3 + 1)},
		{"Composed[3]/Composed[0]/EpsilonDelta", 2},
	}
	if len(p.Steps) != len(want) {
		t.Fatalf("steps %+v, want %d", p.Steps, len(want))
	}
	for i, w := range want {
		if s := p.Steps[i]; s.Path != w.path || s.Count != w.count {
			t.Errorf("step %d: path %q count %d, want %q %d", i, s.Path, s.Count, w.path, w.count)
		}
	}
	if !p.Unbounded || p.UnboundedPath != "Composed[3]/Composed[1]/NonPrivate" {
		t.Errorf("unbounded %v at %q, want the first NonPrivate", p.Unbounded, p.UnboundedPath)
	}
	if p.Empty() || p.Total() != 18 {
		t.Errorf("Empty %v, Total %d; want false, 18", p.Empty(), p.Total())
	}
	for _, s := range p.Steps {
		q, err := Normalize(s.Event(), 1)
		if err != nil || len(q.Steps) != 1 || q.Steps[0].key() != s.key() {
			t.Errorf("Normalize(%#v) = %+v, %v; want the step back", s.Event(), q, err)
		}
		err = s.Unsupported(KindMA, "no")
		var ue *UnsupportedEventError
		if !errors.As(err, &ue) || ue.Path != s.Path || !strings.Contains(err.Error(), s.Path) ||
			!strings.Contains(err.Error(), "ma: no") || !reflect.DeepEqual(ue.Event, s.Event()) {
			t.Errorf("Unsupported: %v", err)
		}
	}
}

// TestPlanMerge: Merge composes in order, merges equal steps, keeps the
// first unbounded path, refuses totals past MaxCount and leaves both
// operands unchanged.
func TestPlanMerge(t *testing.T) {
	norm := func(e Event, n int) Plan {
		t.Helper()
		p, err := Normalize(e, n)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := PoissonSampled{SamplingRate: 0.01, Event: Gaussian{NoiseMultiplier: 1}}
	b := Gaussian{NoiseMultiplier: 3}
	p := norm(Composed{Events: []Event{a, b}}, 5)
	o := norm(Composed{Events: []Event{b, NonPrivate{}}}, 7)
	pCopy := Plan{Steps: append([]Step(nil), p.Steps...)}
	m, err := p.Merge(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Steps) != 2 || m.Steps[0].Count != 5 || m.Steps[1].Count != 12 || m.Steps[1].Path != "Composed[1]/Gaussian" ||
		!m.Unbounded || m.UnboundedPath != "Composed[1]/NonPrivate" || m.Total() != 17 {
		t.Errorf("merge = %+v", m)
	}
	if !reflect.DeepEqual(p.Steps, pCopy.Steps) || p.Unbounded {
		t.Errorf("Merge changed its receiver to %+v", p)
	}
	// Merge equals Normalize of the composition.
	whole := norm(Composed{Events: []Event{SelfComposed{Event: Composed{Events: []Event{a, b}}, Count: 5},
		SelfComposed{Event: Composed{Events: []Event{b, NonPrivate{}}}, Count: 7}}}, 1)
	if len(whole.Steps) != len(m.Steps) || whole.Total() != m.Total() || whole.Unbounded != m.Unbounded {
		t.Errorf("Normalize of the composition %+v, Merge %+v", whole, m)
	}
	for i := range whole.Steps {
		if whole.Steps[i].key() != m.Steps[i].key() || whole.Steps[i].Count != m.Steps[i].Count {
			t.Errorf("step %d: Normalize %+v, Merge %+v", i, whole.Steps[i], m.Steps[i])
		}
	}
	// The first unbounded path wins.
	u1, u2 := norm(NonPrivate{}, 1), norm(Composed{Events: []Event{NoOp{}, Gaussian{}}}, 1)
	if m, _ := u1.Merge(u2); m.UnboundedPath != "NonPrivate" {
		t.Errorf("unbounded path %q, want NonPrivate", m.UnboundedPath)
	}
	if m, _ := (Plan{}).Merge(u2); m.UnboundedPath != "Composed[1]/Gaussian" {
		t.Errorf("unbounded path %q, want Composed[1]/Gaussian", m.UnboundedPath)
	}
	// Counts.
	half := norm(b, MaxCount/2)
	if m, err := half.Merge(half); err != nil || m.Total() != MaxCount || len(m.Steps) != 1 {
		t.Errorf("MaxCount/2 + MaxCount/2: %+v, %v", m, err)
	}
	one := norm(a, 1)
	full := norm(b, MaxCount)
	for _, pair := range [][2]Plan{{full, one}, {one, full}} {
		m, err := pair[0].Merge(pair[1])
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Name != "count" || !reflect.DeepEqual(m, Plan{}) {
			t.Errorf("Merge past MaxCount = %+v, %v; want *ParamError count", m, err)
		}
	}
	if m, err := (Plan{}).Merge(Plan{}); err != nil || !m.Empty() {
		t.Errorf("empty merge: %+v, %v", m, err)
	}
}

// TestPlanPureEpsilonFloorDelta: PureEpsilon is Σ count·ε for pure plans
// and +Inf for any plan holding a step that is never pure DP (or no finite
// bound at all); FloorDelta rounds an underflowed δ up exactly below it.
func TestPlanPureEpsilonFloorDelta(t *testing.T) {
	const tiny = math.SmallestNonzeroFloat64
	inf := math.Inf(1)
	tests := []struct {
		name string
		e    Event
		n    int
		pure float64
	}{
		{"empty", NoOp{}, 1, 0},
		{"pure", Composed{Events: []Event{EpsilonDelta{Epsilon: 0.5}, SelfComposed{Event: EpsilonDelta{Epsilon: 0.25}, Count: 4}}}, 3, 3 * (0.5 + 1)},
		{"pure sampled", PoissonSampled{SamplingRate: 0.1, Event: EpsilonDelta{Epsilon: 2}}, 1, 2},
		{"approximate", EpsilonDelta{Epsilon: 1, Delta: 1e-300}, 1, inf},
		{"gaussian", Composed{Events: []Event{EpsilonDelta{Epsilon: 1}, Gaussian{NoiseMultiplier: 1e100}}}, 1, inf},
		{"zcdp", ZCDP{Xi: 1}, 1, inf},
		{"unbounded", NonPrivate{}, 1, inf},
		{"pure and unbounded", Composed{Events: []Event{EpsilonDelta{Epsilon: 1}, NonPrivate{}}}, 1, inf},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Normalize(tc.e, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.PureEpsilon(); got != tc.pure {
				t.Errorf("PureEpsilon = %v, want %v", got, tc.pure)
			}
			for _, eps := range []float64{0, 1e-300, 1, 4.5, 100, inf} {
				want := 0.0
				if !p.Empty() && eps < tc.pure {
					want = tiny
				}
				if got := p.FloorDelta(0, eps); got != want {
					t.Errorf("FloorDelta(0, %v) = %v, want %v", eps, got, want)
				}
				for _, d := range []float64{tiny, 1e-10, 1} {
					if got := p.FloorDelta(d, eps); got != d {
						t.Errorf("FloorDelta(%v, %v) = %v, want it unchanged", d, eps, got)
					}
				}
			}
		})
	}
}
