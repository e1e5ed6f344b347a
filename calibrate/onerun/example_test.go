package onerun_test

import (
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/calibrate/onerun"
)

// One training run with 1,000 canaries: the auditor guessed "member" for
// 100 of them and all 100 were right. At 95% confidence the training
// algorithm cannot be (ε, δ)-DP for any ε below these bounds.
func ExampleEpsilonLower() {
	c := onerun.Counts{Canaries: 1000, Guesses: 100, Correct: 100}
	for _, delta := range []float64{0, 1e-5} {
		eps, err := onerun.EpsilonLower(c, 0.95, delta)
		if err != nil {
			panic(err)
		}
		fmt.Printf("δ = %g: ε ≥ %.5f\n", delta, eps)
	}
	// Output:
	// δ = 0: ε ≥ 3.49297
	// δ = 1e-05: ε ≥ 3.46538
}

// The f-DP refinement on the same counts: if the mechanism's trade-off
// curve is Gaussian, the same guesses rule out more.
func ExampleEpsilonLowerFDP() {
	c := onerun.Counts{Canaries: 1000, Guesses: 100, Correct: 100}
	eps, err := onerun.EpsilonLowerFDP(c, 0.95, 1e-5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("ε ≥ %.4f among Gaussian curves\n", eps)
	// Output:
	// ε ≥ 5.5490 among Gaussian curves
}

// Audit from scores: 10,000 non-members scoring at the normal quantiles
// and 10,000 members scoring one standard deviation higher. Every
// threshold of the ROC hull is tried, with a Bonferroni correction.
func ExampleAudit() {
	var canaries []onerun.Canary
	for i := 0; i < 10000; i++ {
		z := -math.Sqrt2 * math.Erfcinv(2*(float64(i)+0.5)/10000) // Φ⁻¹((i+½)/n)
		canaries = append(canaries, onerun.Canary{Score: z}, onerun.Canary{Score: z + 1, Member: true})
	}
	r, err := onerun.Audit(canaries, onerun.Options{Confidence: 0.95, Delta: 1e-6})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d thresholds; one run: ε ≥ %.5f (%d of %d guesses right); f-DP: ε ≥ %.5f\n",
		r.Thresholds, r.OneRun.Epsilon, r.OneRun.Correct, r.OneRun.Guesses, r.FDP.Epsilon)
	// Output:
	// 386 thresholds; one run: ε ≥ 1.13346 (2807 of 3376 guesses right); f-DP: ε ≥ 2.16475
}

// The classical audit's confidence interval on a rate.
func ExampleClopperPearsonUpper() {
	fmt.Printf("%.6f\n", onerun.ClopperPearsonUpper(0, 1000, 0.05))
	// Output:
	// 0.002991
}
