package gaussian

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
	"gonum.org/v1/gonum/integrate/quad"
)

// LogDelta returns log δ(ε) for the Gaussian mechanism with noise standard
// deviation sigma and L2 sensitivity sens (Balle and Wang 2018, Theorem 8):
//
//	δ(ε) = Φ(a) − e^ε Φ(b),  a = μ/2 − ε/μ,  b = a − μ,  μ = sens/σ.
//
// For μ > 1 it is a difference of two log Φ (logDeltaDiff). For μ ≤ 1 the two terms nearly
// cancel (δ/Φ(a) is about μ/|a|, so a difference of log Φ loses up to
// −log2(μ) bits: 1e-11 to 1e-9 relative in ε at σ ≥ 300), and δ is formed
// without the difference: with λ = φ/Φ and the identity ε = −(a² − b²)/2,
//
//	log Φ(a) − log Φ(b) − ε = ∫_b^a h(s) ds = x,  h(s) = λ(s) + s > 0,
//	δ = Φ(a)·(1 − e^{−x}),
//
// where x is a 16-point Gauss–Legendre sum over [b, a] (width μ ≤ 1, h
// analytic and slowly varying) and h(s) for s < −5 is the continued
// fraction 1/(t + 2/(t + 3/(t + …))), t = −s, of 1/R(t) − t (R the Mills
// ratio), which has no cancellation. Its relative error is a few ulps
// times max(1, a²) (the rounding of a inside log Φ), well inside the
// 1e-11 that the closed-form bracket allows.
//
// For μ > 2^16 it is the upper end of [LogDeltaBounds], which accounts for
// the rounding of μ/2 − ε/μ (a cancellation of two numbers near μ/2).
//
// A δ below the smallest float64 by far (εσ/sens beyond 1e307) is −Inf;
// callers that report δ round it up.
func LogDelta(sigma, sens, eps float64) float64 {
	s := sigma / sens
	if eps*s > math.MaxFloat64/4 {
		return math.Inf(-1) // δ(ε) underflows long before
	}
	mu := 1 / s
	if mu > millsFrom && !math.IsInf(mu, 1) {
		_, hi := LogDeltaBounds(sigma, sens, eps)
		return hi // the safe end: see LogDeltaBounds
	}
	if !(mu <= 1) {
		return logDeltaDiff(s, 1, eps)
	}
	m := -eps * s // midpoint of [b, a]
	var x float64
	for i, tau := range glNodes {
		x += glWeights[i] * millsExcess(m+0.5*mu*tau)
	}
	x *= 0.5 * mu
	return logmath.NormCDF(m+0.5*mu) + math.Log(-math.Expm1(-x))
}

// millsExcess returns h(s) = φ(s)/Φ(s) + s, which is positive.
func millsExcess(s float64) float64 {
	if s >= -5 {
		lam := math.Exp(-0.5*s*s - 0.5*math.Log(2*math.Pi) - logmath.NormCDF(s))
		return lam + s
	}
	t := -s
	// Backward evaluation of 1/(t + 2/(t + 3/(t + …))); 200 levels
	// converge to full precision for t ≥ 5.
	f := t
	for k := 200; k >= 2; k-- {
		f = t + float64(k)/f
	}
	return 1 / f
}

// glNodes and glWeights are the 16-point Gauss–Legendre rule on [−1, 1].
var glNodes, glWeights = func() ([]float64, []float64) {
	x, w := make([]float64, 16), make([]float64, 16)
	quad.Legendre{}.FixedLocations(x, w, -1, 1)
	return x, w
}()
