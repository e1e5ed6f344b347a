package accounting

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
type MixtureOfGaussians struct {
	StandardDeviation float64   `json:"standard_deviation"`
	Sensitivities     []float64 `json:"sensitivities"`
	SamplingProbs     []float64 `json:"sampling_probs"`
}

// NoOp is a mechanism that does not touch the data; it costs nothing.
type NoOp struct{}

// NonPrivate is a mechanism with no privacy guarantee; composing it makes
// ε = +Inf for every δ < 1.
type NonPrivate struct{}

func (Gaussian) isEvent()                   {}
func (Laplace) isEvent()                    {}
func (SampledWithoutReplacement) isEvent()  {}
func (Shuffled) isEvent()                   {}
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
