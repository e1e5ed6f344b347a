package accounting

import (
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// checkSensitivity validates an L2 sensitivity Δ: finite and > 0.
func checkSensitivity(s float64) error {
	if !finite(s) || s <= 0 {
		return &ParamError{Name: "sensitivity", Value: s, Want: "finite and > 0"}
	}
	return nil
}

// logGaussianDelta returns log δ(ε) for the Gaussian mechanism with noise
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
func logGaussianDelta(sigma, sens, eps float64) float64 {
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

// GaussianDelta returns the exact δ(ε) of the Gaussian mechanism that adds
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
func GaussianDelta(sigma, sensitivity, eps float64) (float64, error) {
	if err := CheckNoiseMultiplier(sigma); err != nil {
		return 0, err
	}
	if err := checkSensitivity(sensitivity); err != nil {
		return 0, err
	}
	if !finite(eps) || eps < 0 {
		return 0, &ParamError{Name: "eps", Value: eps, Want: "finite and >= 0"}
	}
	return math.Exp(logGaussianDelta(sigma, sensitivity, eps)), nil
}

// AnalyticGaussianSigma returns the smallest noise standard deviation σ for
// which the Gaussian mechanism with L2 sensitivity sensitivity is
// (eps, delta)-DP, i.e. GaussianDelta(σ, sensitivity, eps) ≤ delta (Balle
// and Wang 2018, Theorem 8 and Algorithm 1; here found by bisection on
// log σ instead of their reparametrisation).
//
// The returned σ is the upper end of a bisection bracket of relative width
// 1e-12 and is re-checked against delta before it is returned, so it errs
// toward more noise. eps must be finite and > 0, delta in (0, 1) and
// sensitivity finite and > 0.
func AnalyticGaussianSigma(eps, delta, sensitivity float64) (float64, error) {
	if err := CheckEpsilon(eps); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if err := checkSensitivity(sensitivity); err != nil {
		return 0, err
	}
	logDelta := logmath.Log(delta)
	// Work with s = σ/Δ; δ is decreasing in s.
	ok := func(s float64) bool { return logGaussianDelta(s, 1, eps) <= logDelta }
	lo, hi := 1.0, 1.0
	for i := 0; ok(lo); i++ {
		if i > 2000 {
			return 0, fmt.Errorf("accounting: no sigma bracket for eps = %g, delta = %g", eps, delta)
		}
		hi = lo
		lo /= 2
	}
	for i := 0; !ok(hi); i++ {
		if i > 2000 {
			return 0, fmt.Errorf("accounting: no sigma bracket for eps = %g, delta = %g", eps, delta)
		}
		lo = hi
		hi *= 2
	}
	// Invariant: !ok(lo), ok(hi).
	for hi-lo > 1e-12*hi {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	sigma := hi * sensitivity
	// Re-check after scaling by the sensitivity; step up if rounding of the
	// product lost the property.
	for i := 0; logGaussianDelta(sigma, sensitivity, eps) > logDelta; i++ {
		if i > 100 {
			return 0, fmt.Errorf("accounting: sigma re-check failed for eps = %g, delta = %g", eps, delta)
		}
		sigma = math.Nextafter(sigma, math.Inf(1)) * (1 + 1e-15)
	}
	return sigma, nil
}

// ClassicGaussianSigma returns the classical calibration
// σ = Δ·√(2 ln(1.25/δ))/ε of the Gaussian mechanism (Dwork and Roth 2014,
// "The Algorithmic Foundations of Differential Privacy", Theorem A.1).
//
// The theorem assumes ε < 1; for ε ≥ 1 the value is still returned, as in
// the literature, but it is not a proven (ε, δ) guarantee there (compare
// AnalyticGaussianSigma, which is exact for every ε). eps must be finite and
// > 0, delta in (0, 1) and sensitivity finite and > 0.
func ClassicGaussianSigma(eps, delta, sensitivity float64) (float64, error) {
	if err := CheckEpsilon(eps); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if err := checkSensitivity(sensitivity); err != nil {
		return 0, err
	}
	return sensitivity * math.Sqrt(2*(math.Log(1.25)-logmath.Log(delta))) / eps, nil
}
