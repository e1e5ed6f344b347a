package moments_test

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/accountingtest"
	"github.com/dpcalc/dpcalc/accounting/moments"
)

// TestConformance runs the shared accounting conformance suite on ma and rdp.
func TestConformance(t *testing.T) {
	accountingtest.Run(t, "ma", func() (accounting.Method, error) { return moments.NewMA(nil) }, accountingtest.Options{})
	accountingtest.Run(t, "rdp", func() (accounting.Method, error) { return moments.NewRDP(nil) }, accountingtest.Options{})
}
