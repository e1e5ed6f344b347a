package accounting

import (
	"fmt"
	"testing"
)

// TestPLDLargeEpsilon is the regression test for ε beyond ~700 on the FFT
// path: there e^ε overflows and the masses times e^{−loss} underflow to 0,
// and the ε search used to return the left end of a grid cell whose bound
// was still above δ (σ = 0.03 gave an "upper bound" of 695 for a true
// ε = 696.78; σ = 0.02 gave 1455 for 1462.3). The upper bound must not be
// below the closed form.
func TestPLDLargeEpsilon(t *testing.T) {
	pldNoClosedForm = true
	defer func() { pldNoClosedForm = false }()
	for _, sigma := range []float64{0.05, 0.03, 0.025, 0.02} {
		t.Run(fmt.Sprint(sigma), func(t *testing.T) {
			a := newPLDFor(t, Gaussian{NoiseMultiplier: sigma}, PLDOptions{})
			up, err := a.Epsilon(1e-5)
			if err != nil {
				t.Fatal(err)
			}
			_, up2, err := a.EpsilonBounds(1e-5)
			if err != nil {
				t.Fatal(err)
			}
			lo, _ := pldGaussianEpsilon(sigma, 1e-5)
			if up < lo || up2 < lo {
				t.Errorf("upper bounds %.10g, %.10g below the closed form %.10g", up, up2, lo)
			}
		})
	}
}
