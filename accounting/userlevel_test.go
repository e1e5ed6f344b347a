package accounting_test

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestUserLevelOneExample: k = 1 is the example-level event itself.
func TestUserLevelOneExample(t *testing.T) {
	ev, err := accounting.UserLevel(1.1, 0.01, 1, 500)
	if err != nil || !reflect.DeepEqual(ev, accounting.SubsampledGaussian(1.1, 0.01, 500)) {
		t.Fatalf("%#v, %v", ev, err)
	}
}

// TestUserMixture: the weights are Binomial(k, q)'s (closed forms for
// k = 2 and 3, each to 1e-15 relative), sum to 1, and the shifts are
// 0..k where the probability is representable.
func TestUserMixture(t *testing.T) {
	q := 0.0064
	m, err := accounting.UserMixture(1, q, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{(1 - q) * (1 - q), 2 * q * (1 - q), q * q}
	if !reflect.DeepEqual(m.Sensitivities, []float64{0, 1, 2}) {
		t.Fatalf("shifts %v", m.Sensitivities)
	}
	for i := range want {
		if math.Abs(m.SamplingProbs[i]-want[i]) > 1e-15*want[i] {
			t.Errorf("k 2: p[%d] = %v, want %v", i, m.SamplingProbs[i], want[i])
		}
	}
	m, _ = accounting.UserMixture(2, 0.3, 3)
	want = []float64{0.343, 0.441, 0.189, 0.027}
	for i := range want {
		if math.Abs(m.SamplingProbs[i]-want[i]) > 1e-15 {
			t.Errorf("k 3: p[%d] = %v, want %v", i, m.SamplingProbs[i], want[i])
		}
	}
	for _, tc := range []struct {
		q float64
		k int
	}{{5e-324, 2}, {1e-300, 3}, {0.0064, 100}, {0.5, 1000}, {1e-9, 1_000_000_000}, {0.999, 500}, {0.01, 10000}} {
		m, err := accounting.UserMixture(1, tc.q, tc.k)
		if err != nil {
			t.Fatalf("q %v k %d: %v", tc.q, tc.k, err)
		}
		sum, mean := 0.0, 0.0
		for i, p := range m.SamplingProbs {
			sum += p
			mean += p * m.Sensitivities[i]
		}
		if math.Abs(sum-1) > 1e-12 || math.Abs(mean-tc.q*float64(tc.k)) > 1e-9*math.Max(1, tc.q*float64(tc.k)) {
			t.Errorf("q %v k %d: sum %v, mean %v, want 1 and %v", tc.q, tc.k, sum, mean, tc.q*float64(tc.k))
		}
		if _, err := accounting.Normalize(m, 1); err != nil {
			t.Errorf("q %v k %d: %v", tc.q, tc.k, err)
		}
	}
	// The smallest q: the shift 1 keeps its probability 2q (it was lost
	// to an overflow of x/m in the deviance term); 2q = 1e-323 is not a
	// normal float64, so the shift is in the tail, whose mass is 2q + q².
	m, err = accounting.UserMixture(1, 5e-324, 2)
	if err != nil || !reflect.DeepEqual(m.Sensitivities, []float64{0}) || m.BinomialCount != 2 || m.BinomialRate != 5e-324 {
		t.Errorf("q 5e-324: %+v, %v", m, err)
	}
	if lm, want := accounting.NewBinomialTail(2, 5e-324, 0, 0).LogMass(), -1073*math.Ln2; !(lm >= want) || lm > want*(1-1e-11) { // the bound's margins: about 4e-12 relative
		t.Errorf("q 5e-324: the tail's log mass %v, want log 2q = log 2^−1073 = %v", lm, want)
	}
	// q = 1: every example in every lot, one component at k (the
	// Gaussian of sensitivity k), up to k = 2^53 (where the loop over
	// shifts in float64 never ended: c+1 rounds back to c).
	for _, k := range []int{1_000_000_000, accounting.MaxExamplesPerUser} {
		m, err = accounting.UserMixture(1, 1, k)
		if err != nil || !reflect.DeepEqual(m.Sensitivities, []float64{float64(k)}) || !reflect.DeepEqual(m.SamplingProbs, []float64{1}) {
			t.Errorf("q 1, k %d: %+v, %v", k, m, err)
		}
	}
	m, err = accounting.UserMixture(1, math.Nextafter(1, 0), accounting.MaxExamplesPerUser) // k(1 − q) = 1
	if err != nil || len(m.Sensitivities) < 2 || m.Sensitivities[len(m.Sensitivities)-1] != 1<<53 {
		t.Errorf("q 1 − 2^−53, k 2^53: %d components, %v", len(m.Sensitivities), err)
	}
}

// TestUserMixtureRefused: k outside [1, 2^53], or a Binomial(k, q) with
// more than MaxMixtureComponents representable values, is a parameter
// error naming examples_per_user; bad σ and q name theirs.
func TestUserMixtureRefused(t *testing.T) {
	for _, tc := range []struct {
		sigma, q float64
		k        int
		name     string
	}{
		{1, 0.01, 0, "examples_per_user"},
		{1, 0.01, -5, "examples_per_user"},
		{1, 0.01, accounting.MaxExamplesPerUser + 1, "examples_per_user"},
		{1, 0.0064, 1_000_000_000, "examples_per_user"},
		{1, 0.5, 100_000, "examples_per_user"},
		{0, 0.01, 2, "sigma"},
		{math.NaN(), 0.01, 2, "sigma"},
		{1, 0, 2, "q"},
		{1, 1.5, 2, "q"},
	} {
		_, err := accounting.UserMixture(tc.sigma, tc.q, tc.k)
		var pe *accounting.ParamError
		if !errors.As(err, &pe) || pe.Name != tc.name {
			t.Errorf("σ %v q %v k %d: %v, want a parameter error naming %s", tc.sigma, tc.q, tc.k, err, tc.name)
		}
		if _, err2 := accounting.UserLevel(tc.sigma, tc.q, tc.k, 10); tc.k != 1 && err2 == nil {
			t.Errorf("UserLevel σ %v q %v k %d: no error", tc.sigma, tc.q, tc.k)
		}
	}
}
