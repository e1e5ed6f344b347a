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

// NoOp is a mechanism that does not touch the data; it costs nothing.
type NoOp struct{}

// NonPrivate is a mechanism with no privacy guarantee; composing it makes
// ε = +Inf for every δ < 1.
type NonPrivate struct{}

func (Gaussian) isEvent()       {}
func (PoissonSampled) isEvent() {}
func (SelfComposed) isEvent()   {}
func (Composed) isEvent()       {}
func (EpsilonDelta) isEvent()   {}
func (ZCDP) isEvent()           {}
func (NoOp) isEvent()           {}
func (NonPrivate) isEvent()     {}

// SubsampledGaussian returns the event of Abadi et al. (2016) Algorithm 1
// run for steps steps: SelfComposed{PoissonSampled{q, Gaussian{σ}}, steps}.
func SubsampledGaussian(noiseMultiplier, samplingRate float64, steps int) Event {
	return SelfComposed{
		Event: PoissonSampled{SamplingRate: samplingRate, Event: Gaussian{NoiseMultiplier: noiseMultiplier}},
		Count: steps,
	}
}
