package advcomp_test

import (
	"fmt"

	"github.com/dpcalc/dpcalc/accounting"
)

// Abadi et al. (2016) §5.1: q = 0.01, σ = 4, δ = 1e-5, E = 100 epochs
// (T = 10,000 steps). The paper's strong-composition value 9.34 needs its
// linear amplification (qε0, qδ0); the proven log-form bound is larger.
func ExampleNewAC() {
	for _, amp := range []accounting.Amplification{accounting.AmplificationLinear, accounting.AmplificationLog} {
		a := accounting.NewAC(accounting.ACOptions{Amplification: amp})
		if err := a.Compose(accounting.SubsampledGaussian(4, 0.01, 10000), 1); err != nil {
			fmt.Println(err)
			return
		}
		eps, _ := a.Epsilon(1e-5)
		fmt.Printf("%s: eps = %.2f\n", amp, eps)
	}
	// Output:
	// linear: eps = 9.35
	// log: eps = 16.84
}
