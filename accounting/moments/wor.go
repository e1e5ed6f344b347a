package moments

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// worMaxOrder is the largest Rényi order at which worLogA sums its series
// (O(α) terms); above it the bound is +Inf, which no search picks.
const worMaxOrder = 1 << 16

// worLogA returns log A_α, an upper bound on the cumulant (α−1)·ε(α) at
// integer Rényi order α ≥ 1 of the Gaussian mechanism (noise multiplier σ
// relative to the replace-one sensitivity) run on m of n records sampled
// without replacement, γ = m/n, under replace-one adjacency: the general
// bound of Wang, Balle and Kasiviswanathan (2019), Theorem 9, with the
// Gaussian's ε(j) = j/(2σ²) and ε(∞) = ∞,
//
//	A_α = 1 + γ²·C(α,2)·min(4(e^{ε(2)} − 1), 2e^{ε(2)})
//	        + Σ_{j=3..α} 2·γ^j·C(α,j)·e^{(j−1)ε(j)}.
//
// The sum is taken in log space; the result carries a relative margin of
// 1e-12 plus 1e-300 for the rounding of the ~α terms (each within a few ulp).
func worLogA(sigma, gamma float64, alpha int) float64 {
	if alpha <= 1 || gamma == 0 {
		return 0
	}
	if alpha > worMaxOrder {
		return math.Inf(1)
	}
	s2 := 2 * sigma * sigma
	e2 := 2 / s2
	lg := math.Log(gamma)
	a := float64(alpha)
	// min(4(e^{ε2} − 1), 2e^{ε2}) in log space: log 4 + ε2 + log(1 − e^{−ε2}) vs log 2 + ε2.
	t2 := math.Min(math.Log(4)+e2+logmath.Log1mExp(-e2), math.Log(2)+e2)
	terms := []float64{0, 2*lg + logmath.Comb(a, 2) + t2}
	for j := 3; j <= alpha; j++ {
		fj := float64(j)
		terms = append(terms, math.Log(2)+fj*lg+logmath.Comb(a, fj)+(fj-1)*fj/s2)
	}
	v := logmath.SumExp(terms)
	return v + math.Abs(v)*1e-12 + 1e-300
}

// worAlpha returns an upper bound on the log moment α(λ) = λ·D_{λ+1} of one
// such step at any real λ > 0: log A interpolated linearly between the
// integer orders ⌊λ+1⌋ and ⌈λ+1⌉, an upper bound because the cumulant is
// convex in the order (Wang, Balle and Kasiviswanathan 2019, Corollary 10).
func worAlpha(sigma, gamma, lambda float64) float64 {
	if math.IsInf(lambda, 1) {
		return math.Inf(1)
	}
	order := lambda + 1
	if order > worMaxOrder {
		return math.Inf(1)
	}
	lo := math.Floor(order)
	t := order - lo
	v := worLogA(sigma, gamma, int(lo))
	if t > 0 {
		v = (1-t)*v + t*worLogA(sigma, gamma, int(lo)+1)
	}
	return v + math.Abs(v)*1e-12
}
