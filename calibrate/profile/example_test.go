package profile_test

import (
	"context"
	"fmt"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/calibrate/profile"
)

// The privacy profile of DP-SGD on MNIST (N = 60,000, B = 600, so q = 0.01;
// σ = 4; 100 epochs, T = 10,000 steps) under the certified pld accountant.
func ExampleCompute() {
	pld := func() (accounting.Method, error) { return registry.New(accounting.KindPLD, registry.Options{}) }
	run := calibrate.Training{SamplingRate: 0.01, Steps: 10000}.Event(4)
	p, err := profile.Compute(context.Background(), pld, run, profile.Options{
		Deltas: []float64{1e-5},
		FPRs:   []float64{0.01, 0.1},
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("certified: %v\n", p.Certified)
	fmt.Printf("ε = %.2f at δ = %g\n", p.Epsilons[0].Epsilon, p.Epsilons[0].Delta)
	for _, a := range p.Attacks {
		fmt.Printf("at %g%% false positives, at most %.1f%% of members caught\n", 100*a.FPR, 100*a.TPR)
	}
	fmt.Printf("membership guess accuracy (balanced prior) at most %.0f%%\n", 100*p.Accuracy)
	// Output:
	// certified: true
	// ε = 0.95 at δ = 1e-05
	// at 1% false positives, at most 1.9% of members caught
	// at 10% false positives, at most 15.2% of members caught
	// membership guess accuracy (balanced prior) at most 55%
}
