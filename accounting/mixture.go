package accounting

import (
	"fmt"
	"math"
	"sort"
)

// MaxMixtureComponents is the most components a [MixtureOfGaussians] may
// have (a user's contribution to a lot is Binomial(k, q): k+1 components).
const MaxMixtureComponents = 1024

// step is stepUnder unsampled, under add-remove.
func (m MixtureOfGaussians) step(at string) (Step, bool, bool, error) {
	return m.stepUnder(at, SamplingNone, AddRemove)
}

// stepUnder validates the mixture and returns its step, whose leaf is the
// mixture in canonical form: the components with positive probability,
// equal sensitivities merged, sorted by sensitivity. The probabilities
// must sum to 1 within 1e-9 (decimal weights such as 0.33, 0.34, 0.33 sum
// to 1 only up to rounding) and are divided by their sum. A sampled
// mixture, or one under replace-one, is refused: the mixture describes
// the sampling, under add-remove. Only shift 0, or σ = +Inf, is free;
// σ = 0 or a largest shift over σ above 1/SigmaFloor is unbounded.
func (m MixtureOfGaussians) stepUnder(at string, kind Sampling, adj Adjacency) (Step, bool, bool, error) {
	c, p := m.Sensitivities, m.SamplingProbs
	switch {
	case len(c) == 0:
		return Step{}, false, false, &ParamError{Name: "sensitivities", Value: 0, Path: at, Want: "a non-empty list"}
	case len(p) != len(c):
		return Step{}, false, false, &ParamError{Name: "sampling_probs", Value: float64(len(p)), Path: at, Want: fmt.Sprintf("%d probabilities, one per sensitivity", len(c))}
	case len(c) > MaxMixtureComponents:
		return Step{}, false, false, &ParamError{Name: "sensitivities", Value: float64(len(c)), Path: at, Want: fmt.Sprintf("at most %d components", MaxMixtureComponents)}
	}
	sum := 0.0
	for i := range c {
		if !finite(c[i]) || c[i] < 0 {
			return Step{}, false, false, &ParamError{Name: "sensitivities", Value: c[i], Path: at, Want: "finite and >= 0 each"}
		}
		if math.IsNaN(p[i]) || p[i] < 0 || p[i] > 1 {
			return Step{}, false, false, &ParamError{Name: "sampling_probs", Value: p[i], Path: at, Want: "in [0, 1] each"}
		}
		sum += p[i]
	}
	if math.Abs(sum-1) > 1e-9 {
		return Step{}, false, false, &ParamError{Name: "sampling_probs", Value: sum, Path: at, Want: "a sum of 1 (within 1e-9)"}
	}
	sd := m.StandardDeviation
	if math.IsNaN(sd) || sd < 0 {
		return Step{}, false, false, &ParamError{Name: "standard_deviation", Value: sd, Path: at, Want: ">= 0"}
	}
	if err := m.checkBinomial(at); err != nil {
		return Step{}, false, false, err
	}
	if kind != SamplingNone {
		return Step{}, false, false, &UnsupportedEventError{Event: m, Path: at, Reason: "sampling of a mixture of Gaussians is not supported: the mixture describes the sampling"}
	}
	if adj != AddRemove {
		return Step{}, false, false, &UnsupportedEventError{Event: m, Path: at, Reason: "the mixture of Gaussians is defined under add-remove adjacency, not " + adj.String()}
	}
	merged := map[float64]float64{}
	for i := range c {
		if p[i] > 0 {
			merged[c[i]] += p[i] / sum
		}
	}
	shifts := make([]float64, 0, len(merged))
	for x := range merged {
		shifts = append(shifts, x)
	}
	sort.Float64s(shifts)
	top := shifts[len(shifts)-1]
	if m.BinomialCount > 0 {
		top = float64(m.BinomialCount) // the tail's shifts reach k
	}
	if len(shifts) == 1 && shifts[0] == 0 && m.BinomialCount == 0 || math.IsInf(sd, 1) {
		return Step{}, true, false, nil // the output does not depend on the record
	}
	if sd == 0 || top/sd > 1/SigmaFloor {
		return Step{}, false, true, nil
	}
	probs := make([]float64, len(shifts))
	for i, x := range shifts {
		probs[i] = merged[x]
	}
	if m.BinomialCount > 0 {
		// The listed shifts must be the run lo..hi of the binomial's
		// shifts (merging equal ones and dropping zero probabilities
		// keeps that or breaks it; checked here, on the canonical form).
		for i, x := range shifts {
			if x != shifts[0]+float64(i) {
				return Step{}, false, false, &ParamError{Name: "sensitivities", Value: x, Path: at,
					Want: "consecutive integers with positive probabilities (a run lo..hi of the binomial's shifts) when binomial_count is given"}
			}
		}
	}
	leaf := MixtureOfGaussians{StandardDeviation: sd, Sensitivities: shifts, SamplingProbs: probs,
		BinomialCount: m.BinomialCount, BinomialRate: m.BinomialRate}
	return Step{Mechanism: MechOther, Leaf: leaf}, false, false, nil
}

// checkBinomial validates BinomialCount and BinomialRate: both zero, or a
// count in [1, MaxExamplesPerUser], a rate in (0, 1) and integer
// sensitivities in [0, count] whose run contains the binomial's mode.
func (m MixtureOfGaussians) checkBinomial(at string) error {
	k, q := m.BinomialCount, m.BinomialRate
	if k == 0 {
		if q != 0 {
			return &ParamError{Name: "binomial_rate", Value: q, Path: at, Want: "0 when binomial_count is 0 (no tail)"}
		}
		return nil
	}
	if k < 1 || k > MaxExamplesPerUser {
		return &ParamError{Name: "binomial_count", Value: float64(k), Path: at, Want: fmt.Sprintf("an integer in [0, %d] (2^53)", MaxExamplesPerUser)}
	}
	if !(q > 0 && q < 1) {
		return &ParamError{Name: "binomial_rate", Value: q, Path: at, Want: "in (0, 1) when binomial_count is given (at 1 no shift is left out)"}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range m.Sensitivities {
		if x != math.Floor(x) || x > float64(k) {
			return &ParamError{Name: "sensitivities", Value: x, Path: at, Want: fmt.Sprintf("integers in [0, %d] (binomial_count) when binomial_count is given", k)}
		}
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	// The tail's bounds need the run to contain the mode, where the
	// probabilities stop increasing: ⌊(k + 1)q⌋ (or k).
	if mode := math.Min(math.Floor((float64(k)+1)*q), float64(k)); mode < lo || mode > hi {
		return &ParamError{Name: "sensitivities", Value: mode, Path: at, Want: fmt.Sprintf("a run of shifts containing the binomial's mode %g", mode)}
	}
	return nil
}

func (MixtureOfGaussians) pureEpsilon() (float64, bool) { return 0, false }

// mixtureKey is a mixture's comparable stand-in in a plan (see keyedEvent):
// %v prints each float64 in its shortest exact form.
type mixtureKey struct {
	sd            float64
	shifts, probs string
	k             int
	q             float64
}

func (m MixtureOfGaussians) key() any {
	return mixtureKey{m.StandardDeviation, fmt.Sprint(m.Sensitivities), fmt.Sprint(m.SamplingProbs), m.BinomialCount, m.BinomialRate}
}
