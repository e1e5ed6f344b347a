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
// at 50 digits (testdata/moments/gen_wor.py): equal at α = 2 (within 1e-11
// relative, never below), never above it at higher orders (their
// Theorem 27 terms are smaller; see TestWorLogAForwardDiffs).
func TestWorLogA(t *testing.T) {
	for _, r := range testref.CSV(t, "moments/wor_logA.csv")[1:] {
		s, g, a, want := parseF(t, r[0]), parseF(t, r[1]), int(parseF(t, r[2])), parseF(t, r[3])
		got := worLogA(s, g, a)
		if a == 2 && got < want || got > want*(1+1e-11)+1e-300 {
			t.Errorf("worLogA(σ=%g, γ=%g, α=%d) = %.17g, want Theorem 9's %.17g (rounded up by < 1e-11) or less", s, g, a, got, want)
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

// TestWorLogAForwardDiffs: up to order 256 log A_α takes the forward-
// difference terms of Wang, Balle and Kasiviswanathan's Theorem 27, as
// dp_accounting does (testdata/moments/gen_wor_fd.py: dp_accounting's
// float64 value and the bound evaluated exactly at 60 digits). Never below
// the exact bound, within 1e-9 relative of it and of dp_accounting's (the
// margin is worForwardDiffs' bound on the rounding of its cancelling sums:
// 6.5e-11 at σ 8, α 100; dp_accounting's own sums carry no bound). At
// σ 4 (the CLI's 8), lot 4,096 of 1,000,000, 50,000 steps, rdp's ε at
// δ 1e-5 was 2.10811 (Theorem 9 alone), 5.1% above dp_accounting's
// 2.0060384981303168; it is now within 1e-12 of it (TestFixedSizeRDPMatchesDPAccounting).
func TestWorLogAForwardDiffs(t *testing.T) {
	for _, r := range testref.CSV(t, "moments/wor_fd_ref.csv")[1:] {
		s, g, a, dpa, exact := parseF(t, r[0]), parseF(t, r[1]), int(parseF(t, r[2])), parseF(t, r[3]), parseF(t, r[4])
		got := worLogA(s, g, a)
		if got < exact || got > exact*(1+1e-9)+1e-300 || got > dpa*(1+1e-9) {
			t.Errorf("worLogA(σ=%g, γ=%g, α=%d) = %.17g, want the exact %.17g rounded up by < 1e-9 (dp_accounting %.17g)", s, g, a, got, exact, dpa)
		}
	}
	// The forward differences: Δ² = h(2) − 2h(1) + h(0) = e^{2c} − 1 (c = 1/(2σ²)).
	if d, want := worForwardDiffs(4)[2], math.Log(math.Expm1(2.0/32)); d < want || d > want+1e-12 {
		t.Errorf("log Δ² at σ 4 = %.17g, want %.17g", d, want)
	}
}
