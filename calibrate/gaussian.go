package calibrate

import (
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// AnalyticGaussianSigma returns the smallest noise standard deviation σ for
// which the Gaussian mechanism with L2 sensitivity sensitivity is
// (eps, delta)-DP, i.e. gaussian.Delta(σ, sensitivity, eps) ≤ delta (Balle
// and Wang 2018, Theorem 8 and Algorithm 1; here found by halving or
// doubling σ/Δ from 1 to a bracket and bisecting it, instead of their
// reparametrisation).
//
// The returned σ is the upper end of a bisection bracket of relative width
// 1e-12 and is re-checked against delta before it is returned, so it errs
// toward more noise. eps must be finite and > 0, delta in (0, 1) and
// sensitivity finite and > 0; a σ beyond the largest float64 is an error
// matching ErrUnreachable.
func AnalyticGaussianSigma(eps, delta, sensitivity float64) (float64, error) {
	if err := accounting.CheckEpsilon(eps); err != nil {
		return 0, err
	}
	if err := accounting.CheckDelta(delta); err != nil {
		return 0, err
	}
	if err := gaussian.CheckSensitivity(sensitivity); err != nil {
		return 0, err
	}
	logDelta := logmath.Log(delta)
	// Work with s = σ/Δ; δ is decreasing in s.
	// From s = 1 the bracket halves down while δ is small enough or doubles
	// up while it is not (2001 steps at most), then is bisected to relative
	// width 1e-12; X is its checked upper end.
	down, up := 0, 0
	o, _ := search.Solve(search.Problem[float64]{
		Holds: func(s float64) (bool, error) { return gaussian.LogDelta(s, 1, eps) <= logDelta, nil },
		Lo:    1,
		Hi:    1,
		Down: func(s float64) (float64, bool) {
			down++
			return s / 2, down <= 2001
		},
		Up: func(s float64) (float64, bool) {
			up++
			return s * 2, up <= 2001
		},
		Done: func(lo, hi float64) bool { return !(hi-lo > 1e-12*hi) },
	})
	if o.Status == search.AtLowerBound || o.Status == search.NoBracket {
		return 0, fmt.Errorf("calibrate: no sigma bracket for eps = %g, delta = %g", eps, delta)
	}
	sigma := o.X * sensitivity
	if math.IsInf(sigma, 1) {
		return 0, sigmaOverflow(eps, delta, sensitivity)
	}
	// Re-check after scaling by the sensitivity; step up (101 times at
	// most) if rounding of the product lost the property.
	steps := 0
	r, _ := search.Solve(search.Problem[float64]{
		Holds: func(s float64) (bool, error) { return !(gaussian.LogDelta(s, sensitivity, eps) > logDelta), nil },
		Lo:    sigma,
		Hi:    sigma,
		Up: func(s float64) (float64, bool) {
			steps++
			return math.Nextafter(s, math.Inf(1)) * (1 + 1e-15), steps <= 101
		},
		Done: func(lo, hi float64) bool { return true }, // the first σ that holds
	})
	if r.Status == search.NoBracket {
		return 0, fmt.Errorf("calibrate: sigma re-check failed for eps = %g, delta = %g", eps, delta)
	}
	return r.X, nil
}

// ClassicGaussianSigma returns the classical calibration
// σ = Δ·√(2 ln(1.25/δ))/ε of the Gaussian mechanism (Dwork and Roth 2014,
// "The Algorithmic Foundations of Differential Privacy", Theorem A.1).
//
// The theorem assumes ε < 1; for ε ≥ 1 the value is still returned, as in
// the literature, but it is not a proven (ε, δ) guarantee there (compare
// AnalyticGaussianSigma, which is exact for every ε). eps must be finite and
// > 0, delta in (0, 1) and sensitivity finite and > 0; a σ beyond the
// largest float64 is an error matching ErrUnreachable.
func ClassicGaussianSigma(eps, delta, sensitivity float64) (float64, error) {
	if err := accounting.CheckEpsilon(eps); err != nil {
		return 0, err
	}
	if err := accounting.CheckDelta(delta); err != nil {
		return 0, err
	}
	if err := gaussian.CheckSensitivity(sensitivity); err != nil {
		return 0, err
	}
	sigma := sensitivity * math.Sqrt(2*(math.Log(1.25)-logmath.Log(delta))) / eps
	if math.IsInf(sigma, 1) {
		return 0, sigmaOverflow(eps, delta, sensitivity)
	}
	return sigma, nil
}

// sigmaOverflow is the error for a σ beyond the largest float64.
func sigmaOverflow(eps, delta, sensitivity float64) error {
	return fmt.Errorf("%w: σ for ε = %g, δ = %g, sensitivity = %g exceeds the largest float64 (%g)",
		ErrUnreachable, eps, delta, sensitivity, math.MaxFloat64)
}
