package accounting

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"sync/atomic"
)

// Mechanism names what one step of a [Plan] releases.
type Mechanism uint8

// The mechanisms of a plan step.
const (
	// MechGaussian is [Gaussian]: noise multiplier Step.Sigma.
	MechGaussian Mechanism = iota + 1
	// MechEpsilonDelta is [EpsilonDelta]: (Step.Epsilon, Step.Delta)-DP.
	MechEpsilonDelta
	// MechZCDP is [ZCDP]: (Step.Xi, Step.Rho)-zCDP.
	MechZCDP
	// MechLaplace is [Laplace]: noise scale Step.Sigma.
	MechLaplace
	// MechOther is a mechanism known by its event alone (Step.Leaf): one
	// whose parameters have no field of their own in Step.
	MechOther
)

func (m Mechanism) String() string {
	switch m {
	case MechGaussian:
		return "Gaussian"
	case MechEpsilonDelta:
		return "EpsilonDelta"
	case MechZCDP:
		return "ZCDP"
	case MechLaplace:
		return "Laplace"
	case MechOther:
		return "Other"
	}
	return "Mechanism(" + strconv.Itoa(int(m)) + ")"
}

// Sampling names how the records a step sees are chosen.
type Sampling uint8

// The samplings of a plan step.
const (
	// SamplingNone: the step sees every record (Step.Rate = 1).
	SamplingNone Sampling = iota
	// SamplingPoisson: each record independently with probability
	// Step.Rate ([PoissonSampled]).
	SamplingPoisson
	// SamplingWithoutReplacement: Step.SampleSize of Step.DatasetSize
	// records, uniformly without replacement ([SampledWithoutReplacement]);
	// Step.Rate is their ratio rounded up.
	SamplingWithoutReplacement
	// SamplingShuffle: one repetition is one epoch of shuffled batches of
	// Step.SampleSize out of Step.DatasetSize records ([Shuffled]);
	// Step.Rate is their ratio rounded up.
	SamplingShuffle
	// SamplingTruncatedPoisson: each of Step.DatasetSize records with
	// probability Step.Rate, capped at Step.SampleSize records by keeping a
	// uniformly random subset ([TruncatedSubsampledGaussian]).
	SamplingTruncatedPoisson
	// SamplingRandomAllocation: one repetition is one epoch of
	// Step.DatasetSize steps in which every record is used in exactly
	// Step.SampleSize of them, chosen uniformly ([RandomAllocation]; the
	// two fields hold t and k); Step.Rate is k/t rounded up.
	SamplingRandomAllocation
)

func (s Sampling) String() string {
	switch s {
	case SamplingNone:
		return "none"
	case SamplingPoisson:
		return "poisson"
	case SamplingWithoutReplacement:
		return "fixed"
	case SamplingShuffle:
		return "shuffle"
	case SamplingTruncatedPoisson:
		return "truncated-poisson"
	case SamplingRandomAllocation:
		return "random-allocation"
	}
	return "Sampling(" + strconv.Itoa(int(s)) + ")"
}

// Adjacency is the neighbouring relation a step's guarantee refers to.
type Adjacency uint8

// The neighbouring relations.
const (
	// AddRemove: neighbouring datasets differ by adding or removing one
	// record. It is the zero value: the relation of a plan unless a method
	// is made for another.
	AddRemove Adjacency = iota
	// ReplaceOne: neighbouring datasets have the same size and differ in one
	// record. A noise multiplier is then relative to the sensitivity under
	// replacement (dp_accounting's convention): a sum of gradients clipped
	// to norm C has sensitivity 2C under ReplaceOne, C under AddRemove.
	ReplaceOne
)

func (a Adjacency) String() string {
	switch a {
	case AddRemove:
		return "add-remove"
	case ReplaceOne:
		return "replace-one"
	}
	return "Adjacency(" + strconv.Itoa(int(a)) + ")"
}

// ParseAdjacency returns the Adjacency named s ("add-remove" or
// "replace-one").
func ParseAdjacency(s string) (Adjacency, error) {
	switch s {
	case "add-remove":
		return AddRemove, nil
	case "replace-one":
		return ReplaceOne, nil
	}
	return 0, fmt.Errorf("adjacency %q: want add-remove or replace-one", s)
}

// The boundary table of [Normalize] for noise multipliers and rates.
const (
	// SigmaFloor is the smallest noise multiplier with a finite bound: a
	// Gaussian step with 0 ≤ σ < SigmaFloor is unbounded (its privacy loss
	// 1/(2σ²) exceeds 1e300 and every finite answer would overflow
	// somewhere in some accountant).
	SigmaFloor = 0x1p-498 // ≈ 1.2e-150
	// SigmaCeiling is the largest noise multiplier accountants see: a step
	// with σ > SigmaCeiling is bounded as if σ = SigmaCeiling. ε and δ do
	// not grow with σ, so this errs toward more privacy loss; at the
	// ceiling every ε is below 1e-148 already.
	SigmaCeiling = 0x1p+498 // ≈ 8.2e149
	// RateFloor is the smallest sampling rate accountants see: a rate
	// 0 < q < RateFloor is bounded as if q = RateFloor. ε and δ do not
	// fall as q grows, so this errs toward more privacy loss.
	RateFloor = 0x1p-498
	// MaxCount is the largest total number of steps a plan may hold, so
	// that counts stay exact in float64.
	MaxCount = 1 << 53
)

// Step is one kind of step of a [Plan]: Count adaptive repetitions of one
// mechanism run on one sampling of the records.
type Step struct {
	Mechanism Mechanism
	// Leaf is the mechanism's event as Normalize read it (σ clamped to the
	// boundary table): Gaussian{Sigma} for MechGaussian (tree aggregation's
	// σ/√D included), EpsilonDelta for MechEpsilonDelta (randomized response
	// and permute-and-flip as (ε, 0)), and for MechOther the only
	// description of the mechanism (a mixture of Gaussians in canonical
	// form: components with positive probability, by increasing shift).
	Leaf Event
	// Sigma is the noise multiplier of MechGaussian or MechLaplace, in
	// [SigmaFloor, SigmaCeiling].
	Sigma float64
	// Epsilon and Delta are the guarantee of MechEpsilonDelta: ε finite and
	// ≥ 0, δ ∈ [0, 1).
	Epsilon, Delta float64
	// Rho and Xi are the guarantee of MechZCDP, finite and ≥ 0, not both 0.
	Rho, Xi float64
	// Sampling and Rate say which records the step sees; Rate is 1 for
	// SamplingNone and in [RateFloor, 1] otherwise. DatasetSize and
	// SampleSize are the sizes of SamplingWithoutReplacement and
	// SamplingShuffle, and the data set size and cap of
	// SamplingTruncatedPoisson (0 otherwise), 1 ≤ SampleSize ≤ DatasetSize.
	Sampling                Sampling
	Rate                    float64
	DatasetSize, SampleSize int
	// Adjacency is the neighbouring relation of the plan the step is in.
	Adjacency Adjacency
	// Count is the number of repetitions, in [1, MaxCount].
	Count int
	// Path locates the step's first occurrence in the event passed to
	// Normalize (see [Normalize] for the format).
	Path string
}

// Event returns one repetition of s as an event.
func (s Step) Event() Event {
	e := s.Leaf
	switch s.Sampling {
	case SamplingPoisson:
		e = PoissonSampled{SamplingRate: s.Rate, Event: e}
	case SamplingWithoutReplacement:
		e = SampledWithoutReplacement{SourceDatasetSize: s.DatasetSize, SampleSize: s.SampleSize, Event: e}
	case SamplingShuffle:
		e = Shuffled{DatasetSize: s.DatasetSize, BatchSize: s.SampleSize, Event: e}
	case SamplingTruncatedPoisson:
		e = TruncatedSubsampledGaussian{DatasetSize: s.DatasetSize, SamplingRate: s.Rate, TruncatedBatchSize: s.SampleSize, NoiseMultiplier: s.Sigma}
	case SamplingRandomAllocation:
		e = RandomAllocation{NumSelected: s.SampleSize, NumSteps: s.DatasetSize, Event: e}
	}
	return e
}

// Classic reports whether s is one of the steps every accountant bounds: a
// Gaussian, (ε, δ) or zCDP step, unsampled under either relation or
// Poisson-sampled under add-remove. For an unsampled step the relation only
// fixes the sensitivity its noise multiplier is relative to, so its bound is
// the same under both. Methods refuse other steps with [Step.Unsupported]
// unless they bound them.
func (s Step) Classic() bool {
	return (s.Mechanism == MechGaussian || s.Mechanism == MechEpsilonDelta || s.Mechanism == MechZCDP) && s.ClassicSampling()
}

// ClassicSampling reports whether s is unsampled, or Poisson-sampled under
// add-remove: the samplings of [Step.Classic].
func (s Step) ClassicSampling() bool {
	return s.Sampling == SamplingNone || s.Sampling == SamplingPoisson && s.Adjacency == AddRemove
}

// PureEpsilon returns the ε of a pure-DP step and true, as its mechanism's
// event states it: an EpsilonDelta with δ = 0 (which randomized response
// and permute-and-flip become), an exponential mechanism, or a Laplace
// step, which is (1/b, 0)-DP (Dwork et al. 2006; 1/b rounded up).
// Sampling never makes a step less private, so a sampled step has the same
// pure ε (amplification is the method's business).
func (s Step) PureEpsilon() (float64, bool) {
	if m, ok := s.Leaf.(mechanismEvent); ok {
		return m.pureEpsilon()
	}
	return 0, false
}

// Bounded returns the plan every method bounds in place of p: each shuffled
// epoch under replace-one becomes one unsampled release of its mechanism
// (Count epochs, no amplification). The coupling that keeps the permutation
// and swaps the replaced record in place changes exactly one batch of the
// epoch (or none, when the record falls in the dropped remainder), so an
// epoch is a post-processing of one release with the relation's
// sensitivity. No amplification by shuffling is proven (Chua et al. 2024
// show the Poisson number can be far too small). Under add-remove a shuffled
// epoch has no such bound: adding a record moves every later record to
// another batch; Bounded returns an *UnsupportedEventError naming the step.
//
// Each epoch of k-out-of-t random allocation with k > 1 becomes the groups
// of [AllocationGroups], each a 1-out-of-g allocation (a group of one step
// an unsampled step): a bound on the epoch, not the epoch itself.
func (p Plan) Bounded() (Plan, error) {
	out := Plan{Unbounded: p.Unbounded, UnboundedPath: p.UnboundedPath, Adjacency: p.Adjacency}
	b := planBuilder{p: &out}
	for _, s := range p.Steps {
		if s.Sampling == SamplingShuffle {
			if s.Adjacency != ReplaceOne {
				return Plan{}, &UnsupportedEventError{Event: s.Event(), Path: s.Path,
					Reason: "shuffled fixed-size batches have no bound under add-remove adjacency (adding a record moves every later record to another batch); bound them under replace-one"}
			}
			s.Sampling, s.Rate, s.DatasetSize, s.SampleSize = SamplingNone, 1, 0, 0
		}
		if s.Sampling == SamplingRandomAllocation && s.SampleSize > 1 {
			for _, g := range AllocationGroups(s.SampleSize, s.DatasetSize) {
				if g.Groups > MaxCount/s.Count {
					return Plan{}, tooManySteps(0, s.Count, g.Groups, s.Path)
				}
				r := s
				r.SampleSize, r.DatasetSize, r.Count = 1, g.Steps, s.Count*g.Groups
				r.Rate = sizeRate(1, g.Steps)
				if g.Steps == 1 {
					// A group of one step uses the record in it: unsampled.
					r.Sampling, r.Rate, r.DatasetSize, r.SampleSize = SamplingNone, 1, 0, 0
				}
				b.add(r)
			}
			continue
		}
		b.add(s)
	}
	return out, nil
}

// AllocationGroup is Groups groups of Steps steps each.
type AllocationGroup struct{ Groups, Steps int }

// AllocationGroups returns the groups by which [Plan.Bounded] replaces an
// epoch of k-out-of-t random allocation (1 ≤ k ≤ t): k − r groups of
// ⌊t/k⌋ steps and r = t − k⌊t/k⌋ groups of ⌊t/k⌋ + 1, each a 1-out-of-its-
// steps allocation. The reduction (Feldman and Shenfeld 2025, arXiv
// 2502.08202, and dp_accounting's random-allocation PLD, which uses the
// same groups): cut a uniformly random permutation of the t steps into
// groups of these sizes and use the record in one uniformly chosen step of
// each group. By symmetry every k-subset of the steps is equally likely,
// so this is k-out-of-t allocation; revealing the partition (independent
// of the data) can only raise the privacy loss, and given the partition
// the epoch is the composition of one 1-out-of-g allocation per group.
func AllocationGroups(k, t int) []AllocationGroup {
	f := t / k
	r := t - k*f
	var out []AllocationGroup
	if k-r > 0 {
		out = append(out, AllocationGroup{Groups: k - r, Steps: f})
	}
	if r > 0 {
		out = append(out, AllocationGroup{Groups: r, Steps: f + 1})
	}
	return out
}

// CheckAdjacency returns an error for a relation other than [AddRemove]
// and [ReplaceOne].
func CheckAdjacency(adj Adjacency) error {
	if adj != AddRemove && adj != ReplaceOne {
		return fmt.Errorf("accounting: unknown adjacency %s", adj)
	}
	return nil
}

// Describe names the kind of step s is, for error messages:
// "Poisson-sampled Laplace under add-remove".
func (s Step) Describe() string {
	var b string
	switch s.Sampling {
	case SamplingPoisson:
		b = "Poisson-sampled "
	case SamplingWithoutReplacement:
		b = "fixed-size-sampled "
	case SamplingShuffle:
		b = "shuffled "
	case SamplingTruncatedPoisson:
		b = "truncated-Poisson-sampled "
	case SamplingRandomAllocation:
		b = "randomly allocated "
	}
	return b + eventName(s.Leaf) + " under " + s.Adjacency.String()
}

// Unsupported returns the error a method gives for a step it cannot bound.
func (s Step) Unsupported(m Kind, reason string) error {
	return &UnsupportedEventError{Event: s.Event(), Path: s.Path, Reason: fmt.Sprintf("%s: %s", m, reason)}
}

// key identifies steps that Normalize merges.
func (s Step) key() stepKey {
	return stepKey{s.Mechanism, leafKey(s.Leaf), s.Sigma, s.Epsilon, s.Delta, s.Rho, s.Xi, s.Sampling, s.Rate, s.DatasetSize, s.SampleSize, s.Adjacency}
}

type stepKey struct {
	m               Mechanism
	leaf            any // the leaf, or its leafKey when it holds slices
	sigma, eps, del float64
	rho, xi         float64
	sampling        Sampling
	rate            float64
	n, m2           int
	adjacency       Adjacency
}

// keyedEvent is a mechanism event that is not comparable (it holds
// slices): key returns a comparable value equal for equal events, by
// which the plan merges its steps.
type keyedEvent interface {
	key() any
}

// leafKey returns a comparable stand-in for a step's leaf: the leaf
// itself (mechanism events are structs of numbers), or its key.
func leafKey(e Event) any {
	if k, ok := e.(keyedEvent); ok {
		return k.key()
	}
	return e
}

// Plan is the flat form of an event: the distinct steps it composes, in order
// of first appearance, each with its total count. A plan with Unbounded set
// has no finite bound (ε = +Inf at every δ < 1, δ = 1 at every finite ε);
// its Steps are still listed.
type Plan struct {
	Steps []Step
	// Unbounded is set by NonPrivate, by a Gaussian with σ < SigmaFloor
	// (σ = 0 included), by an EpsilonDelta with δ = 1 and by the discrete
	// mechanisms' rows of the boundary table of Normalize, anywhere in the
	// event; UnboundedPath locates the first such event.
	Unbounded     bool
	UnboundedPath string
	// Adjacency is the neighbouring relation every step is bounded under;
	// a method made with [WithAdjacency] starts from [Config.Plan] and
	// Compose normalises under its relation.
	Adjacency Adjacency
}

// Empty reports whether the plan releases nothing (ε = 0 and δ = 0).
func (p Plan) Empty() bool { return len(p.Steps) == 0 && !p.Unbounded }

// Total returns the sum of the step counts.
func (p Plan) Total() int {
	n := 0
	for _, s := range p.Steps {
		n += s.Count
	}
	return n
}

// PureEpsilon returns Σ count·ε when every step is pure DP (see
// [Step.PureEpsilon]), and +Inf otherwise: by basic composition δ = 0
// is exact at every ε ≥ PureEpsilon, and no smaller ε has δ = 0 for certain.
// A Gaussian or zCDP step is never pure DP, so a method rounds an underflowed
// δ at ε < PureEpsilon up to the smallest float64, never down to 0.
func (p Plan) PureEpsilon() float64 {
	if p.Unbounded {
		return math.Inf(1)
	}
	var e float64
	for _, s := range p.Steps {
		pe, ok := s.PureEpsilon()
		if !ok {
			return math.Inf(1)
		}
		e += float64(s.Count) * pe
	}
	return e
}

// EpsilonAtZeroDelta returns ε(0), the boundary row δ = 0 of every method:
// 0 for an empty plan, PureEpsilon for a pure one (basic composition), +Inf
// otherwise (a Gaussian or zCDP step is never (ε, 0)-DP).
func (p Plan) EpsilonAtZeroDelta() float64 {
	if p.Empty() {
		return 0
	}
	return p.PureEpsilon()
}

// FloorDelta returns d, or the smallest positive float64 when d is 0 but ε
// is below PureEpsilon (see there): the safe rounding of an underflowed δ.
func (p Plan) FloorDelta(d, epsilon float64) float64 {
	if d == 0 && !math.IsInf(epsilon, 1) && (p.Unbounded || !p.Empty() && epsilon < p.PureEpsilon()) {
		return math.SmallestNonzeroFloat64
	}
	return d
}

// Merge returns the plan of p followed by o (adaptive composition), or a
// *ParamError if the total count would exceed MaxCount.
func (p Plan) Merge(o Plan) (Plan, error) {
	if o.Adjacency != p.Adjacency && !o.Empty() {
		return Plan{}, &UnsupportedEventError{Path: o.UnboundedPath, Reason: fmt.Sprintf("cannot compose a plan under %s with one under %s", o.Adjacency, p.Adjacency)}
	}
	out := Plan{Steps: append([]Step(nil), p.Steps...), Unbounded: p.Unbounded, UnboundedPath: p.UnboundedPath, Adjacency: p.Adjacency}
	if o.Unbounded && !out.Unbounded {
		out.Unbounded, out.UnboundedPath = true, o.UnboundedPath
	}
	total := p.Total()
	b := planBuilder{p: &out}
	for _, s := range o.Steps {
		if s.Count > MaxCount-total {
			return Plan{}, tooManySteps(total, s.Count, 1, s.Path)
		}
		total += s.Count
		b.add(s)
	}
	return out, nil
}

// Compose is the Compose of every method: it normalises count repetitions
// of e under p's relation, replaces them by the plan they are bounded by
// ([Plan.Bounded]), checks each step with supports, and returns the plan of p followed
// by them (merged) and the steps added. On error p is unchanged (it is a
// value; the method keeps its own copy until it assigns merged).
func (p Plan) Compose(e Event, count int, supports func(Step) error) (merged, added Plan, err error) {
	added, err = NormalizeUnder(p.Adjacency, e, count)
	if err == nil {
		added, err = added.Bounded()
	}
	if err != nil {
		return Plan{}, Plan{}, err
	}
	for _, s := range added.Steps {
		if err := supports(s); err != nil {
			return Plan{}, Plan{}, err
		}
	}
	merged, err = p.Merge(added)
	if err != nil {
		return Plan{}, Plan{}, err
	}
	return merged, added, nil
}

// planBuilder merges steps into a plan: by a scan while the plan is short,
// then through an index of its steps by key, built once it holds
// planIndexAt steps, so that a plan of n distinct steps costs O(n) rather
// than the O(n²) of a scan per step (100,000 phases in one event took
// minutes). Steps stay in order of first appearance; the index only finds
// them. Short plans, the common case, allocate no index.
type planBuilder struct {
	p   *Plan
	idx map[stepKey]int
}

// planIndexAt is the plan length from which planBuilder indexes the steps.
const planIndexAt = 16

// planProbes counts the step keys planBuilder compares or indexes (tests
// bound the work of normalising an event by it).
var planProbes atomic.Int64

// add merges s into the plan (the caller has checked the total).
func (b *planBuilder) add(s Step) {
	k := s.key()
	steps := b.p.Steps
	if b.idx == nil && len(steps) < planIndexAt {
		planProbes.Add(int64(len(steps)))
		for i := range steps {
			if steps[i].key() == k {
				steps[i].Count += s.Count
				return
			}
		}
		b.p.Steps = append(steps, s)
		return
	}
	if b.idx == nil {
		b.idx = make(map[stepKey]int, 2*len(steps))
		for i := range steps {
			// Keys are distinct in a plan built by merging; the first wins
			// all the same.
			if _, ok := b.idx[steps[i].key()]; !ok {
				b.idx[steps[i].key()] = i
			}
		}
		planProbes.Add(int64(len(steps)))
	}
	planProbes.Add(1)
	if i, ok := b.idx[k]; ok {
		steps[i].Count += s.Count
		return
	}
	b.idx[k] = len(steps)
	b.p.Steps = append(steps, s)
}

// Normalize validates e completely and returns the plan of count adaptive
// repetitions of it under add-remove adjacency: NormalizeUnder(AddRemove, e,
// count). It is the one place that says what an event means; every method
// composes plans.
//
// Boundary table (each row also holds under sampling and composition):
//
//	Gaussian or Laplace σ NaN or < 0, q NaN or outside [0, 1],
//	  sizes outside 0 ≤ m ≤ n, n ≥ 1,
//	  count < 1, ε, δ, ρ, ξ out of range       → *ParamError naming it
//	σ = +Inf, PoissonSampled q = 0, sample size 0,
//	  ZCDP ρ = ξ = 0, EpsilonDelta (0, 0), NoOp,
//	  ε = 0 of ExponentialMechanism or
//	  PermuteAndFlip, RandomizedResponse with
//	  p = 1 or k = 1                            → no step (free)
//	0 ≤ σ < SigmaFloor, NonPrivate,
//	  EpsilonDelta δ = 1, RandomizedResponse
//	  p = 0 with k ≥ 2                          → Unbounded
//	RandomizedResponse, PermuteAndFlip          → EpsilonDelta (ε, 0) step
//	SingleEpochTreeAggregation                  → Gaussian σ/√D step
//	sampled SingleEpochTreeAggregation,
//	  sampled MixtureOfGaussians, or one under
//	  ReplaceOne                                → *UnsupportedEventError
//	σ > SigmaCeiling                            → σ = SigmaCeiling
//	DiscreteGaussian σ/Δ below SigmaFloor,
//	  DiscreteLaplace a = 0, +Inf or aΔ >
//	  1/SigmaFloor                              → Unbounded
//	DiscreteGaussian σ/Δ > SigmaCeiling         → σ = SigmaCeiling·Δ
//	DiscreteLaplace aΔ < 1/SigmaCeiling         → aΔ = 1/SigmaCeiling
//	either with sensitivity 0                   → no step (free)
//	PoissonSampled 0 < q < RateFloor            → q = RateFloor
//	PoissonSampled{q1, PoissonSampled{q2, e}}  → rate q1·q2, rounded up
//	any sampling of Composed or SelfComposed,
//	  fixed-size or shuffled sampling of any
//	  sampled event                             → *UnsupportedEventError
//	SampledWithoutReplacement under AddRemove   → *UnsupportedEventError
//	RandomAllocation under ReplaceOne           → *UnsupportedEventError
//	RandomAllocation k = 0 → free; k = t        → t unsampled steps
//	total count > MaxCount                      → *ParamError "count"
//	nil event, unknown event type               → *UnsupportedEventError
//
// Paths name the chain of event types from the root to the leaf, with the
// index of a Composed element: "Composed[2]/PoissonSampled/Gaussian".
func Normalize(e Event, count int) (Plan, error) { return NormalizeUnder(AddRemove, e, count) }

// NormalizeUnder is [Normalize] under the neighbouring relation adj.
func NormalizeUnder(adj Adjacency, e Event, count int) (Plan, error) {
	if adj != AddRemove && adj != ReplaceOne {
		return Plan{}, &UnsupportedEventError{Event: e, Reason: fmt.Sprintf("unknown adjacency %s", adj)}
	}
	if count < 1 {
		return Plan{}, &ParamError{Name: "count", Value: float64(count), Want: ">= 1"}
	}
	p := Plan{Adjacency: adj}
	total := 0
	err := normalize(e, "", count, sampler{kind: SamplingNone, q: 1, adj: adj}, &planBuilder{p: &p}, &total)
	if err != nil {
		return Plan{}, err
	}
	return p, nil
}

// sampler is the sampling the events below a node see.
type sampler struct {
	kind Sampling
	q    float64
	n, m int
	adj  Adjacency
}

// join appends a segment to a path.
func join(path, seg string) string {
	if path == "" {
		return seg
	}
	return path + "/" + seg
}

// normalize adds e, repeated mult times and sampled by smp, to p.
func normalize(e Event, path string, mult int, smp sampler, b *planBuilder, total *int) error {
	p := b.p
	unbounded := func(at string) {
		if !p.Unbounded {
			p.Unbounded, p.UnboundedPath = true, at
		}
	}
	leaf := func(s Step) error {
		if s.Count = mult; mult > MaxCount-*total {
			return tooManySteps(*total, mult, 1, s.Path)
		}
		*total += mult
		s.Sampling, s.Rate, s.DatasetSize, s.SampleSize, s.Adjacency = smp.kind, smp.q, smp.n, smp.m, smp.adj
		b.add(s)
		return nil
	}
	// sampled refuses the inner events no sampling supports, and any
	// sampling below a fixed-size or shuffled one.
	sampled := func(inner Event, at string) error {
		switch inner.(type) {
		case Composed, SelfComposed:
			return &UnsupportedEventError{Event: inner, Path: join(at, eventName(inner)),
				Reason: "sampling of a composition (one sample shared by several steps) is not supported; sample each step"}
		case PoissonSampled, SampledWithoutReplacement, Shuffled, RandomAllocation:
			if smp.kind == SamplingWithoutReplacement || smp.kind == SamplingShuffle || smp.kind == SamplingRandomAllocation {
				return &UnsupportedEventError{Event: inner, Path: join(at, eventName(inner)),
					Reason: "nested sampling below a fixed-size, shuffled or allocated sample is not supported"}
			}
		}
		return nil
	}
	// sized validates the sizes (n, m) of a fixed-size or shuffled sample.
	sized := func(n, m int, nName, mName, at string) error {
		if n < 1 {
			return &ParamError{Name: nName, Value: float64(n), Path: at, Want: ">= 1"}
		}
		if m < 0 || m > n {
			return &ParamError{Name: mName, Value: float64(m), Path: at, Want: fmt.Sprintf("in [0, %d]", n)}
		}
		return nil
	}
	switch ev := e.(type) {
	case nil:
		return &UnsupportedEventError{Event: e, Path: path, Reason: "nil event"}
	case NoOp:
		return nil
	case NonPrivate:
		unbounded(join(path, "NonPrivate"))
		return nil
	case mechanismEvent:
		// A mechanism's event states what it means (see mechanismEvent).
		at := join(path, eventName(e))
		var s Step
		var free, unb bool
		var err error
		if c, ok := ev.(samplingMechanismEvent); ok {
			s, free, unb, err = c.stepUnder(at, smp.kind, smp.adj)
		} else {
			s, free, unb, err = ev.step(at)
		}
		switch {
		case err != nil:
			return err
		case unb:
			unbounded(at)
			return nil
		case free:
			return nil
		}
		s.Path = at
		return leaf(s)
	case PoissonSampled:
		at := join(path, "PoissonSampled")
		r := ev.SamplingRate
		if math.IsNaN(r) || r < 0 || r > 1 {
			return &ParamError{Name: "q", Value: r, Path: at, Want: "in [0, 1]"}
		}
		if err := sampled(ev.Event, at); err != nil {
			return err
		}
		if smp.kind == SamplingWithoutReplacement || smp.kind == SamplingShuffle || smp.kind == SamplingRandomAllocation {
			return &UnsupportedEventError{Event: e, Path: at, Reason: "nested sampling below a fixed-size, shuffled or allocated sample is not supported"}
		}
		if r == 0 {
			// Nothing is ever sampled; validate the inner event all the same.
			return validateOnly(ev.Event, at, smp.adj)
		}
		if r < RateFloor {
			r = RateFloor
		}
		nq := r
		if smp.kind == SamplingPoisson {
			// Poisson sampling of a Poisson sample is Poisson sampling with
			// the product rate; round the product up.
			nq = math.Max(smp.q*r, RateFloor)
			if nq < 1 {
				nq = math.Nextafter(nq, 1)
			}
		}
		if nq == 1 {
			return normalize(ev.Event, at, mult, sampler{kind: SamplingNone, q: 1, adj: smp.adj}, b, total)
		}
		return normalize(ev.Event, at, mult, sampler{kind: SamplingPoisson, q: nq, adj: smp.adj}, b, total)
	case SampledWithoutReplacement:
		at := join(path, "SampledWithoutReplacement")
		if err := sized(ev.SourceDatasetSize, ev.SampleSize, "source_dataset_size", "sample_size", at); err != nil {
			return err
		}
		if err := sampled(ev.Event, at); err != nil {
			return err
		}
		if smp.kind != SamplingNone {
			return &UnsupportedEventError{Event: e, Path: at, Reason: "fixed-size sampling of a sample is not supported"}
		}
		if smp.adj != ReplaceOne {
			return &UnsupportedEventError{Event: e, Path: at, Reason: "sampling without replacement is defined under replace-one adjacency, not " + smp.adj.String()}
		}
		if ev.SampleSize == 0 {
			return validateOnly(ev.Event, at, smp.adj)
		}
		return normalize(ev.Event, at, mult, sampler{kind: SamplingWithoutReplacement, q: sizeRate(ev.SampleSize, ev.SourceDatasetSize), n: ev.SourceDatasetSize, m: ev.SampleSize, adj: smp.adj}, b, total)
	case Shuffled:
		at := join(path, "Shuffled")
		if err := sized(ev.DatasetSize, ev.BatchSize, "dataset_size", "batch_size", at); err != nil {
			return err
		}
		if err := sampled(ev.Event, at); err != nil {
			return err
		}
		if smp.kind != SamplingNone {
			return &UnsupportedEventError{Event: e, Path: at, Reason: "shuffling a sample is not supported"}
		}
		if ev.BatchSize == 0 {
			return validateOnly(ev.Event, at, smp.adj)
		}
		return normalize(ev.Event, at, mult, sampler{kind: SamplingShuffle, q: sizeRate(ev.BatchSize, ev.DatasetSize), n: ev.DatasetSize, m: ev.BatchSize, adj: smp.adj}, b, total)
	case TruncatedSubsampledGaussian:
		at := join(path, "TruncatedSubsampledGaussian")
		if ev.DatasetSize < 1 {
			return &ParamError{Name: "dataset_size", Value: float64(ev.DatasetSize), Path: at, Want: ">= 1"}
		}
		r := ev.SamplingRate
		if math.IsNaN(r) || r < 0 || r > 1 {
			return &ParamError{Name: "sampling_probability", Value: r, Path: at, Want: "in [0, 1]"}
		}
		if ev.TruncatedBatchSize < 0 {
			return &ParamError{Name: "truncated_batch_size", Value: float64(ev.TruncatedBatchSize), Path: at, Want: ">= 0"}
		}
		if smp.kind != SamplingNone {
			return &UnsupportedEventError{Event: e, Path: at, Reason: "truncated Poisson sampling of a sample is not supported"}
		}
		inner := Gaussian{NoiseMultiplier: ev.NoiseMultiplier}
		switch {
		case r == 0 || ev.TruncatedBatchSize == 0:
			// Nothing is ever released; validate the noise all the same.
			return validateOnly(inner, at, smp.adj)
		case ev.TruncatedBatchSize >= ev.DatasetSize:
			// The cap is never reached: Poisson sampling.
			return normalize(PoissonSampled{SamplingRate: r, Event: inner}, at, mult, smp, b, total)
		}
		return normalize(inner, at, mult, sampler{kind: SamplingTruncatedPoisson, q: math.Max(r, RateFloor), n: ev.DatasetSize, m: ev.TruncatedBatchSize, adj: smp.adj}, b, total)
	case RandomAllocation:
		at := join(path, "RandomAllocation")
		if ev.NumSteps < 1 {
			return &ParamError{Name: "num_steps", Value: float64(ev.NumSteps), Path: at, Want: ">= 1"}
		}
		if ev.NumSelected < 0 || ev.NumSelected > ev.NumSteps {
			return &ParamError{Name: "num_selected", Value: float64(ev.NumSelected), Path: at, Want: fmt.Sprintf("in [0, %d] (num_steps)", ev.NumSteps)}
		}
		if err := sampled(ev.Event, at); err != nil {
			return err
		}
		if smp.kind != SamplingNone {
			return &UnsupportedEventError{Event: e, Path: at, Reason: "random allocation of a sample is not supported"}
		}
		if smp.adj != AddRemove {
			return &UnsupportedEventError{Event: e, Path: at, Reason: "random allocation is accounted under add-remove adjacency (adding or removing a record moves no other record), not " + smp.adj.String()}
		}
		if ev.NumSelected == 0 {
			return validateOnly(ev.Event, at, smp.adj)
		}
		if ev.NumSelected == ev.NumSteps {
			// Every step uses every record: NumSteps unsampled steps.
			if mult > MaxCount/ev.NumSteps {
				return tooManySteps(0, mult, ev.NumSteps, at)
			}
			return normalize(ev.Event, at, mult*ev.NumSteps, smp, b, total)
		}
		return normalize(ev.Event, at, mult, sampler{kind: SamplingRandomAllocation, q: sizeRate(ev.NumSelected, ev.NumSteps), n: ev.NumSteps, m: ev.NumSelected, adj: smp.adj}, b, total)
	case SelfComposed:
		at := join(path, "SelfComposed")
		if ev.Count < 1 {
			return &ParamError{Name: "count", Value: float64(ev.Count), Path: at, Want: ">= 1"}
		}
		if mult > MaxCount/ev.Count {
			return tooManySteps(0, mult, ev.Count, at)
		}
		return normalize(ev.Event, at, mult*ev.Count, smp, b, total)
	case Composed:
		for i, sub := range ev.Events {
			if err := normalize(sub, join(path, fmt.Sprintf("Composed[%d]", i)), mult, smp, b, total); err != nil {
				return err
			}
		}
		return nil
	}
	return &UnsupportedEventError{Event: e, Path: join(path, eventName(e)), Reason: "unknown event type"}
}

// tooManySteps is the error for a plan past MaxCount steps: before steps
// already counted, then mult·count more at path. The total is printed
// exactly (2^53 + 1 is not a float64).
func tooManySteps(before, mult, count int, path string) error {
	t := new(big.Int).Mul(big.NewInt(int64(mult)), big.NewInt(int64(count)))
	t.Add(t, big.NewInt(int64(before)))
	v, _ := new(big.Float).SetInt(t).Float64()
	return &ParamError{Name: "count", Value: v, Exact: t.String(), Path: path,
		Want: fmt.Sprintf("a total of at most %d (2^53) steps", MaxCount)}
}

// validateOnly checks an event that is never run (sampled with rate 0).
func validateOnly(e Event, at string, adj Adjacency) error {
	var scratch Plan
	n := 0
	return normalize(e, at, 1, sampler{kind: SamplingNone, q: 1, adj: adj}, &planBuilder{p: &scratch}, &n)
}

// sizeRate returns m/n rounded up (1 ≤ m ≤ n).
func sizeRate(m, n int) float64 {
	r := float64(m) / float64(n)
	if m < n && r < 1 {
		// m and n may not be exact in float64 and the quotient rounds to
		// nearest: one step up is never below the true ratio.
		r = math.Min(math.Nextafter(r, 2), 1)
	}
	return math.Max(r, RateFloor)
}

// eventName is the type name of e without the package qualifier.
func eventName(e Event) string {
	s := fmt.Sprintf("%T", e)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return s[i+1:]
		}
	}
	return s
}
