package mechanism

import (
	"strconv"
	"testing"

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
