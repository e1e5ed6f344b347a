package accounting

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// MaxMixtureComponents is the most components a [MixtureOfGaussians] may
// have (a user's contribution to a lot is Binomial(k, q): k+1 components).
const MaxMixtureComponents = 1024

// normalizeMixture validates a MixtureOfGaussians and adds its step: the
// components with positive probability, equal sensitivities merged,
// sorted by sensitivity and encoded canonically (see ParseMixture). The
// probabilities must sum to 1 within 1e-9 (decimal weights such as 0.33,
// 0.34, 0.33 sum to 1 only up to rounding) and are divided by their sum.
func normalizeMixture(ev MixtureOfGaussians, at string, smp sampler, leaf func(Step) error, unbounded func(string)) error {
	c, p := ev.Sensitivities, ev.SamplingProbs
	switch {
	case len(c) == 0:
		return &ParamError{Name: "sensitivities", Value: 0, Path: at, Want: "a non-empty list"}
	case len(p) != len(c):
		return &ParamError{Name: "sampling_probs", Value: float64(len(p)), Path: at, Want: fmt.Sprintf("%d probabilities, one per sensitivity", len(c))}
	case len(c) > MaxMixtureComponents:
		return &ParamError{Name: "sensitivities", Value: float64(len(c)), Path: at, Want: fmt.Sprintf("at most %d components", MaxMixtureComponents)}
	}
	sum := 0.0
	for i := range c {
		if !finite(c[i]) || c[i] < 0 {
			return &ParamError{Name: "sensitivities", Value: c[i], Path: at, Want: "finite and >= 0 each"}
		}
		if math.IsNaN(p[i]) || p[i] < 0 || p[i] > 1 {
			return &ParamError{Name: "sampling_probs", Value: p[i], Path: at, Want: "in [0, 1] each"}
		}
		sum += p[i]
	}
	if math.Abs(sum-1) > 1e-9 {
		return &ParamError{Name: "sampling_probs", Value: sum, Path: at, Want: "a sum of 1 (within 1e-9)"}
	}
	sd := ev.StandardDeviation
	if math.IsNaN(sd) || sd < 0 {
		return &ParamError{Name: "standard_deviation", Value: sd, Path: at, Want: ">= 0"}
	}
	if smp.kind != SamplingNone {
		return &UnsupportedEventError{Event: ev, Path: at, Reason: "sampling of a mixture of Gaussians is not supported: the mixture describes the sampling"}
	}
	if smp.adj != AddRemove {
		return &UnsupportedEventError{Event: ev, Path: at, Reason: "the mixture of Gaussians is defined under add-remove adjacency, not " + smp.adj.String()}
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
	if len(shifts) == 1 && shifts[0] == 0 || math.IsInf(sd, 1) {
		return nil // the output does not depend on the record
	}
	if sd == 0 || shifts[len(shifts)-1]/sd > 1/SigmaFloor {
		unbounded(at)
		return nil
	}
	var b strings.Builder
	for i, x := range shifts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		b.WriteByte('/')
		b.WriteString(strconv.FormatFloat(merged[x], 'g', -1, 64))
	}
	return leaf(Step{Mechanism: MechMixture, Sigma: sd, Mixture: b.String(), Path: at})
}

// ParseMixture decodes the canonical components of a MechMixture step,
// "c1/p1,c2/p2,...", sensitivities ascending.
func ParseMixture(s string) (sensitivities, probs []float64, err error) {
	for _, part := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(part, "/")
		x, err1 := strconv.ParseFloat(a, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("accounting: mixture components %q: want c/p,c/p,...", s)
		}
		sensitivities, probs = append(sensitivities, x), append(probs, y)
	}
	return sensitivities, probs, nil
}
