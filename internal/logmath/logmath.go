// Package logmath holds log-space helpers shared by the numerical packages:
// sums and differences of exponentials, binomial coefficients and the
// logarithm of the normal CDF, all without overflow or catastrophic
// cancellation.
package logmath

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/search"
)

// Log returns the natural logarithm of x, like math.Log, but also correct
// for subnormal x (0 < x < 2⁻¹⁰²²). Go's math.Log on amd64 returns about
// −709.09 for every subnormal input (golang/go#56600; e.g. math.Log(1e-320)
// gives −709.09 where the truth is −736.83). A δ of 1e-320 would then be
// treated as about 2e-308, a larger δ and so a smaller ε: an under-report.
// Log scales a subnormal by 2⁵⁴ (exact) before taking the logarithm.
func Log(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

// Add returns log(e^a + e^b).
func Add(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	if math.IsInf(a, 1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// Sub returns log(e^a - e^b) for a ≥ b. It returns -Inf when a == b and NaN
// when a < b (the caller must know the sign; see SignedSub).
func Sub(a, b float64) float64 {
	if a < b {
		return math.NaN()
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a == b {
		return math.Inf(-1)
	}
	return a + Log1mExp(b-a)
}

// SignedSub returns log|e^a - e^b| and the sign of e^a - e^b (+1, -1, or 0).
func SignedSub(a, b float64) (float64, int) {
	switch {
	case a > b:
		return Sub(a, b), 1
	case a < b:
		return Sub(b, a), -1
	}
	return math.Inf(-1), 0
}

// Log1mExp returns log(1 - e^x) for x ≤ 0, accurate at both ends
// (Mächler 2012: log(-expm1(x)) for x > -ln 2, log1p(-exp(x)) otherwise).
// It returns NaN for x > 0 and -Inf for x == 0.
func Log1mExp(x float64) float64 {
	switch {
	case x > 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case x > -math.Ln2:
		return Log(-math.Expm1(x))
	}
	return math.Log1p(-math.Exp(x))
}

// SumExp returns log Σ e^{x_i}, with compensated summation of the scaled
// terms. It returns -Inf for an empty slice.
func SumExp(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	if math.IsInf(m, 0) {
		return m
	}
	var s, c float64 // Kahan–Babuška (Neumaier) sum
	for _, v := range x {
		s, c = search.Neumaier(s, c, math.Exp(v-m))
	}
	return m + math.Log(s+c)
}

// Comb returns log C(n, k) for real n ≥ k ≥ 0 via log-gamma.
func Comb(n, k float64) float64 {
	a, _ := math.Lgamma(n + 1)
	b, _ := math.Lgamma(k + 1)
	c, _ := math.Lgamma(n - k + 1)
	return a - b - c
}

// NormCDF returns log Φ(x), the log of the standard normal CDF, accurate
// from x = -1e150 to +Inf. For x < -37, where erfc underflows, it uses the
// asymptotic series log φ(x) - log(-x) + log(1 - 1/x² + 3/x⁴ - … + 10395/x¹²),
// whose truncation error there is below 1e-17 relative.
func NormCDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x > 6:
		// Φ(x) = 1 - Q(x), Q tiny: log1p(-Q).
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	case x > -37:
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	}
	z := 1 / (x * x)
	series := 1 + z*(-1+z*(3+z*(-15+z*(105+z*(-945+z*10395)))))
	return -0.5*x*x - 0.5*math.Log(2*math.Pi) - math.Log(-x) + math.Log(series)
}

// NormSF returns log(1 - Φ(x)) = log Φ(-x).
func NormSF(x float64) float64 { return NormCDF(-x) }
