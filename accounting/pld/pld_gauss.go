package pld

import (
	"math"

	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"gonum.org/v1/gonum/integrate/quad"
)

// pldGaussianLogDelta returns log δ(ε) of the Gaussian mechanism with noise
// σ and sensitivity 1 (Balle and Wang 2018, Theorem 8):
//
//	δ(ε) = Φ(a) − e^ε Φ(b),  a = μ/2 − ε/μ,  b = a − μ,  μ = 1/σ.
//
// For μ > 1 it is [gaussian.LogDelta]. For μ ≤ 1 the two terms nearly
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
func pldGaussianLogDelta(sigma, eps float64) float64 {
	if eps*sigma > math.MaxFloat64/4 {
		return math.Inf(-1) // δ(ε) underflows long before
	}
	mu := 1 / sigma
	if !(mu <= 1) {
		return gaussian.LogDelta(sigma, 1, eps)
	}
	m := -eps * sigma // midpoint of [b, a]
	var x float64
	for i, tau := range pldGLNodes {
		x += pldGLWeights[i] * pldMillsExcess(m+0.5*mu*tau)
	}
	x *= 0.5 * mu
	return logmath.NormCDF(m+0.5*mu) + math.Log(-math.Expm1(-x))
}

// pldMillsExcess returns h(s) = φ(s)/Φ(s) + s, which is positive.
func pldMillsExcess(s float64) float64 {
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

// pldGLNodes and pldGLWeights are the 16-point Gauss–Legendre rule on [−1, 1].
var pldGLNodes, pldGLWeights = func() ([]float64, []float64) {
	x, w := make([]float64, 16), make([]float64, 16)
	quad.Legendre{}.FixedLocations(x, w, -1, 1)
	return x, w
}()
