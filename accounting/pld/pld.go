// Package pld is the privacy loss distribution accountant: certified lower
// and upper bounds on ε(δ) and δ(ε) for compositions of subsampled
// Gaussian and Laplace mechanisms, from pessimistic and optimistic discretisations of
// the privacy loss composed by FFT.
package pld

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

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

// pldDefaultGridFactor is h/√(V/T) for GridWidth = 0.
const pldDefaultGridFactor = 0.07

// Accountant is a privacy loss distribution accountant for
// Poisson-subsampled Gaussian mechanisms under add/remove adjacency
// (Koskela, Jälkö, Honkela 2020, "Computing Tight Differential Privacy
// Guarantees Using FFT", AISTATS; Gopi, Lee, Wutschitz 2021, "Numerical
// Composition of Differential Privacy", NeurIPS) that returns certified
// lower and upper bounds on ε(δ) and δ(ε).
//
// Each step has two dominating pairs (Zhu, Dong, Wang 2022, Proposition
// 30): remove, P = (1−q)N(0,σ²) + qN(1,σ²) vs Q = N(0,σ²), and add, the
// reverse. Each direction is composed separately and the worse one is
// reported. Per direction the per-step privacy loss is discretised twice on
// the grid {k·h}: a dominating distribution (for the upper bound) and a
// dominated one (for the lower bound); see pldDiscretise. Each is composed
// by FFT with powers taken in the frequency domain. δ(ε) is the
// hockey-stick divergence E_P[(1 − e^{ε−L})₊] + P(L = ∞).
//
// Soundness in floating point (see pldCompose and pldDiscretise): truncated
// tail mass goes to the +∞ atom of the upper distribution and is dropped
// from the lower one; every per-step mass is raised (upper) or lowered
// (lower) by its rounding error bound; mass outside the FFT window is
// bounded by Chernoff bounds from the exact moment generating function of
// the discretised steps; FFT round-off is bounded a priori and added to
// the upper δ and subtracted from the lower δ. These error terms are
// absolute in the measure the FFT composes, so for a small δ (where they
// would exceed it) each direction is composed again exponentially tilted
// toward the loss where that δ is decided (pldCompose, pldResult.saddle):
// the errors then scale with δ itself, and the bounds stay certified and
// tight down to δ ≈ 1e-20 (below, the +∞ atom of the per-step truncation,
// about 1e-20·q, is the floor). Where the range of the per-step loss
// rather than its spread sets the default grid (small sampling rates,
// whose sampled component stretches the loss far beyond the ε of
// interest), a query at δ cuts each step's tails where they carry
// 1e-3·δ/(2T) (pldSetup.eta), charges that mass to δ in full, and lays
// the grid over the narrower range. The upper bounds are the minimum of the
// PLD bound and the RDP bound of the same steps ([moments.RDP] with
// [moments.DefaultOrders]); both are sound, so the minimum is, and the
// upper ε is never above RDP's. EpsilonBoundsFrom and DeltaBoundsFrom say
// which one was used. With the default grid, a composition that does not
// fit the FFT even after coarsening is answered by the RDP bound alone
// with the trivial lower bound 0.
//
// Epsilon and Delta return the upper ends of EpsilonBounds and DeltaBounds
// exactly, whatever was queried before, and Delta(Epsilon(δ)) ≤ δ holds
// exactly. Delta is never 0 at a finite ε once a step is composed (a
// Gaussian is not pure DP).
//
// Compositions of plain Gaussians (q = 1 throughout) are answered in
// closed form (T Gaussians with σ_i equal one with σ = (Σ σ_i^{−2})^{−1/2};
// Balle and Wang 2018, Theorem 8), see gaussian.LogDelta.
//
// Events are normalised by [accounting.Normalize], whose boundary table
// decides tiny and huge σ; the accountant supports its Gaussian steps,
// unsampled, Poisson-sampled under add-remove, or sampled without
// replacement under replace-one (one symmetric pair, see pldWORPair), and
// its Laplace steps, unsampled or Poisson-sampled (pldLaplacePair; pure
// DP at δ = 0 when every step is Laplace). The composition is computed lazily on the
// first query and cached until the next Compose; every long loop checks
// the query's context. An Accountant is not safe for concurrent use.
type Accountant struct {
	adj     accounting.Adjacency
	h       float64 // user grid width, 0 = adaptive
	counts  map[mechanism.Mechanism]int
	plds    map[mechanism.Mechanism]*mechanism.PLD // each step's pairs, made once
	private bool                                   // false once NonPrivate was composed
	steps   int

	// setup holds the pairs of the recorded steps; levels[eta] the
	// compositions with per-step truncation mass eta (see pldSetup.eta):
	// res on the first grid and finer[k-1] on the grid k times halved
	// (default grid only); rdp holds the same steps under RDP. All are
	// computed lazily and cached until the next Compose.
	setup  *pldSetup
	levels map[float64]*pldLevels
	rdp    *moments.RDP
	// twoScales holds the two-scale bounds of the remove direction per
	// truncation (pldTwoScale; nil where the composition does not qualify).
	twoScales map[float64]*pldTwoScaleSet
	// groups holds the grouped compositions that answer for more than
	// pldMaxKeys distinct steps (see grouped).
	groups *pldGrouped
}

// pldLevels is one composition on its first and its refined grids.
type pldLevels struct {
	res   *pldResult
	finer []*pldResult
}

// pldResult holds the composition, computed lazily per direction and bound.
type pldResult struct {
	// closed is set when every step has q = 1: the composition is one
	// Gaussian with noise closedSigma, which is 0 when (Σ n_i/σ_i²)^{−1/2}
	// underflows (the loss 1/(2σ²) exceeds the float64 range).
	closed      bool
	closedSigma float64
	h, eta      float64
	auto        bool    // h chosen by default (may be refined or coarsened)
	cut         bool    // the tails are cut at a query's δ (pldSetup.eta)
	span        float64 // distance of the loss's two atoms that h divides (0: none)
	dirs        []*pldDir
	lams        []float64 // the tilts of the query in progress (steering slope)
}

// pldDir is one direction (remove or add) of all segments.
type pldDir struct {
	pairs   []mechanism.Pair
	counts  []int
	grids   []*pldGrid
	up, low *pldComposed

	// The discretised steps and grid width of the untilted up and low
	// compositions (after any coarsening), reused by the tilted ones,
	// which are cached per (bound, λ).
	parts [2][]pldPart
	ph    [2]float64
	tilt  map[pldTiltKey]*pldComposed

	// means caches the tilted mean of the upper parts per quarter octave
	// of λ (see saddleUpTo), for the parts at width meansH.
	means  map[int]float64
	meansH float64
}

// pldTiltKey names a tilted composition of one direction.
type pldTiltKey struct {
	upper  bool
	lambda float64
}

// get returns the composed upper or lower distribution of direction d,
// tilted by lambda (see pldCompose; 0: no tilt). A tilted composition uses
// the grid of the untilted one, which it computes first.
func (r *pldResult) get(ctx context.Context, d int, upper bool, lambda float64) (*pldComposed, error) {
	dir := r.dirs[d]
	if lambda == 0 {
		return r.get0(ctx, d, upper)
	}
	key := pldTiltKey{upper, lambda}
	if c, ok := dir.tilt[key]; ok {
		return c, nil
	}
	b := 0
	if upper {
		b = 1
	}
	if dir.parts[b] == nil {
		parts, err := r.parts(ctx, d, upper, r.h)
		if err != nil {
			return nil, err
		}
		dir.parts[b], dir.ph[b] = parts, r.h
	}
	c, err := pldCompose(ctx, dir.parts[b], dir.ph[b], true, lambda)
	if err != nil {
		return nil, err
	}
	if dir.tilt == nil {
		dir.tilt = map[pldTiltKey]*pldComposed{}
	}
	dir.tilt[key] = c
	return c, nil
}

// get0 returns the untilted composed upper or lower distribution of
// direction d.
func (r *pldResult) get0(ctx context.Context, d int, upper bool) (*pldComposed, error) {
	dir := r.dirs[d]
	if upper && dir.up != nil {
		return dir.up, nil
	}
	if !upper && dir.low != nil {
		return dir.low, nil
	}
	b := 0
	if upper {
		b = 1
	}
	h := r.h
	parts := dir.parts[b]
	if parts == nil || dir.ph[b] != h {
		var err error
		if parts, err = r.parts(ctx, d, upper, h); err != nil {
			return nil, err
		}
	}
	var c *pldComposed
	for {
		if err := accounting.Canceled(ctx); err != nil {
			return nil, err
		}
		var err error
		c, err = pldCompose(ctx, parts, h, true, 0)
		if err == nil {
			break
		}
		if err != errPLDTooLarge || !r.auto || h > 1e3 {
			return nil, err
		}
		// The window does not fit: coarsen this direction's grid.
		h *= 2
		if parts, err = r.parts(ctx, d, upper, h); err != nil {
			return nil, err
		}
	}
	if upper {
		dir.up = c
	} else {
		dir.low = c
	}
	dir.parts[b], dir.ph[b] = parts, h
	return c, nil
}

// parts returns direction d's steps discretised on the grid of width h:
// the dominating (upper) or dominated distributions. The grids at r.h are
// cached in dir.grids.
func (r *pldResult) parts(ctx context.Context, d int, upper bool, h float64) ([]pldPart, error) {
	dir := r.dirs[d]
	gs := dir.grids
	if gs == nil || h != r.h {
		gs = make([]*pldGrid, len(dir.pairs))
		for i := range dir.pairs {
			g, err := newPLDGrid(ctx, dir.pairs[i], h, r.eta)
			if err != nil {
				return nil, err
			}
			gs[i] = g
		}
		if h == r.h {
			dir.grids = gs
		}
	}
	parts := make([]pldPart, len(gs))
	for i, g := range gs {
		if upper {
			parts[i] = pldPart{g.upper(), dir.counts[i]}
			continue
		}
		// With the tails cut at a query's δ (tiny sampling rates, long
		// grids) two offsets, not eight: the retries dominate the cost.
		offsets := 8
		if r.cut {
			offsets = 2
		}
		low, err := pldLowerBestOffset(ctx, g, dir.counts[i], r.eta, offsets)
		if err != nil {
			return nil, err
		}
		parts[i] = pldPart{low, dir.counts[i]}
	}
	return parts, nil
}

// saddle returns the tilt λ ≥ 0 at which the tilted upper distribution of
// direction d has its mean at eps (the saddle point K'(λ) = eps of the
// composed cumulant K), rounded down to a power of 2^{1/4} so that nearby
// queries share one tilted composition; 0 when eps is below
// the mean (no tilt needed) or the upper distribution is not computed.
// Any λ ≥ 0 gives a certified bound; this one makes it tight.
func (r *pldResult) saddle(d int, eps float64) float64 {
	hi2 := 40
	if r.cut {
		hi2 = 120
	}
	return r.saddleUpTo(d, eps, hi2)
}

// saddleUpTo is saddle with λ at most 2^{hi2/4}.
func (r *pldResult) saddleUpTo(d int, eps float64, hi2 int) float64 {
	dir := r.dirs[d]
	if len(dir.parts[1]) == 0 {
		return 0
	}
	h := dir.ph[1]
	if dir.means == nil || dir.meansH != h {
		dir.means, dir.meansH = map[int]float64{}, h
	}
	// mean(k) is the composed tilted mean at λ = 2^{k/4}.
	mean := func(k int) float64 {
		if m, ok := dir.means[k]; ok {
			return m
		}
		lambda := math.Exp2(float64(k) / 4)
		var m float64
		for _, pt := range dir.parts[1] {
			m += float64(pt.count) * pldTiltedMean(&pt.pmf, h, lambda)
		}
		dir.means[k] = m
		return m
	}
	// λ from 2^{−6} to 2^{hi2/4}, in quarter octaves: up to 2^{10} by
	// default, to 2^{30} when the tails are cut at the query's δ (tiny
	// losses of a small sampling rate, whose saddle tilts are large) and
	// where the bracket is still wide (see pldResult.bigTilt).
	lo2 := -24
	if !(mean(lo2) < eps) {
		return 0
	}
	lo, hi := lo2, hi2
	if mean(hi2) < eps {
		return math.Exp2(float64(hi2) / 4)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if mean(mid) < eps {
			lo = mid
		} else {
			hi = mid
		}
	}
	// The largest quarter octave whose tilted mean is still below eps:
	// with small q the tilted mean can jump from about eps to far above
	// it within one quarter octave (the tilt moves the bulk of the mass
	// from the bulk of the loss onto the sampled component's tail), and a
	// window centred beyond eps would not bound δ(eps) at all.
	return math.Exp2(float64(lo) / 4)
}

// pldTiltedMean returns the mean loss of m's finite part tilted by
// e^{lambda·loss} (steering only: no bound depends on its accuracy).
func pldTiltedMean(m *pldPMF, h, lambda float64) float64 {
	kStar, best := -1, math.Inf(-1)
	for i, v := range m.p {
		if v > 0 {
			if l := math.Log(v) + lambda*float64(i)*h; l > best {
				kStar, best = i, l
			}
		}
	}
	if kStar < 0 {
		return 0
	}
	var s, s1 float64
	for i, v := range m.p {
		if v > 0 {
			y := lambda * float64(i-kStar) * h
			if y < -745 {
				continue
			}
			w := v * math.Exp(math.Min(y, 700))
			s += w
			s1 += w * float64(i-kStar)
		}
	}
	return float64(m.lo+kStar)*h + m.off + h*s1/s
}

// maxPLDSteps caps the total number of composed steps.
const maxPLDSteps = 1 << 40

// New returns an empty accountant, a *accounting.ParamError when
// opt.GridWidth is not finite and ≥ 0, or an error for an unknown
// neighbouring relation. opts set the relation (accounting.WithAdjacency;
// the default is add-remove). Under replace-one it bounds unsampled steps,
// shuffled epochs (see [accounting.Plan.Bounded]) and Gaussian steps
// sampled without replacement, with noise multipliers relative to the
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
// under add-remove or fixed-size-sampled under replace-one, Laplace steps
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
	total := a.steps
	for _, n := range add {
		if total += n; total > maxPLDSteps || total < 0 {
			return &accounting.ParamError{Name: "count", Value: float64(count), Want: fmt.Sprintf("a total of at most %d (2^40) steps", maxPLDSteps)}
		}
	}
	for k, n := range add {
		a.counts[k] += n
	}
	a.steps = total
	if unbounded {
		a.private = false
	}
	a.setup, a.levels, a.rdp, a.twoScales, a.groups = nil, nil, nil, nil, nil
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
		if s.Count > maxPLDSteps {
			return nil, false, &accounting.ParamError{Name: "count", Value: float64(s.Count), Path: s.Path, Want: fmt.Sprintf("a total of at most %d (2^40) steps", maxPLDSteps)}
		}
		k, err := mechanism.Of(s)
		if err != nil {
			return nil, false, err
		}
		add[k] += s.Count
	}
	return add, p.Unbounded, nil
}

// pldAutoFFT is the largest FFT length the default grid aims for, and
// pldMaxStepGrid the most grid points per step (the per-step discretisation
// costs a few erfc per point) before refinement.
const (
	pldAutoFFT     = 1 << 19
	pldMaxStepGrid = 1 << 15
)

// pldLowerBestOffset returns the lower per-step distribution of g's pair. When
// the merge had to round a noticeable mass down (a concentrated loss
// between grid points), it retries on grids shifted by multiples of
// h/offsets and keeps the one with the largest mean loss, i.e. the least
// rounding. Any offset gives a valid lower bound. The retries are independent and
// run on up to GOMAXPROCS goroutines; the choice (the first offset with the
// largest mean) does not depend on their schedule.
func pldLowerBestOffset(ctx context.Context, g *pldGrid, count int, eta float64, offsets int) (pldPMF, error) {
	best, err := g.lower(ctx)
	atoms := gridAtoms(g.pair)
	hasAtoms := atoms != nil
	if err != nil || best.fallback*float64(count) < 1e-6 && !hasAtoms {
		return best, err
	}
	mean := func(m *pldPMF) float64 {
		var s float64
		for i, v := range m.p {
			s += v * (float64(m.lo+i)*g.h + m.off)
		}
		return s
	}
	offs := make([]float64, offsets)
	for k := range offs {
		offs[k] = float64(k) * g.h / float64(offsets)
	}
	if hasAtoms {
		// Grids through the loss's atoms (Laplace): no rounding there.
		for _, a := range atoms {
			offs = append(offs, a-math.Floor(a/g.h)*g.h)
		}
	}
	n := len(offs)
	pmfs := make([]pldPMF, n)
	means := make([]float64, n)
	errs := make([]error, n)
	pmfs[0], means[0] = best, mean(&best)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for k := 1; k < n; k++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			gk, err := newPLDGridOffset(ctx, g.pair, g.h, eta, offs[k])
			if err == nil {
				pmfs[k], err = gk.lower(ctx)
			}
			if errs[k] = err; err == nil {
				means[k] = mean(&pmfs[k])
			}
		}()
	}
	wg.Wait()
	if err := accounting.Canceled(ctx); err != nil {
		return pldPMF{}, err
	}
	bi := 0
	for k := 1; k < n; k++ {
		if errs[k] == nil && means[k] > means[bi] {
			bi = k // an offset whose grid failed (too large) is skipped
		}
	}
	return pmfs[bi], nil
}

// pldNoClosedForm disables the Gaussian closed form (tests of the FFT path).
var pldNoClosedForm = false

// pldCutShare is the share of a query's δ that the per-step truncation
// may spend when the tails, not the spread, decide the grid (see
// composePLD).
const pldCutShare = 1e-3

// pldCutMaxSteps is the most steps for which a query cuts the tails at its
// δ: beyond, the composed window, not the per-step range, limits the grid
// (the FFT coarsens it back), and a cut only costs δ.
const pldCutMaxSteps = 1 << 24

// pldEta returns the per-step truncation mass for a query at delta (0: not
// a δ query): 1e-20/steps, or, when delta > 0, the largest power of two
// below pldCutShare·delta/(2·steps) if that is larger. The upper
// distribution moves the truncated mass to +∞ (above) or up to the grid
// (below), so its δ rises by at most 2·steps·eta ≤ pldCutShare·delta.
func pldEta(steps int, delta float64) float64 {
	eta := 1e-20 / float64(steps)
	if delta > 0 {
		if e := math.Exp2(math.Floor(math.Log2(pldCutShare * delta / (2 * float64(steps))))); e > eta {
			eta = e
		}
	}
	return eta
}

// composePLD discretises and composes both directions of the steps with
// pairs plds[i], repeated counts[i] times. delta is the query's δ, or 0
// (see pldSetup.eta).
func composePLD(ctx context.Context, plds []*mechanism.PLD, counts []int, h, delta float64) (*pldResult, error) {
	st := newPLDSetup(plds, counts)
	return st.compose(ctx, h, st.eta(h, delta))
}

// gridAtoms returns the atoms of a pair's loss that grids are aligned with
// (nil: none): those its Support lists, except for a pair whose truncation
// is cut at a query's δ, whose grids are not aligned.
func gridAtoms(p mechanism.Pair) []float64 {
	if _, cut := p.(*pldCutPair); cut {
		return nil
	}
	return p.Support().Atoms
}

// pldSetup holds the dominating pairs of a composition per direction, with
// what the choice of grid needs.
type pldSetup struct {
	plds   []*mechanism.PLD // the steps' pairs (nil for a setup made of pairs)
	counts []int            // the steps' counts
	steps  int
	dirs   []bool
	pairs  [][]mechanism.Pair
	vTot   float64
	// probed and tooFine: whether a set GridWidth has been tried on the
	// whole per-step range (the default truncation), and found too fine
	// for it; queries then cut the tails at their δ (see eta).
	probed, tooFine bool
}

func newPLDSetup(plds []*mechanism.PLD, counts []int) *pldSetup {
	st := &pldSetup{plds: plds, counts: counts}
	for _, n := range counts {
		st.steps += n
	}
	st.dirs = []bool{false, true}
	allSym := true
	for _, p := range plds {
		if !p.Symmetric {
			allSym = false
		}
	}
	if allSym {
		st.dirs = st.dirs[:1] // both directions have the same loss distribution
	}
	st.pairs = make([][]mechanism.Pair, len(st.dirs))
	for d, add := range st.dirs {
		var v float64
		for i, pl := range plds {
			p := pl.Remove
			if add {
				p = pl.Add
			}
			st.pairs[d] = append(st.pairs[d], p)
			_, vk := p.Moments()
			v += float64(counts[i]) * vk
		}
		st.vTot = math.Max(st.vTot, v)
	}
	return st
}

// rangeAt returns the widest per-step loss range truncated at eta, by
// bisection on the exact tails when exact is set (see pldCutPair).
func (st *pldSetup) rangeAt(eta float64, exact bool) float64 {
	var m float64
	for d := range st.pairs {
		for _, p := range st.pairs[d] {
			lo, hi := p.Truncation(eta)
			if exact {
				lo, hi = pldCut(p, eta)
			}
			m = math.Max(m, hi-lo)
		}
	}
	return m
}

// hStd returns the default grid width from the spread, 0.07·√(V/T).
func (st *pldSetup) hStd() float64 {
	return pldDefaultGridFactor * math.Sqrt(st.vTot/float64(st.steps))
}

// eta returns the per-step truncation mass for a query at delta (0: not a
// δ query) on grid width h (0: the default): 1e-20/steps, or, with the
// default grid when the range of the per-step loss rather than its spread
// would set the width (heavy tails of a small sampling rate), pldEta's
// cut at the query's δ, which narrows the range and so the grid.
func (st *pldSetup) eta(h, delta float64) float64 {
	eta := pldEta(st.steps, 0)
	if delta == 0 || st.steps > pldCutMaxSteps {
		return eta
	}
	if h != 0 {
		if e := pldEta(st.steps, delta); st.tooFine && e > eta {
			return e
		}
		return eta
	}
	if e := pldEta(st.steps, delta); e > eta && !(st.hStd() >= st.rangeAt(eta, false)/pldMaxStepGrid) {
		return e
	}
	return eta
}

// compose discretises and composes both directions with per-step
// truncation mass eta, on grid width h (0: the default).
func (st *pldSetup) compose(ctx context.Context, h, eta float64) (*pldResult, error) {
	counts, steps, dirs, pairs, vTot := st.counts, st.steps, st.dirs, st.pairs, st.vTot
	cut := eta > pldEta(steps, 0)
	rangeMax := st.rangeAt(eta, cut)
	if cut {
		wrapped := make([][]mechanism.Pair, len(pairs))
		for d := range pairs {
			for _, p := range pairs[d] {
				wrapped[d] = append(wrapped[d], &pldCutPair{p})
			}
		}
		pairs = wrapped
	}
	auto := h == 0
	if auto {
		h = pldDefaultGridFactor * math.Sqrt(vTot/float64(steps))
		if !(h > 0) || math.IsInf(h, 0) || math.IsNaN(h) {
			// The quadrature variance over/underflowed (extreme σ):
			// start from the per-step range instead.
			h = rangeMax / 1024
		}
		// Keep the per-step grid and the composed window within bounds.
		h = math.Max(h, rangeMax/pldMaxStepGrid)
		if v := 24 * math.Sqrt(vTot) / (1 << 22); v < math.Inf(1) {
			h = math.Max(h, v)
		}
		if !(h > 0) || math.IsInf(h, 0) {
			h = 1e-3
		}
		// Below ~1e-12 the cell masses (differences of tails known to
		// ~1e-16) no longer resolve the loss; such tiny losses give ε ≈ 0
		// anyway, which a coarser grid still bounds soundly.
		h = math.Max(h, 1e-12)
		if rangeMax/h > 1<<16 {
			// Heavy per-step tails relative to the standard deviation
			// (tiny q, small σ): size the composed window on a coarse
			// grid first and keep the FFT length at most pldAutoFFT.
			h0 := rangeMax / 4096
			for d, add := range dirs {
				var parts []pldPart
				for i, n := range counts {
					_ = add
					g, err := newPLDGrid(ctx, pairs[d][i], h0, eta)
					if err != nil {
						return nil, err
					}
					parts = append(parts, pldPart{g.upper(), n})
				}
				_, _, _, top, bot := pldChernoffWindow(parts, h0)
				h = math.Max(h, (top-bot)/pldAutoFFT)
			}
		}
	}
	if rangeMax/h > 1<<22 {
		return nil, errPLDTooLarge
	}
	r := &pldResult{h: h, eta: eta, auto: auto, cut: cut}
	if auto && len(counts) == 1 {
		// A loss with two atoms (Laplace): a width dividing their distance
		// puts both on one grid (pldLowerBestOffset aligns it).
		if a := gridAtoms(pairs[0][0]); len(a) == 2 && a[0] != a[1] {
			r.span = math.Abs(a[0] - a[1])
			r.h = r.span / math.Ceil(r.span/h)
		}
	}
	for d := range dirs {
		dir := &pldDir{pairs: pairs[d]}
		dir.counts = append(dir.counts, counts...)
		r.dirs = append(r.dirs, dir)
	}
	return r, nil
}
