package advcomp_test

import (
	"context"
	"fmt"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/advcomp"
)

// Abadi et al. (2016) §5.1: q = 0.01, σ = 4, δ = 1e-5, E = 100 epochs
// (T = 10,000 steps). The paper's strong-composition value 9.34 needs its
// linear amplification (qε0, qδ0), a procedure; the proven log-form bound
// of the Accountant is larger.
func ExampleNew() {
	for _, m := range []accounting.Method{advcomp.NewLinear(), advcomp.New()} {
		if err := m.Compose(accounting.SubsampledGaussian(4, 0.01, 10000), 1); err != nil {
			fmt.Println(err)
			return
		}
		eps, _ := m.Epsilon(context.Background(), 1e-5)
		_, procedure := m.(accounting.Procedure)
		fmt.Printf("procedure %v: eps = %.2f\n", procedure, eps)
	}
	// Output:
	// procedure true: eps = 9.35
	// procedure false: eps = 16.84
}
