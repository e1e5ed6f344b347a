// Package gaussian is the exact privacy profile of the Gaussian mechanism
// (Balle and Wang 2018, "Improving the Gaussian Mechanism for Differential
// Privacy", ICML, Theorem 8) in log space, and the per-release ε and δ that
// the accountants and calibrations build on.
package gaussian

import (
	"math"

	"github.com/dpcalc/dpcalc/accounting"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// CheckSensitivity validates an L2 sensitivity Δ: finite and > 0.
func CheckSensitivity(s float64) error {
	if !accounting.Finite(s) || s <= 0 {
		return &accounting.ParamError{Name: "sensitivity", Value: s, Want: "finite and > 0"}
	}
	return nil
}

// logDeltaDiff returns log δ(ε) for the Gaussian mechanism with noise
// standard deviation sigma and L2 sensitivity sens (Balle and Wang 2018,
// Theorem 8):
//
//	δ(ε) = Φ(c − d) − e^ε Φ(−c − d),  c = Δ/(2σ), d = εσ/Δ.
//
// Both terms are formed as log Φ and subtracted in log space. Deep in the
// tail (both arguments below −37, where log Φ is an asymptotic series) the
// leading terms −x²/2 of the two logarithms cancel exactly against ε, since
// (c−d)² − (c+d)² = −4cd = −2ε, so the difference is formed from the
// remaining small terms only and stays accurate for δ down to 1e-300 and
// below.
func logDeltaDiff(sigma, sens, eps float64) float64 {
	c := sens / (2 * sigma)
	d := eps * sigma / sens
	a, b := c-d, -c-d
	if a < -37 && b < -37 {
		// log δ = log Φ(a) + log(1 − e^{r}), r = ε + log Φ(b) − log Φ(a)
		//       = log(a/b) + log S(b) − log S(a), with S the series factor
		// of logmath.NormCDF (the Gaussian exponents cancel with ε).
		r := math.Log1p((a-b)/b) + logSeries(b) - logSeries(a)
		if r >= 0 {
			// Only round-off can get here (δ > 0 always); answer the safe
			// side of the difference.
			return logmath.NormCDF(a)
		}
		return logmath.NormCDF(a) + logmath.Log1mExp(r)
	}
	la, lb := logmath.NormCDF(a), eps+logmath.NormCDF(b)
	if lb >= la {
		// Round-off only; δ > 0 is tiny here. Fall back to the first term,
		// an upper bound on δ.
		return la
	}
	return logmath.Sub(la, lb)
}

// logSeries is log(1 − 1/x² + 3/x⁴ − … + 10395/x¹²), the asymptotic factor
// used by logmath.NormCDF for x < −37.
func logSeries(x float64) float64 {
	z := 1 / (x * x)
	return math.Log(1 + z*(-1+z*(3+z*(-15+z*(105+z*(-945+z*10395))))))
}

// Delta returns the exact δ(ε) of the Gaussian mechanism that adds
// N(0, sigma²) noise to a query of L2 sensitivity sensitivity (Balle and
// Wang 2018, "Improving the Gaussian Mechanism for Differential Privacy",
// ICML, Theorem 8):
//
//	δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ).
//
// It is evaluated as a difference of two log-CDF terms, without
// cancellation in the tail, so it stays accurate (relative error ~1e-12)
// for δ as small as 1e-300. It needs sigma and sensitivity finite and > 0
// and eps finite and ≥ 0; δ below the smallest float64 underflows to 0.
func Delta(sigma, sensitivity, eps float64) (float64, error) {
	if err := accounting.CheckNoiseMultiplier(sigma); err != nil {
		return 0, err
	}
	if err := CheckSensitivity(sensitivity); err != nil {
		return 0, err
	}
	if !accounting.Finite(eps) || eps < 0 {
		return 0, &accounting.ParamError{Name: "eps", Value: eps, Want: "finite and >= 0"}
	}
	return math.Exp(LogDelta(sigma, sensitivity, eps)), nil
}
