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
