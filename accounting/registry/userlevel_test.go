package registry

import (
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// TestUserLevelReference: for the user-level mixture of Gaussians
// (accounting.UserLevel: shifts 0..K, Binomial(K, q) weights), pld's
// certified δ interval contains the exact δ(ε) computed with mpmath at 30
// digits (testdata/userlevel/mog_reference.py: one step at 13 (q, K, σ,
// ε) from closed-form tails), and rdp's and zcdp's δ are at least it.
func TestUserLevelReference(t *testing.T) {
	rows, lines := testref.Floats(t, "../testdata/userlevel/mog_reference.txt", 6)
	for i, v := range rows {
		line := lines[i]
		steps, q, k, sigma, eps, ref := int(v[0]), v[1], int(v[2]), v[3], v[4], v[5]
		ev, err := accounting.UserLevel(sigma, q, k, steps)
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(accounting.KindPLD, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Compose(ev, 1); err != nil {
			t.Fatal(err)
		}
		lo, hi, err := m.(accounting.BoundsReporter).DeltaBounds(t.Context(), eps)
		if err != nil {
			t.Fatal(err)
		}
		// The reference has 20 digits; 1e-15 relative covers its
		// rounding to float64.
		if !(lo <= ref*(1+1e-15) && ref*(1-1e-15) <= hi) {
			t.Errorf("%s: pld δ in [%v, %v] misses %v", line, lo, hi, ref)
		}
		if hi > ref*1.01+1e-12 {
			t.Errorf("%s: pld δ upper %v more than 1%% above %v", line, hi, ref)
		}
		for _, kind := range []accounting.Kind{accounting.KindRDP, accounting.KindZCDP} {
			a, _ := New(kind, Options{})
			if err := a.Compose(ev, 1); err != nil {
				t.Fatal(err)
			}
			d, err := a.Delta(t.Context(), eps)
			if err != nil || d < ref*(1-1e-15) {
				t.Errorf("%s: %s δ %v (%v) below %v", line, kind, d, err, ref)
			}
		}
	}
	if n := len(rows); n < 10 {
		t.Fatalf("%d reference lines", n)
	}
}

// TestUserLevelTFPrivacy: TF Privacy's user-level check (N 10,000, lot
// 64, 5 epochs = 782 steps, σ 1, δ 1e-6, 2 examples per user: about
// 2.532) through accounting.UserLevel: pld's certified interval contains
// it, and is the interval of the same mixture written out
// (MixtureOfGaussians with weights (1−q)², 2q(1−q), q²).
func TestUserLevelTFPrivacy(t *testing.T) {
	q := 64.0 / 10000
	ev, err := accounting.UserLevel(1, q, 2, 782)
	if err != nil {
		t.Fatal(err)
	}
	_, lo, hi := epsilonOf(t, accounting.KindPLD, ev, 1e-6)
	if !(lo <= 2.532+5e-4 && 2.532-5e-4 <= hi) || hi-lo > 2e-3 {
		t.Errorf("pld [%v, %v], want it around 2.532", lo, hi)
	}
	byHand := accounting.SelfComposed{Event: accounting.MixtureOfGaussians{StandardDeviation: 1, Sensitivities: []float64{0, 1, 2},
		SamplingProbs: []float64{(1 - q) * (1 - q), 2 * q * (1 - q), q * q}}, Count: 782}
	_, lo2, hi2 := epsilonOf(t, accounting.KindPLD, byHand, 1e-6)
	if math.Abs(lo-lo2) > 1e-8 || math.Abs(hi-hi2) > 1e-8 { // the weights differ in the last bits
		t.Errorf("UserLevel [%v, %v]; by hand [%v, %v]", lo, hi, lo2, hi2)
	}
	t.Logf("pld [%v, %v]", lo, hi)
}

// TestUserLevelRDP: rdp's user-level ε is the mixture's own Rényi curve,
// not the Gaussian curve of its largest shift: on TF Privacy's check (782
// steps, q 0.0064, σ 1, K 2, δ 1e-6) it is at least pld's certified
// upper end (2.5327) and below 3.5 (it was 1854.58 with the largest
// shift's curve; measured 3.3851), and at least pld's upper end at other
// users (K 3 and 10), where it stays within 2× of it.
func TestUserLevelRDP(t *testing.T) {
	for _, tc := range []struct {
		sigma, q   float64
		k, steps   int
		delta, max float64
	}{{1, 64.0 / 10000, 2, 782, 1e-6, 3.5}, {0.8, 0.01, 3, 100, 1e-5, 0}, {3, 0.05, 10, 300, 1e-6, 0}} {
		ev, err := accounting.UserLevel(tc.sigma, tc.q, tc.k, tc.steps)
		if err != nil {
			t.Fatal(err)
		}
		_, _, pld := epsilonOf(t, accounting.KindPLD, ev, tc.delta)
		rdp, _, _ := epsilonOf(t, accounting.KindRDP, ev, tc.delta)
		limit := tc.max
		if limit == 0 {
			limit = 2 * pld
		}
		if !(rdp >= pld) || rdp > limit {
			t.Errorf("σ %v q %v K %d, %d steps: rdp ε %v, pld upper %v (want rdp in [pld, %v])", tc.sigma, tc.q, tc.k, tc.steps, rdp, pld, limit)
		}
		t.Logf("σ %v q %v K %d: rdp %v, pld %v", tc.sigma, tc.q, tc.k, rdp, pld)
	}
}

// TestMixtureRDPCheck: dp_accounting's mixture-of-Gaussians check (three
// steps of σ 1, shifts 0, 1, 2, probabilities 0.2, 0.6, 0.2, then two of
// σ 2, shifts 0, 2, 3, probabilities 0.33, 0.34, 0.33: ε = 17.193115 at
// δ 1e-6 by its PLD accountant) under rdp: at least pld's certified upper
// end, and below 19 (28.3782 with the largest shifts' Gaussian curves;
// measured 18.7016).
func TestMixtureRDPCheck(t *testing.T) {
	ev := accounting.Composed{Events: []accounting.Event{
		accounting.SelfComposed{Event: accounting.MixtureOfGaussians{StandardDeviation: 1, Sensitivities: []float64{0, 1, 2}, SamplingProbs: []float64{0.2, 0.6, 0.2}}, Count: 3},
		accounting.SelfComposed{Event: accounting.MixtureOfGaussians{StandardDeviation: 2, Sensitivities: []float64{0, 2, 3}, SamplingProbs: []float64{0.33, 0.34, 0.33}}, Count: 2},
	}}
	_, _, pld := epsilonOf(t, accounting.KindPLD, ev, 1e-6)
	rdp, _, _ := epsilonOf(t, accounting.KindRDP, ev, 1e-6)
	if !(pld >= 17.193115 && rdp >= pld && rdp < 19) {
		t.Errorf("rdp %v, pld upper %v: want 17.193115 <= pld <= rdp < 19", rdp, pld)
	}
}
