package pld

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/dpcalc/dpcalc/internal/testref"
)

// TestPLDGaussianClosedFormExact checks the certified interval of the q = 1
// closed form against testdata/pld/gauss_closed_ref.csv (exact ε(δ) of T
// Gaussians, mpmath at 200 digits, testdata/pld/gen_gauss_closed.py):
// lower ≤ exact ≤ upper for σ from 0.1 to 1e5 (and, at T = 1, from 1e-3
// down to 1.3e-150, just above accounting.SigmaFloor) and δ down to 1e-300. The
// interval used to miss the exact value by 1e-11 to 1.5e-9 relative at
// σ ≥ 300 (q = 1, σ = 1e5, δ = 1e-50 lay entirely below it): δ(ε) was a
// difference of two log Φ of nearly equal arguments.
func TestPLDGaussianClosedFormExact(t *testing.T) {
	rows := testref.CSV(t, "pld/gauss_closed_ref.csv")
	if len(rows) < 200 {
		t.Fatalf("only %d rows", len(rows))
	}
	var worst float64
	for _, r := range rows[1:] {
		var v [4]float64
		for i := range v {
			var err error
			if v[i], err = strconv.ParseFloat(r[i], 64); err != nil {
				t.Fatal(err)
			}
		}
		sigma, steps, delta, want := v[0], int(v[1]), v[2], v[3]
		a := accountantFor(t, self(gauss(sigma), steps), Options{})
		lo, up, err := a.EpsilonBounds(t.Context(), delta)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("σ=%g T=%d δ=%g", sigma, steps, delta)
		// want is the exact value rounded to 25 digits: compare the float64
		// bounds with it directly (its rounding is far below an ulp).
		if !(lo <= want && want <= up) {
			t.Errorf("%s: [%.17g, %.17g] does not contain %.17g (rel %.3g, %.3g)", name, lo, up, want, (lo-want)/want, (up-want)/want)
		}
		if want > 0 && (up-lo) > 1e-9*want {
			t.Errorf("%s: gap %.3g relative", name, (up-lo)/want)
		}
		if want > 0 {
			worst = math.Max(worst, (up-lo)/want)
		}
	}
	t.Logf("widest interval: %.3g relative", worst)
}
