package advcomp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/advcomp"
)

// TestDiscreteMechanisms: advanced composition bounds the discrete Laplace
// as the pure (aΔ, 0)-DP mechanism it is (ten steps of a = 0.5, Δ = 1: at
// most basic composition's ε = 5), and refuses the discrete Gaussian, which
// states no per-step (ε, δ): it took its ε and δ from the step's
// EpsilonDelta fields, both 0, and reported ε = 0.
func TestDiscreteMechanisms(t *testing.T) {
	ctx := context.Background()
	a := advcomp.New()
	if err := a.Compose(accounting.DiscreteLaplace{NoiseParameter: 0.5, Sensitivity: 1}, 10); err != nil {
		t.Fatal(err)
	}
	eps, err := a.Epsilon(ctx, 1e-5)
	if err != nil || !(eps > 4.9 && eps <= 5.0001) {
		t.Errorf("ten discrete Laplace steps of ε 0.5: ε(1e-5) = %v, %v; want about 5", eps, err)
	}
	b := advcomp.New()
	err = b.Compose(accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.DiscreteGaussian{Sigma: 3, Sensitivity: 1, Dimension: 1}}, 10)
	var ue *accounting.UnsupportedEventError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "does not state") {
		eps, _ := b.Epsilon(ctx, 1e-5)
		t.Errorf("discrete Gaussian: Compose error %v (then ε = %v); want it refused", err, eps)
	}
}
