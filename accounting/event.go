package accounting

import "math"

// Event describes a differentially private mechanism, or a composition of
// mechanisms, without saying how its privacy loss is bounded.
//
// The set of events is closed (the interface has an unexported method).
// Compatibility rule: the meaning of an existing event type never changes; a
// new meaning gets a new type.
type Event interface {
	isEvent()
}

// Gaussian is the Gaussian mechanism with L2 sensitivity 1 and noise
// N(0, NoiseMultiplier²·I) added to the query answer. Neighbouring datasets
// differ by adding or removing one record.
type Gaussian struct {
	NoiseMultiplier float64 `json:"noise_multiplier"`
}

// PoissonSampled runs Event on a subsample in which every record is included
// independently with probability SamplingRate (Abadi et al. 2016 §3.1;
// Mironov, Talwar, Zhang 2019). Fixed-size lots are a different mechanism
// and are not described by this event.
type PoissonSampled struct {
	SamplingRate float64 `json:"sampling_rate"`
	Event        Event   `json:"event"`
}

// SelfComposed is Count adaptive repetitions of Event.
type SelfComposed struct {
	Event Event `json:"event"`
	Count int   `json:"count"`
}

// Composed is the adaptive composition of Events, in order.
type Composed struct {
	Events []Event `json:"events"`
}

// EpsilonDelta is a mechanism known only to satisfy (Epsilon, Delta)-DP.
type EpsilonDelta struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// ZCDP is a mechanism satisfying (Xi, Rho)-zCDP (Bun and Steinke 2016,
// Definition 1.1): D_α(M(x)‖M(x')) ≤ Xi + Rho·α for all α > 1.
type ZCDP struct {
	Rho float64 `json:"rho"`
	Xi  float64 `json:"xi"`
}

// Laplace is the Laplace mechanism with L1 sensitivity 1 and noise of scale
// NoiseMultiplier added to each coordinate (dp_accounting's LaplaceDpEvent).
// It is (1/NoiseMultiplier, 0)-DP (Dwork et al. 2006).
type Laplace struct {
	NoiseMultiplier float64 `json:"noise_multiplier"`
}

// DiscreteGaussian is the discrete Gaussian mechanism (dp_accounting's
// DiscreteGaussianDpEvent; Canonne, Kamath and Steinke 2020, "The Discrete
// Gaussian for Differential Privacy", arXiv:2004.00010): an integer-valued
// query f, of Dimension coordinates, whose values on neighbouring data sets
// differ by at most Sensitivity in L2 norm, released as f(x) + z with z
// drawn from the discrete Gaussian N_Z(0, Sigma²), P[z] ∝ exp(−‖z‖²/(2·Sigma²))
// on the integer vectors. Dimension 0 means unknown (dp_accounting's None).
// Unlike Gaussian's noise multiplier, Sigma is absolute: the privacy loss
// depends on Sigma and Sensitivity, not only on their ratio.
type DiscreteGaussian struct {
	Sigma       float64 `json:"sigma"`
	Sensitivity float64 `json:"sensitivity"`
	Dimension   int     `json:"dimension"`
}

// DiscreteLaplace is the discrete Laplace mechanism (dp_accounting's
// DiscreteLaplaceDpEvent): an integer-valued query whose values on
// neighbouring data sets differ by at most Sensitivity in L1 norm, released
// with noise drawn coordinate-wise from DLap(a), a = NoiseParameter:
// P[z] = tanh(a/2)·exp(−a|z|) on the integers. It is (a·Sensitivity, 0)-DP.
type DiscreteLaplace struct {
	NoiseParameter float64 `json:"noise_parameter"`
	Sensitivity    int     `json:"sensitivity"`
}

// SampledWithoutReplacement runs Event on SampleSize records drawn uniformly
// without replacement from SourceDatasetSize (dp_accounting's
// SampledWithoutReplacementDpEvent). Fixed-size sampling is defined under
// replace-one adjacency (the dataset size is public), so only a plan under
// [ReplaceOne] may contain it.
type SampledWithoutReplacement struct {
	SourceDatasetSize int   `json:"source_dataset_size"`
	SampleSize        int   `json:"sample_size"`
	Event             Event `json:"event"`
}

// Shuffled is one epoch of shuffled batches: the DatasetSize records are put
// in a uniformly random order and cut into ⌊DatasetSize/BatchSize⌋ batches of
// BatchSize records (a remainder is dropped); Event runs on each batch, so
// every record is seen at most once per epoch. This is how most training
// code draws batches. No amplification bound of the Poisson kind is proven
// for it; see the accountants' docs for what each reports.
type Shuffled struct {
	DatasetSize int   `json:"dataset_size"`
	BatchSize   int   `json:"batch_size"`
	Event       Event `json:"event"`
}

// RandomAllocation is one epoch of NumSteps steps in which every record is
// used in exactly NumSelected of them, chosen uniformly at random and
// independently of the other records (random k-out-of-t allocation,
// Feldman and Shenfeld 2025, arXiv 2502.08202; NumSelected = 1 is the
// balls-in-bins sampling of Chua et al. 2024, arXiv 2412.16802); Event
// runs at each step on the records allocated to it. dp_accounting's
// RandomAllocationDpEvent (event, num_selected, num_steps). Adding or
// removing a record moves no other record, so it is defined under
// add-remove adjacency.
type RandomAllocation struct {
	NumSelected int   `json:"num_selected"`
	NumSteps    int   `json:"num_steps"`
	Event       Event `json:"event"`
}

// RandomizedResponse is randomized response over NumBuckets buckets with
// noise parameter NoiseParameter = p (dp_accounting's
// RandomizedResponseDpEvent): the input bucket is output with
// probability 1 − p, and with probability p a bucket drawn uniformly from
// all NumBuckets. An output bucket has probability 1 − p + p/k under the
// input that is that bucket and p/k under any other, so the mechanism is
// ε-DP with ε = log((1 − p + p/k)/(p/k)) = log(1 + k(1 − p)/p) (Warner
// 1965; the ε of k-ary randomized response), and not better: the bound is
// attained. p = 0 (the input is released) is not private when k ≥ 2.
type RandomizedResponse struct {
	NoiseParameter float64 `json:"noise_parameter"`
	NumBuckets     int     `json:"num_buckets"`
}

// ExponentialMechanism is the ε-DP exponential mechanism (McSherry and
// Talwar 2007) with privacy parameter Epsilon (dp_accounting's
// ExponentialMechanismDpEvent). It is ε-bounded range (Durfee and Rogers
// 2019): its privacy loss lies in an interval [t, t + ε], which makes it
// (ε²/8)-zCDP (Cesar and Rogers 2021) besides ε-DP.
type ExponentialMechanism struct {
	Epsilon float64 `json:"epsilon"`
}

// PermuteAndFlip is the permute-and-flip mechanism (McKenna and Sheldon
// 2020) with privacy parameter Epsilon (dp_accounting's
// PermuteAndFlipDpEvent): it is ε-DP, and dpcalc bounds it as an ε-DP
// mechanism.
type PermuteAndFlip struct {
	Epsilon float64 `json:"epsilon"`
}

// SingleEpochTreeAggregation is one epoch of tree aggregation (DP-FTRL;
// dp_accounting's SingleEpochTreeAggregationDpEvent): StepCounts[i] steps
// aggregated by the i-th tree, every node's sum released with Gaussian
// noise of NoiseMultiplier times the L2 sensitivity, and every record used
// in at most one step across all trees (Kairouz et al. 2021, Appendix D).
// A record then changes the nodes on one leaf-to-root path of at most
// D = ⌈log2(max StepCounts + 1)⌉ nodes, so the release is one Gaussian
// mechanism with noise multiplier NoiseMultiplier/√D, which is how every
// accountant bounds it (dp_accounting's RDP accountant charges
// αD/(2σ²), the same curve). Scalar reports that dp_accounting's
// step_counts was one integer rather than a list (StepCounts then has
// one element).
type SingleEpochTreeAggregation struct {
	NoiseMultiplier float64 `json:"noise_multiplier"`
	StepCounts      []int   `json:"step_counts"`
	Scalar          bool    `json:"-"`
}

// MixtureOfGaussians is the mixture-of-Gaussians mechanism
// (dp_accounting's MixtureOfGaussiansDpEvent; Choquette-Choo, Ganesh,
// Steinke and Thakurta 2023): without the differing record the output is
// N(0, StandardDeviation²); with it, Σ_i SamplingProbs[i]·N(Sensitivities[i],
// StandardDeviation²). It describes a user who contributes several
// examples to a Poisson-sampled Gaussian sum (the number sampled is the
// random sensitivity), under add-remove adjacency. Sensitivities are ≥ 0
// and the probabilities sum to 1.
//
// BinomialCount k > 0 (with BinomialRate q in (0, 1]) says that the
// mechanism is the Binomial(k, q) mixture of the shifts 0, 1, ..., k (a
// user of k examples, [UserMixture]) and that the components listed are
// only its probable part, consecutive integer shifts lo..hi: with the
// record the output is (1 − η)·A + η·T, where A is the listed mixture (its
// probabilities divided by their sum), η the Binomial(k, q) probability of
// the shifts outside [lo, hi] and T the binomial restricted to them.
// Accountants bound the tail η·T from k and q ([BinomialTail]). The zero
// value, 0, is a mixture that is exactly the components listed
// (dp_accounting's event). dp_accounting has no such field: the JSON form
// of a mixture with a tail is dpcalc's BinomialMixtureOfGaussiansDpEvent.
type MixtureOfGaussians struct {
	StandardDeviation float64   `json:"standard_deviation"`
	Sensitivities     []float64 `json:"sensitivities"`
	SamplingProbs     []float64 `json:"sampling_probs"`
	BinomialCount     int       `json:"binomial_count,omitempty"`
	BinomialRate      float64   `json:"binomial_rate,omitempty"`
}

// NoOp is a mechanism that does not touch the data; it costs nothing.
type NoOp struct{}

// NonPrivate is a mechanism with no privacy guarantee; composing it makes
// ε = +Inf for every δ < 1.
type NonPrivate struct{}

func (Gaussian) isEvent()                   {}
func (Laplace) isEvent()                    {}
func (DiscreteGaussian) isEvent()           {}
func (DiscreteLaplace) isEvent()            {}
func (SampledWithoutReplacement) isEvent()  {}
func (Shuffled) isEvent()                   {}
func (RandomAllocation) isEvent()           {}
func (PoissonSampled) isEvent()             {}
func (SelfComposed) isEvent()               {}
func (Composed) isEvent()                   {}
func (EpsilonDelta) isEvent()               {}
func (ZCDP) isEvent()                       {}
func (NoOp) isEvent()                       {}
func (RandomizedResponse) isEvent()         {}
func (ExponentialMechanism) isEvent()       {}
func (PermuteAndFlip) isEvent()             {}
func (SingleEpochTreeAggregation) isEvent() {}
func (MixtureOfGaussians) isEvent()         {}
func (NonPrivate) isEvent()                 {}

// SubsampledGaussian returns the event of Abadi et al. (2016) Algorithm 1
// run for steps steps: SelfComposed{PoissonSampled{q, Gaussian{σ}}, steps}.
func SubsampledGaussian(noiseMultiplier, samplingRate float64, steps int) Event {
	return SelfComposed{
		Event: PoissonSampled{SamplingRate: samplingRate, Event: Gaussian{NoiseMultiplier: noiseMultiplier}},
		Count: steps,
	}
}

// mechanismEvent is a leaf of an event tree: one release of a mechanism.
// It states its own meaning, so that [Normalize] needs no case per
// mechanism: a new mechanism is a new type here with these methods (and
// its JSON class in dpevent.go), and its description for the accountants
// in package mechanism.
type mechanismEvent interface {
	Event
	// step validates the event's parameters (at is its path, for errors)
	// and returns the step one release contributes, with Mechanism, its
	// parameters and Leaf set; free for a release that costs nothing,
	// unbounded for one with no finite bound (the boundary table of
	// Normalize).
	step(at string) (s Step, free, unbounded bool, err error)
	// pureEpsilon returns ε and true when one release is (ε, 0)-DP.
	pureEpsilon() (float64, bool)
}

// samplingMechanismEvent is a mechanismEvent whose definition fixes the
// sampling of its records or the neighbouring relation (tree aggregation
// uses every record once by itself; the mixture of Gaussians describes a
// sampling, under add-remove). Normalize calls stepUnder, with the
// sampling and relation the event runs under, instead of step; it refuses
// those it is not defined under with an *UnsupportedEventError.
type samplingMechanismEvent interface {
	mechanismEvent
	stepUnder(at string, kind Sampling, adj Adjacency) (s Step, free, unbounded bool, err error)
}

// noiseScale validates a noise multiplier or scale s at path at by the
// boundary table of Normalize: free at +Inf, unbounded below SigmaFloor,
// SigmaCeiling above it.
func noiseScale(s float64, at string) (v float64, free, unbounded bool, err error) {
	switch {
	case math.IsNaN(s) || s < 0:
		return 0, false, false, &ParamError{Name: "sigma", Value: s, Path: at, Want: ">= 0"}
	case math.IsInf(s, 1):
		return 0, true, false, nil
	case s < SigmaFloor:
		return 0, false, true, nil
	case s > SigmaCeiling:
		s = SigmaCeiling
	}
	return s, false, false, nil
}

func (g Gaussian) step(at string) (Step, bool, bool, error) {
	s, free, unb, err := noiseScale(g.NoiseMultiplier, at)
	return Step{Mechanism: MechGaussian, Sigma: s, Leaf: Gaussian{NoiseMultiplier: s}}, free, unb, err
}

func (Gaussian) pureEpsilon() (float64, bool) { return 0, false }

func (l Laplace) step(at string) (Step, bool, bool, error) {
	s, free, unb, err := noiseScale(l.NoiseMultiplier, at)
	return Step{Mechanism: MechLaplace, Sigma: s, Leaf: Laplace{NoiseMultiplier: s}}, free, unb, err
}

// pureEpsilon: (1/b, 0)-DP (Dwork et al. 2006), 1/b rounded up.
func (l Laplace) pureEpsilon() (float64, bool) {
	b := l.NoiseMultiplier
	e := 1 / b
	if e*b < 1 {
		e = math.Nextafter(e, math.Inf(1))
	}
	return e, true
}

func (e EpsilonDelta) step(at string) (Step, bool, bool, error) {
	if !finite(e.Epsilon) || e.Epsilon < 0 {
		return Step{}, false, false, &ParamError{Name: "eps", Value: e.Epsilon, Path: at, Want: "finite and >= 0"}
	}
	if math.IsNaN(e.Delta) || e.Delta < 0 || e.Delta > 1 {
		return Step{}, false, false, &ParamError{Name: "delta", Value: e.Delta, Path: at, Want: "in [0, 1]"}
	}
	free, unb := e.Epsilon == 0 && e.Delta == 0, e.Delta == 1
	return Step{Mechanism: MechEpsilonDelta, Epsilon: e.Epsilon, Delta: e.Delta, Leaf: e}, free && !unb, unb, nil
}

func (e EpsilonDelta) pureEpsilon() (float64, bool) {
	if e.Delta == 0 {
		return e.Epsilon, true
	}
	return 0, false
}

func (z ZCDP) step(at string) (Step, bool, bool, error) {
	if !finite(z.Rho) || z.Rho < 0 {
		return Step{}, false, false, &ParamError{Name: "rho", Value: z.Rho, Path: at, Want: "finite and >= 0"}
	}
	if !finite(z.Xi) || z.Xi < 0 {
		return Step{}, false, false, &ParamError{Name: "xi", Value: z.Xi, Path: at, Want: "finite and >= 0"}
	}
	return Step{Mechanism: MechZCDP, Rho: z.Rho, Xi: z.Xi, Leaf: z}, z.Rho == 0 && z.Xi == 0, false, nil
}

func (ZCDP) pureEpsilon() (float64, bool) { return 0, false }

// step: σ NaN or < 0, the sensitivity NaN, < 0 or infinite, or a dimension
// < 0 are errors; σ = +Inf or sensitivity 0 is free; σ/Δ < SigmaFloor is
// unbounded; σ/Δ > SigmaCeiling is bounded as σ = SigmaCeiling·Δ (less
// noise: more privacy loss).
func (g DiscreteGaussian) step(at string) (Step, bool, bool, error) {
	switch {
	case math.IsNaN(g.Sigma) || g.Sigma < 0:
		return Step{}, false, false, &ParamError{Name: "sigma", Value: g.Sigma, Path: at, Want: ">= 0"}
	case !finite(g.Sensitivity) || g.Sensitivity < 0:
		return Step{}, false, false, &ParamError{Name: "sensitivity", Value: g.Sensitivity, Path: at, Want: "finite and >= 0"}
	case g.Dimension < 0:
		return Step{}, false, false, &ParamError{Name: "dimension", Value: float64(g.Dimension), Path: at, Want: ">= 1, or 0 (unknown)"}
	case math.IsInf(g.Sigma, 1) || g.Sensitivity == 0:
		return Step{}, true, false, nil
	case g.Sigma/g.Sensitivity < SigmaFloor:
		return Step{}, false, true, nil
	case g.Sigma/g.Sensitivity > SigmaCeiling:
		g.Sigma = SigmaCeiling * g.Sensitivity
	}
	return Step{Mechanism: MechOther, Leaf: g}, false, false, nil
}

func (DiscreteGaussian) pureEpsilon() (float64, bool) { return 0, false }

// step: a NaN or < 0 and a sensitivity < 0 are errors; sensitivity 0 is
// free; a = 0 (no distribution) or a = +Inf (no noise) is unbounded, as
// in dp_accounting, and so is a·Δ > 1/SigmaFloor; a·Δ < 1/SigmaCeiling is
// bounded as a·Δ = 1/SigmaCeiling (the boundary table of Laplace).
func (l DiscreteLaplace) step(at string) (Step, bool, bool, error) {
	switch {
	case math.IsNaN(l.NoiseParameter) || l.NoiseParameter < 0:
		return Step{}, false, false, &ParamError{Name: "noise_parameter", Value: l.NoiseParameter, Path: at, Want: "> 0"}
	case l.Sensitivity < 0:
		return Step{}, false, false, &ParamError{Name: "sensitivity", Value: float64(l.Sensitivity), Path: at, Want: ">= 0"}
	case l.Sensitivity == 0:
		return Step{}, true, false, nil
	}
	e := l.NoiseParameter * float64(l.Sensitivity)
	switch {
	case l.NoiseParameter == 0 || !(e <= 1/SigmaFloor):
		return Step{}, false, true, nil
	case e < 1/SigmaCeiling:
		l.NoiseParameter = math.Nextafter(1/SigmaCeiling/float64(l.Sensitivity), math.Inf(1))
	}
	return Step{Mechanism: MechOther, Leaf: l}, false, false, nil
}

// pureEpsilon: a·Δ, rounded up (the loss takes the values a·(|x−Δ| − |x|)).
func (l DiscreteLaplace) pureEpsilon() (float64, bool) {
	d := float64(l.Sensitivity)
	e := l.NoiseParameter * d
	if math.FMA(l.NoiseParameter, d, -e) > 0 { // a·d rounded down
		e = math.Nextafter(e, math.Inf(1))
	}
	return e, true
}
