package gaussian

import (
	"math"
	"testing"
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
