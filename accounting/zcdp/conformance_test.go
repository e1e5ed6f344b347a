package zcdp_test

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/accountingtest"
	"github.com/dpcalc/dpcalc/accounting/zcdp"
)

// TestConformance runs the shared accounting conformance suite on zcdp.
func TestConformance(t *testing.T) {
	accountingtest.Run(t, "zcdp", func() (accounting.Method, error) { return zcdp.New(), nil }, accountingtest.Options{})
}
