package statement_test

import (
	"context"
	"fmt"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate/statement"
)

// Four unsampled Gaussian releases at noise multiplier 2 are exactly
// √4/2 = 1-GDP: the certified interval of μ contains 1.
func ExampleCompute() {
	run := statement.Run{Training: accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: 2}, Count: 4}}
	s, err := statement.Compute(context.Background(), run, statement.Options{Delta: 1e-5})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ε at δ = 1e-5 in [%.4f, %.4f] (pld), rdp %.4f\n", s.Example.Lower, s.Example.Upper, s.RDP.Upper)
	fmt.Printf("μ-GDP: μ in [%.4f, %.4f] for ε in [0, %.2f]\n", s.GDP.MuLower, s.GDP.Mu, s.GDP.EpsilonMax)
	// Output:
	// ε at δ = 1e-5 in [4.3772, 4.3772] (pld), rdp 4.7284
	// μ-GDP: μ in [1.0000, 1.0004] for ε in [0, 7.24]
}
