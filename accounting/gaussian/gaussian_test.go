package gaussian

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/internal/testref"
)

// TestLogDeltaNoNaN: LogDelta is never NaN and never above 0 from the
// smallest to the largest σ and ε; εσ beyond the float64 range used to give
// NaN (a difference of two −Inf log Φ).
func TestLogDeltaNoNaN(t *testing.T) {
	for _, sigma := range []float64{5e-324, 1e-150, 1e-10, 0.3, 1, 300, 1e5, 1e150, math.MaxFloat64} {
		for _, eps := range []float64{0, 5e-324, 1e-10, 1, 1e4, 1e150, math.MaxFloat64} {
			l := LogDelta(sigma, 1, eps)
			if math.IsNaN(l) || l > 0 {
				t.Errorf("LogDelta(σ=%g, ε=%g) = %g", sigma, eps, l)
			}
		}
	}
}

// TestLogDeltaScale: δ depends on σ and the sensitivity only through their
// ratio.
func TestLogDeltaScale(t *testing.T) {
	for _, c := range [][3]float64{{3.7, 1, 1}, {500, 1, 0.01}, {0.5, 1, 3}} {
		a := LogDelta(c[0], c[1], c[2])
		b := LogDelta(c[0]*8, c[1]*8, c[2])
		if math.Abs(a-b) > 1e-13*math.Abs(a) {
			t.Errorf("σ=%g: LogDelta %g, scaled by 8: %g", c[0], a, b)
		}
	}
}

// TestLogDeltaBoundsTinySigma: at σ from 1e-10 to 1e-100 (ε ≈ 1/(2σ²),
// 5e19 to 5e199) LogDeltaBounds brackets the exact log δ(ε) (mpmath,
// testdata/conformance/gen_tiny_sigma.py) and LogDelta is not below it.
// Before, the cancellation in 1/(2σ) − εσ and in ε + log Φ(−1/(2σ) − εσ)
// made log δ wrong by up to 1e-4 absolute at σ = 1e-12 (pld's δ(5e23) =
// 0.500000000005 for the exact 0.500011) and positive at σ = 1e-20.
func TestLogDeltaBoundsTinySigma(t *testing.T) {
	for _, r := range testref.CSV(t, "conformance/q1_tiny_delta.csv")[1:] {
		sigma, _ := strconv.ParseFloat(r[0], 64)
		eps, _ := strconv.ParseFloat(r[2], 64)
		// ln of the exact δ = m·10^x (x may have 200 digits).
		ms, xs, _ := strings.Cut(r[3], "e")
		m, _ := strconv.ParseFloat(ms, 64)
		x := 0.0
		if xs != "" {
			bx, ok := new(big.Float).SetString(xs)
			if !ok {
				t.Fatalf("exponent %q", xs)
			}
			x, _ = bx.Float64()
		}
		want := math.Log(m) + x*math.Ln10
		lo, hi := LogDeltaBounds(sigma, 1, eps)
		tol := 1e-15 * math.Max(1, math.Abs(want)) // the rounding of want itself
		if !(lo <= want+tol && want-tol <= hi) || LogDelta(sigma, 1, eps) < hi {
			t.Errorf("σ=%s ε=%s: LogDeltaBounds = [%g, %g], LogDelta %g; exact log δ %g", r[0], r[2], lo, hi, LogDelta(sigma, 1, eps), want)
		}
		if hi-lo > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("σ=%s ε=%s: LogDeltaBounds = [%g, %g] wider than 1e-9 relative", r[0], r[2], lo, hi)
		}
	}
}
