package pld_test

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/accountingtest"
	"github.com/dpcalc/dpcalc/accounting/pld"
)

// TestConformance runs the shared accounting conformance suite on pld with
// its default (adaptive) grid. Two documented limits of the current pld,
// both about tightness, not soundness (each number is a certified bound),
// and both open in the "Tight everywhere" work:
//   - where the certified δ interval is [0, u], u is pld's float64 floor
//     (FFT round-off and mass bookkeeping), which can fall as q grows
//     (σ = 1, T = 1000: 1.33e-10 at q = 1e-4, 7.37e-11 at q = 1e-3);
//   - Epsilon and Delta each refine the grid for the question asked (to a
//     0.5% bracket, at most four halvings), so the reverse round trip
//     Epsilon(Delta(ε)) ≤ ε holds only to the discretisation gap: 0.26% at
//     σ = 1, q = 0.01, T = 1000 (2.0026 for ε = 2) and 1.7% where the loss
//     is lumpy (σ = 0.5, q = 0.5, T = 10: 0.5084 for ε = 0.5), while
//     Delta(Epsilon(δ)) ≤ δ is exact.
func TestConformance(t *testing.T) {
	accountingtest.Run(t, "pld", func() (accounting.Method, error) { return pld.New(pld.Options{}) }, accountingtest.Options{
		FloorDelta: "pld's upper δ at its float64 floor is not monotone in q",
		ReverseGap: 0.02,
	})
}
