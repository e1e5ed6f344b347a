package pld

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestTinyQCorners pins issue 11 §4's examples, where ε is tiny next to
// the range of the per-step loss (the sampled component's tail): the
// tails are cut at the query's δ and the grid follows the narrower range.
// References: prv_accountant's estimates in testdata/peers/peers.csv (rows
// n7, n8; its own intervals there are far wider than ours) and
// dp_accounting's PLD at its default and a fine grid. Before the cut the
// brackets were [0, 9.87e-5] and [0, 0.00624].
func TestTinyQCorners(t *testing.T) {
	cases := []struct {
		name             string
		sigma, q         float64
		steps            int
		delta            float64
		prv              float64 // prv_accountant's estimate
		dpAcc            float64 // dp_accounting PLD (pessimistic)
		maxUpper, maxGap float64 // gap relative to the upper end
		long             bool
	}{
		{"n7", 0.54, 6.6e-6, 13, 2e-5, 3.81758341309274e-05, 8.485868098461441e-05, 3.86e-5, 0.01, false},
		{"n8", 0.742, 2.1e-9, 7512, 2.6e-12, 9.641761545163205e-06, 0.0001227719617401776, 2.1e-5, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.long && testing.Short() {
				t.Skip("5 s; runs without -short")
			}
			a := newPLDFor(t, accounting.SelfComposed{Event: sampled(c.q, gauss(c.sigma)), Count: c.steps}, Options{})
			lo, up, from, err := a.EpsilonBoundsFrom(t.Context(), c.delta)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("[%.6g, %.6g] from %s", lo, up, from)
			if from != accounting.KindPLD || lo > c.prv || up < c.prv || up > c.maxUpper || up > c.dpAcc || up-lo > c.maxGap*up {
				t.Errorf("[%.6g, %.6g] from %s: want a pld bracket containing PRV's %.6g, upper ≤ %.3g (dp_accounting %.3g), gap ≤ %g", lo, up, from, c.prv, c.maxUpper, c.dpAcc, c.maxGap)
			}
			if d, err := a.Delta(t.Context(), up); err != nil || d > c.delta {
				t.Errorf("Delta(%g) = %g, %v; want ≤ %g", up, d, err, c.delta)
			}
		})
	}
}
