package profile

import (
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/internal/search"
)

// Guarantee is one (ε, δ)-DP guarantee: for neighbouring inputs the output
// distributions P, Q satisfy P(S) ≤ e^ε Q(S) + δ for every event S, both
// ways round.
type Guarantee struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// fnrSlack is an absolute margin subtracted from each line's β before the
// maximum: it covers the rounding of 1 − δ − x (two subtractions of
// numbers in [0, 1], each off by at most 2⁻⁵³) with room to spare.
const fnrSlack = 0x1p-50

// Tradeoff is a family of (ε, δ) guarantees, read as a bound on the
// trade-off function of membership inference.
//
// A test that tells P from Q with false-positive (type I) rate α has
// false-negative (type II) rate β. (ε, δ)-DP holds if and only if every
// such test has β ≥ f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)}
// (Wasserman and Zhou 2010, JASA; Kairouz, Oh and Viswanath 2015, ICML,
// "The composition theorem for differential privacy"; Dong, Roth and Su
// 2022, "Gaussian differential privacy", JRSS-B, §2, arXiv:1905.02383).
// A mechanism with several guarantees satisfies all their bounds, so
// β ≥ max_i f_{ε_i,δ_i}(α): the pointwise maximum is a lower bound on the
// true trade-off function whenever every δ_i is an upper bound on the
// mechanism's δ(ε_i). With
// δ(ε) on all ε ≥ 0 the maximum is the trade-off function itself for a
// symmetric one (Dong, Roth and Su, Proposition 2.12); on a finite grid it
// is a piecewise-linear lower bound, the closer the denser the grid.
type Tradeoff []Guarantee

// FNR returns the lower bound max_i f_{ε_i,δ_i}(alpha) on the false-negative
// rate of any test with false-positive rate alpha ∈ [0, 1], rounded down
// (each line loses 2⁻⁵⁰ absolute and e^ε·α is rounded up). It returns 0 for
// an empty family (no guarantee, no bound) and for alpha outside [0, 1] or
// NaN. Guarantees with δ ≥ 1, a NaN or a negative ε give nothing and are
// skipped.
func (t Tradeoff) FNR(alpha float64) float64 {
	if !(alpha >= 0 && alpha <= 1) {
		return 0
	}
	beta := 0.0
	for _, g := range t {
		beta = math.Max(beta, math.Max(g.line(alpha), g.reflected(alpha)))
	}
	return beta
}

// usable reports whether g bounds anything: δ ∈ [0, 1) and ε ≥ 0.
func (g Guarantee) usable() bool { return g.Delta >= 0 && g.Delta < 1 && g.Epsilon >= 0 }

// line returns 1 − δ − e^ε·α rounded down (e^ε·α rounded up, then
// fnrSlack), or 0 where g bounds nothing.
func (g Guarantee) line(alpha float64) float64 {
	if !g.usable() || (math.IsInf(g.Epsilon, 1) && alpha > 0) {
		return 0
	}
	x := 0.0
	if alpha > 0 {
		x = search.Up(math.Exp(g.Epsilon)*alpha, 2)
	}
	return math.Max(0, 1-g.Delta-x-fnrSlack)
}

// reflected returns e^{−ε}(1 − δ − α) rounded down, or 0.
func (g Guarantee) reflected(alpha float64) float64 {
	r := 1 - g.Delta - alpha - fnrSlack
	if !g.usable() || !(r > 0) {
		return 0
	}
	return search.Down(math.Exp(-g.Epsilon)*r, 2)
}

// TPR returns the upper bound 1 − FNR(alpha) on the true-positive rate
// (power) of any test with false-positive rate alpha, rounded up, at most 1.
func (t Tradeoff) TPR(alpha float64) float64 {
	return math.Min(1, search.Up(1-t.FNR(alpha), 1))
}

// Sorted returns the guarantees sorted by ε, then δ, without duplicates.
func (t Tradeoff) Sorted() Tradeoff {
	s := append(Tradeoff(nil), t...)
	sort.Slice(s, func(i, j int) bool {
		if s[i].Epsilon != s[j].Epsilon {
			return s[i].Epsilon < s[j].Epsilon
		}
		return s[i].Delta < s[j].Delta
	})
	out := s[:0]
	for i, g := range s {
		if i > 0 && g == s[i-1] {
			continue
		}
		out = append(out, g)
	}
	return out
}
