package pld

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestBracketBoundsTheRun: the lower end of EpsilonBounds bounds the true ε
// of the run, not only the dominating pair's composition. MNIST-sized
// training (N 60,000, lot 600, σ 4 over C, 100 epochs, δ 1e-5) under
// replace-one, event noise multiplier 2:
//
//   - shuffled: the pair (unamplified Gaussians) gives 33.1037 both ends;
//     the run is only known to be ≥ 0.887305 (ShuffledLowerEpsilon);
//   - fixed-size: the symmetric pair's lower end 2.56121 is no bound on
//     the run; a fixed pair of neighbours attains the Poisson pairs at
//     σ 2, q 0.01 (upper 2.16367), so the run's lower end is about 2.1622;
//   - Poisson under add-remove: the pairs are attained, the bracket is
//     theirs.
func TestBracketBoundsTheRun(t *testing.T) {
	g := accounting.Gaussian{NoiseMultiplier: 2}
	for _, c := range []struct {
		name             string
		adj              accounting.Adjacency
		e                accounting.Event
		lo, hi           float64 // the run's lower end lies in [lo, hi]
		pairOnly         bool
		pairLo, pairHigh float64 // and the pair's
	}{
		{"shuffled", accounting.ReplaceOne, accounting.SelfComposed{Event: accounting.Shuffled{DatasetSize: 60000, BatchSize: 600, Event: g}, Count: 100},
			0.8873, 0.8874, true, 33.10, 33.11},
		{"fixed-size", accounting.ReplaceOne, accounting.SelfComposed{Event: accounting.SampledWithoutReplacement{SourceDatasetSize: 60000, SampleSize: 600, Event: g}, Count: 10000},
			2.160, 2.16367, true, 2.561, 2.5623},
		{"poisson", accounting.AddRemove, accounting.SubsampledGaussian(2, 0.01, 10000),
			2.160, 2.16367, false, 2.160, 2.16367},
		// Random allocation, one epoch of t = 100 steps at σ 2: k = 10 is
		// bounded by the pair of its 10-groups reduction (2.14236, pair's
		// lower 2.13979), which reveals the partition and is not attained;
		// the run's lower end is that of the sum of the cells of the
		// epoch's outputs (mechanism.AllocationSumPairs), 2.11497; the sum
		// of the outputs, N(5, 100) against N(0, 100), the Gaussian of σ 2,
		// gave 1.99309. k = 1: the
		// pld pair is the upper discretisation of the attained pair, the
		// lower end that of its dominated discretisation.
		{"random allocation k 10", accounting.AddRemove, accounting.RandomAllocation{NumSelected: 10, NumSteps: 100, Event: g},
			2.1149, 2.1150, true, 2.1397, 2.1399},
		{"balls-in-bins", accounting.AddRemove, accounting.RandomAllocation{NumSelected: 1, NumSteps: 100, Event: g},
			0.17315, 0.173153, true, 0.17317, 0.17318},
		// The discrete Gaussian's shift pair is attained (an integer query
		// to which the differing record contributes Δ).
		{"discrete Gaussian", accounting.AddRemove, accounting.SelfComposed{Event: accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.DiscreteGaussian{Sigma: 2, Sensitivity: 1, Dimension: 1}}, Count: 100},
			2.3107, 2.3108, false, 2.3107, 2.3108},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := New(Options{}, accounting.WithAdjacency(c.adj))
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Compose(c.e, 1); err != nil {
				t.Fatal(err)
			}
			lo, hi, err := a.EpsilonBounds(t.Context(), 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			if !(lo >= c.lo && lo <= c.hi && lo <= hi) {
				t.Errorf("EpsilonBounds [%v, %v]: want the lower end in [%v, %v]", lo, hi, c.lo, c.hi)
			}
			b, err := a.EpsilonBracket(t.Context(), 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			if b.Lower != lo || b.Upper != hi || b.PairOnly != c.pairOnly || !(b.PairLower >= c.pairLo && b.PairLower <= c.pairHigh) {
				t.Errorf("bracket %+v: want lower %v, upper %v, pair only %v, pair's lower in [%v, %v]", b, lo, hi, c.pairOnly, c.pairLo, c.pairHigh)
			}
			// δ at the upper ε: the run's δ lower end is at most δ.
			dl, _, err := a.DeltaBounds(t.Context(), hi)
			if err != nil {
				t.Fatal(err)
			}
			if !(dl <= 1e-5) {
				t.Errorf("DeltaBounds lower %v at ε %v: want ≤ 1e-5", dl, hi)
			}
		})
	}
}
