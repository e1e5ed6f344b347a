package pld_test

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/accountingtest"
	"github.com/dpcalc/dpcalc/accounting/pld"
)

// TestConformance runs the shared accounting conformance suite on pld with
// its default (adaptive) grid.
func TestConformance(t *testing.T) {
	accountingtest.Run(t, "pld", func() (accounting.Method, error) { return pld.New(pld.Options{}) }, accountingtest.Options{})
}
