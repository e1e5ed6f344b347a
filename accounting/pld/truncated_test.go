package pld

import (
	"strconv"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// truncated is one step of the truncated-Poisson Gaussian.
func truncated(n int, q float64, b int, sigma float64) accounting.Event {
	return accounting.TruncatedSubsampledGaussian{DatasetSize: n, SamplingRate: q, TruncatedBatchSize: b, NoiseMultiplier: sigma}
}

// TestTruncatedPoissonAgainstDPAccounting: the dominating pairs of
// truncated Poisson sampling against dp_accounting's PLD of the same pairs
// (google/differential-privacy b5b0286, PLDAccountant,
// TruncatedSubsampledGaussianDpEvent; its value is a pessimistic estimate
// at grid 1e-4): the pairs' certified bracket holds it. Its public test:
// (N 4, q ½, cap 2, σ 1) × 3 then (N 3, ...) × 2 under add-remove,
// ε(1e-6) = 17.904330; under REPLACE_ONE (its noise multiplier 1 relative
// to half the replace-one sensitivity: events σ ½ here) 18.48639028578211;
// MNIST-sized (N 60,000, q 0.01, cap 650, σ 4, 10,000 steps, δ 1e-5)
// 1.0989815464678636 and, under REPLACE_ONE, 2.0641125756960292. The run's
// lower end (the Poisson witness) lies below the pairs'.
func TestTruncatedPoissonAgainstDPAccounting(t *testing.T) {
	small := func(s float64) accounting.Event {
		return composed(self(truncated(4, 0.5, 2, s), 3), self(truncated(3, 0.5, 2, s), 2))
	}
	for _, c := range []struct {
		name  string
		adj   accounting.Adjacency
		e     accounting.Event
		delta float64
		ref   float64
	}{
		{"public add-remove", accounting.AddRemove, small(1), 1e-6, 17.904330114101672},
		{"public replace-one", accounting.ReplaceOne, small(0.5), 1e-6, 18.48639028578211},
		{"mnist add-remove", accounting.AddRemove, self(truncated(60000, 0.01, 650, 4), 10000), 1e-5, 1.0989815464678636},
		{"mnist replace-one", accounting.ReplaceOne, self(truncated(60000, 0.01, 650, 2), 10000), 1e-5, 2.0641125756960292},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := New(Options{}, accounting.WithAdjacency(c.adj))
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Compose(c.e, 1); err != nil {
				t.Fatal(err)
			}
			b, err := a.EpsilonBracket(t.Context(), c.delta)
			if err != nil {
				t.Fatal(err)
			}
			if !(b.PairLower <= c.ref && c.ref <= b.Upper) || b.Upper-b.PairLower > 1e-3*b.Upper || !b.PairOnly || !(b.Lower > 0 && b.Lower < b.PairLower) {
				t.Errorf("bracket %+v: want the pairs' to hold dp_accounting's %v, the run's lower end below it", b, c.ref)
			}
		})
	}
}

// TestTruncatedPoissonAgainstMpmath: one step of the truncated-Poisson
// pairs against their exact ε(δ), built from the densities by 30-digit
// mpmath (testdata/pld/gen_truncated_ref.py): the pairs' certified bracket
// holds it, under both relations.
func TestTruncatedPoissonAgainstMpmath(t *testing.T) {
	rows := testref.CSV(t, "pld/truncated_ref.csv")[1:]
	if len(rows) < 2 {
		t.Fatalf("%d rows in truncated_ref.csv", len(rows))
	}
	for _, r := range rows {
		adj, err := accounting.ParseAdjacency(r[0])
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(r[1])
		q, _ := strconv.ParseFloat(r[2], 64)
		b, _ := strconv.Atoi(r[3])
		sigma, _ := strconv.ParseFloat(r[4], 64)
		delta, _ := strconv.ParseFloat(r[5], 64)
		ref, _ := strconv.ParseFloat(r[6], 64)
		a, err := New(Options{}, accounting.WithAdjacency(adj))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(truncated(n, q, b, sigma), 1); err != nil {
			t.Fatal(err)
		}
		br, err := a.EpsilonBracket(t.Context(), delta)
		if err != nil {
			t.Fatal(err)
		}
		if !(br.PairLower <= ref*(1+1e-9) && ref*(1-1e-9) <= br.Upper) || !(br.Lower <= br.PairLower) {
			t.Errorf("%v N %d q %g B %d σ %g δ %g: bracket %+v, exact %.12f", adj, n, q, b, sigma, delta, br, ref)
		}
	}
}
