package moments

import (
	"context"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestLaplaceRDP: rdp bounds Laplace steps (ma refuses them), at least the
// exact one-step ε (pld's references) and never below pld's lower bound.
func TestLaplaceRDP(t *testing.T) {
	ctx := context.Background()
	r, err := NewRDP(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Compose(accounting.Laplace{NoiseMultiplier: 1}, 1); err != nil {
		t.Fatal(err)
	}
	e, err := r.Epsilon(ctx, 1e-5)
	exact := 1 + 2*math.Log1p(-1e-5) // Laplace, sensitivity 1, b = 1
	if err != nil || e < exact || e > 1.0001 {
		t.Errorf("one Laplace step: ε = %.12g, %v; exact %.12g", e, err, exact)
	}
	m, err := NewMA(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compose(accounting.Laplace{NoiseMultiplier: 1}, 1); err == nil {
		t.Error("ma accepted a Laplace step")
	}
}
