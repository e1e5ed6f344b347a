package moments

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// TestLaplaceAlpha checks laplaceAlpha against 40-digit mpmath quadrature
// (testdata/moments/gen_laplace.py; Mironov's closed form for q = 1): never
// below, within 1e-4 relative (the chord and tangent bounds are second
// order in the cell width, absolute in E ≈ 1, so relative to a small α at
// a small q) plus the 1e-13 absolute slack.
func TestLaplaceAlpha(t *testing.T) {
	rows := testref.CSV(t, "moments/laplace_alpha.csv")[1:]
	if len(rows) != 12 {
		t.Fatalf("%d rows, want 12", len(rows))
	}
	for _, r := range rows {
		b, _ := strconv.ParseFloat(r[0], 64)
		q, _ := strconv.ParseFloat(r[1], 64)
		l, _ := strconv.ParseFloat(r[2], 64)
		want, _ := strconv.ParseFloat(r[3], 64)
		got := laplaceAlpha(b, q, l)
		if got < want || got > want*(1+1e-4)+2e-13 {
			t.Errorf("b %g q %g λ %g: α %.17g, mpmath %.17g (%+.2g relative)", b, q, l, got, want, got/want-1)
		}
	}
}

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
