package pld

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/internal/search"
)

// AllocationLowerEpsilonOf returns a certified lower bound on the true
// ε(delta) of the randomly allocated Gaussian steps of e, normalised under
// add-remove (the largest over its random-allocation steps: the true ε of
// a composition is at least that of any part of it). ok is false when e
// has none (or does not normalise under add-remove).
//
// For k = 1 (balls-in-bins) the bound is (also) that of E epochs of the pair
// (1/t)Σ_i N(μe_i, I) against N(0, I), μ = 1/σ, which a linear query
// attains (every other record contributes 0, the differing one a unit
// vector): the dominated discrete pairs of [mechanism.AllocationPairs]
// (post-processings of it), composed with the certified lower
// discretisation and FFT of [Accountant], both directions. For k > 1 it is
// the larger of two post-processings of that query's epochs, composed the
// same way: the sum of the cells of the outputs' likelihood ratios
// ([mechanism.AllocationSumPairs]), and the sum of an epoch's t outputs,
// N(kμ, t) against N(0, t), a Gaussian of sensitivity kμ/√t (E epochs
// compose to one of kμ·√(E/t); its ε is found from a certified lower bound
// on its δ, [gaussian.LogDeltaBounds]), which is all that is left when the
// first is too large to compute.
func AllocationLowerEpsilonOf(ctx context.Context, e accounting.Event, delta float64) (eps float64, ok bool, err error) {
	if err := accounting.CheckDeltaQuery(delta); err != nil {
		return 0, false, err
	}
	p, err := accounting.NormalizeUnder(accounting.AddRemove, e, 1)
	if err != nil {
		// Not an add-remove event (the accountants' rows say why): it has
		// no random-allocation step.
		return 0, false, nil
	}
	for _, s := range p.Steps {
		if s.Sampling != accounting.SamplingRandomAllocation || s.Mechanism != accounting.MechGaussian {
			continue
		}
		ok = true
		if delta == 0 {
			continue
		}
		k, t, epochs := s.SampleSize, s.DatasetSize, min(s.Count, maxSteps)
		var lo float64
		switch {
		case k == 1 && 1/s.Sigma <= 4:
			lo, err = allocationLowerPairs(ctx, 1/s.Sigma, t, epochs, delta)
		case k < t && 1/s.Sigma <= 4:
			lo, err = allocationLowerSum(ctx, 1/s.Sigma, k, t, epochs, delta)
		default:
			lo = gaussianLowerEpsilon(float64(k)/s.Sigma*math.Sqrt(float64(epochs)/float64(t)), delta)
		}
		if err != nil {
			return 0, false, err
		}
		eps = math.Max(eps, lo)
	}
	return eps, ok, nil
}

// gaussianLowerEpsilon returns a lower bound on ε(delta) of the Gaussian
// shift pair of sensitivity mu (noise 1): the largest ε on a bisection
// whose certified lower δ is still at least delta (δ falls as ε grows).
func gaussianLowerEpsilon(mu, delta float64) float64 {
	if !(mu > 0) || math.IsInf(mu, 0) {
		return 0
	}
	ld := math.Log(delta)
	ok := func(e float64) bool {
		lo, _ := gaussian.LogDeltaBounds(1/mu, 1, e)
		return lo >= ld
	}
	if !ok(0) {
		return 0
	}
	// Doubling from 1 brackets ε below 2^20 (the first doubling ≥ 1e6,
	// taken as failing: ε is not searched beyond it), then at most 200
	// bisections to 1e-12 relative.
	const eMax = 1 << 20
	steps := 0
	o, _ := search.Solve(search.Problem[float64]{
		Holds:   func(e float64) (bool, error) { return ok(e) && e < eMax, nil },
		Side:    search.Lower,
		Lo:      0,
		Hi:      1,
		LoKnown: true, // ok(0) held
		Up:      func(e float64) (float64, bool) { return 2 * e, true },
		Done:    func(a, b float64) bool { return b-a <= 1e-12*b },
		Next: func(a, b float64) (float64, bool) {
			steps++
			return a + (b-a)/2, steps <= 200
		},
	})
	return o.X
}

// allocationLowerPairs composes epochs of the dominated balls-in-bins
// pairs of t steps and returns the certified lower bound on ε(delta).
func allocationLowerPairs(ctx context.Context, mu float64, t, epochs int, delta float64) (float64, error) {
	if t == 1 {
		return gaussianLowerEpsilon(mu*math.Sqrt(float64(epochs)), delta), nil
	}
	// The sum of an epoch's outputs, N(μ, t) against N(0, t), is a lower
	// bound too, and the one left when the pairs are too large.
	proj := gaussianLowerEpsilon(mu*math.Sqrt(float64(epochs)/float64(t)), delta)
	pp, err := mechanism.AllocationPairs(mu, t, true)
	if err != nil {
		return proj, nil
	}
	return composeLowerPairs(ctx, pp, epochs, delta, proj)
}

// allocationLowerSum composes epochs of the dominated k-out-of-t sum pairs
// ([mechanism.AllocationSumPairs]) and returns the certified lower bound on
// ε(delta), at least that of the sum of the outputs.
func allocationLowerSum(ctx context.Context, mu float64, k, t, epochs int, delta float64) (float64, error) {
	proj := gaussianLowerEpsilon(float64(k)*mu*math.Sqrt(float64(epochs)/float64(t)), delta)
	pp, err := mechanism.AllocationSumPairs(mu, k, t)
	if err != nil {
		return proj, nil
	}
	return composeLowerPairs(ctx, pp, epochs, delta, proj)
}

// composeLowerPairs composes epochs of the dominated pairs pp, both
// directions, with the certified lower discretisation and returns the
// larger of the lower bound on ε(delta) and floor (floor, too, when the
// composition is too large).
func composeLowerPairs(ctx context.Context, pp mechanism.AllocPLDPairs, epochs int, delta, proj float64) (float64, error) {
	pairs := [][]mechanism.Pair{{pp.Remove}, {pp.Add}}
	st := &setup{counts: []int{epochs}, steps: epochs, dirs: []bool{false, true}, pairs: pairs}
	for _, ps := range pairs {
		_, v := ps[0].Moments()
		st.vTot = math.Max(st.vTot, float64(epochs)*v)
	}
	r, err := st.compose(ctx, 0, etaFor(epochs, 0))
	if err != nil {
		if err == errTooLarge {
			return proj, nil
		}
		return 0, err
	}
	best, err := refinedLower(ctx, r, delta)
	if err != nil {
		return 0, err
	}
	return math.Max(best, proj), nil
}
