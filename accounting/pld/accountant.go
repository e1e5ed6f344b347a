package pld

import (
	"fmt"
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/accounting/moments"
)

// Options configures an [Accountant].
type Options struct {
	// GridWidth is the spacing h of the privacy-loss grid. 0 (the default)
	// picks h = 0.07·√(V/T), V the variance of the composed privacy loss
	// and T the number of steps (the bracket is of second order in h, about
	// 0.1% there on typical DP-SGD settings), coarsens it when the composed
	// window would not fit the FFT, and narrows it by √2 at a time (at
	// most 6 times, until two steps in a row fail to shrink the bracket by
	// a quarter) for a query whose bracket is wider than 0.1% of its upper
	// end (for δ(ε), wider than 0.1% of max(ε, 1e-6) in ε). A GridWidth
	// set here is used as given; where the per-step range does not fit it,
	// a query at δ cuts the tails at 1e-3·δ/(2T) as the default grid does
	// for tiny ε, and a width at which the composition still does not fit
	// is a *accounting.ParamError naming GridWidth.
	GridWidth float64
}

// defaultGridFactor is h/√(V/T) for GridWidth = 0.
const defaultGridFactor = 0.07

// Accountant is a privacy loss distribution accountant (Koskela, Jälkö,
// Honkela 2020, "Computing Tight Differential Privacy Guarantees Using
// FFT", AISTATS; Gopi, Lee, Wutschitz 2021, "Numerical Composition of
// Differential Privacy", NeurIPS) that returns certified lower and upper
// bounds on ε(δ) and δ(ε) for compositions of the steps whose mechanism
// states a privacy-loss pair ([mechanism.Mechanism.PLD]).
//
// Each step has a dominating pair per direction, as its mechanism states
// it (for the Poisson-subsampled Gaussian, Zhu, Dong, Wang 2022,
// Proposition 30: remove, P = (1−q)N(0,σ²) + qN(1,σ²) vs Q = N(0,σ²), and
// add, the reverse). Each direction is composed separately and the worse
// one is reported; a step whose pair serves both directions
// (mechanism.PLD.Symmetric) is composed in both with it. Per direction the per-step privacy loss is discretised twice on
// the grid {k·h}: a dominating distribution (for the upper bound) and a
// dominated one (for the lower bound); see discretise. Each is composed
// by FFT with powers taken in the frequency domain. δ(ε) is the
// hockey-stick divergence E_P[(1 − e^{ε−L})₊] + P(L = ∞).
//
// Soundness in floating point (see composeParts and discretise): truncated
// tail mass goes to the +∞ atom of the upper distribution and is dropped
// from the lower one; every per-step mass is raised (upper) or lowered
// (lower) by its rounding error bound; mass outside the FFT window is
// bounded by Chernoff bounds from the exact moment generating function of
// the discretised steps; FFT round-off is bounded a priori and added to
// the upper δ and subtracted from the lower δ. These error terms are
// absolute in the measure the FFT composes, so for a small δ (where they
// would exceed it) each direction is composed again exponentially tilted
// toward the loss where that δ is decided (composeParts, result.saddle):
// the errors then scale with δ itself, and the bounds stay certified and
// tight down to δ ≈ 1e-20 (below, the +∞ atom of the per-step truncation,
// about 1e-20·q, is the floor). Where the range of the per-step loss
// rather than its spread sets the default grid (small sampling rates,
// whose sampled component stretches the loss far beyond the ε of
// interest), a query at δ cuts each step's tails where they carry
// 1e-3·δ/(2T) (setup.eta), charges that mass to δ in full, and lays
// the grid over the narrower range. The upper bounds are the minimum of the
// PLD bound and the RDP bound of the same steps ([moments.RDP] with
// [moments.DefaultOrders]); both are sound, so the minimum is, and the
// upper ε is never above RDP's. EpsilonBoundsFrom and DeltaBoundsFrom say
// which one was used. With the default grid, a composition that does not
// fit the FFT even after coarsening is answered by the RDP bound alone
// with the trivial lower bound 0.
//
// Epsilon and Delta return the upper ends of EpsilonBounds and DeltaBounds
// exactly, and Delta(Epsilon(δ)) ≤ δ holds exactly. Grids and cuts made
// for earlier queries are kept and may serve later ones, so a bound can
// differ in its late digits from a fresh accountant's; each is certified. Delta is never 0 at a finite ε once a step is composed (a
// Gaussian is not pure DP).
//
// Compositions of exact Gaussian pairs (unsampled Gaussians,
// mechanism.PLD.GaussianSigma) are answered in closed form (T Gaussians
// with σ_i equal one with σ = (Σ σ_i^{−2})^{−1/2}; Balle and Wang 2018,
// Theorem 8), see gaussian.LogDelta. A composition whose steps' losses are
// all bounded is pure DP at δ = 0 (mechanism.PLD.MaxLoss).
//
// Events are normalised by [accounting.NormalizeUnder], whose boundary
// table decides tiny and huge σ; see [Accountant.Supports] for the steps
// with pairs. The composition is computed lazily on the first query and
// cached until the next Compose; every long loop checks the query's
// context. An Accountant is not safe for concurrent use.
type Accountant struct {
	adj     accounting.Adjacency
	h       float64 // user grid width, 0 = adaptive
	counts  map[mechanism.Mechanism]int
	plds    map[mechanism.Mechanism]*mechanism.PLD // each step's pairs, made once
	private bool                                   // false once NonPrivate was composed
	steps   int

	// setup holds the pairs of the recorded steps; levels[eta] the
	// compositions with per-step truncation mass eta (see setup.eta):
	// res on the first grid and finer[k-1] on the grid k times halved
	// (default grid only); rdp holds the same steps under RDP. All are
	// computed lazily and cached until the next Compose.
	setup  *setup
	levels map[float64]*levels
	// steerLevels holds the coarse compositions that steer the cut of a
	// δ query (see steerLevel), per truncation mass.
	steerLevels map[float64]*levels
	rdp         *moments.RDP
	// twoScales holds the two-scale bounds of the remove direction per
	// truncation (twoScaleBound; nil where the composition does not qualify).
	twoScales map[float64]*twoScaleSet
	// groups holds the grouped compositions that answer for more than
	// maxDistinctSteps distinct steps (see grouped).
	groups *groupBounds
	// stopDelta, when > 0, ends a δ query as soon as an upper bound it
	// keeps is at most stopDelta (see deltaAtMost).
	stopDelta float64
	// deltaTarget, when > 0, is the target of a DeltaAgainst query;
	// upperOnly makes it compute upper bounds alone (see DeltaUpperAgainst).
	deltaTarget float64
	upperOnly   bool

	// unattained counts, per recorded mechanism, the steps whose pairs are
	// not attained although the mechanism's are (shuffled epochs, recorded
	// as unsampled releases); shuffles holds those epochs (see witness).
	unattained map[mechanism.Mechanism]int
	shuffles   map[shuffledEpochs]int
	// projections counts the witnesses of k-out-of-t random-allocation
	// epochs (k > 1), recorded as the groups of their reduction, which
	// only dominate them: per epoch the sum of its outputs' cells
	// ([mechanism.AllocationWitness]).
	projections map[mechanism.Mechanism]int
	// witnesses is the accountant of the steps' witnesses (see witness),
	// made lazily and cached until the next Compose.
	witnesses *Accountant
	// lowerOnly marks a witnesses accountant: only its lower bounds are
	// used, and its steps may mix relations, so it has no RDP cross-check.
	lowerOnly bool
	// removes and adds are the accountants of the steps' remove pairs and
	// add pairs alone, made for lower ends with a slack (removeAccountant).
	removes, adds *Accountant
}

// shuffledEpochs identifies the epochs of one shuffled Gaussian step for
// ShuffledLowerEpsilon: its noise multiplier, batches and unused share.
type shuffledEpochs struct {
	sigma   float64
	batches int
	unused  float64
}

// maxSteps caps the total number of composed steps.
const maxSteps = 1 << 40

// New returns an empty accountant, a *accounting.ParamError when
// opt.GridWidth is not finite and ≥ 0, or an error for an unknown
// neighbouring relation. opts set the relation (accounting.WithAdjacency;
// the default is add-remove). Under replace-one it bounds unsampled steps,
// shuffled epochs (see [accounting.Plan.Bounded]) and Gaussian steps
// Poisson-sampled or sampled without replacement, with noise multipliers relative to the
// replace-one sensitivity: an unsampled Gaussian's privacy loss is the same
// under both relations, so the composition and its rdp cross-check are
// those of add-remove.
func New(opt Options, opts ...accounting.Option) (*Accountant, error) {
	if math.IsNaN(opt.GridWidth) || math.IsInf(opt.GridWidth, 0) || opt.GridWidth < 0 {
		return nil, &accounting.ParamError{Name: "GridWidth", Value: opt.GridWidth, Want: "finite and >= 0"}
	}
	cfg, err := accounting.NewConfig(opts...)
	if err != nil {
		return nil, err
	}
	return &Accountant{adj: cfg.Adjacency, h: opt.GridWidth, counts: map[mechanism.Mechanism]int{}, private: true}, nil
}

// Kind returns accounting.KindPLD.
func (a *Accountant) Kind() accounting.Kind { return accounting.KindPLD }

// UpperBound marks Accountant as an [accounting.Accountant].
func (a *Accountant) UpperBound() {}

// Supports accepts the steps whose mechanism states a privacy-loss pair
// ([mechanism.Mechanism.PLD]): Gaussian steps unsampled, Poisson-sampled
// or fixed-size-sampled under replace-one, Laplace steps
// unsampled or Poisson-sampled under add-remove.
func (a *Accountant) Supports(s accounting.Step) error {
	m, err := mechanism.Of(s)
	if err != nil {
		return err
	}
	if _, err := m.PLD(); err != nil {
		return s.Unsupported(accounting.KindPLD, err.Error())
	}
	return nil
}

// pld returns the privacy-loss pairs of a recorded step's mechanism (made
// once per accountant).
func (a *Accountant) pld(m mechanism.Mechanism) *mechanism.PLD {
	if p, ok := a.plds[m]; ok {
		return p
	}
	p, err := m.PLD()
	if err != nil {
		panic("pld: a recorded step has no pairs: " + err.Error()) // Supports accepted it
	}
	if a.plds == nil {
		a.plds = map[mechanism.Mechanism]*mechanism.PLD{}
	}
	a.plds[m] = p
	return p
}

// Compose adds count adaptive repetitions of e. It validates e completely
// before changing any state.
func (a *Accountant) Compose(e accounting.Event, count int) error {
	add, unbounded, err := a.stepsOf(e, count)
	if err != nil {
		return err
	}
	loose, shuffles, projections, err := a.unattainedOf(e, count)
	if err != nil {
		return err
	}
	total := a.steps
	for _, n := range add {
		if total += n; total > maxSteps || total < 0 {
			return &accounting.ParamError{Name: "count", Value: float64(count), Want: fmt.Sprintf("a total of at most %d (2^40) steps", maxSteps)}
		}
	}
	for k, n := range add {
		a.counts[k] += n
	}
	for k, n := range loose {
		if a.unattained == nil {
			a.unattained = map[mechanism.Mechanism]int{}
		}
		a.unattained[k] += n
	}
	for k, n := range shuffles {
		if a.shuffles == nil {
			a.shuffles = map[shuffledEpochs]int{}
		}
		a.shuffles[k] += n
	}
	for k, n := range projections {
		if a.projections == nil {
			a.projections = map[mechanism.Mechanism]int{}
		}
		a.projections[k] += n
	}
	a.steps = total
	if unbounded {
		a.private = false
	}
	a.setup, a.levels, a.rdp, a.twoScales, a.groups, a.witnesses, a.removes, a.adds = nil, nil, nil, nil, nil, nil, nil, nil
	a.steerLevels = nil
	return nil
}

// stepsOf normalises count repetitions of e and returns mechanism → count.
func (a *Accountant) stepsOf(e accounting.Event, count int) (map[mechanism.Mechanism]int, bool, error) {
	p, err := accounting.NormalizeUnder(a.adj, e, count)
	if err == nil {
		p, err = p.Bounded()
	}
	if err != nil {
		return nil, false, err
	}
	add := map[mechanism.Mechanism]int{}
	for _, s := range p.Steps {
		if err := a.Supports(s); err != nil {
			return nil, false, err
		}
		if s.Count > maxSteps {
			return nil, false, &accounting.ParamError{Name: "count", Value: float64(s.Count), Path: s.Path, Want: fmt.Sprintf("a total of at most %d (2^40) steps", maxSteps)}
		}
		k, err := mechanism.Of(s)
		if err != nil {
			return nil, false, err
		}
		add[k] += s.Count
	}
	return add, p.Unbounded, nil
}

// unattainedOf returns the steps of count repetitions of e (which stepsOf
// accepted) whose recorded pairs are not attained although their
// mechanisms' are: shuffled epochs (recorded as unsampled releases) and
// k-out-of-t random-allocation epochs with k > 1 (recorded as the groups
// of their reduction). It returns, per mechanism they are recorded as,
// their count; the epochs of each shuffled Gaussian step; and the
// witnesses of the allocation epochs with their counts.
func (a *Accountant) unattainedOf(e accounting.Event, count int) (loose map[mechanism.Mechanism]int, shuffles map[shuffledEpochs]int, projections map[mechanism.Mechanism]int, err error) {
	p, err := accounting.NormalizeUnder(a.adj, e, count)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, s := range p.Steps {
		alloc := s.Sampling == accounting.SamplingRandomAllocation && s.SampleSize > 1
		if s.Sampling != accounting.SamplingShuffle && !alloc {
			continue
		}
		if sigma, b, unused, ok := mechanism.ShuffledEpoch(s); ok {
			if shuffles == nil {
				shuffles = map[shuffledEpochs]int{}
			}
			shuffles[shuffledEpochs{sigma, b, unused}] += s.Count
		}
		if g, ok := s.Leaf.(accounting.Gaussian); ok && alloc {
			if projections == nil {
				projections = map[mechanism.Mechanism]int{}
			}
			projections[mechanism.AllocationWitness(g.NoiseMultiplier, s.DatasetSize, s.SampleSize, s.Adjacency)] += s.Count
		}
		one := accounting.Plan{Adjacency: p.Adjacency, Steps: []accounting.Step{s}}
		if one, err = one.Bounded(); err != nil {
			return nil, nil, nil, err
		}
		for _, u := range one.Steps {
			k, err := mechanism.Of(u)
			if err != nil {
				return nil, nil, nil, err
			}
			if loose == nil {
				loose = map[mechanism.Mechanism]int{}
			}
			loose[k] += u.Count
		}
	}
	return loose, shuffles, projections, nil
}

// empty returns an accountant with a's options and adjacency and no steps.
func (a *Accountant) empty() *Accountant {
	return &Accountant{adj: a.adj, h: a.h, counts: map[mechanism.Mechanism]int{}, private: true}
}

// keys returns the recorded mechanisms in a fixed order (mechanism.Compare).
func (a *Accountant) keys() []mechanism.Mechanism {
	keys := make([]mechanism.Mechanism, 0, len(a.counts))
	for k := range a.counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return mechanism.Compare(keys[i], keys[j]) < 0 })
	return keys
}

// plds returns the pairs and counts of keys.
func (a *Accountant) pldsOf(keys []mechanism.Mechanism) ([]*mechanism.PLD, []int) {
	plds, counts := make([]*mechanism.PLD, len(keys)), make([]int, len(keys))
	for i, k := range keys {
		plds[i], counts[i] = a.pld(k), a.counts[k]
	}
	return plds, counts
}
