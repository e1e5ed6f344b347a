package mechanism

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
)

// Pure ε-DP mechanisms: an (ε, 0) guarantee ([accounting.EpsilonDelta]
// with δ = 0, which randomized response and permute-and-flip are read as)
// and the exponential mechanism ([accounting.ExponentialMechanism]).
//
// Every ε-DP pair of output distributions is a post-processing of the
// randomized-response pair R_ε = (Bern(a), Bern(1−a)), a = e^ε/(1+e^ε)
// (Kairouz, Oh and Viswanath 2015, Theorem 2.1: its trade-off curve is
// the lowest an ε-DP mechanism may have), so R_ε is a dominating pair of
// every ε-DP mechanism in both directions (Zhu, Dong, Wang 2022), and its
// Rényi divergences bound theirs (data processing). Its privacy loss is
// +ε with probability a and −ε with probability 1 − a under P (the
// reverse under Q).

// purePair is R_ε as a [Pair]: two atoms, at −ε and +ε.
type purePair struct {
	eps float64
	// logA and log1mA are log a and log(1−a).
	logA, log1mA float64
}

func newPurePair(eps float64) *purePair {
	// log a = −log(1+e^−ε), log(1−a) = −ε − log(1+e^−ε), without
	// overflow for large ε.
	l := math.Log1p(math.Exp(-eps))
	return &purePair{eps: eps, logA: -l, log1mA: -eps - l}
}

// Tails of L ∈ {−ε, +ε}: P(L = ε) = a, Q(L = ε) = 1 − a.
func (p *purePair) Tails(l float64) Tails {
	ninf := math.Inf(-1)
	switch {
	case l < -p.eps:
		return Tails{PAbove: 0, QAbove: 0, PBelow: ninf, QBelow: ninf}
	case l < p.eps:
		return Tails{PAbove: p.logA, QAbove: p.log1mA, PBelow: p.log1mA, QBelow: p.logA}
	}
	return Tails{PAbove: ninf, QAbove: ninf, PBelow: 0, QBelow: 0}
}

// Truncation returns the two atoms, widened a little so that they lie
// inside the grid.
func (p *purePair) Truncation(eta float64) (lo, hi float64) {
	pad := 1e-9 * math.Max(2*p.eps, 1e-300)
	return -p.eps - pad, p.eps + pad
}

// Moments: mean (2a−1)ε and variance ε² − mean².
func (p *purePair) Moments() (mean, variance float64) {
	mean = -math.Expm1(p.log1mA-p.logA) / (1 + math.Exp(p.log1mA-p.logA)) * p.eps
	return mean, math.Max(p.eps*p.eps-mean*mean, 0)
}

// Support: the two atoms only.
func (p *purePair) Support() Support {
	return Support{Atoms: []float64{-p.eps, p.eps}, LogInf: math.Inf(-1)}
}

// TailsCost is 1: a closed form.
func (p *purePair) TailsCost() int { return 1 }

// purePLD returns the pairs of an unsampled ε-DP step: R_ε in both
// directions. They dominate the step but are not its own ([WorstCase]).
func purePLD(eps float64) *PLD {
	r := newPurePair(eps)
	return &PLD{Remove: r, Add: r, Symmetric: true, MaxLoss: eps}
}

// pureRDP is the Rényi curve of R_ε, the largest of any ε-DP mechanism,
// capped, when rho > 0, by the zCDP curve ρα (the exponential mechanism
// is ε-bounded range, hence (ε²/8)-zCDP). At moment order λ (Rényi order
// λ+1) the log moment of R_ε is
//
//	λ·D_{λ+1} = log(a^{λ+1}(1−a)^{−λ} + (1−a)^{λ+1}a^{−λ})
//	          = log(a·e^{λε} + (1−a)·e^{−λε}),
//
// rounded up by a few ulps.
type pureRDP struct{ eps, rho float64 }

func (r pureRDP) AbadiMoments() bool { return false }

func (r pureRDP) at(lambda float64) float64 {
	p := newPurePair(r.eps)
	k := logmath.Add(p.logA+lambda*r.eps, p.log1mA-lambda*r.eps)
	k = math.Max(k, 0) // a Rényi divergence is ≥ 0
	k += 4 * math.Abs(k) * 0x1p-52
	k = math.Min(k, lambda*r.eps) // D_α ≤ D_∞ = ε
	if r.rho > 0 {
		k = math.Min(k, lambda*r.rho*(lambda+1))
	}
	return k
}

func (r pureRDP) LogMoments(ctx context.Context, c *Cache, count float64, orders []float64) ([]float64, error) {
	out := make([]float64, len(orders))
	for i, l := range orders {
		out[i] = count * r.at(l)
	}
	return out, nil
}

func (r pureRDP) LogMomentAt(ctx context.Context, c *Cache, count, lambda float64) (float64, error) {
	return count * r.at(lambda), nil
}

// boundedRange is the exponential mechanism ([accounting.ExponentialMechanism]):
// ε-DP and ε-bounded range.
type boundedRange struct {
	eps float64
	sampling
}

func (b boundedRange) Name() string { return "ExponentialMechanism" }

func (b boundedRange) Event() accounting.Event {
	return b.wrap(accounting.ExponentialMechanism{Epsilon: b.eps})
}

func (b boundedRange) order() []float64 { return b.sampling.order(0, 6, b.eps) }

// PLD: unsampled, the pair R_ε of an ε-DP mechanism (dp_accounting's PLD
// accountant treats it the same way).
func (b boundedRange) PLD() (*PLD, error) {
	if b.kind != accounting.SamplingNone {
		return nil, errorf("no privacy-loss pair for a %s", b.describe("exponential mechanism"))
	}
	return purePLD(b.eps), nil
}

// RDP: unsampled, the ε-DP curve capped by (ε²/8)α.
func (b boundedRange) RDP() (RDP, error) {
	if b.kind != accounting.SamplingNone {
		return nil, errorf("no Rényi bound for a %s", b.describe("exponential mechanism"))
	}
	return pureRDP{eps: b.eps, rho: boundedRangeRho(b.eps)}, nil
}

// ZCDP: an ε-bounded-range mechanism is (ε²/8)-zCDP (Cesar and Rogers
// 2021), rounded up.
func (b boundedRange) ZCDP() (rho, xi float64, err error) {
	return boundedRangeRho(b.eps), 0, nil
}

// boundedRangeRho returns ε²/8 rounded up, and at least the smallest
// positive float64.
func boundedRangeRho(e float64) float64 {
	return math.Max(math.Nextafter(e*e/8, math.Inf(1)), math.SmallestNonzeroFloat64)
}

// WorstCase reports whether m's privacy-loss pairs are not its own but
// those of the worst mechanism with its guarantee: an ε-DP step (an
// (ε, 0) guarantee, which randomized response and permute-and-flip are
// read as, or the exponential mechanism) is bounded through binary
// randomized response R_ε. An upper bound computed from the pairs holds
// for m; a lower bound holds for R_ε only, and m's true ε may lie below it
// (it does for randomized response over more than two buckets, for
// permute-and-flip and for the exponential mechanism on most utilities).
func WorstCase(m Mechanism) bool {
	switch m.(type) {
	case approxDP, boundedRange:
		return true
	}
	return false
}
