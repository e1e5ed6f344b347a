package pld_test

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/accountingtest"
	"github.com/dpcalc/dpcalc/accounting/pld"
)

// TestConformance runs the shared accounting conformance suite on pld with
// its default (adaptive) grid. One documented limit, about tightness, not
// soundness (each number is a certified bound): Epsilon and Delta each
// refine the grid for the question asked, to a bracket 0.1% wide in ε
// (targetGap), so the reverse round trip Epsilon(Delta(ε)) ≤ ε holds to
// the sum of the two discretisation gaps, 0.2%, while Delta(Epsilon(δ)) ≤ δ
// is exact. (The float64 floor of δ that made δ(ε) fall as q grew is gone:
// small δ are composed tilted, see composeParts.) Its queries are costly: the
// default run checks every third row of the exact tables, the long test
// step all of them.
func TestConformance(t *testing.T) {
	accountingtest.Run(t, "pld", func() (accounting.Method, error) { return pld.New(pld.Options{}) }, accountingtest.Options{
		ReverseGap:  0.002,
		ExactStride: 3,
	})
}
