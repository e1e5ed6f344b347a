package registry

import (
	"errors"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// epsilonOf composes e into a fresh k and returns ε(delta), with pld's
// certified interval (lo = hi = ε for the other accountants).
func epsilonOf(t *testing.T, k accounting.Kind, e accounting.Event, delta float64) (eps, lo, hi float64) {
	t.Helper()
	m, err := New(k, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compose(e, 1); err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	if b, ok := m.(accounting.BoundsReporter); ok {
		lo, hi, err := b.EpsilonBounds(t.Context(), delta)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		return hi, lo, hi
	}
	eps, err = m.Epsilon(t.Context(), delta)
	if err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return eps, eps, eps
}

// The references below are exact values of the composition of T binary
// randomized-response pairs R_ε (the pair every ε-DP mechanism is a
// post-processing of), computed with mpmath at 40 digits:
//
//	δ(ε') = Σ_j C(T,j) a^j (1−a)^(T−j) max(0, 1 − e^(ε' − (2j−T)ε)), a = e^ε/(1+e^ε),
//
// ε(δ) by bisection on ε' (200 halvings).
const (
	refRR10    = 10.98594529364604922  // T = 10, ε = log 3 (randomized response p = 1/2, k = 2), δ = 1e-5
	refPure100 = 4.306791372516506787  // T = 100, ε = 0.1, δ = 1e-5
	refPure1   = 0.4999839345643544535 // T = 1, ε = 0.5, δ = 1e-5: 0.5 + log(1 − δ/a)
)

// TestPureDPEvents: randomized response, permute-and-flip and an (ε, 0)
// guarantee are bounded as ε-DP: pld's certified interval contains the
// exact ε of the worst ε-DP mechanism's composition, every other
// accountant that bounds them lies at or above it, and ma refuses them
// naming the event.
func TestPureDPEvents(t *testing.T) {
	tests := []struct {
		name string
		ev   accounting.Event
		ref  float64
	}{
		{"randomized response", accounting.SelfComposed{Event: accounting.RandomizedResponse{NoiseParameter: 0.5, NumBuckets: 2}, Count: 10}, refRR10},
		{"permute-and-flip", accounting.SelfComposed{Event: accounting.PermuteAndFlip{Epsilon: 0.1}, Count: 100}, refPure100},
		{"(ε, 0) guarantee", accounting.EpsilonDelta{Epsilon: 0.5}, refPure1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, lo, hi := epsilonOf(t, accounting.KindPLD, tc.ev, 1e-5)
			if !(lo <= tc.ref*(1+1e-9) && tc.ref <= hi) {
				t.Errorf("pld [%v, %v] does not contain the reference %v", lo, hi, tc.ref)
			}
			for _, k := range []accounting.Kind{accounting.KindRDP, accounting.KindZCDP, accounting.KindAC} {
				if e, _, _ := epsilonOf(t, k, tc.ev, 1e-5); e < tc.ref {
					t.Errorf("%s: ε = %v below the reference %v", k, e, tc.ref)
				}
			}
			m, err := New(accounting.KindMA, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var ue *accounting.UnsupportedEventError
			if err := m.Compose(tc.ev, 1); !errors.As(err, &ue) || ue.Path == "" {
				t.Errorf("ma: %v, want it refused naming the event", err)
			}
		})
	}
}

// TestRandomizedResponseEpsilon: the ε of k-ary randomized response is
// log(1 + k(1−p)/p), rounded up; p = 0 releases the input, k = 1 or
// p = 1 nothing.
func TestRandomizedResponseEpsilon(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		k    int
		want float64 // +Inf: unbounded; 0: no step
	}{
		{0.5, 2, math.Log(3)},
		{0.1, 10, math.Log(1 + 10*0.9/0.1)},
		{1e-300, 2, math.Log(2) + 300*math.Log(10)},
		{0, 2, math.Inf(1)},
		{0, 1, 0},
		{1, 5, 0},
	} {
		p, err := accounting.Normalize(accounting.RandomizedResponse{NoiseParameter: tc.p, NumBuckets: tc.k}, 1)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case math.IsInf(tc.want, 1):
			if !p.Unbounded {
				t.Errorf("p = %g, k = %d: %+v, want unbounded", tc.p, tc.k, p)
			}
		case tc.want == 0:
			if !p.Empty() {
				t.Errorf("p = %g, k = %d: %+v, want no step", tc.p, tc.k, p)
			}
		default:
			e, ok := p.Steps[0].PureEpsilon()
			if !ok || e < tc.want || e > tc.want*(1+1e-14) {
				t.Errorf("p = %g, k = %d: ε = %v, want %v rounded up", tc.p, tc.k, e, tc.want)
			}
		}
	}
	for _, bad := range []accounting.RandomizedResponse{{NoiseParameter: -0.1, NumBuckets: 2}, {NoiseParameter: 1.5, NumBuckets: 2},
		{NoiseParameter: math.NaN(), NumBuckets: 2}, {NoiseParameter: 0.5, NumBuckets: 0}} {
		if _, err := accounting.Normalize(bad, 1); !errors.Is(err, accounting.ErrInvalidParameter) {
			t.Errorf("%+v: %v, want a parameter error", bad, err)
		}
	}
}

// refEM100 is the exact ε (δ = 1e-5) of 100 binary randomized-response
// pairs at ε/2 = 0.05 (mpmath, as above): the exponential mechanism at
// ε = 0.1 with two candidates whose utilities (sensitivity 1) swap
// between neighbours releases exactly that pair, so every bound for 100
// exponential mechanisms at ε = 0.1 must be at least this.
const refEM100 = 1.968130223621333402

// TestExponentialMechanism: 100 exponential mechanisms at ε = 0.1 are
// (100·0.1²/8)-zCDP = 0.125-zCDP (bounded range, Cesar and Rogers 2021):
// zcdp gives ρ + 2√(ρ log(1/δ)) (Bun and Steinke 2016, Proposition 1.3)
// = 2.524267..., where the ε-DP reading ε²/2 would give four times the ρ;
// rdp and pld lie between the exact ε of an instance (refEM100) and the
// exact ε of the ε-DP composition (refPure100); ma refuses it.
func TestExponentialMechanism(t *testing.T) {
	em := accounting.SelfComposed{Event: accounting.ExponentialMechanism{Epsilon: 0.1}, Count: 100}
	rho := 0.125
	want := rho + 2*math.Sqrt(rho*math.Log(1e5))
	z, _, _ := epsilonOf(t, accounting.KindZCDP, em, 1e-5)
	if z < want || z > want*(1+1e-12) {
		t.Errorf("zcdp ε = %v, want %v rounded up", z, want)
	}
	for _, k := range []accounting.Kind{accounting.KindRDP, accounting.KindPLD, accounting.KindAC} {
		e, _, _ := epsilonOf(t, k, em, 1e-5)
		if e < refEM100 || (k != accounting.KindAC && e > refPure100) {
			t.Errorf("%s: ε = %v, want in [%v, %v]", k, e, refEM100, refPure100)
		}
	}
	m, err := New(accounting.KindMA, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compose(em, 1); !errors.Is(err, accounting.ErrUnsupportedEvent) {
		t.Errorf("ma: %v, want it refused", err)
	}
}

// TestTreeAggregation: one epoch of tree aggregation with step counts 100
// and 50 at σ = 4 is the Gaussian of σ = 4/√D, D = ⌈log2(101)⌉ = 7
// (dp_accounting's RDP accountant charges αD/(2σ²)): every accountant
// gives the Gaussian's ε for σ one ulp below 4/√7; sampling it is refused,
// and so are empty and negative step counts.
func TestTreeAggregation(t *testing.T) {
	tree := accounting.SingleEpochTreeAggregation{NoiseMultiplier: 4, StepCounts: []int{100, 50}}
	g := accounting.Gaussian{NoiseMultiplier: math.Nextafter(4/math.Sqrt(7), 0)}
	for _, k := range []accounting.Kind{accounting.KindMA, accounting.KindRDP, accounting.KindZCDP, accounting.KindAC, accounting.KindPLD} {
		a, _, _ := epsilonOf(t, k, tree, 1e-5)
		b, _, _ := epsilonOf(t, k, g, 1e-5)
		if a != b {
			t.Errorf("%s: tree ε = %v, Gaussian σ = 4/√7 gives %v", k, a, b)
		}
	}
	for _, tc := range []struct {
		counts []int
		depth  int
	}{{[]int{1}, 1}, {[]int{2}, 2}, {[]int{3}, 2}, {[]int{4}, 3}, {[]int{0, 7}, 3}, {[]int{8}, 4}} {
		p, err := accounting.Normalize(accounting.SingleEpochTreeAggregation{NoiseMultiplier: 2, StepCounts: tc.counts}, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := 2 / math.Sqrt(float64(tc.depth))
		if s := p.Steps[0].Sigma; s > want || s < want*(1-1e-15) {
			t.Errorf("step counts %v: σ = %v, want 2/√%d = %v rounded down", tc.counts, s, tc.depth, want)
		}
	}
	var ue *accounting.UnsupportedEventError
	if _, err := accounting.Normalize(accounting.PoissonSampled{SamplingRate: 0.1, Event: tree}, 1); !errors.As(err, &ue) {
		t.Errorf("sampled tree aggregation: %v, want it refused", err)
	}
	for _, bad := range [][]int{nil, {0, 0}, {-1, 5}} {
		if _, err := accounting.Normalize(accounting.SingleEpochTreeAggregation{NoiseMultiplier: 2, StepCounts: bad}, 1); !errors.Is(err, accounting.ErrInvalidParameter) {
			t.Errorf("step counts %v: %v, want a parameter error", bad, err)
		}
	}
}

// TestMixtureOfGaussians: pld's certified interval contains
// dp_accounting's check (ε = 17.193115 at δ = 1e-6 for 3 steps of
// MoG(σ 1; 0, 1, 2; 0.2, 0.6, 0.2) then 2 of MoG(σ 2; 0, 2, 3; 0.33,
// 0.34, 0.33)), TF Privacy's user-level number (about 2.532 for N =
// 10,000, lot 64, 5 epochs = 782 steps, σ = 1, k = 2 examples per user,
// δ = 1e-6), and the exact ε of each single step computed with mpmath
// (30 digits: δ(ε) = max over both directions of P(L > ε) − e^ε Q(L > ε),
// bisection on ε); with shifts 0, 1 it is the Poisson-sampled Gaussian,
// interval for interval. rdp and zcdp bound it (loosely) above pld; ma
// and ac refuse it.
func TestMixtureOfGaussians(t *testing.T) {
	mog := func(sd float64, c, p []float64) accounting.MixtureOfGaussians {
		return accounting.MixtureOfGaussians{StandardDeviation: sd, Sensitivities: c, SamplingProbs: p}
	}
	first := mog(1, []float64{0, 1, 2}, []float64{0.2, 0.6, 0.2})
	second := mog(2, []float64{0, 2, 3}, []float64{0.33, 0.34, 0.33})
	q := 64.0 / 10000
	user := mog(1, []float64{0, 1, 2}, []float64{(1 - q) * (1 - q), 2 * q * (1 - q), q * q})
	tests := []struct {
		name  string
		ev    accounting.Event
		delta float64
		ref   float64
		tol   float64 // how far the reference may lie outside, when it is itself rounded
	}{
		{"dp_accounting's check", accounting.Composed{Events: []accounting.Event{
			accounting.SelfComposed{Event: first, Count: 3}, accounting.SelfComposed{Event: second, Count: 2}}}, 1e-6, 17.193115, 5e-7},
		{"TF Privacy user level", accounting.SelfComposed{Event: user, Count: 782}, 1e-6, 2.532, 5e-4},
		{"one step, σ 1", first, 1e-6, 8.733037277601902657, 0},
		{"one step, σ 2", second, 1e-6, 6.469385494449714465, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, lo, hi := epsilonOf(t, accounting.KindPLD, tc.ev, tc.delta)
			if !(lo-tc.tol <= tc.ref && tc.ref <= hi+tc.tol) {
				t.Errorf("pld [%v, %v] does not contain %v", lo, hi, tc.ref)
			}
			for _, k := range []accounting.Kind{accounting.KindRDP, accounting.KindZCDP} {
				if e, _, _ := epsilonOf(t, k, tc.ev, tc.delta); e < hi {
					t.Errorf("%s: ε = %v below pld's %v", k, e, hi)
				}
			}
			for _, k := range []accounting.Kind{accounting.KindMA, accounting.KindAC} {
				m, err := New(k, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Compose(tc.ev, 1); !errors.Is(err, accounting.ErrUnsupportedEvent) {
					t.Errorf("%s: %v, want it refused", k, err)
				}
			}
		})
	}
	sampled := accounting.SelfComposed{Event: accounting.PoissonSampled{SamplingRate: 0.01, Event: accounting.Gaussian{NoiseMultiplier: 1}}, Count: 1000}
	asMix := accounting.SelfComposed{Event: mog(1, []float64{0, 1}, []float64{0.99, 0.01}), Count: 1000}
	_, glo, ghi := epsilonOf(t, accounting.KindPLD, sampled, 1e-5)
	_, mlo, mhi := epsilonOf(t, accounting.KindPLD, asMix, 1e-5)
	if math.Abs(glo-mlo) > 1e-9*glo || math.Abs(ghi-mhi) > 1e-9*ghi {
		t.Errorf("MoG(0, 1; 0.99, 0.01): [%v, %v]; Poisson-sampled Gaussian [%v, %v]", mlo, mhi, glo, ghi)
	}
}

// TestMixtureOfGaussiansRefused: bad mixtures are parameter errors naming
// the field; sampling it or replace-one adjacency is refused.
func TestMixtureOfGaussiansRefused(t *testing.T) {
	for _, tc := range []struct {
		ev   accounting.MixtureOfGaussians
		name string
	}{
		{accounting.MixtureOfGaussians{StandardDeviation: 1}, "sensitivities"},
		{accounting.MixtureOfGaussians{StandardDeviation: 1, Sensitivities: []float64{0, 1}, SamplingProbs: []float64{1}}, "sampling_probs"},
		{accounting.MixtureOfGaussians{StandardDeviation: 1, Sensitivities: []float64{-1, 1}, SamplingProbs: []float64{0.5, 0.5}}, "sensitivities"},
		{accounting.MixtureOfGaussians{StandardDeviation: 1, Sensitivities: []float64{0, 1}, SamplingProbs: []float64{0.5, 0.6}}, "sampling_probs"},
		{accounting.MixtureOfGaussians{StandardDeviation: -1, Sensitivities: []float64{0, 1}, SamplingProbs: []float64{0.5, 0.5}}, "standard_deviation"},
	} {
		var pe *accounting.ParamError
		if _, err := accounting.Normalize(tc.ev, 1); !errors.As(err, &pe) || pe.Name != tc.name {
			t.Errorf("%+v: %v, want a parameter error naming %s", tc.ev, err, tc.name)
		}
	}
	m := accounting.MixtureOfGaussians{StandardDeviation: 1, Sensitivities: []float64{0, 1}, SamplingProbs: []float64{0.5, 0.5}}
	if _, err := accounting.Normalize(accounting.PoissonSampled{SamplingRate: 0.5, Event: m}, 1); !errors.Is(err, accounting.ErrUnsupportedEvent) {
		t.Errorf("sampled: %v", err)
	}
	if _, err := accounting.NormalizeUnder(accounting.ReplaceOne, m, 1); !errors.Is(err, accounting.ErrUnsupportedEvent) {
		t.Errorf("replace-one: %v", err)
	}
	// All mass on shift 0, or σ = +Inf: free; σ = 0: unbounded.
	if p, err := accounting.Normalize(accounting.MixtureOfGaussians{StandardDeviation: 1, Sensitivities: []float64{0, 3}, SamplingProbs: []float64{1, 0}}, 1); err != nil || !p.Empty() {
		t.Errorf("all mass at 0: %+v, %v", p, err)
	}
	if p, err := accounting.Normalize(accounting.MixtureOfGaussians{StandardDeviation: 0, Sensitivities: []float64{0, 3}, SamplingProbs: []float64{0.5, 0.5}}, 1); err != nil || !p.Unbounded {
		t.Errorf("σ = 0: %+v, %v", p, err)
	}
}
