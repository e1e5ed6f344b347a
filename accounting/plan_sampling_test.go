package accounting

import (
	"errors"
	"math"
	"testing"
)

// TestNormalizeNewEvents: Laplace, SampledWithoutReplacement and Shuffled
// become one step each with the sizes, the rate rounded up and the plan's
// adjacency; their boundary rows follow the table of Normalize.
func TestNormalizeNewEvents(t *testing.T) {
	lap := func(b float64) Event { return Laplace{NoiseMultiplier: b} }
	g := Gaussian{NoiseMultiplier: 2}
	wor := func(n, m int, e Event) Event {
		return SampledWithoutReplacement{SourceDatasetSize: n, SampleSize: m, Event: e}
	}
	shuf := func(n, b int, e Event) Event { return Shuffled{DatasetSize: n, BatchSize: b, Event: e} }
	for _, c := range []struct {
		name  string
		adj   Adjacency
		e     Event
		out   string // "step", "free", "unbounded", "param:NAME", "unsupported"
		mech  Mechanism
		smp   Sampling
		sigma float64
		rate  float64 // the exact ratio; the step's rate is it rounded up
		n, m  int
		path  string
	}{
		{name: "laplace", e: lap(0.5), out: "step", mech: MechLaplace, sigma: 0.5, rate: 1, path: "Laplace"},
		{name: "laplace clamp", e: lap(1e300), out: "step", mech: MechLaplace, sigma: SigmaCeiling, rate: 1, path: "Laplace"},
		{name: "laplace inf free", e: lap(math.Inf(1)), out: "free"},
		{name: "laplace tiny unbounded", e: lap(1e-200), out: "unbounded", path: "Laplace"},
		{name: "laplace zero unbounded", e: lap(0), out: "unbounded", path: "Laplace"},
		{name: "laplace NaN", e: lap(math.NaN()), out: "param:sigma", path: "Laplace"},
		{name: "laplace poisson", e: PoissonSampled{SamplingRate: 0.1, Event: lap(1)}, out: "step", mech: MechLaplace, smp: SamplingPoisson, sigma: 1, rate: 0.1, path: "PoissonSampled/Laplace"},
		{name: "laplace replace-one", adj: ReplaceOne, e: lap(2), out: "step", mech: MechLaplace, sigma: 2, rate: 1, path: "Laplace"},

		{name: "wor", adj: ReplaceOne, e: wor(60000, 600, g), out: "step", mech: MechGaussian, smp: SamplingWithoutReplacement, sigma: 2, rate: 0.01, n: 60000, m: 600, path: "SampledWithoutReplacement/Gaussian"},
		{name: "wor all", adj: ReplaceOne, e: wor(7, 7, g), out: "step", mech: MechGaussian, smp: SamplingWithoutReplacement, sigma: 2, rate: 1, n: 7, m: 7, path: "SampledWithoutReplacement/Gaussian"},
		{name: "wor laplace", adj: ReplaceOne, e: wor(10, 3, lap(1)), out: "step", mech: MechLaplace, smp: SamplingWithoutReplacement, sigma: 1, rate: 0.3, n: 10, m: 3, path: "SampledWithoutReplacement/Laplace"},
		{name: "wor add-remove", e: wor(100, 10, g), out: "unsupported", path: "SampledWithoutReplacement"},
		{name: "wor empty sample", adj: ReplaceOne, e: wor(100, 0, g), out: "free"},
		{name: "wor empty sample validates", adj: ReplaceOne, e: wor(100, 0, Gaussian{NoiseMultiplier: -1}), out: "param:sigma", path: "SampledWithoutReplacement/Gaussian"},
		{name: "wor m > n", adj: ReplaceOne, e: wor(10, 11, g), out: "param:sample_size", path: "SampledWithoutReplacement"},
		{name: "wor m < 0", adj: ReplaceOne, e: wor(10, -1, g), out: "param:sample_size", path: "SampledWithoutReplacement"},
		{name: "wor n 0", adj: ReplaceOne, e: wor(0, 0, g), out: "param:source_dataset_size", path: "SampledWithoutReplacement"},
		{name: "wor of poisson", adj: ReplaceOne, e: wor(10, 2, PoissonSampled{SamplingRate: 0.5, Event: g}), out: "unsupported", path: "SampledWithoutReplacement/PoissonSampled"},
		{name: "poisson of wor", adj: ReplaceOne, e: PoissonSampled{SamplingRate: 0.5, Event: wor(10, 2, g)}, out: "unsupported", path: "PoissonSampled/SampledWithoutReplacement"},
		{name: "wor of composed", adj: ReplaceOne, e: wor(10, 2, Composed{Events: []Event{g}}), out: "unsupported", path: "SampledWithoutReplacement/Composed"},

		{name: "shuffle", e: shuf(60000, 600, g), out: "step", mech: MechGaussian, smp: SamplingShuffle, sigma: 2, rate: 0.01, n: 60000, m: 600, path: "Shuffled/Gaussian"},
		{name: "shuffle replace-one", adj: ReplaceOne, e: shuf(10, 3, g), out: "step", mech: MechGaussian, smp: SamplingShuffle, sigma: 2, rate: 0.3, n: 10, m: 3, path: "Shuffled/Gaussian"},
		{name: "shuffle batch > n", e: shuf(10, 11, g), out: "param:batch_size", path: "Shuffled"},
		{name: "shuffle of shuffle", e: shuf(10, 5, shuf(5, 1, g)), out: "unsupported", path: "Shuffled/Shuffled"},
		{name: "shuffle of self-composed", e: shuf(10, 5, SelfComposed{Event: g, Count: 2}), out: "unsupported", path: "Shuffled/SelfComposed"},
		{name: "shuffle epochs", e: SelfComposed{Event: shuf(10, 5, g), Count: 4}, out: "step", mech: MechGaussian, smp: SamplingShuffle, sigma: 2, rate: 0.5, n: 10, m: 5, path: "SelfComposed/Shuffled/Gaussian"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NormalizeUnder(c.adj, c.e, 3)
			var pe *ParamError
			var ue *UnsupportedEventError
			switch {
			case c.out == "step":
				if err != nil || len(p.Steps) != 1 || p.Unbounded {
					t.Fatalf("got %+v, %v; want one step", p, err)
				}
				s := p.Steps[0]
				want := 3
				if se, ok := c.e.(SelfComposed); ok {
					want *= se.Count
				}
				if s.Mechanism != c.mech || s.Sampling != c.smp || s.Sigma != c.sigma || s.DatasetSize != c.n ||
					s.SampleSize != c.m || s.Adjacency != c.adj || s.Path != c.path || s.Count != want || p.Adjacency != c.adj {
					t.Errorf("step %+v (plan adjacency %v)", s, p.Adjacency)
				}
				if s.Rate < c.rate || s.Rate > math.Nextafter(c.rate, 2) {
					t.Errorf("rate %v, want %v rounded up by at most one ulp", s.Rate, c.rate)
				}
				back, err := NormalizeUnder(c.adj, s.Event(), 1)
				if err != nil || len(back.Steps) != 1 || back.Steps[0].key() != s.key() {
					t.Errorf("Step.Event %#v normalises to %+v, %v", s.Event(), back, err)
				}
				if s.Classic() != (c.mech != MechLaplace && c.smp != SamplingWithoutReplacement && c.smp != SamplingShuffle && c.adj == AddRemove) {
					t.Errorf("Classic() = %v for %s", s.Classic(), s.Describe())
				}
			case c.out == "free":
				if err != nil || !p.Empty() {
					t.Errorf("got %+v, %v; want an empty plan", p, err)
				}
			case c.out == "unbounded":
				if err != nil || !p.Unbounded || p.UnboundedPath != c.path || len(p.Steps) != 0 {
					t.Errorf("got %+v, %v; want unbounded at %q", p, err, c.path)
				}
			case c.out == "unsupported":
				if !errors.As(err, &ue) || ue.Path != c.path {
					t.Errorf("got %+v, %v; want *UnsupportedEventError at %q", p, err, c.path)
				}
			default:
				name := c.out[len("param:"):]
				if !errors.As(err, &pe) || pe.Name != name || pe.Path != c.path {
					t.Errorf("got %+v, %v; want *ParamError %q at %q", p, err, name, c.path)
				}
			}
		})
	}
}

// TestPlanAdjacency: a plan composes only with plans under its own relation,
// and Compose normalises under it.
func TestPlanAdjacency(t *testing.T) {
	wor := SampledWithoutReplacement{SourceDatasetSize: 100, SampleSize: 10, Event: Gaussian{NoiseMultiplier: 1}}
	ok := func(Step) error { return nil }
	if _, _, err := (Plan{}).Compose(wor, 1, ok); err == nil {
		t.Error("add-remove plan composed a fixed-size sample")
	}
	m, _, err := (Plan{Adjacency: ReplaceOne}).Compose(wor, 2, ok)
	if err != nil || len(m.Steps) != 1 || m.Steps[0].Adjacency != ReplaceOne || m.Adjacency != ReplaceOne {
		t.Fatalf("replace-one Compose: %+v, %v", m, err)
	}
	ar, _ := Normalize(Gaussian{NoiseMultiplier: 1}, 1)
	var ue *UnsupportedEventError
	if _, err := m.Merge(ar); !errors.As(err, &ue) {
		t.Errorf("merged add-remove into replace-one: %v", err)
	}
	if _, err := m.Merge(Plan{}); err != nil {
		t.Errorf("merging an empty plan: %v", err)
	}
	if _, err := NormalizeUnder(Adjacency(9), Gaussian{NoiseMultiplier: 1}, 1); err == nil {
		t.Error("unknown adjacency accepted")
	}
	for _, c := range []struct {
		s    string
		want Adjacency
	}{{"add-remove", AddRemove}, {"replace-one", ReplaceOne}} {
		if a, err := ParseAdjacency(c.s); err != nil || a != c.want || a.String() != c.s {
			t.Errorf("ParseAdjacency(%q) = %v, %v", c.s, a, err)
		}
	}
	if _, err := ParseAdjacency("replace"); err == nil {
		t.Error(`ParseAdjacency("replace") accepted`)
	}
}

// TestPlanBounded: a shuffled epoch under replace-one is bounded by one
// unsampled release (and merges with one), under add-remove it is refused;
// NewConfig sets the relation of the empty plan a method starts from and
// refuses an unknown one.
func TestPlanBounded(t *testing.T) {
	g := Gaussian{NoiseMultiplier: 2}
	e := Composed{Events: []Event{
		SelfComposed{Event: Shuffled{DatasetSize: 60000, BatchSize: 600, Event: g}, Count: 100},
		g,
	}}
	p, err := NormalizeUnder(ReplaceOne, e, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Bounded()
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Steps) != 1 || b.Steps[0].Sampling != SamplingNone || b.Steps[0].Rate != 1 || b.Steps[0].Count != 101 ||
		b.Steps[0].Sigma != 2 || b.Steps[0].DatasetSize != 0 || b.Adjacency != ReplaceOne || !b.Steps[0].Classic() {
		t.Errorf("Bounded = %+v", b)
	}
	if len(p.Steps) != 2 || p.Steps[0].Sampling != SamplingShuffle {
		t.Errorf("Bounded changed its receiver: %+v", p)
	}
	ar, err := Normalize(e, 1)
	if err != nil {
		t.Fatal(err)
	}
	var ue *UnsupportedEventError
	if _, err := ar.Bounded(); !errors.As(err, &ue) || ue.Path != "Composed[0]/SelfComposed/Shuffled/Gaussian" {
		t.Errorf("add-remove Bounded: %v", err)
	}
	ps, _ := NormalizeUnder(ReplaceOne, PoissonSampled{SamplingRate: 0.1, Event: g}, 1)
	if ps.Steps[0].Classic() {
		t.Error("Poisson sampling under replace-one is Classic")
	}
	if c, err := NewConfig(WithAdjacency(ReplaceOne)); err != nil || c.Plan().Adjacency != ReplaceOne || !c.Plan().Empty() {
		t.Errorf("NewConfig(WithAdjacency(ReplaceOne)) = %+v, %v", c, err)
	}
	if c, err := NewConfig(); err != nil || c.Adjacency != AddRemove {
		t.Errorf("NewConfig() = %+v, %v; want add-remove", c, err)
	}
	if _, err := NewConfig(WithAdjacency(Adjacency(7))); err == nil {
		t.Error("NewConfig accepted an unknown relation")
	}
}
