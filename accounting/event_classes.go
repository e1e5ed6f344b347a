package accounting

import (
	"math"
	"math/bits"
)

// The meanings of dp_accounting's event classes beyond the noise-adding
// mechanisms and the guarantees (see mechanismEvent): randomized response
// and permute-and-flip are (ε, 0) steps, the exponential mechanism a step
// of its own, tree aggregation one Gaussian step; the mixture of
// Gaussians is in mixture.go.

// pureStep is the step of an (eps, 0)-DP release.
func pureStep(eps float64) Step {
	return Step{Mechanism: MechEpsilonDelta, Epsilon: eps, Leaf: EpsilonDelta{Epsilon: eps}}
}

// step: p NaN or outside [0, 1] and k < 1 are errors; k = 1 or p = 1 is
// free (the output does not depend on the input); p = 0 with k ≥ 2 (the
// input is released) is unbounded; otherwise an (ε, 0) step.
func (r RandomizedResponse) step(at string) (Step, bool, bool, error) {
	p := r.NoiseParameter
	if math.IsNaN(p) || p < 0 || p > 1 {
		return Step{}, false, false, &ParamError{Name: "noise_parameter", Value: p, Path: at, Want: "in [0, 1]"}
	}
	if r.NumBuckets < 1 {
		return Step{}, false, false, &ParamError{Name: "num_buckets", Value: float64(r.NumBuckets), Path: at, Want: ">= 1"}
	}
	if r.NumBuckets == 1 || p == 1 {
		return Step{}, true, false, nil
	}
	eps, ok := r.pureEpsilon()
	if !ok {
		return Step{}, false, true, nil
	}
	return pureStep(eps), false, false, nil
}

// pureEpsilon: ε = log(1 + k(1−p)/p), rounded up (k(1−p)/p and log1p each
// carry one rounding, so two ulps up cover them); 0 for k = 1 or p = 1;
// none for p = 0 with k ≥ 2 (ε = +Inf) or invalid parameters.
func (r RandomizedResponse) pureEpsilon() (float64, bool) {
	p := r.NoiseParameter
	switch {
	case math.IsNaN(p) || p < 0 || p > 1 || r.NumBuckets < 1:
		return 0, false
	case r.NumBuckets == 1 || p == 1:
		return 0, true
	}
	eps := math.Log1p(float64(r.NumBuckets) * (1 - p) / p)
	eps = math.Nextafter(math.Nextafter(eps, math.Inf(1)), math.Inf(1))
	return eps, !math.IsInf(eps, 1)
}

// step: ε NaN, infinite or < 0 is an error; ε = 0 is free; otherwise the
// mechanism's own step (ε-DP and ε-bounded range; package mechanism says
// what the accountants make of it).
func (m ExponentialMechanism) step(at string) (Step, bool, bool, error) {
	if !finite(m.Epsilon) || m.Epsilon < 0 {
		return Step{}, false, false, &ParamError{Name: "eps", Value: m.Epsilon, Path: at, Want: "finite and >= 0"}
	}
	return Step{Mechanism: MechOther, Leaf: m}, m.Epsilon == 0, false, nil
}

func (m ExponentialMechanism) pureEpsilon() (float64, bool) { return m.Epsilon, true }

// step: ε NaN, infinite or < 0 is an error; ε = 0 is free; otherwise an
// (ε, 0) step.
func (m PermuteAndFlip) step(at string) (Step, bool, bool, error) {
	if !finite(m.Epsilon) || m.Epsilon < 0 {
		return Step{}, false, false, &ParamError{Name: "eps", Value: m.Epsilon, Path: at, Want: "finite and >= 0"}
	}
	return pureStep(m.Epsilon), m.Epsilon == 0, false, nil
}

func (m PermuteAndFlip) pureEpsilon() (float64, bool) { return m.Epsilon, true }

// step is stepUnder unsampled.
func (t SingleEpochTreeAggregation) step(at string) (Step, bool, bool, error) {
	return t.stepUnder(at, SamplingNone, AddRemove)
}

// stepUnder: sampled tree aggregation is refused (every record is used
// once per epoch by the trees themselves); no step counts, a count < 0 or
// all counts 0 are errors; the noise multiplier follows the boundary
// table of Normalize; the step is the Gaussian of σ/√D, D =
// ⌈log2(max count + 1)⌉ (see [SingleEpochTreeAggregation]).
func (t SingleEpochTreeAggregation) stepUnder(at string, kind Sampling, _ Adjacency) (Step, bool, bool, error) {
	if kind != SamplingNone {
		return Step{}, false, false, &UnsupportedEventError{Event: t, Path: at, Reason: "sampling of tree aggregation is not supported (every record is used once per epoch by the trees themselves)"}
	}
	if len(t.StepCounts) == 0 {
		return Step{}, false, false, &ParamError{Name: "step_counts", Value: 0, Path: at, Want: "one step count or a non-empty list"}
	}
	most := 0
	for _, n := range t.StepCounts {
		if n < 0 {
			return Step{}, false, false, &ParamError{Name: "step_counts", Value: float64(n), Path: at, Want: "each >= 0"}
		}
		most = max(most, n)
	}
	if most == 0 {
		return Step{}, false, false, &ParamError{Name: "step_counts", Value: 0, Path: at, Want: "at least one count >= 1"}
	}
	s, free, unb, err := noiseScale(t.NoiseMultiplier, at)
	if err != nil || free || unb {
		return Step{}, free, unb, err
	}
	// D = ⌈log2(most+1)⌉ nodes on a leaf-to-root path: the bit length of
	// most (exact in integers). σ/√D is rounded down (a smaller σ is a
	// worse Gaussian).
	if d := bits.Len(uint(most)); d > 1 {
		s = math.Nextafter(s/math.Sqrt(float64(d)), 0)
		if s < SigmaFloor {
			return Step{}, false, true, nil
		}
	}
	return Step{Mechanism: MechGaussian, Sigma: s, Leaf: Gaussian{NoiseMultiplier: s}}, false, false, nil
}

func (SingleEpochTreeAggregation) pureEpsilon() (float64, bool) { return 0, false }
