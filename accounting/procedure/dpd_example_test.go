package procedure_test

import (
	"context"
	"fmt"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/procedure"
)

// The DPD paper's MNIST setting (§5): ε = 0.5, δ = 1e-4, q = 0.01, E = 200
// epochs, T = E/q = 20,000 steps. The paper prints σ = 10.88; the procedure
// as written gives a larger σ (see testdata/composition/READINGS.md).
func ExampleDPDACSigma() {
	sigma, err := procedure.DPDACSigma(0.5, 1e-4, 0.01, 20000)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("sigma = %.2f\n", sigma)
	// Output: sigma = 74.25
}

// The paper prints σ = 3.23 for the setting of ExampleDPDACSigma.
func ExampleDPDZCDPSigma() {
	sigma, err := procedure.DPDZCDPSigma(0.5, 1e-4, 0.01, 20000)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("sigma = %.2f\n", sigma)
	// Output: sigma = 10.26
}

func ExampleNewDPDAC() {
	a := procedure.NewDPDAC()
	if err := a.Compose(accounting.SubsampledGaussian(74.26, 0.01, 20000), 1); err != nil {
		fmt.Println(err)
		return
	}
	eps, _ := a.Epsilon(context.Background(), 1e-4)
	fmt.Printf("eps = %.3f (%s)\n", eps, a.Caveat())
	// Output: eps = 0.500 (DPD paper's procedure: not a proven bound in general)
}

func ExampleNewDPDZCDP() {
	a := procedure.NewDPDZCDP()
	if err := a.Compose(accounting.SubsampledGaussian(10.27, 0.01, 20000), 1); err != nil {
		fmt.Println(err)
		return
	}
	eps, _ := a.Epsilon(context.Background(), 1e-4)
	fmt.Printf("eps = %.3f (%s)\n", eps, a.Caveat())
	// Output: eps = 0.499 (DPD paper's procedure: not a valid privacy bound)
}
