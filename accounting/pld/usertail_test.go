package pld_test

import (
	"context"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/pld"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// TestMixtureTailDelta: a mixture that lists only the shifts 0..20 of a
// Binomial(1000, 0.0064) user and names the rest its tail (η = P(X > 20) =
// e^−12.5639, from mpmath: testdata/userlevel/tail_cut.txt), over T = 3
// steps at σ 1:
//
//   - where pld's pairs give the bound (ε 20 and 400), δ is at least 1 − (1 − η)^T, the
//     tail's mass at +∞ in the dominating pairs (their hockey-stick
//     divergence is η + (1 − η)·the listed part's, per step); the rdp
//     cross-check, whose curve bounds the tail's shifts one by one, may
//     give less where the tail's losses stay below ε (ε 2000: 2e-8);
//   - δ is at least the certified lower bound of the user mixture listing
//     every shift down to e^−708 (0..249, its tail beyond below 1e-300):
//     the two describe the same user. The 21 shifts alone, without their
//     tail, fall below it where only larger shifts reach the loss: 1.03e-8
//     against 2.92e-8 at ε 400;
//   - the tail, of mass far above e^−700, leaves the composition without
//     a lower end (its pairs are not the user's).
func TestMixtureTailDelta(t *testing.T) {
	rows, _ := testref.Floats(t, "../testdata/userlevel/tail_cut.txt", 5)
	logEta := rows[0][4]
	full, err := accounting.UserMixture(1, 0.0064, 1000)
	if err != nil {
		t.Fatal(err)
	}
	m := accounting.MixtureOfGaussians{StandardDeviation: 1, Sensitivities: full.Sensitivities[:21],
		BinomialCount: 1000, BinomialRate: 0.0064}
	sum := 0.0
	for _, p := range full.SamplingProbs[:21] {
		sum += p
	}
	for _, p := range full.SamplingProbs[:21] {
		m.SamplingProbs = append(m.SamplingProbs, p/sum)
	}
	const T = 3
	acc := func(e accounting.Event) *pld.Accountant {
		a, err := pld.New(pld.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(e, T); err != nil {
			t.Fatal(err)
		}
		return a
	}
	a, ref := acc(m), acc(full)
	eta := math.Exp(logEta)
	floor := -math.Expm1(T * math.Log1p(-eta))
	fromPLD := 0
	for _, eps := range []float64{20, 400, 2000} {
		_, up, from, err := a.DeltaBoundsFrom(context.Background(), eps)
		if err != nil {
			t.Fatal(err)
		}
		if from == accounting.KindPLD {
			fromPLD++
			if up < floor {
				t.Errorf("ε %g: pld's δ %v below the tail's 1 − (1 − η)^T = %v", eps, up, floor)
			}
		}
		low, _, err := ref.DeltaBounds(context.Background(), eps)
		if err != nil {
			t.Fatal(err)
		}
		if up < low {
			t.Errorf("ε %g: δ %v (%v) below the full user mixture's lower bound %v", eps, up, from, low)
		}
	}
	if fromPLD == 0 {
		t.Errorf("no bound from pld's pairs")
	}
	// A tail of e^−12.6 is far above e^−700: the pairs are not attained
	// and there is no lower end.
	if b, err := a.DeltaBracket(context.Background(), 20); err != nil || !b.PairOnly || b.Lower != 0 {
		t.Errorf("ε 20: %+v, %v; want no lower end (PairOnly)", b, err)
	}
}
