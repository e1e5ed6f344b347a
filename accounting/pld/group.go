package pld

import (
	"context"
	"math"
	"sync/atomic"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
)

// maxDistinctSteps is the most distinct steps the accountant discretises and
// composes one by one. Each costs its own per-step grids and one FFT per
// composition (about 0.1 s and 1 MB apiece; 10,000 distinct phases took
// 11 GB), so beyond it the steps are grouped (groupSteps).
var maxDistinctSteps = 64 // a variable for tests

// groupCalls counts the groupings computed (tests check that a query
// on many distinct steps is answered by the grouped compositions).
var groupCalls atomic.Int64

// groupBounds holds the accountants of groupSteps' hi and lo steps.
type groupBounds [2]*Accountant

// groupSteps returns two sets of at most about maxDistinctSteps distinct steps,
// dominating (hi) and dominated by (lo) the composition of counts, with
// the same number of steps in each group:
//
//   - unsampled Gaussians compose exactly into one Gaussian with noise
//     (Σ n_i/σ_i²)^{−1/2} (Balle and Wang 2018, Theorem 8), rounded down
//     for hi and up for lo;
//   - the other Gaussian and Laplace steps are grouped by cells of width
//     w in log2 σ and in log2 q (w the smallest power of 2^{1/4} from
//     2^{−24} that leaves at most maxDistinctSteps cells), and each group is replaced by its
//     smallest σ and largest q in hi, by its largest σ and smallest q in
//     lo;
//   - steps sampled without replacement are kept as they are in both.
//
// Soundness: a pair with a larger rate q' dominates one with rate q
// (send x on with probability q/q', else a fresh draw from the null
// distribution: a channel taking (1−q')Q + q'P to (1−q)Q + qP and Q to
// Q), and a pair with a smaller noise scale dominates one with a larger
// (add independent noise: Gaussian N(0, σ'²−σ²); for Laplace, 0 with
// probability (b/b')², else Laplace(b'), whose sum with Laplace(b) is
// Laplace(b')). Dominance is preserved by composition, so the hi
// composition's ε(δ) and δ(ε) are at least the true ones, and lo's at
// most: the upper bound of hi and the lower bound of lo bracket the
// truth. The groups depend only on the set of steps, not on map order.
func groupSteps(keys []mechanism.Mechanism, counts map[mechanism.Mechanism]int, pld func(mechanism.Mechanism) *mechanism.PLD) (hi, lo map[mechanism.Mechanism]int) {
	groupCalls.Add(1)
	hi, lo = map[mechanism.Mechanism]int{}, map[mechanism.Mechanism]int{}
	var inv float64
	gauss := 0
	var gaussian *mechanism.Family // an unsampled Gaussian's family
	var rest []mechanism.Mechanism
	for _, k := range keys {
		p := pld(k)
		switch {
		case p.GaussianSigma > 1e-100 && p.Family != nil:
			inv += float64(counts[k]) / (p.GaussianSigma * p.GaussianSigma)
			gauss += counts[k]
			gaussian = p.Family
		case p.Family == nil:
			hi[k] += counts[k]
			lo[k] += counts[k]
		default:
			rest = append(rest, k)
		}
	}
	if gauss > 0 {
		// σ ≥ 1e-100 and at most 2^53 steps: Σ n/σ² stays finite. s is a
		// few ulps off; 1e-14 covers them.
		s := 1 / math.Sqrt(inv)
		hi[gaussian.With(s*(1-1e-14), 1)] += 1
		lo[gaussian.With(s*(1+1e-14), 1)] += 1
	}
	type cell struct {
		family string
		s, q   int64
	}
	type group struct {
		sMin, sMax, qMin, qMax float64
		n                      int
		with                   func(scale, rate float64) mechanism.Mechanism
	}
	room := max(1, maxDistinctSteps-len(hi))
	var groups map[cell]*group
	for w := -96; ; w++ {
		width := math.Exp2(float64(w) / 4)
		groups = map[cell]*group{}
		for _, k := range rest {
			f := pld(k).Family
			c := cell{f.Name, int64(math.Floor(math.Log2(f.Scale) / width)), int64(math.Floor(math.Log2(f.Rate) / width))}
			g := groups[c]
			if g == nil {
				g = &group{sMin: f.Scale, sMax: f.Scale, qMin: f.Rate, qMax: f.Rate, with: f.With}
				groups[c] = g
			}
			g.sMin, g.sMax = math.Min(g.sMin, f.Scale), math.Max(g.sMax, f.Scale)
			g.qMin, g.qMax = math.Min(g.qMin, f.Rate), math.Max(g.qMax, f.Rate)
			g.n += counts[k]
		}
		if len(groups) <= room || w > 48 {
			break
		}
	}
	for _, g := range groups {
		hi[g.with(g.sMin, g.qMax)] += g.n
		lo[g.with(g.sMax, g.qMin)] += g.n
	}
	return hi, lo
}

// grouped returns the accountants of groupSteps' hi and lo steps when a
// holds more than maxDistinctSteps distinct steps that are not all unsampled
// Gaussians (whose closed form costs nothing per step), else nil. They
// are cached until the next Compose.
func (a *Accountant) grouped() *groupBounds {
	if a.groups != nil || len(a.counts) <= maxDistinctSteps {
		return a.groups
	}
	plain := true
	for k := range a.counts {
		if p := a.pld(k); p.GaussianSigma == 0 || p.Family == nil {
			plain = false
			break
		}
	}
	if plain && !noClosedForm {
		return nil
	}
	hi, lo := groupSteps(a.keys(), a.counts, a.pld)
	var g groupBounds
	for i, c := range []map[mechanism.Mechanism]int{hi, lo} {
		g[i] = a.empty()
		g[i].counts, g[i].steps = c, a.steps
	}
	a.groups = &g
	return a.groups
}

// epsilonBounds answers EpsilonBounds from the grouped
// compositions: the lower bound of lo's and the upper bound (and its
// certificate) of hi's.
func (g *groupBounds) epsilonBounds(ctx context.Context, delta float64) (lower, upper float64, from accounting.Kind, err error) {
	_, upper, from, err = g[0].epsilonBounds(ctx, delta)
	if err != nil {
		return 0, 0, from, err
	}
	lower, _, _, err = g[1].epsilonBounds(ctx, delta)
	if err != nil {
		return 0, 0, from, err
	}
	return math.Min(lower, upper), upper, from, nil
}

// deltaBounds is epsilonBounds for δ(eps).
func (g *groupBounds) deltaBounds(ctx context.Context, eps float64) (lower, upper float64, from accounting.Kind, err error) {
	_, upper, from, err = g[0].deltaBounds(ctx, eps)
	if err != nil {
		return 0, 0, from, err
	}
	lower, _, _, err = g[1].deltaBounds(ctx, eps)
	if err != nil {
		return 0, 0, from, err
	}
	return math.Min(lower, upper), upper, from, nil
}
