package advcomp_test

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/accountingtest"
	"github.com/dpcalc/dpcalc/accounting/advcomp"
)

// TestConformance runs the shared accounting conformance suite on ac with
// log amplification (an accountant) and with linear amplification (a
// procedure). ac's exact-table queries invert by bisection (costly): the
// default run checks every third row, the long test step all of them. A
// call does at most about 30 units of work (search steps); the limit leaves
// room for 30× that.
func TestConformance(t *testing.T) {
	accountingtest.Run(t, "ac", func() (accounting.Method, error) { return advcomp.New(), nil }, accountingtest.Options{ExactStride: 3, WorkLimit: 1000})
	accountingtest.Run(t, "ac-linear", func() (accounting.Method, error) { return advcomp.NewLinear(), nil }, accountingtest.Options{WorkLimit: 1000})
}
