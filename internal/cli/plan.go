package cli

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate"
)

// unknownReps marks the repetitions of the phase whose length is solved for.
const unknownReps = -1

// Phase is one phase of a training plan: Steps (or Epochs) steps of the
// Gaussian mechanism with noise multiplier Sigma on batches drawn at rate Q
// (or Batch of N records). Sigma is DP-SGD's noise multiplier: the noise
// standard deviation over the clipping norm C (see [Plan.Event] for how it
// becomes an event's noise multiplier). A field is 0 when not given;
// Unknown names the field given as "?" ("sigma", "steps" or "epochs"),
// which the command solves for.
type Phase struct {
	Sigma   float64
	Q       float64
	Batch   int
	N       int
	Steps   int
	Epochs  float64
	Unknown string
}

// The largest --schedule ParseSchedule reads: a plan with a phase per
// epoch of a long training fits many times over.
const (
	MaxScheduleBytes  = 64 << 10
	MaxSchedulePhases = 1000
)

var phaseKeys = []string{"sigma", "q", "batch", "n", "steps", "epochs"}

// ParseSchedule parses a --schedule value: phases separated by ";", each a
// comma-separated list of key=value with the keys sigma, q, batch, n, steps
// and epochs, e.g. "sigma=1,q=0.01,steps=5000; sigma=2,q=0.02,steps=3000".
// sigma, steps and epochs may be "?" (Phase.Unknown). It checks the syntax only
// (unknown and duplicate keys, malformed numbers, q with batch, steps with
// epochs); [NewPlan] checks the values. Errors are one line naming the
// phase (from 1) and the key.
func ParseSchedule(s string) ([]Phase, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--schedule is empty: give phases such as \"sigma=1,q=0.01,steps=5000; sigma=2,q=0.02,steps=3000\"")
	}
	if len(s) > MaxScheduleBytes {
		return nil, fmt.Errorf("--schedule is %d bytes; it takes at most %d (64 KiB)", len(s), MaxScheduleBytes)
	}
	parts := strings.Split(s, ";")
	if n := len(parts); n > MaxSchedulePhases+1 || n == MaxSchedulePhases+1 && strings.TrimSpace(parts[n-1]) != "" {
		return nil, fmt.Errorf("--schedule has %d phases; it takes at most %d", n, MaxSchedulePhases)
	}
	var out []Phase
	for i, part := range parts {
		at := fmt.Sprintf("--schedule phase %d", i+1)
		if strings.TrimSpace(part) == "" {
			if i == len(parts)-1 && i > 0 {
				continue // a trailing ";"
			}
			return nil, fmt.Errorf("%s is empty", at)
		}
		var p Phase
		seen := map[string]bool{}
		for _, kv := range strings.Split(part, ",") {
			k, v, ok := strings.Cut(kv, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" {
				return nil, fmt.Errorf("%s: %q is not key=value (keys: %s)", at, strings.TrimSpace(kv), strings.Join(phaseKeys, ", "))
			}
			known := false
			for _, pk := range phaseKeys {
				known = known || pk == k
			}
			if !known {
				return nil, fmt.Errorf("%s: unknown key %q (keys: %s)", at, k, strings.Join(phaseKeys, ", "))
			}
			if seen[k] {
				return nil, fmt.Errorf("%s: %s given twice", at, k)
			}
			seen[k] = true
			if v == "?" {
				switch k {
				case "sigma", "steps", "epochs":
					if p.Unknown != "" {
						return nil, fmt.Errorf("%s: %s=? and %s=?: a phase has at most one unknown", at, p.Unknown, k)
					}
					p.Unknown = k
				default:
					return nil, fmt.Errorf("%s: %s=? is not allowed; only sigma, steps or epochs can be the unknown", at, k)
				}
				continue
			}
			if !plainNumber(v) {
				if x, err := strconv.ParseFloat(v, 64); err == nil && !accounting.Finite(x) {
					return nil, fmt.Errorf("%s: %s: not a finite number; want a plain decimal number such as 0.5 or 2e-3", at, k)
				}
				return nil, fmt.Errorf("%s: %s: invalid value %q; want a plain decimal number such as 0.5 or 2e-3 (no underscores, hex, inf or nan)", at, k, v)
			}
			var err error
			n := 0
			switch k {
			case "sigma":
				p.Sigma, err = parsePhaseFloat(v)
			case "q":
				p.Q, err = parsePhaseFloat(v)
			case "epochs":
				p.Epochs, err = parsePhaseFloat(v)
			case "batch":
				p.Batch, err = ParseCount(v)
				n = p.Batch
			case "n":
				p.N, err = ParseCount(v)
				n = p.N
			case "steps":
				p.Steps, err = ParseCount(v)
				n = p.Steps
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %s: invalid value %q; %v", at, k, v, err)
			}
			if (k == "batch" || k == "n" || k == "steps") && n < 1 {
				return nil, fmt.Errorf("%s: %s: invalid value %q, want a whole number >= 1", at, k, v)
			}
		}
		if seen["q"] && seen["batch"] {
			return nil, fmt.Errorf("%s: give q or batch (with n), not both", at)
		}
		if seen["q"] && seen["n"] {
			return nil, fmt.Errorf("%s: q and n conflict: n is the dataset size of batch (q = batch/n); give q, or batch and n", at)
		}
		if seen["steps"] && seen["epochs"] {
			return nil, fmt.Errorf("%s: give steps or epochs, not both", at)
		}
		if !seen["steps"] && !seen["epochs"] {
			return nil, fmt.Errorf("%s: missing steps or epochs", at)
		}
		if !seen["sigma"] {
			return nil, fmt.Errorf("%s: missing sigma", at)
		}
		out = append(out, p)
	}
	return out, nil
}

func parsePhaseFloat(v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, errors.New("out of the float64 range")
	}
	return x, nil
}

// Samplings are the values of --sampling.
var Samplings = []string{"poisson", "fixed", "shuffle", "truncated-poisson", "random-allocation", "balls-in-bins", "cyclic"}

// Plan is a training run of one or more phases, all with one way of
// drawing batches and one neighbouring relation.
type Plan struct {
	Phases    []Phase
	Sampling  string // one of Samplings
	Adjacency accounting.Adjacency
	// MaxBatch is the cap of truncated-poisson lots (see WithMaxBatch).
	MaxBatch int
	// K is the k of random allocation (each record in k of an epoch's t
	// steps; 1 for balls-in-bins), Bands the b of cyclic Poisson sampling.
	K, Bands int
	// ExamplesPerUser is the K of --examples-per-user (0 or 1: example
	// level), and users[i] phase i's one-step user mixture when K ≥ 2
	// (see WithExamplesPerUser).
	ExamplesPerUser int
	users           []accounting.MixtureOfGaussians
	// GroupSize is the G of --group-size (0 or 1: one record or user);
	// under Poisson sampling and add-remove users then holds the mixtures
	// of G·ExamplesPerUser examples, and single is the plan for one
	// record or user (see [Plan.bound]). Otherwise groupLemma is set: the
	// events are a single record's, and each accountant's answer is
	// turned into the group's by [accounting.GroupEvent] or the group
	// privacy lemma ([accounting.Group]).
	GroupSize  int
	groupLemma bool
	single     *Plan
	// steps[i] is phase i's number of steps (shuffle: epochs·⌊N/B⌋), and
	// reps[i] its number of repetitions of the phase's event (shuffle:
	// epochs, else steps); unknownReps for the phase whose length is
	// solved for.
	steps, reps []int
}

// NewPlan validates phases under sampling and adjacency and resolves their
// lengths: q = batch/n when batch is given (n from the phase, else n);
// steps = ⌈epochs/q⌉ for Poisson and fixed-size batches; for shuffled
// batches a repetition is an epoch of ⌊n/batch⌋ steps, so epochs must be a
// whole number and steps a multiple of ⌊n/batch⌋. Fixed-size batches need
// replace-one adjacency (sampling without replacement is defined for
// datasets of one public size). unknown says which field may be unknown
// ("sigma", "length" for steps or epochs, or ""): exactly one phase must
// have it.
func NewPlan(phases []Phase, sampling string, adjacency accounting.Adjacency, n int, unknown string) (Plan, error) {
	return newPlanWith(phases, sampling, adjacency, n, unknown, 1, 1)
}

// newPlanWith is [NewPlan] with the k of random allocation and the bands
// of cyclic Poisson sampling.
//
// Random allocation (random-allocation, or balls-in-bins for k = 1): an
// epoch has t steps, t = ⌈k·n/batch⌉ when batch is given (each step then
// sees k·n/t ≤ batch records on average), else t = steps and the phase is
// one epoch; epochs must be whole, steps a multiple of t. It is defined
// under add-remove.
//
// Cyclic Poisson (cyclic, b bands): the records are split into b groups
// and step i Poisson-samples group i mod b at rate q. A record is in the
// steps of its group only, ⌈T/b⌉ of the T steps at most, so the phase is
// accounted as ⌈T/b⌉ Poisson-sampled steps at rate q (see docs/sampling.md
// for the proof); epochs E count a record's expected passes, T = b·⌈E/q⌉.
func newPlanWith(phases []Phase, sampling string, adjacency accounting.Adjacency, n int, unknown string, k, bands int) (Plan, error) {
	p := Plan{Phases: append([]Phase(nil), phases...), Sampling: sampling, Adjacency: adjacency, K: k, Bands: bands}
	if sampling == "balls-in-bins" {
		p.K = 1
	}
	switch sampling {
	case "random-allocation", "balls-in-bins", "cyclic":
		if adjacency != accounting.AddRemove {
			return Plan{}, fmt.Errorf("--sampling %s is accounted under --adjacency add-remove: adding or removing a record moves no other record", sampling)
		}
		if p.K < 1 {
			return Plan{}, fmt.Errorf("invalid --k: %d, want an integer >= 1 (the steps of an epoch each record is used in)", p.K)
		}
		if p.Bands < 1 {
			return Plan{}, fmt.Errorf("invalid --bands: %d, want an integer >= 1", p.Bands)
		}
		return p.allocated(unknown)
	case "poisson":
	case "fixed":
		if adjacency != accounting.ReplaceOne {
			return Plan{}, fmt.Errorf("--sampling fixed needs --adjacency replace-one: a fixed-size batch is defined for a dataset of known size, where neighbours replace a record rather than add or remove one")
		}
	case "shuffle":
		if adjacency != accounting.ReplaceOne {
			return Plan{}, fmt.Errorf("--sampling shuffle needs --adjacency replace-one: adding a record to a shuffled epoch moves every later record to another batch, so only replace-one has a bound")
		}
	case "truncated-poisson":
	default:
		return Plan{}, fmt.Errorf("invalid --sampling: %q, want %s", sampling, strings.Join(Samplings, ", "))
	}
	poissonLike := sampling == "poisson" || sampling == "truncated-poisson" // q may be given
	unknowns := 0
	for i := range p.Phases {
		ph := &p.Phases[i]
		at := "phase " + strconv.Itoa(i+1) + ": "
		if ph.N == 0 {
			ph.N = n
		}
		if ph.Unknown == "sigma" {
			if unknown != "sigma" {
				return Plan{}, fmt.Errorf("%ssigma=? is only for dpcalc sigma", at)
			}
			unknowns++
		} else if err := accounting.CheckNoiseMultiplier(ph.Sigma); err != nil {
			return Plan{}, fmt.Errorf("%sinvalid sigma: %s, want finite and > 0", at, accounting.FormatValue(ph.Sigma))
		}
		if ph.Unknown == "steps" || ph.Unknown == "epochs" {
			if unknown != "length" {
				return Plan{}, fmt.Errorf("%ssteps=? and epochs=? are only for dpcalc epochs", at)
			}
			unknowns++
		}
		switch {
		case ph.Batch != 0 || (!poissonLike && ph.Q == 0):
			if ph.Batch < 1 {
				return Plan{}, fmt.Errorf("%s--sampling %s needs the batch size (batch, with n): invalid batch %d, want >= 1", at, sampling, ph.Batch)
			}
			if ph.N < ph.Batch {
				return Plan{}, fmt.Errorf("%sinvalid n: %d, want the dataset size, >= batch = %d (give n in the phase or --n)", at, ph.N, ph.Batch)
			}
			ph.Q = float64(ph.Batch) / float64(ph.N)
		case !poissonLike:
			return Plan{}, fmt.Errorf("%s--sampling %s needs batch and n, not q (q = batch/n)", at, sampling)
		default:
			if err := accounting.CheckSamplingRate(ph.Q); err != nil {
				return Plan{}, fmt.Errorf("%sinvalid q: %s, want in (0, 1]", at, accounting.FormatValue(ph.Q))
			}
		}
		if sampling == "truncated-poisson" && ph.N < 1 {
			return Plan{}, fmt.Errorf("%s--sampling truncated-poisson needs the dataset size (n in the phase or --n)", at)
		}
		steps, reps := ph.Steps, ph.Steps
		switch {
		case ph.Unknown == "steps" || ph.Unknown == "epochs":
			steps, reps = unknownReps, unknownReps
		case sampling == "shuffle":
			per := ph.N / ph.Batch
			if ph.Steps != 0 {
				if ph.Steps < 1 || ph.Steps%per != 0 {
					return Plan{}, fmt.Errorf("%sinvalid steps: %d, want a positive multiple of n/batch = %d (--sampling shuffle counts whole epochs)", at, ph.Steps, per)
				}
				reps = ph.Steps / per
			} else {
				if !(ph.Epochs >= 1) || ph.Epochs != math.Trunc(ph.Epochs) || ph.Epochs > accounting.MaxCount {
					return Plan{}, fmt.Errorf("%sinvalid epochs: %s, want a whole number >= 1 (--sampling shuffle counts whole epochs)", at, accounting.FormatValue(ph.Epochs))
				}
				reps = int(ph.Epochs)
				if reps > accounting.MaxCount/per {
					return Plan{}, fmt.Errorf("%sinvalid epochs: %s, want at most 2^53 steps", at, accounting.FormatValue(ph.Epochs))
				}
			}
			steps = reps * per
		case ph.Steps != 0:
			if ph.Steps < 1 {
				return Plan{}, fmt.Errorf("%sinvalid steps: %d, want an integer >= 1", at, ph.Steps)
			}
		default:
			t, err := calibrate.StepsForEpochs(ph.Epochs, ph.Q)
			if err != nil {
				return Plan{}, fmt.Errorf("%sinvalid epochs: %s, want finite and > 0 (at most 2^53 steps)", at, accounting.FormatValue(ph.Epochs))
			}
			steps, reps = t, t
		}
		p.steps = append(p.steps, steps)
		p.reps = append(p.reps, reps)
	}
	if unknown != "" && unknowns != 1 {
		what := "sigma=?"
		if unknown == "length" {
			what = "steps=? or epochs=?"
		}
		return Plan{}, fmt.Errorf("--schedule needs exactly one phase with %s (it has %d)", what, unknowns)
	}
	// The event's own checks (the total of all phases at most 2^53 steps),
	// with 1 for the unknown.
	if _, err := accounting.NormalizeUnder(adjacency, p.Event(1), 1); err != nil {
		return Plan{}, fmt.Errorf("total of the phases: %s", strings.TrimPrefix(err.Error(), "accounting: "))
	}
	return p, nil
}

// Event returns the plan's event with x for the unknown (σ for sigma=?, a
// number of repetitions for steps=?/epochs=?; ignored when nothing is
// unknown). Under add-remove a phase's Gaussian has noise multiplier σ;
// under replace-one it has σ/2, because the sum of gradients clipped to
// norm C has L2 sensitivity 2C when one record is replaced, and an event's
// noise multiplier is relative to the sensitivity under the plan's
// relation (dp_accounting's convention; [accounting.ReplaceOne]).
func (p Plan) Event(x float64) accounting.Event {
	evs := make([]accounting.Event, len(p.Phases))
	for i, ph := range p.Phases {
		sigma, reps := ph.Sigma, p.reps[i]
		if ph.Unknown == "sigma" {
			sigma = x
		}
		if reps == unknownReps {
			reps = int(x)
		}
		if p.Adjacency == accounting.ReplaceOne {
			sigma /= 2
		}
		g := accounting.Gaussian{NoiseMultiplier: sigma}
		switch p.Sampling {
		case "fixed":
			evs[i] = accounting.SelfComposed{Event: accounting.SampledWithoutReplacement{SourceDatasetSize: ph.N, SampleSize: ph.Batch, Event: g}, Count: reps}
		case "shuffle":
			evs[i] = accounting.SelfComposed{Event: accounting.Shuffled{DatasetSize: ph.N, BatchSize: ph.Batch, Event: g}, Count: reps}
		case "truncated-poisson":
			evs[i] = accounting.SelfComposed{Event: accounting.TruncatedSubsampledGaussian{DatasetSize: ph.N, SamplingRate: ph.Q, TruncatedBatchSize: p.MaxBatch, NoiseMultiplier: sigma}, Count: reps}
		case "random-allocation", "balls-in-bins":
			evs[i] = accounting.SelfComposed{Event: accounting.RandomAllocation{NumSelected: p.K, NumSteps: p.steps[i] / p.reps[i], Event: g}, Count: reps}
		default:
			if p.users != nil {
				m := p.users[i]
				m.StandardDeviation = sigma
				evs[i] = accounting.SelfComposed{Event: m, Count: reps}
				break
			}
			evs[i] = accounting.SubsampledGaussian(sigma, ph.Q, reps)
		}
	}
	if len(evs) == 1 {
		return evs[0]
	}
	return accounting.Composed{Events: evs}
}

// WithMaxBatch returns the plan with truncated-poisson lots capped at b
// records, b ≥ 1 (an error otherwise, or for another sampling).
func (p Plan) WithMaxBatch(b int) (Plan, error) {
	if p.Sampling != "truncated-poisson" {
		return Plan{}, fmt.Errorf("--max-batch is for --sampling truncated-poisson, not %s", p.Sampling)
	}
	if b < 1 {
		return Plan{}, fmt.Errorf("invalid --max-batch: %d, want an integer >= 1", b)
	}
	p.MaxBatch = b
	return p, nil
}

// WithExamplesPerUser returns the plan accounted at user level: each user
// contributes at most k examples, and neighbouring datasets add or remove
// one user with all of them. Each step is then the mixture of Gaussians
// of [accounting.UserLevel] (shifts 0..k, Binomial(k, q) weights), which
// is proven for Poisson sampling under add-remove only: other samplings
// and replace-one are refused (a fixed-size or shuffled lot does not
// sample a user's examples independently; replacing a user changes k
// examples at once, for which dpcalc has no bound). k = 1 is the plan
// itself.
func (p Plan) WithExamplesPerUser(k int) (Plan, error) {
	return p.withUsers(k, 1)
}

// withUsers is [Plan.WithExamplesPerUser] for groups of g users of at
// most k examples each. Under Poisson sampling and add-remove group
// privacy is exact, a group of g records (or users) being one user of g·k
// examples, each example sampled independently. Under the other
// samplings, or replace-one (g records replaced), the plan keeps a single
// record's events and is answered by the group privacy lemma
// ([Plan.bound]); users of k ≥ 2 examples are refused there as
// WithExamplesPerUser refuses them.
func (p Plan) withUsers(k, g int) (Plan, error) {
	if k < 1 || k > accounting.MaxExamplesPerUser {
		return Plan{}, fmt.Errorf("invalid --examples-per-user: %d, want an integer in [1, 2^53]", k)
	}
	if g < 1 || g > accounting.MaxExamplesPerUser/k {
		return Plan{}, fmt.Errorf("invalid --group-size: %d, want an integer in [1, %d] (group size times examples per user at most 2^53)", g, accounting.MaxExamplesPerUser/k)
	}
	if g > 1 {
		one, err := p.withUsers(k, 1)
		if err != nil {
			return Plan{}, err
		}
		if p.Sampling != "poisson" || p.Adjacency != accounting.AddRemove {
			one.GroupSize, one.groupLemma = g, true
			return one, nil
		}
		p.single = &one
	}
	p.GroupSize = g
	if k*g == 1 {
		return p, nil
	}
	k *= g
	if p.Sampling != "poisson" {
		return Plan{}, fmt.Errorf("--examples-per-user is accounted for --sampling poisson only, not %s: user-level privacy needs each of a user's examples sampled independently, and dpcalc has no proven bound for %s", p.Sampling, p.Sampling)
	}
	if p.Adjacency != accounting.AddRemove {
		return Plan{}, fmt.Errorf("--examples-per-user is accounted under --adjacency add-remove only (a user added or removed with all their examples): replacing a user changes up to K examples at once, for which dpcalc has no bound")
	}
	users := make([]accounting.MixtureOfGaussians, len(p.Phases))
	for i, ph := range p.Phases {
		m, err := accounting.UserMixture(1, ph.Q, k)
		if err != nil {
			var pe *accounting.ParamError
			if errors.As(err, &pe) && pe.Name == "examples_per_user" && g > 1 {
				return Plan{}, fmt.Errorf("invalid --group-size: %d (%d records in all: group size times examples per user), want %s", g, k, pe.Want)
			}
			if errors.As(err, &pe) && pe.Name == "examples_per_user" {
				return Plan{}, fmt.Errorf("invalid --examples-per-user: %d, want %s", k, pe.Want)
			}
			return Plan{}, err
		}
		users[i] = m
	}
	p.ExamplesPerUser, p.users = k/g, users
	return p, nil
}

// unknownPhase returns the index of the phase with an unknown, or -1.
func (p Plan) unknownPhase() int {
	for i, ph := range p.Phases {
		if ph.Unknown != "" {
			return i
		}
	}
	return -1
}

// stepsPerRep is the number of steps one repetition of phase i's event is.
func (p Plan) stepsPerRep(i int) int {
	switch p.Sampling {
	case "shuffle":
		return p.Phases[i].N / p.Phases[i].Batch
	case "random-allocation", "balls-in-bins":
		return p.steps[i] / p.reps[i]
	}
	return 1
}

// allocated resolves the lengths of a random-allocation or cyclic plan
// (see newPlanWith).
func (p Plan) allocated(unknown string) (Plan, error) {
	if unknown == "length" {
		return Plan{}, fmt.Errorf("--sampling %s: dpcalc epochs does not support it yet; use dpcalc eps, delta or sigma", p.Sampling)
	}
	unknowns := 0
	for i := range p.Phases {
		ph := &p.Phases[i]
		at := ""
		if len(p.Phases) > 1 {
			at = "phase " + strconv.Itoa(i+1) + ": "
		}
		if ph.Unknown == "steps" || ph.Unknown == "epochs" {
			return Plan{}, fmt.Errorf("%ssteps=? and epochs=? are only for dpcalc epochs", at)
		}
		if ph.Unknown == "sigma" {
			if unknown != "sigma" {
				return Plan{}, fmt.Errorf("%ssigma=? is only for dpcalc sigma", at)
			}
			unknowns++
		} else if err := accounting.CheckNoiseMultiplier(ph.Sigma); err != nil {
			return Plan{}, fmt.Errorf("%sinvalid sigma: %s, want finite and > 0", at, accounting.FormatValue(ph.Sigma))
		}
		var steps, reps int
		if p.Sampling == "cyclic" {
			if ph.Batch != 0 {
				if ph.N < ph.Batch {
					return Plan{}, fmt.Errorf("%sinvalid n: %d, want the dataset size, >= batch = %d", at, ph.N, ph.Batch)
				}
				// A group has n/b records; q is the batch over the group.
				ph.Q = math.Min(float64(ph.Batch)*float64(p.Bands)/float64(ph.N), 1)
			}
			if err := accounting.CheckSamplingRate(ph.Q); err != nil {
				return Plan{}, fmt.Errorf("%sinvalid q: %s, want in (0, 1] (the rate within a band)", at, accounting.FormatValue(ph.Q))
			}
			if ph.Steps != 0 {
				steps = ph.Steps
			} else {
				t, err := calibrate.StepsForEpochs(ph.Epochs, ph.Q)
				if err != nil || t > accounting.MaxCount/p.Bands {
					return Plan{}, fmt.Errorf("%sinvalid epochs: %s, want finite and > 0 (at most 2^53 steps)", at, accounting.FormatValue(ph.Epochs))
				}
				steps = t * p.Bands
			}
			reps = (steps + p.Bands - 1) / p.Bands
			p.steps, p.reps = append(p.steps, steps), append(p.reps, reps)
			continue
		}
		var t int
		switch {
		case ph.Batch != 0:
			if ph.N < ph.Batch {
				return Plan{}, fmt.Errorf("%sinvalid n: %d, want the dataset size, >= batch = %d", at, ph.N, ph.Batch)
			}
			kn := float64(p.K) * float64(ph.N)
			if kn > accounting.MaxCount {
				return Plan{}, fmt.Errorf("%sinvalid k: %d, want k·n at most 2^53", at, p.K)
			}
			t = (p.K*ph.N + ph.Batch - 1) / ph.Batch
			switch {
			case ph.Steps != 0:
				if ph.Steps%t != 0 {
					return Plan{}, fmt.Errorf("%sinvalid steps: %d, want a positive multiple of the epoch's t = ⌈k·n/batch⌉ = %d steps", at, ph.Steps, t)
				}
				reps = ph.Steps / t
			default:
				if !(ph.Epochs >= 1) || ph.Epochs != math.Trunc(ph.Epochs) || ph.Epochs > float64(accounting.MaxCount/t) {
					return Plan{}, fmt.Errorf("%sinvalid epochs: %s, want a whole number >= 1 (random allocation counts whole epochs)", at, accounting.FormatValue(ph.Epochs))
				}
				reps = int(ph.Epochs)
			}
		case ph.Steps != 0 && ph.Q == 0:
			t, reps = ph.Steps, 1
		default:
			return Plan{}, fmt.Errorf("%s--sampling %s needs --steps (one epoch of t steps), or --batch and --n with --epochs (t = ⌈k·n/batch⌉ steps an epoch), not q", at, p.Sampling)
		}
		if p.K > t {
			return Plan{}, fmt.Errorf("%sinvalid k: %d, want at most the epoch's %d steps", at, p.K, t)
		}
		ph.Q = float64(p.K) / float64(t)
		steps = reps * t
		p.steps, p.reps = append(p.steps, steps), append(p.reps, reps)
	}
	if unknown == "sigma" && unknowns != 1 {
		return Plan{}, fmt.Errorf("--schedule needs exactly one phase with sigma=? (it has %d)", unknowns)
	}
	if _, err := accounting.NormalizeUnder(p.Adjacency, p.Event(1), 1); err != nil {
		return Plan{}, fmt.Errorf("total of the phases: %s", strings.TrimPrefix(err.Error(), "accounting: "))
	}
	return p, nil
}

// PhaseRow is one phase in a row's JSON (rows of plans of two or more
// phases).
type PhaseRow struct {
	Sigma  float64 `json:"sigma"`
	Q      float64 `json:"q"`
	Batch  int     `json:"batch,omitempty"`
	N      int     `json:"n,omitempty"`
	Steps  int     `json:"steps"`
	Epochs float64 `json:"epochs"`
}

// NewPlanRow starts k's row for the plan with x for the unknown.
func (a Accountants) NewPlanRow(k accounting.Kind, p Plan, x float64) Row {
	r := a.NewRow(k, 0, 0)
	r.Sampling, r.Adjacency = p.Sampling, p.Adjacency.String()
	r.event, r.x = p.Event(x), x
	r.Epochs = 0
	for i, ph := range p.Phases {
		sigma, steps := ph.Sigma, p.steps[i]
		if ph.Unknown == "sigma" {
			sigma = x
		}
		if steps == unknownReps {
			steps = int(x) * p.stepsPerRep(i)
		}
		pr := PhaseRow{Sigma: sigma, Q: ph.Q, Steps: steps, Epochs: calibrate.EpochsForSteps(steps, ph.Q)}
		if ph.Batch != 0 {
			pr.Batch, pr.N = ph.Batch, ph.N
		}
		switch p.Sampling {
		case "shuffle", "random-allocation", "balls-in-bins":
			pr.Epochs = float64(steps / p.stepsPerRep(i))
		case "cyclic":
			pr.Epochs = calibrate.EpochsForSteps(p.reps[i], ph.Q)
		}
		r.Phases = append(r.Phases, pr)
		r.Steps += pr.Steps
		r.Epochs += pr.Epochs
	}
	r.Sigma, r.Q = r.Phases[0].Sigma, r.Phases[0].Q
	for _, pr := range r.Phases[1:] {
		if pr.Sigma != r.Sigma {
			r.Sigma = 0
		}
		if pr.Q != r.Q {
			r.Q = 0
		}
	}
	if len(r.Phases) == 1 {
		r.Phases = nil
	}
	if p.ExamplesPerUser > 1 {
		r.ExamplesPerUser = p.ExamplesPerUser
		r.Note = JoinNotes(r.Note, fmt.Sprintf("user-level: ε for adding or removing one user with at most %d examples", p.ExamplesPerUser))
	}
	if p.GroupSize > 1 {
		b := p.bound(a, k)
		r.GroupSize, r.event, r.groupMixture = p.GroupSize, b.event(x), b.mixture
		r.Note = JoinNotes(r.Note, b.note)
	}
	if p.Adjacency == accounting.ReplaceOne {
		r.Note = JoinNotes(r.Note, "replace-one: σ is the noise over the clipping norm C; the events have σ/2 (sensitivity 2C)")
	}
	return r
}

// NewEventRow starts k's row for a training given as an event: Steps is
// the number of mechanism applications in it, Sampling the samplings its
// steps use (joined by "+"; "" when it has none); σ, q and epochs are 0.
func (a Accountants) NewEventRow(k accounting.Kind, e accounting.Event) Row {
	r := a.NewRow(k, 0, 0)
	r.event, r.Sampling = e, ""
	if p, err := accounting.NormalizeUnder(a.Adjacency, e, 1); err == nil {
		r.Steps = p.Total()
		for _, st := range p.Steps {
			if st.Sampling == accounting.SamplingRandomAllocation {
				// A repetition is an epoch of DatasetSize steps.
				r.Steps += st.Count * (st.DatasetSize - 1)
			}
		}
		var kinds []string
		for _, st := range p.Steps {
			if s := st.Sampling.String(); !slices.Contains(kinds, s) {
				kinds = append(kinds, s)
			}
		}
		sort.Strings(kinds)
		r.Sampling = strings.Join(kinds, "+")
	}
	return r
}

// given is what the training flags of one command line hold (nil: not
// given), with the training's σ (--sigma) and --events file.
type given struct {
	trainingFlags
	sigma *float64
	event accounting.Event
	// fileFlag is the flag that gave event ("events" or "ledger"), and
	// read what --ledger read.
	fileFlag string
	read     accounting.LedgerRead
}

func deref[T float64 | Count](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// check says what kong cannot: which flags exclude each other and which
// are missing, with kong's messages. cmd is the command ("sigma", "eps",
// "delta" or "epochs"); required are its own required flags with whether
// they were given, in command-line order.
func (g *given) check(cmd string, required ...any) error {
	planned := g.Schedule != nil || g.event != nil
	if planned {
		for _, f := range []struct {
			name string
			set  bool
		}{{"sigma", g.sigma != nil}, {"q", g.Q != nil}, {"batch", g.Batch != nil}, {"epochs", g.Epochs != nil}, {"steps", g.Steps != nil}} {
			if !f.set {
				continue
			}
			if g.event != nil {
				return usageAt(f.name, "--%s replaces --sigma, --q, --batch, --epochs, --steps and --schedule: the file describes the training", g.fileFlag)
			}
			return usageAt(f.name, "--schedule replaces --%s: give sigma, q or batch, and steps or epochs in each phase", f.name)
		}
		if g.event != nil && g.ExamplesPerUser != nil {
			return usageAt("examples-per-user", "--examples-per-user is for the training flags; an --%s file states its own events (a user's steps are a MixtureOfGaussiansDpEvent or BinomialMixtureOfGaussiansDpEvent)", g.fileFlag)
		}
		if g.event != nil {
			if err := checkGroupSize(g.GroupSize); err != nil {
				return err
			}
		}
		if g.event != nil && g.Schedule != nil {
			return usageAt("schedule", "--%s and --schedule can't be used together", g.fileFlag)
		}
	}
	if g.Q != nil && g.Batch != nil {
		return usageAt("batch", "--q and --batch can't be used together: q = batch/n")
	}
	// kong's missing-flag message: each flag as --name=NAME, the
	// epochs/steps group as one entry, sorted.
	var missing []string
	first := ""
	add := func(name, entry string) {
		missing = append(missing, entry)
		if first == "" {
			first = name
		}
	}
	for i := 0; i+1 < len(required); i += 2 {
		name, set := required[i].(string), required[i+1].(bool)
		switch {
		case set, planned && (name == "sigma" || name == "q"), name == "q" && g.Batch != nil,
			name == "q" && (g.Sampling == "random-allocation" || g.Sampling == "balls-in-bins"):
		default:
			add(name, "--"+name+"="+strings.ToUpper(name))
		}
		if name == "q" && cmd != "epochs" && !planned && g.Epochs == nil && g.Steps == nil {
			add("epochs", "--epochs=EPOCHS or --steps=STEPS")
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return usageAt(first, "missing flags: %s", strings.Join(missing, ", "))
	}
	return nil
}

// plan is the training of eps, delta, sigma (unknown "sigma") and epochs
// (unknown "length"): the --schedule, or one phase from --sigma, --q or
// --batch and --n, --epochs or --steps. The single-phase flags are checked
// in the order and with the messages the command line always had.
func (g *given) plan(unknown string) (Plan, error) {
	sampling := g.Sampling
	k, bands := 1, 1
	if g.K != nil {
		k = int(*g.K)
	}
	if g.Bands != nil {
		bands = int(*g.Bands)
	}
	switch {
	case g.K != nil && sampling != "random-allocation":
		return Plan{}, usageAt("k", "--k is for --sampling random-allocation (balls-in-bins is k = 1)")
	case g.Bands != nil && sampling != "cyclic":
		return Plan{}, usageAt("bands", "--bands is for --sampling cyclic")
	case sampling == "cyclic" && g.Bands == nil:
		return Plan{}, usageAt("bands", "--sampling cyclic needs --bands, the number of groups b")
	}
	adj, err := accounting.ParseAdjacency(g.Adjacency)
	if err != nil {
		return Plan{}, usageAt("adjacency", "invalid --adjacency: %q, want add-remove or replace-one", g.Adjacency)
	}
	n := int(deref(g.N))
	if n < 0 || (g.N != nil && n < 1) {
		return Plan{}, usageAt("n", "invalid --n: %d, want the dataset size, >= 1", n)
	}
	if g.Schedule != nil {
		sched := *g.Schedule
		if sched == "" {
			sched = " " // given but empty: ParseSchedule's message
		}
		phases, err := ParseSchedule(sched)
		if err != nil {
			return Plan{}, usageAt("schedule", "%v", err)
		}
		p, err := newPlanWith(phases, sampling, adj, n, unknown, k, bands)
		if err != nil {
			return Plan{}, usageAt("schedule", "--schedule %s", strings.TrimPrefix(err.Error(), "--schedule "))
		}
		return g.capped(p)
	}
	switch sampling {
	case "random-allocation", "balls-in-bins", "cyclic":
		ph := Phase{Sigma: deref(g.sigma), Q: deref(g.Q), Batch: int(deref(g.Batch)), N: n, Steps: int(deref(g.Steps)), Epochs: deref(g.Epochs)}
		if g.Batch != nil && g.N == nil {
			return Plan{}, usageAt("n", "--batch needs --n, the dataset size")
		}
		if g.Steps != nil && ph.Steps < 1 {
			return Plan{}, usageAt("steps", "invalid --steps: %d, want an integer >= 1", ph.Steps)
		}
		if sampling != "cyclic" && g.Q != nil {
			return Plan{}, usageAt("q", "--sampling %s takes --steps (one epoch), or --batch and --n, not --q (q = k/t)", sampling)
		}
		if unknown == "sigma" {
			ph.Unknown = "sigma"
		} else if err := checkFlag("sigma", accounting.CheckNoiseMultiplier(ph.Sigma)); err != nil {
			return Plan{}, err
		}
		p, err := newPlanWith([]Phase{ph}, sampling, adj, n, unknown, k, bands)
		if err != nil {
			flag := "sampling"
			switch msg := err.Error(); {
			case strings.Contains(msg, "--k"), strings.Contains(msg, "invalid k"):
				flag = "k"
			case strings.Contains(msg, "--bands"):
				flag = "bands"
			case strings.Contains(msg, "epochs"):
				flag = "epochs"
			case strings.Contains(msg, "steps"):
				flag = "steps"
			case strings.Contains(msg, "invalid q"):
				flag = "q"
			}
			return Plan{}, usageAt(flag, "%s", err.Error())
		}
		return g.capped(p)
	}
	batchSet := g.Batch != nil
	ph := Phase{Sigma: deref(g.sigma), Q: deref(g.Q), Batch: int(deref(g.Batch)), Steps: int(deref(g.Steps)), Epochs: deref(g.Epochs)}
	if batchSet && ph.Batch < 1 {
		return Plan{}, usageAt("batch", "invalid --batch: %d, want an integer >= 1", ph.Batch)
	}
	if batchSet && g.N == nil {
		return Plan{}, usageAt("n", "--batch needs --n, the dataset size (q = batch/n)")
	}
	if batchSet && n < ph.Batch {
		return Plan{}, usageAt("n", "invalid --n: %d, want the dataset size, >= --batch %d", n, ph.Batch)
	}
	if sampling == "truncated-poisson" && g.N == nil {
		return Plan{}, usageAt("n", "--sampling truncated-poisson needs --n, the dataset size")
	}
	if sampling != "poisson" && sampling != "truncated-poisson" && !batchSet {
		return Plan{}, usageAt("batch", "--sampling %s needs --batch and --n (q = batch/n)", sampling)
	}
	if sampling == "fixed" && adj != accounting.ReplaceOne {
		return Plan{}, usageAt("sampling", "--sampling fixed needs --adjacency replace-one: a fixed-size batch is defined for a dataset of known size, where neighbours replace a record rather than add or remove one")
	}
	if sampling == "shuffle" && adj != accounting.ReplaceOne {
		return Plan{}, usageAt("sampling", "--sampling shuffle needs --adjacency replace-one: adding a record to a shuffled epoch moves every later record to another batch, so only replace-one has a bound")
	}
	checkSigma := func() error {
		return checkFlag("sigma", accounting.CheckNoiseMultiplier(ph.Sigma))
	}
	if unknown == "length" {
		if err := checkSigma(); err != nil {
			return Plan{}, err
		}
		ph.Unknown = "steps"
	}
	if !batchSet {
		if err := flagErr(accounting.CheckSamplingRate(ph.Q)); err != nil {
			return Plan{}, err
		}
	}
	if unknown != "length" {
		switch {
		case g.Steps != nil:
			if ph.Steps < 1 {
				return Plan{}, usageAt("steps", "invalid --steps: %d, want an integer >= 1", ph.Steps)
			}
		case g.Epochs != nil:
			q := ph.Q
			if batchSet {
				q = float64(ph.Batch) / float64(n)
			}
			if _, err := calibrate.StepsForEpochs(ph.Epochs, q); err != nil {
				return Plan{}, flagErr(err)
			}
		default:
			return Plan{}, usageAt("epochs", "missing --epochs or --steps: give the training length")
		}
	}
	if unknown == "sigma" {
		ph.Unknown = "sigma"
	} else if unknown == "" {
		if err := checkSigma(); err != nil {
			return Plan{}, err
		}
	}
	p, err := NewPlan([]Phase{ph}, sampling, adj, n, unknown)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "phase 1: ")
		flag := "batch"
		if strings.Contains(msg, "epochs") || strings.Contains(msg, "steps") {
			flag = "epochs"
		}
		return Plan{}, usageAt(flag, "%s", msg)
	}
	return g.capped(p)
}

// capped applies --max-batch to p: required by, and only for,
// --sampling truncated-poisson.
func (g *given) capped(p Plan) (Plan, error) {
	if g.ExamplesPerUser != nil || g.GroupSize != nil {
		k, gs := 1, 1
		if g.ExamplesPerUser != nil {
			k = int(*g.ExamplesPerUser)
		}
		if g.GroupSize != nil {
			gs = int(*g.GroupSize)
		}
		var err error
		if p, err = p.withUsers(k, gs); err != nil {
			flag := "examples-per-user"
			if strings.HasPrefix(err.Error(), "--group-size") || strings.Contains(err.Error(), "invalid --group-size") {
				flag = "group-size"
			}
			return Plan{}, usageAt(flag, "%v", err)
		}
	}
	switch {
	case g.MaxBatch == nil && p.Sampling != "truncated-poisson":
		return p, nil
	case g.MaxBatch == nil:
		return Plan{}, usageAt("max-batch", "--sampling truncated-poisson needs --max-batch, the largest lot")
	}
	p, err := p.WithMaxBatch(int(*g.MaxBatch))
	if err != nil {
		return Plan{}, usageAt("max-batch", "%v", err)
	}
	return p, nil
}

// training decodes the training of an eps command line (its flags, or
// g.event for an --events file) for commands that take the same training
// flags, such as dpcalc profile: it returns the training's event and kind's
// row with the training's σ, q, steps, sampling and adjacency filled (no
// answer yet). Bad flags are an error naming the flag.
//
// With --group-size the event is the group's and f makes the methods that
// answer for it (see [Plan.bound]); f is otherwise a.Factory(kind).
func (g *given) training(a Accountants, kind accounting.Kind) (ev accounting.Event, f calibrate.Factory, r Row, err error) {
	if err := g.check("eps", "sigma", g.sigma != nil, "q", g.Q != nil); err != nil {
		return nil, nil, Row{}, err
	}
	if err := a.Check(); err != nil {
		return nil, nil, Row{}, err
	}
	if g.event != nil {
		b := g.fileBound(a, kind)
		r := a.NewEventRow(kind, g.event)
		if n := int(deref(g.GroupSize)); n > 1 {
			r.GroupSize, r.event = n, b.event(0)
			r.Note = JoinNotes(r.Note, b.note)
		}
		return b.event(0), b.factory, r, nil
	}
	p, err := g.plan("")
	if err != nil {
		return nil, nil, Row{}, err
	}
	b := p.bound(a, kind)
	return b.event(0), b.factory, a.NewPlanRow(kind, p, 0), nil
}

// PoissonReading returns, for a plan of shuffled batches, the plan that the
// usual practice accounts instead: every phase Poisson-sampled at q = B/N
// for the same number of steps, under add-remove with the same σ. No
// amplification bound of this kind is proven for shuffled batches (Chua et
// al., "How Private are DP-SGD Implementations?", ICML 2024, show the true
// ε can be far larger); dpcalc shows it beside the certified rows, labelled.
// ok is false for other plans.
func (p Plan) PoissonReading() (Plan, bool) {
	if p.Sampling != "shuffle" {
		return Plan{}, false
	}
	return p.asPoisson()
}

// asPoisson is p with every phase Poisson-sampled at its q for the same
// number of steps, under add-remove with the same σ; ok is false for a
// plan with an unknown.
func (p Plan) asPoisson() (Plan, bool) {
	if p.unknownPhase() >= 0 {
		return Plan{}, false
	}
	out := Plan{Sampling: "poisson", Adjacency: accounting.AddRemove}
	for i, ph := range p.Phases {
		ph.Steps, ph.Epochs = p.steps[i], 0
		out.Phases = append(out.Phases, ph)
		out.steps = append(out.steps, p.steps[i])
		out.reps = append(out.reps, p.steps[i])
	}
	return out, true
}
