package moments

import "github.com/dpcalc/dpcalc/accounting/mechanism"

// The Gaussian mechanism's log moments, which this package's accountants
// compose, live in package mechanism with the other mechanisms' Rényi
// curves; these names keep them where callers of this package find them.

// Moment is [mechanism.GaussianMoment].
type Moment = mechanism.GaussianMoment

// MinOrder is [mechanism.MinOrder], the smallest moment order λ the
// accountants accept.
const MinOrder = mechanism.MinOrder

// LogMoments is [mechanism.GaussianLogMoments]: α(λ) of Abadi et al.
// (2016) §3.2 for the sampled Gaussian mechanism, with error bounds.
func LogMoments(sigma, q float64, lambdas []float64) ([]Moment, error) {
	return mechanism.GaussianLogMoments(sigma, q, lambdas)
}

// LogMoment is [mechanism.GaussianLogMoment].
func LogMoment(sigma, q, lambda float64) (Moment, error) {
	return mechanism.GaussianLogMoment(sigma, q, lambda)
}

// LogMomentBinomial is [mechanism.GaussianLogMomentBinomial].
func LogMomentBinomial(sigma, q float64, lambda int) (float64, error) {
	return mechanism.GaussianLogMomentBinomial(sigma, q, lambda)
}

// MomentBound is [mechanism.GaussianMomentBound], Abadi et al.'s asymptotic
// bound, for comparison only.
func MomentBound(sigma, q, lambda float64) float64 {
	return mechanism.GaussianMomentBound(sigma, q, lambda)
}
