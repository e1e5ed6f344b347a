package mechanism

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpcalc/dpcalc/accounting"
)

// The grid of AllocationSumPairs: cells of width μ/20 in Y where the
// convolutions' estimated work (allocSumWork) is at most allocSumFineWork
// (about 0.3 s), else μ/10 where it is at most allocSumMaxWork (about 2 s).
// The finer grid keeps more of the likelihood ratio: MNIST-sized k = 2 of
// t = 200 gives 1.37661 with it, 1.37316 with the coarser one.
const (
	allocSumFineWork = 4e8
	allocSumMaxWork  = 2e9
)

// allocSumWork estimates the cost of AllocationSumPairs on cells of width
// d: the t − k steps' trimmed sums by binary powering, whose windows of
// about (yMax + 20μ√t)/d cells, squared, add up to at most 4 times the
// last; and the k steps' sums, at most k²n²/2 multiply-adds (less where
// their ends are trimmed), counted 4 times.
func allocSumWork(mu, yMax, d float64, k, t int) float64 {
	w := (yMax + 20*mu*math.Sqrt(float64(t))) / d
	n := math.Ceil(yMax / d)
	return 4*w*w + 4*float64(k*k)*n*n/2
}

// AllocationSumPairs returns two discrete pairs dominated by the k-out-of-t
// random allocation of the Gaussian with μ = 1/σ, one epoch, 1 ≤ k < t
// (Remove = (P', Q'), Add = (Q', P')): their compositions give lower
// bounds on the true ε of the mechanism.
//
// The neighbours: every other record contributes 0 to a linear query and
// the differing one a unit vector, so an epoch releases X ~ N(μ·1_S, I_t)
// against N(0, I_t), S a uniformly random k-subset of the t steps. The
// post-processing: map each output X_i to the cell j_i = min(⌊Y_i/Δ⌋, n)
// of Y_i = exp(μX_i − μ²/2) (Δ = μ/20, or μ/10 where that would take too
// long; n the cell of yMax, the top cell taking everything above), and
// release J = Σ_i j_i only. J is a deterministic function of the output, so (law of J under P, under Q) is
// dominated by the true pair in both directions. J is symmetric in the
// coordinates, so under P its law is the same for every S: k independent
// cells drawn from Y's law under X ~ N(μ, 1) (density y·f(y)) and t − k
// from Y's law under N(0, 1), convolved; under Q, t of the latter. For
// large t the likelihood ratio of the epoch, e_k(Y)/C(t, k) (e_k the
// elementary symmetric polynomial), is close to a function of ΣY_i, which
// J keeps up to the rounding, so little is lost.
//
// Cell masses come from closed forms (differences of Φ) and the direct,
// positive convolution. Outputs are dropped only as events that are the
// same under P and Q (partial sums of the t − k unshifted steps below
// 1e-30 at either end, those of the k others below 1e-30 under both laws;
// values of J not kept under both), which removes nonnegative terms from
// both hockey-stick divergences. Rounding, about 1e-12 relative, is not
// carried (as for [AllocationPairs]' dominated pairs).
func AllocationSumPairs(mu float64, k, t int) (AllocPLDPairs, error) {
	if k < 1 || t <= k || !(mu > 0) || mu > 4 {
		return AllocPLDPairs{}, fmt.Errorf("mechanism: allocation sum pair needs 1 <= k < t and 0 < μ <= 4 (k %d, t %d, μ %g)", k, t, mu)
	}
	yMax, _ := allocGrid(mu)
	d := mu / 20
	if allocSumWork(mu, yMax, d, k, t) > allocSumFineWork {
		d = mu / 10
		if work := allocSumWork(mu, yMax, d, k, t); work > allocSumMaxWork {
			return AllocPLDPairs{}, errorf("the sum pair of a %d-out-of-%d random allocation at σ = %g is too large (about %.3g operations)", k, t, 1/mu, work)
		}
	}
	n := int(math.Ceil(yMax / d))
	q, p := make([]float64, n+1), make([]float64, n+1)
	for j := range n + 1 {
		a, b := float64(j)*d, float64(j+1)*d
		if j == n {
			b = math.Inf(1)
		}
		q[j], p[j] = cellMoments(mu, a, b, 0) // ∫f and ∫y·f: Q's and P's masses
	}
	// Dropping masses is sound only where it drops the same outputs under
	// P and Q (an event revealed, then discarded). Take S = the first k
	// steps: the cells of the t − k others are summed once, with the ends
	// of partial sums trimmed (events on those steps' outputs, the same
	// under both); the k steps' partial sums are trimmed only where both
	// laws are below 1e-30; of the values of J, those kept under both.
	rest, ro := selfConvolve(q, 0, t-k)
	pk, qk, ko := p, q, 0
	for range k - 1 {
		pk, qk = convolveAll(pk, p), convolveAll(qk, q)
		// The values below 1e-30 under both laws at either end: one
		// event, dropped from both.
		lo, hi := 0, len(pk)
		for lo < hi-1 && pk[lo] < allocDrop && qk[lo] < allocDrop {
			lo++
		}
		for hi-1 > lo && pk[hi-1] < allocDrop && qk[hi-1] < allocDrop {
			hi--
		}
		pk, qk, ko = pk[lo:hi], qk[lo:hi], ko+lo
	}
	pm, pmo := convolve(rest, ro, pk, ko)
	qm, qmo := convolve(rest, ro, qk, ko)
	// The atoms J = j with both masses kept, by loss log(P'(j)/Q'(j)).
	type atom struct{ loss, lp, lq float64 }
	var atoms []atom
	for i, pv := range pm {
		j := pmo + i
		if j-qmo < 0 || j-qmo >= len(qm) {
			continue
		}
		qv := qm[j-qmo]
		if pv <= 0 || qv <= 0 {
			continue
		}
		lp, lq := math.Log(pv), math.Log(qv)
		atoms = append(atoms, atom{lp - lq, lp, lq})
	}
	if len(atoms) < 2 {
		return AllocPLDPairs{}, errorf("the sum pair of a %d-out-of-%d random allocation at σ = %g does not fit its grid", k, t, 1/mu)
	}
	slices.SortFunc(atoms, func(a, b atom) int {
		switch {
		case a.loss < b.loss:
			return -1
		case a.loss > b.loss:
			return 1
		}
		return 0
	})
	m := len(atoms)
	loss, lp, lq := make([]float64, m), make([]float64, m), make([]float64, m)
	rl, rp, rq := make([]float64, m), make([]float64, m), make([]float64, m)
	for i, a := range atoms {
		loss[i], lp[i], lq[i] = a.loss, a.lp, a.lq
		// The add pair (Q', P'): loss negated, order reversed.
		r := m - 1 - i
		rl[r], rp[r], rq[r] = -a.loss, a.lq, a.lp
	}
	rem := newDiscretePair(loss, lp, lq, math.Inf(-1), math.Inf(-1))
	add := newDiscretePair(rl, rp, rq, math.Inf(-1), math.Inf(-1))
	return AllocPLDPairs{Remove: rem, Add: add}, nil
}

// convolveAll returns the full convolution of a and b (offsets add),
// nothing dropped.
func convolveAll(a, b []float64) []float64 {
	out := make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		if x == 0 {
			continue
		}
		row := out[i : i+len(b)]
		for j, y := range b {
			row[j] += x * y
		}
	}
	return out
}

// AllocationWitness returns the witness of one epoch of k-out-of-t random
// allocation (k ≥ 2) of the Gaussian with noise multiplier sigma: pairs
// attained by post-processing the epoch's outputs of a linear query (the
// differing record contributes a unit vector in each of its k steps, every
// other record 0), so lower bounds on their composition are lower bounds on
// the true ε of the epochs. Its PLD is [AllocationSumPairs]', or, where they
// cannot be computed (σ < 0.25, or too large), the sum of the outputs'
// ([AllocationProjection]).
func AllocationWitness(sigma float64, t, k int, adj accounting.Adjacency) Mechanism {
	return allocationSum{sigma: sigma, sampling: sampling{kind: accounting.SamplingRandomAllocation, rate: float64(k) / float64(t), n: t, m: k, adj: adj}}
}

// allocationSum is the mechanism of [AllocationWitness].
type allocationSum struct {
	sigma float64
	sampling
}

func (a allocationSum) Name() string { return "Gaussian" }

func (a allocationSum) Event() accounting.Event {
	return a.wrap(accounting.Gaussian{NoiseMultiplier: a.sigma})
}

func (a allocationSum) order() []float64 { return a.sampling.order(a.sigma, 7) }

// PLD: the sum pairs, stated as attained (post-processings of the epoch's
// attained pair), or the sum of the outputs' Gaussian pair.
func (a allocationSum) PLD() (*PLD, error) {
	if 1/a.sigma <= 4 {
		if lo, err := AllocationSumPairs(1/a.sigma, a.m, a.n); err == nil {
			return &PLD{Remove: lo.Remove, Add: lo.Add, MaxLoss: math.Inf(1), Attained: true}, nil
		}
	}
	return a.projection().PLD()
}

func (a allocationSum) projection() Mechanism { return AllocationProjection(a.sigma, a.n, a.m, a.adj) }

// RDP and ZCDP are the projection's (post-processings: they bound
// nothing above, and the witness accountants use only lower bounds).
func (a allocationSum) RDP() (RDP, error) { return a.projection().RDP() }

func (a allocationSum) ZCDP() (rho, xi float64, err error) { return a.projection().ZCDP() }
