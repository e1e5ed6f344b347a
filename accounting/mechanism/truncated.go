package mechanism

import (
	"math"
	"math/big"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
)

// truncatedPLD returns the pairs of the Gaussian on a Poisson sample at
// rate q of n records capped at m (a uniformly random m kept when more are
// drawn), after Ganesh (2025, arXiv 2508.15089) as dp_accounting composes
// it. Let K be the number of the other n − 1 records drawn and p the
// probability that K ≥ m. Revealing whether K ≥ m only adds information,
// so the step is dominated by the mixture, with weights 1 − p and p, of
//
//   - K < m: the cap is not reached, the step is the Poisson step at q (its
//     pairs under the relation: gaussianPair, or replacePair under
//     replace-one);
//   - K ≥ m: the differing record is kept with probability
//     q′ = P(it is kept | K ≥ m) = m·P(Binom(n, q) > m)/(n·p), and when it
//     is kept it takes the place of another record, which moves the sum by
//     up to twice a record's bound: the replace-one pair at q′ with twice
//     the shift (replacePair at σ/4 under add-remove, σ/2 under replace-one,
//     whose noise multiplier is already relative to the doubled bound).
//
// The mixture of pairs is that of their privacy-loss distributions
// (twoMixturePair). These pairs only dominate (Ganesh's reduction is not
// tight); the witness is the Poisson step at the rate at which the
// differing record is kept, q·(1 − p) + m·P(Binom(n, q) > m)/n, which a pair
// of neighbours whose other records contribute nothing attains.
func (g gaussian) truncatedPLD() (*PLD, error) {
	n, m, q := g.n, g.m, g.rate
	pHi, pLo := binomTails(n-1, q, m) // P(K ≥ m), P(K < m)
	sHi, _ := binomTails(n, q, m+1)   // P(Binom(n, q) > m)
	// q′ = m·S/(n·p), rounded up (a larger rate only adds privacy loss:
	// the pair at a smaller rate is a post-processing of it).
	var qCond float64
	if pHi.Sign() > 0 { // always for 0 < q and m < n, which normalisation ensures
		qc := new(big.Float).SetPrec(binomPrec).Mul(sHi, big.NewFloat(float64(m)))
		qc.Quo(qc, new(big.Float).SetPrec(binomPrec).Mul(pHi, big.NewFloat(float64(n))))
		qCond = roundUp(qc)
	}
	// The rate the differing record is kept at, rounded down (a witness
	// must not be more revealing than the run).
	qe := new(big.Float).SetPrec(binomPrec).Mul(pLo, big.NewFloat(q))
	qe.Add(qe, new(big.Float).SetPrec(binomPrec).Quo(new(big.Float).SetPrec(binomPrec).Mul(sHi, big.NewFloat(float64(m))), big.NewFloat(float64(n))))
	qEff := roundDown(qe)
	p, _ := pHi.Float64()
	p1, _ := pLo.Float64()
	if qCond > 1 {
		qCond = 1
	}
	var rem, add Pair
	var wit Mechanism
	switch g.adj {
	case accounting.ReplaceOne:
		c1 := newReplacePair(g.sigma, q)
		rem, add = c1, c1
		if p > 0 && qCond > 0 {
			c2 := newReplacePair(g.sigma/2, qCond)
			rem = newMixturePair(p1, c1, p, c2)
			add = rem
		}
		wit = gaussian{sigma: g.sigma, sampling: poisson(qEff, accounting.ReplaceOne)}
	default:
		r, a := newGaussianPair(g.sigma, q, false), newGaussianPair(g.sigma, q, true)
		rem, add = &r, &a
		if p > 0 && qCond > 0 {
			c2 := newReplacePair(g.sigma/4, qCond)
			rem, add = newMixturePair(p1, &r, p, c2), newMixturePair(p1, &a, p, c2)
		}
		wit = gaussian{sigma: g.sigma, sampling: poisson(qEff, accounting.AddRemove)}
	}
	if !(qEff > 0) {
		wit = nil
	}
	return &PLD{Remove: rem, Add: add, Symmetric: g.adj == accounting.ReplaceOne, MaxLoss: math.Inf(1), Witness: wit}, nil
}

// binomPrec is the precision of the binomial tails: far beyond float64,
// so that each tail, and one minus it, rounds to float64 within an ulp.
const binomPrec = 320

// binomTails returns P(X ≥ k) and P(X < k) for X ~ Binom(n, q), at
// binomPrec bits. The smaller-index side of the mode is summed downward
// and the other upward from k, each until the remaining terms, bounded by a
// geometric series (the ratio of consecutive terms is monotone away from
// the mode), are below 2⁻³⁰⁰ of the sum; the other tail is one minus it.
func binomTails(n int, q float64, k int) (atLeast, below *big.Float) {
	one := new(big.Float).SetPrec(binomPrec).SetInt64(1)
	zero := new(big.Float).SetPrec(binomPrec)
	switch {
	case k <= 0:
		return one, zero
	case k > n:
		return zero, one
	case q >= 1:
		return one, zero
	case q <= 0:
		return zero, one
	}
	bq := new(big.Float).SetPrec(binomPrec).SetFloat64(q)
	bp := new(big.Float).SetPrec(binomPrec).Sub(one, bq) // 1 − q
	// pmf(j) = C(n, j) q^j (1−q)^{n−j}.
	pmf := func(j int) *big.Float {
		v := bigPow(bq, j)
		v.Mul(v, bigPow(bp, n-j))
		c := new(big.Float).SetPrec(binomPrec).SetInt64(1)
		for i := 1; i <= j; i++ {
			c.Mul(c, big.NewFloat(float64(n-j+i)))
			c.Quo(c, big.NewFloat(float64(i)))
		}
		return v.Mul(v, c)
	}
	mode := int(math.Floor(float64(n+1) * q))
	sum := new(big.Float).SetPrec(binomPrec)
	tiny := new(big.Float).SetPrec(binomPrec).SetMantExp(one, -300)
	if k-1 <= mode {
		// P(X < k): from j = k − 1 down.
		t := pmf(k - 1)
		for j := k - 1; j >= 0; j-- {
			sum.Add(sum, t)
			if j == 0 {
				break
			}
			// t(j−1) = t(j)·j(1−q)/((n−j+1)q)
			r := new(big.Float).SetPrec(binomPrec).Mul(big.NewFloat(float64(j)), bp)
			r.Quo(r, new(big.Float).SetPrec(binomPrec).Mul(big.NewFloat(float64(n-j+1)), bq))
			t.Mul(t, r)
			if r.Cmp(one) < 0 && stopSum(t, r, sum, tiny) {
				break
			}
		}
		return new(big.Float).SetPrec(binomPrec).Sub(one, sum), sum
	}
	// P(X ≥ k): from j = k up.
	t := pmf(k)
	for j := k; j <= n; j++ {
		sum.Add(sum, t)
		if j == n {
			break
		}
		r := new(big.Float).SetPrec(binomPrec).Mul(big.NewFloat(float64(n-j)), bq)
		r.Quo(r, new(big.Float).SetPrec(binomPrec).Mul(big.NewFloat(float64(j+1)), bp))
		t.Mul(t, r)
		if r.Cmp(one) < 0 && stopSum(t, r, sum, tiny) {
			break
		}
	}
	return sum, new(big.Float).SetPrec(binomPrec).Sub(one, sum)
}

// stopSum reports whether the remaining terms t, t·r, t·r², ... (r < 1
// bounding every later ratio) sum to below tiny·sum: t/(1 − r) < tiny·sum.
func stopSum(t, r, sum, tiny *big.Float) bool {
	one := big.NewFloat(1)
	rest := new(big.Float).SetPrec(binomPrec).Sub(one, r)
	rest.Quo(t, rest)
	lim := new(big.Float).SetPrec(binomPrec).Mul(tiny, sum)
	return rest.Cmp(lim) < 0
}

// bigPow returns x^e (e ≥ 0) at binomPrec bits by squaring.
func bigPow(x *big.Float, e int) *big.Float {
	r := new(big.Float).SetPrec(binomPrec).SetInt64(1)
	b := new(big.Float).SetPrec(binomPrec).Set(x)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r.Mul(r, b)
		}
		b.Mul(b, b)
	}
	return r
}

// roundUp and roundDown return x as a float64 rounded toward +∞ and −∞.
func roundUp(x *big.Float) float64 {
	v, acc := x.Float64()
	if acc == big.Below {
		v = math.Nextafter(v, math.Inf(1))
	}
	return v
}

func roundDown(x *big.Float) float64 {
	v, acc := x.Float64()
	if acc == big.Above {
		v = math.Nextafter(v, math.Inf(-1))
	}
	return v
}

// twoMixturePair is the pair (w₁P₁ + w₂P₂ on two labelled copies of the
// outcomes, w₁Q₁ + w₂Q₂ likewise): its privacy-loss distribution is the
// mixture of the two pairs' (under P and under Q alike), and its hockey
// stick divergence the mixture of theirs.
type twoMixturePair struct {
	lw1, lw2 float64 // log weights
	a, b     Pair
}

func newMixturePair(w1 float64, a Pair, w2 float64, b Pair) *twoMixturePair {
	return &twoMixturePair{lw1: logmath.Log(w1), lw2: logmath.Log(w2), a: a, b: b}
}

func (p *twoMixturePair) Tails(l float64) Tails {
	x, y := p.a.Tails(l), p.b.Tails(l)
	mix := func(u, v float64) float64 { return logmath.Add(p.lw1+u, p.lw2+v) }
	return Tails{PAbove: mix(x.PAbove, y.PAbove), QAbove: mix(x.QAbove, y.QAbove), PBelow: mix(x.PBelow, y.PBelow), QBelow: mix(x.QBelow, y.QBelow)}
}

// Truncation: the widest of the two cuts (each component has at most eta
// beyond it on each side, so the mixture has at most eta).
func (p *twoMixturePair) Truncation(eta float64) (lo, hi float64) {
	a1, b1 := p.a.Truncation(eta)
	a2, b2 := p.b.Truncation(eta)
	return math.Min(a1, a2), math.Max(b1, b2)
}

func (p *twoMixturePair) Moments() (mean, variance float64) {
	m1, v1 := p.a.Moments()
	m2, v2 := p.b.Moments()
	w1, w2 := math.Exp(p.lw1), math.Exp(p.lw2)
	mean = w1*m1 + w2*m2
	variance = math.Max(w1*(v1+m1*m1)+w2*(v2+m2*m2)-mean*mean, 0)
	return mean, variance
}

// Support: both are densities here.
func (p *twoMixturePair) Support() Support { return continuous }

func (p *twoMixturePair) TailsCost() int { return p.a.TailsCost() + p.b.TailsCost() }
