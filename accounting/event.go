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

// NoOp is a mechanism that does not touch the data; it costs nothing.
type NoOp struct{}

// NonPrivate is a mechanism with no privacy guarantee; composing it makes
// ε = +Inf for every δ < 1.
type NonPrivate struct{}

func (Gaussian) isEvent()                  {}
func (Laplace) isEvent()                   {}
func (SampledWithoutReplacement) isEvent() {}
func (Shuffled) isEvent()                  {}
func (RandomAllocation) isEvent()          {}
func (PoissonSampled) isEvent()            {}
func (SelfComposed) isEvent()              {}
func (Composed) isEvent()                  {}
func (EpsilonDelta) isEvent()              {}
func (ZCDP) isEvent()                      {}
func (NoOp) isEvent()                      {}
func (NonPrivate) isEvent()                {}

// SubsampledGaussian returns the event of Abadi et al. (2016) Algorithm 1
// run for steps steps: SelfComposed{PoissonSampled{q, Gaussian{σ}}, steps}.
func SubsampledGaussian(noiseMultiplier, samplingRate float64, steps int) Event {
	return SelfComposed{
		Event: PoissonSampled{SamplingRate: samplingRate, Event: Gaussian{NoiseMultiplier: noiseMultiplier}},
		Count: steps,
	}
}
