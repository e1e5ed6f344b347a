package accounting

import (
	"reflect"
	"testing"
)

// TestEventClassSteps: the events of dp_accounting's further classes
// state their steps through mechanismEvent, with no case of their own in
// Normalize: randomized response and permute-and-flip are (ε, 0) steps
// that merge with an equal EpsilonDelta, the exponential mechanism is its
// own leaf with a pure ε, tree aggregation a Gaussian leaf, and a mixture
// of Gaussians its canonical form, by which equal mixtures merge (its
// slices are not comparable: the plan keys it by leafKey).
func TestEventClassSteps(t *testing.T) {
	mix := func(c, p []float64) MixtureOfGaussians {
		return MixtureOfGaussians{StandardDeviation: 2, Sensitivities: c, SamplingProbs: p}
	}
	canonical := mix([]float64{0, 1, 2}, []float64{0.25, 0.5, 0.25})
	p, err := Normalize(Composed{Events: []Event{
		mix([]float64{2, 0, 1}, []float64{0.25, 0.25, 0.5}),
		SelfComposed{Event: mix([]float64{1, 3, 0, 2}, []float64{0.5, 0, 0.25, 0.25}), Count: 2},
		canonical,
		RandomizedResponse{NoiseParameter: 0.5, NumBuckets: 2},
		EpsilonDelta{Epsilon: 1.09861228866811}, // log 3 = 1.0986122886681098, rounded up as randomized response rounds it
		PermuteAndFlip{Epsilon: 0.5},
		ExponentialMechanism{Epsilon: 0.5},
		SingleEpochTreeAggregation{NoiseMultiplier: 4, StepCounts: []int{100, 50}},
	}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 5 {
		t.Fatalf("%d steps, want 5: %+v", len(p.Steps), p.Steps)
	}
	m := p.Steps[0]
	if m.Count != 4 || m.Mechanism != MechOther || !reflect.DeepEqual(m.Leaf, canonical) || !reflect.DeepEqual(m.Event(), canonical) {
		t.Errorf("mixture step %+v, want 4 of %+v", m, canonical)
	}
	rr := p.Steps[1]
	if rr.Count != 2 || rr.Leaf != (EpsilonDelta{Epsilon: 1.09861228866811}) || rr.Path != "Composed[3]/RandomizedResponse" {
		t.Errorf("randomized response step %+v, want 2 of (log 3 rounded up, 0)", rr)
	}
	if e, ok := rr.PureEpsilon(); !ok || e != rr.Leaf.(EpsilonDelta).Epsilon {
		t.Errorf("randomized response pure ε %v %v", e, ok)
	}
	if s := p.Steps[2]; s.Leaf != (EpsilonDelta{Epsilon: 0.5}) || s.Mechanism != MechEpsilonDelta {
		t.Errorf("permute-and-flip step %+v", s)
	}
	em := p.Steps[3]
	if em.Leaf != (ExponentialMechanism{Epsilon: 0.5}) || em.Mechanism != MechOther {
		t.Errorf("exponential mechanism step %+v", em)
	}
	if e, ok := em.PureEpsilon(); !ok || e != 0.5 {
		t.Errorf("exponential mechanism pure ε %v %v, want 0.5", e, ok)
	}
	// step counts 100 and 50: D = 7 nodes, σ = 4/√7 rounded down.
	if g, ok := p.Steps[4].Leaf.(Gaussian); !ok || p.Steps[4].Sigma != g.NoiseMultiplier || g.NoiseMultiplier != 1.5118578920369086 {
		t.Errorf("tree aggregation step %+v, want Gaussian σ 1.5118578920369086", p.Steps[4])
	}
}
