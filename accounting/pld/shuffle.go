package pld

import (
	"context"
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
)

// ShuffledLowerEpsilon returns a certified lower bound on the ε(δ) of
// epochs passes of DP-SGD over a shuffled data set (each epoch a random
// permutation cut into batches batches, every record in at most one), under
// replace-one adjacency, with noise multiplier sigma relative to the
// replace-one sensitivity (dpcalc's convention: the CLI's σ/2), and a share
// unused of the records left out of every epoch (the dropped partial
// batch, (N − bB)/N). No accountant that bounds shuffled DP-SGD in general
// may report less.
//
// The construction follows Chua et al., "How Private are DP-SGD
// Implementations?" (ICML 2024): a linear loss under which every other
// record's clipped gradient is −C while the differing one's is +C in D and
// −C in D′. Scaled by the noise, an epoch's releases are then
// P = (1−r)·(1/b)Σ_i N(μe_i, I) + r·N(0, I) against Q = N(0, I) in b
// dimensions, μ = 1/sigma, r = unused: the record lands in one batch, at
// random. The epochs are independent, so the true ε is at least that of
// E copies of (P, Q), which by post-processing is at least that of the
// maximum coordinate M of each epoch: F_Q(t) = Φ(t)^b and
// F_P(t) = ((1−r)Φ(t−μ) + rΦ(t))·Φ(t)^{b−1}, whose privacy loss
// L(t) = log(r + (1−r)/b·(e^{μt−μ²/2} + (b−1)Φ(t−μ)/Φ(t))) is increasing.
// Both orders of that one-dimensional pair are composed with the certified
// lower discretisation of [Accountant], and the larger lower bound is
// returned. It is 0 when no ε > 0 is certified.
func ShuffledLowerEpsilon(ctx context.Context, sigma float64, batches, epochs int, unused, delta float64) (float64, error) {
	switch {
	case !(sigma > 0) || math.IsInf(sigma, 1):
		return 0, &accounting.ParamError{Name: "sigma", Value: sigma, Want: "finite and > 0"}
	case batches < 1:
		return 0, &accounting.ParamError{Name: "batches", Value: float64(batches), Want: ">= 1"}
	case epochs < 1 || epochs > maxSteps:
		return 0, &accounting.ParamError{Name: "epochs", Value: float64(epochs), Want: fmt.Sprintf("in [1, %d]", maxSteps)}
	case !(unused >= 0 && unused < 1):
		return 0, &accounting.ParamError{Name: "unused", Value: unused, Want: "in [0, 1)"}
	}
	if err := accounting.CheckDeltaQuery(delta); err != nil {
		return 0, err
	}
	if delta == 0 {
		return 0, nil // the trivial lower bound (a Gaussian is not pure DP, but ε(0) needs no certificate here)
	}
	mu := 1 / sigma
	if !(mu > 1e-150) || mu > 1e150 {
		// Beyond these the loss over- or underflows float64; 0 is a
		// valid lower bound.
		return 0, nil
	}
	fwd, rev := mechanism.ShuffledMaxPairs(mu, batches, unused)
	pairs := [][]mechanism.Pair{{fwd}, {rev}}
	st := &setup{counts: []int{epochs}, steps: epochs, dirs: []bool{false, true}, pairs: pairs}
	for _, ps := range pairs {
		_, v := ps[0].Moments()
		st.vTot = math.Max(st.vTot, float64(epochs)*v)
	}
	r, err := st.compose(ctx, 0, etaFor(epochs, 0))
	if err != nil {
		if err == errTooLarge {
			return 0, nil
		}
		return 0, err
	}
	return refinedLower(ctx, r, delta)
}

// refinedLower returns the certified lower bound on ε(delta) of the
// composition r, refined level by level (see levels) while refining still
// raises it by more than targetGap; 0 when no level gives a finite bound
// (a lower bound all the same) or the grids grow too large.
func refinedLower(ctx context.Context, r *result, delta float64) (float64, error) {
	lv := &levels{res: r}
	var best float64
	for k := 0; k <= maxRefine; k++ {
		rk := lv.res
		if k > 0 {
			var err error
			if rk, err = lv.level(k); err == errTooLarge {
				break
			} else if err != nil {
				return 0, err
			}
		}
		lo, err := rk.lowerOnly(ctx, delta)
		if err == errTooLarge {
			break
		}
		if err != nil {
			return 0, err
		}
		if !(lo > best*(1+targetGap)) {
			best = math.Max(best, lo)
			break // refining no longer helps
		}
		best = lo
	}
	if !(best >= 0) || math.IsInf(best, 0) {
		return 0, nil
	}
	return best, nil
}

// ShuffledLowerEpsilonOf returns the largest [ShuffledLowerEpsilon] over
// the shuffled Gaussian steps of e normalised under replace-one adjacency
// (their noise multipliers relative to the replace-one sensitivity, as
// the events carry them): the true ε of a composition is at least that of
// any part of it. ok is false when e has no shuffled Gaussian step.
func ShuffledLowerEpsilonOf(ctx context.Context, e accounting.Event, delta float64) (eps float64, ok bool, err error) {
	p, err := accounting.NormalizeUnder(accounting.ReplaceOne, e, 1)
	if err != nil {
		return 0, false, err
	}
	for _, s := range p.Steps {
		sigma, b, unused, shuffled := mechanism.ShuffledEpoch(s)
		if !shuffled {
			continue
		}
		// Fewer epochs release less: a lower bound for them is one for all.
		lo, err := ShuffledLowerEpsilon(ctx, sigma, b, min(s.Count, maxSteps), unused, delta)
		if err != nil {
			return 0, false, err
		}
		eps, ok = math.Max(eps, lo), true
	}
	return eps, ok, nil
}

// lowerOnly returns the largest lower bound on ε(delta) over r's
// directions, from their untilted lower compositions.
func (r *result) lowerOnly(ctx context.Context, delta float64) (float64, error) {
	var lo float64
	for d := range r.dirs {
		c, err := r.get(ctx, d, false, 0)
		if err == errTooLarge {
			continue
		}
		if err != nil {
			return 0, err
		}
		lo = math.Max(lo, c.epsilon(delta, false))
	}
	return lo, nil
}
