package accounting

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// BinomialTail is the part of a Binomial(k, q) mixture of Gaussians that a
// [MixtureOfGaussians] with BinomialCount k leaves out: the shifts outside
// the listed run lo..hi, with their binomial probabilities p_c. It gives
// upper bounds on what the accountants need of it, in log space (the
// probabilities are far below the smallest float64):
//
//   - [BinomialTail.LogMass], log η with η = Σ_{c ∉ [lo, hi]} p_c;
//   - [BinomialTail.LogMoment], log Σ_{c ∉ [lo, hi]} p_c e^{a·c²};
//   - [BinomialTail.MaxShift], the largest shift left out.
//
// The bounds use the log-concavity of the binomial probabilities (the
// ratio p_{c+1}/p_c = (k − c)q/((c + 1)(1 − q)) decreases in c). The
// shifts left out on each side are cut into pieces, each anchored at its
// end n nearest the run: one shift long next to the run, then growing by
// 1/16 of their distance from it and shrinking by 1/16 of their distance
// from the far end (0 or k), about 1,200 pieces for k = 2^53. On a piece,
// concavity gives log p_c ≤ log p_n + (c − n)·s with s the slope of log p
// at n towards the piece (log(p_{n+1}/p_n) above the run, log(p_n/p_{n−1})
// below), so log p_c + a·c² is at most a convex function of c, whose
// largest value on the piece is at one of its ends; a piece's sum is at
// most its length times that. Every term is raised by 1e-12 of its
// magnitude plus 1e-12, for the rounding of log p (Loader's form,
// relative error about 1e-15) and of the arithmetic here (measured
// against mpmath for K up to 5000: within 7e-12 relative of the exact
// sums). Immutable; safe for concurrent use.
type BinomialTail struct {
	// Piece j: anchor n[j] (log p there, raised by its rounding margin,
	// and the slope s[j] towards the piece) and far end e[j].
	n, e, logp, s []float64
}

// NewBinomialTail returns the tail of the Binomial(k, q) mixture outside
// the shifts lo..hi, 0 ≤ lo ≤ hi ≤ k, 1 ≤ k ≤ [MaxExamplesPerUser],
// 0 < q < 1, [lo, hi] containing the binomial's mode (the callers check).
func NewBinomialTail(k int, q float64, lo, hi int) *BinomialTail {
	t := &BinomialTail{}
	kf := float64(k)
	logq, log1mq := logmath.Log(q), math.Log1p(-q)
	// ratio returns log(p_{c+1}/p_c) for 0 ≤ c < k.
	ratio := func(c int) float64 {
		return math.Log(float64(k-c)) + logq - math.Log(float64(c)+1) - log1mq
	}
	add := func(n, e int, s float64) {
		lp := logBinomPMF(float64(n), kf, q)
		t.n = append(t.n, float64(n))
		t.e = append(t.e, float64(e))
		t.logp = append(t.logp, lp+1e-12*(1+math.Abs(lp)))
		t.s = append(t.s, s)
	}
	// Above the run: pieces [n, e], n from hi + 1 up.
	for n := hi + 1; n <= k; {
		d := n - (hi + 1)
		e := min(n+d/16, n+(k-n)/16, k)
		s := math.Inf(-1) // a piece of one point needs no slope
		if e > n {
			s = ratio(n)
		}
		add(n, e, s)
		n = e + 1
	}
	// Below the run: pieces [e, n], n from lo − 1 down.
	for n := lo - 1; n >= 0; {
		d := (lo - 1) - n
		e := max(n-d/16, n-n/16, 0)
		s := math.Inf(1)
		if e < n {
			s = ratio(n - 1)
		}
		add(n, e, s)
		n = e - 1
	}
	return t
}

// MaxShift returns the largest shift left out (0 when none is).
func (t *BinomialTail) MaxShift() float64 {
	m := 0.0
	for j := range t.n {
		m = math.Max(m, math.Max(t.n[j], t.e[j]))
	}
	return m
}

// LogMass returns an upper bound on log η, the total probability left out
// (−Inf when none is), at most 0: the pieces' bound exceeds 1 when the
// run is a few shifts near the mode of a wide binomial (K 10⁵, q 0.3,
// the shift 30,000 alone: log η = −0.0028, the pieces give +0.026), and
// the accountants take log(1 − η).
func (t *BinomialTail) LogMass() float64 { return math.Min(t.LogMoment(0), 0) }

// LogMoment returns an upper bound on log Σ_{c ∉ [lo, hi]} p_c e^{a·c²}
// for a ≥ 0 (+Inf when it overflows).
func (t *BinomialTail) LogMoment(a float64) float64 {
	terms := make([]float64, 0, len(t.n))
	for j := range t.n {
		n, e, lp := t.n[j], t.e[j], t.logp[j]
		// Each end's value, raised by 1e-12 of the magnitude of its terms
		// (they may cancel).
		v := lp + a*n*n + 1e-12*(math.Abs(lp)+a*n*n)
		if e != n {
			ds := t.s[j] * (e - n)
			v = math.Max(v, lp+ds+a*e*e+1e-12*(math.Abs(lp)+math.Abs(ds)+a*e*e))
		}
		terms = append(terms, up12(v+math.Log(math.Abs(e-n)+1)))
	}
	return up12(logmath.SumExp(terms))
}

// up12 raises a log bound by 1e-12 of its magnitude plus 1e-12: the
// rounding of the terms that make it.
func up12(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return x + 1e-12*(1+math.Abs(x))
}
