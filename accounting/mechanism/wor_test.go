package mechanism

import (
	"math"
	"strconv"
	"testing"

	"github.com/dpcalc/dpcalc/internal/testref"
)

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestWorLogA: Wang–Balle–Kasiviswanathan's Theorem 9 bound against mpmath
// at 50 digits (testdata/moments/gen_wor.py): never below, within 1e-11
// relative.
func TestWorLogA(t *testing.T) {
	for _, r := range testref.CSV(t, "moments/wor_logA.csv")[1:] {
		s, g, a, want := parseF(t, r[0]), parseF(t, r[1]), int(parseF(t, r[2])), parseF(t, r[3])
		got := worLogA(s, g, a)
		if got < want || got > want*(1+1e-11)+1e-300 {
			t.Errorf("worLogA(σ=%g, γ=%g, α=%d) = %.17g, want %.17g rounded up by < 1e-11", s, g, a, got, want)
		}
	}
	if worLogA(1, 0.5, worMaxOrder+1) != math.Inf(1) || worAlpha(1, 0.5, math.Inf(1)) != math.Inf(1) || worLogA(1, 0, 5) != 0 {
		t.Error("edges: want +Inf above worMaxOrder and at λ = ∞, 0 at γ = 0")
	}
	// Interpolation: at integer λ the value is log A_{λ+1}; between, it lies
	// on or above the chord's endpoints' convex combination.
	if got, want := worAlpha(2, 0.01, 4), worLogA(2, 0.01, 5); got < want || got > want*(1+2e-12) {
		t.Errorf("worAlpha at integer λ = %v, want %v", got, want)
	}
}
