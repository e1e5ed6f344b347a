package moments_test

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/accountingtest"
	"github.com/dpcalc/dpcalc/accounting/moments"
)

// TestConformance runs the shared accounting conformance suite on ma and rdp.
// A call does at most about 280 units of work (one per order and search
// step); momentsWork leaves room for 10× that.
func TestConformance(t *testing.T) {
	accountingtest.Run(t, "ma", func() (accounting.Method, error) { return moments.NewMA(nil) }, accountingtest.Options{WorkLimit: momentsWork})
	accountingtest.Run(t, "rdp", func() (accounting.Method, error) { return moments.NewRDP(nil) }, accountingtest.Options{WorkLimit: momentsWork})
}

const momentsWork = 3000
