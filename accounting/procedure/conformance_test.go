package procedure_test

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/accountingtest"
	"github.com/dpcalc/dpcalc/accounting/procedure"
)

// TestConformance runs the shared accounting conformance suite on the DPD
// procedures (the checks that presume upper bounds are left out for them).
func TestConformance(t *testing.T) {
	// A call does at most about 60 units of work (search steps).
	accountingtest.Run(t, "dpd-ac", func() (accounting.Method, error) { return procedure.NewDPDAC(), nil }, accountingtest.Options{WorkLimit: 1000})
	// The paper's zCDP reading needs δ_iter = δ/q < 1: ε is +Inf for δ ≥ q,
	// so it grows with δ and falls with q there (DPDZCDP's doc).
	accountingtest.Run(t, "dpd-zcdp", func() (accounting.Method, error) { return procedure.NewDPDZCDP(), nil }, accountingtest.Options{
		NotMonotone: "DPD-zCDP's reading is +Inf for δ ≥ q (δ_iter = δ/q must be < 1)",
		WorkLimit:   1000,
	})
}
