package pld

import (
	"math"

	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// noClosedForm disables the Gaussian closed form (tests of the FFT path).
var noClosedForm = false

// closedEpsilon returns a bracket [lo, hi] around the ε at which the
// Gaussian mechanism with noise σ (sensitivity 1) has δ(ε) = delta (δ is
// decreasing in ε). hi is certified against the upper δ that deltaBounds
// reports, d·(1+1e-11): log δ(hi) ≤ log(delta) − 2e-11, so Delta(hi) ≤
// delta. lo has log δ(lo) > log(delta) + 2e-11, so δ(lo) > delta even if
// gaussian.LogDelta is off by the 1e-11 that deltaBounds allows. Each end
// is found to a relative 1e-13.
func closedEpsilon(sigma, delta float64) (lo, hi float64) {
	const slack = 2e-11
	ld := logmath.Log(delta)
	// The upper end solves with the profile's upper bound, the lower end
	// with its lower bound (they differ at σ below 1.5e-5; LogDeltaBounds).
	fhi := func(e float64) float64 { _, h := gaussian.LogDeltaBounds(sigma, 1, e); return h }
	flo := func(e float64) float64 { l, _ := gaussian.LogDeltaBounds(sigma, 1, e); return l }
	_, hi = search.SmallestNonNegative(fhi, ld-slack, 1e-13)
	lo, _ = search.SmallestNonNegative(flo, ld+slack, 1e-13)
	return math.Min(lo, hi), hi
}
