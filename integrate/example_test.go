package integrate_test

import (
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/integrate"
)

// The integral of e^{100x}·φ(x) over the real line is e^{5000}, far beyond
// float64; its logarithm is computed directly.
func ExampleLog() {
	logf := func(x float64) float64 { return 100*x - x*x/2 - 0.5*math.Log(2*math.Pi) }
	res, err := integrate.Log(logf, math.Inf(-1), math.Inf(1), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("log ∫ = %.10f (error bound < 1e-10: %v, %v)\n", res.LogValue, res.AbsErr < 1e-10, res.Status)
	// Output:
	// log ∫ = 5000.0000000000 (error bound < 1e-10: true, success)
}
