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
	accountingtest.Run(t, "dpd-ac", func() (accounting.Method, error) { return procedure.NewDPDAC(), nil }, accountingtest.Options{})
	accountingtest.Run(t, "dpd-zcdp", func() (accounting.Method, error) { return procedure.NewDPDZCDP(), nil }, accountingtest.Options{})
}
