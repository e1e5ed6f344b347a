package pld

import (
	"context"
	"math"
	"runtime"
	"sync"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
)

// levels is one composition on its first and its refined grids.
type levels struct {
	res   *result
	finer []*result
}

// result holds the composition, computed lazily per direction and bound.
type result struct {
	// closed is set when every step has q = 1: the composition is one
	// Gaussian with noise closedSigma, which is 0 when (Σ n_i/σ_i²)^{−1/2}
	// underflows (the loss 1/(2σ²) exceeds the float64 range).
	closed      bool
	closedSigma float64
	h, eta      float64
	auto        bool    // h chosen by default (may be refined or coarsened)
	cut         bool    // the tails are cut at a query's δ (setup.eta)
	span        float64 // distance of the loss's two atoms that h divides (0: none)
	dirs        []*direction
	lams        []float64 // the tilts of the query in progress (steering slope)
	noLows      bool      // the query in progress makes no lower distribution (see deltaBracket)
}

// direction is one direction (remove or add) of all segments.
type direction struct {
	pairs   []mechanism.Pair
	counts  []int
	grids   []*grid
	up, low *composition

	// The discretised steps and grid width of the untilted up and low
	// compositions (after any coarsening), reused by the tilted ones,
	// which are cached per (bound, λ).
	parts [2][]part
	ph    [2]float64
	tilt  map[tiltKey]*composition

	// means caches the tilted mean of the upper parts per quarter octave
	// of λ (see saddleUpTo), for the parts at width meansH.
	means  map[int]float64
	meansH float64
	// lowTilt records per saddle tilt 2^{k/4} whether the tilt half an
	// octave below it is used instead (see tiltFor).
	lowTilt map[int]bool
}

// tiltKey names a tilted composition of one direction.
type tiltKey struct {
	upper  bool
	lambda float64
}

// get returns the composed upper or lower distribution of direction d,
// tilted by lambda (see composeParts; 0: no tilt). A tilted composition uses
// the grid of the untilted one, which it computes first.
func (r *result) get(ctx context.Context, d int, upper bool, lambda float64) (*composition, error) {
	dir := r.dirs[d]
	if lambda == 0 {
		return r.get0(ctx, d, upper)
	}
	key := tiltKey{upper, lambda}
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
	c, err := composeParts(ctx, dir.parts[b], dir.ph[b], true, lambda)
	if err != nil {
		return nil, err
	}
	if dir.tilt == nil {
		dir.tilt = map[tiltKey]*composition{}
	}
	dir.tilt[key] = c
	return c, nil
}

// get0 returns the untilted composed upper or lower distribution of
// direction d.
func (r *result) get0(ctx context.Context, d int, upper bool) (*composition, error) {
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
	var c *composition
	for {
		if err := accounting.Canceled(ctx); err != nil {
			return nil, err
		}
		var err error
		c, err = composeParts(ctx, parts, h, true, 0)
		if err == nil {
			break
		}
		if err != errTooLarge || !r.auto || h > 1e3 {
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
func (r *result) parts(ctx context.Context, d int, upper bool, h float64) ([]part, error) {
	dir := r.dirs[d]
	gs := dir.grids
	if gs == nil || h != r.h {
		gs = make([]*grid, len(dir.pairs))
		for i := range dir.pairs {
			g, err := newGridFrom(ctx, dir.pairs[i], h, r.eta, r.mirrorGrid(d, i, h))
			if err != nil {
				return nil, err
			}
			gs[i] = g
		}
		if h == r.h {
			dir.grids = gs
		}
	}
	parts := make([]part, len(gs))
	for i, g := range gs {
		if upper {
			parts[i] = part{g.upper(), dir.counts[i]}
			continue
		}
		// With the tails cut at a query's δ (tiny sampling rates, long
		// grids) two offsets, not eight: the retries dominate the cost.
		offsets := 8
		if r.cut {
			offsets = 2
		}
		low, err := lowerBestOffset(ctx, g, dir.counts[i], r.eta, offsets)
		if err != nil {
			return nil, err
		}
		parts[i] = part{low, dir.counts[i]}
	}
	return parts, nil
}

// mirrorGrid returns the grid at width h of another direction's step i
// whose pair is the mirror of direction d's (see mechanism.Mirrored), when
// one is cached; nil otherwise.
func (r *result) mirrorGrid(d, i int, h float64) *grid {
	if h != r.h {
		return nil
	}
	for e, o := range r.dirs {
		if e == d || i >= len(o.grids) || o.grids[i] == nil || o.grids[i].off != 0 {
			continue
		}
		if mirrors(r.dirs[d].pairs[i], o.grids[i].pair) {
			return o.grids[i]
		}
	}
	return nil
}

// lowerBestOffset returns the lower per-step distribution of g's pair. When
// the merge had to round a noticeable mass down (a concentrated loss
// between grid points), it first tries the grid through the merged loss of
// the heaviest cell it rounded down, and keeps the better of the two (by
// mean) when that grid rounds no noticeable mass down (σ 0.5, q 1e-4: one
// retry instead of eight, and a lower bound as tight); otherwise it
// retries on grids shifted by multiples of h/offsets and keeps the one
// with the largest mean loss, i.e. the least rounding. Any offset gives a valid lower bound. The retries are independent and
// run on up to GOMAXPROCS goroutines; the choice (the first offset with the
// largest mean) does not depend on their schedule.
func lowerBestOffset(ctx context.Context, g *grid, count int, eta float64, offsets int) (pmf, error) {
	atoms := gridAtoms(g.pair)
	hasAtoms := atoms != nil
	mean := func(m *pmf) float64 {
		var s float64
		for i, v := range m.p {
			s += v * (float64(m.lo+i)*g.h + m.off)
		}
		return s
	}
	// The retry through the heaviest rounded cell needs of the first
	// merge only that cell and whether it rounded enough down: once both
	// are settled, the first merge pauses, and when the retry's mean
	// beats a bound on the finished first merge's (lowerMerge.meanBound)
	// the rest of it is not computed (σ 0.5, q 1e-4: the heaviest cell
	// is the first, 93% of the mass, and the retry wins by 8e-5 in the
	// mean). The pmf returned is the same bit for bit.
	m := g.newLowerMerge()
	var pause func() bool
	if !hasAtoms {
		pause = func() bool {
			return m.low.heaviest > 0 && !(m.low.fallback*float64(count) < 1e-6) && m.heaviestSettled()
		}
	}
	done, err := m.run(ctx, pause)
	if err != nil {
		return m.low, err
	}
	var (
		pa      pmf
		paErr   error
		retried bool
	)
	// retry merges on the grid through the heaviest rounded cell's merged
	// loss (just below it), where that cell's mass can sit at its own
	// loss: with a concentrated loss (a small sampling rate's unsampled
	// bulk near log(1−q)) it is usually the best offset, and when it
	// leaves no noticeable mass rounded down the evenly spaced offsets
	// are not tried.
	retry := func() {
		retried = true
		l := m.low.fallbackAt - 1e-9*math.Max(g.h, math.Abs(m.low.fallbackAt))
		off := l - math.Floor(l/g.h)*g.h
		var ga *grid
		if ga, paErr = newLowerGrid(ctx, g.pair, g.h, eta, off); paErr == nil {
			pa, paErr = ga.lower(ctx)
		}
	}
	if !done {
		retry()
		if paErr == nil && pa.fallback*float64(count) < 1e-6 {
			// (1e-8 of the terms' magnitudes covers the rounding of
			// both means' sums.)
			if b, scale := m.meanBound(); mean(&pa) > b+1e-8*scale {
				return pa, nil
			}
		}
		if paErr != nil && paErr != errTooLarge {
			return pmf{}, paErr
		}
		if _, err := m.run(ctx, nil); err != nil {
			return m.low, err
		}
	}
	best := m.low
	if best.fallback*float64(count) < 1e-6 && !hasAtoms {
		return best, nil
	}
	if !hasAtoms && best.heaviest > 0 {
		if !retried {
			retry()
		}
		if paErr == nil && pa.fallback*float64(count) < 1e-6 {
			if mean(&pa) > mean(&best) {
				best = pa
			}
			return best, nil
		}
		if paErr != nil && paErr != errTooLarge {
			return pmf{}, paErr
		}
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
	pmfs := make([]pmf, n)
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
			gk, err := newLowerGrid(ctx, g.pair, g.h, eta, offs[k])
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
		return pmf{}, err
	}
	bi := 0
	for k := 1; k < n; k++ {
		if errs[k] == nil && means[k] > means[bi] {
			bi = k // an offset whose grid failed (too large) is skipped
		}
	}
	return pmfs[bi], nil
}

// result composes the recorded steps on the first grid with the default
// truncation (cached until the next Compose); the caller has checked that
// a step was composed.
func (a *Accountant) result(ctx context.Context) (*result, error) {
	lv, err := a.resultFor(ctx, 0)
	if err != nil {
		return nil, err
	}
	return lv.res, nil
}

// tailsCut reports whether queries cut the per-step tails at their δ
// (see setup.eta).
func (a *Accountant) tailsCut(ctx context.Context) bool {
	for _, k := range a.keys() {
		if a.pld(k).GaussianSigma == 0 || noClosedForm {
			if a.setup == nil {
				a.setup = newSetup(a.pldsOf(a.keys()))
			}
			a.probeWidth(ctx)
			return a.setup.eta(a.h, 1) > etaFor(a.setup.steps, 0)
		}
	}
	return false // the closed form
}

// resultFor returns the compositions for a query at delta (0: not a δ
// query), whose per-step truncation setup.eta picks.
func (a *Accountant) resultFor(ctx context.Context, delta float64) (*levels, error) {
	keys := a.keys()
	allGaussian := true
	var inv float64
	for _, k := range keys {
		s := a.pld(k).GaussianSigma
		if s == 0 {
			allGaussian = false
		}
		inv += float64(a.counts[k]) / (s * s)
	}
	if a.levels == nil {
		a.levels = map[float64]*levels{}
	}
	if allGaussian && !noClosedForm {
		lv := a.levels[0]
		if lv == nil {
			lv = &levels{res: &result{closed: true, closedSigma: 1 / math.Sqrt(inv)}}
			a.levels[0] = lv
		}
		return lv, nil
	}
	if a.setup == nil {
		a.setup = newSetup(a.pldsOf(keys))
	}
	a.probeWidth(ctx)
	return a.levelAt(ctx, a.setup.eta(a.h, delta))
}

// probeWidth tries a set GridWidth on the whole per-step range once: where
// it does not fit, queries at δ cut the tails as the default grid does
// for tiny ε (setup.tooFine).
func (a *Accountant) probeWidth(ctx context.Context) {
	if a.h == 0 || a.setup.probed {
		return
	}
	_, err := a.levelAt(ctx, etaFor(a.setup.steps, 0))
	if err != nil && err != errTooLarge {
		return // cancelled: probe again next time
	}
	a.setup.probed, a.setup.tooFine = true, err == errTooLarge
}

// levelAt returns the composition with per-step truncation mass eta,
// composed on first use.
func (a *Accountant) levelAt(ctx context.Context, eta float64) (*levels, error) {
	if lv := a.levels[eta]; lv != nil {
		return lv, nil
	}
	r, err := a.setup.compose(ctx, a.h, eta)
	if err != nil {
		return nil, err
	}
	lv := &levels{res: r}
	if a.levels == nil { // a set GridWidth's probe (tailsCut) comes first
		a.levels = map[float64]*levels{}
	}
	a.levels[eta] = lv
	return lv, nil
}

// steerCoarsen is how many times the default width the grids of the
// compositions are that only steer the cut of a δ query (steerLevel):
// their upper bounds, certified all the same, are within a few percent
// of the default grid's in δ (the bracket is of second order in h), which
// is all the choice of the cut needs, at about a quarter of the cost.
const steerCoarsen = 4

// steerLevel returns the composition with per-step truncation mass eta
// on a grid steerCoarsen times as wide as the default one, for steering
// the cut of a δ query (see deltaBounds), composed on first use; with a
// set GridWidth, the level itself (levelAt).
func (a *Accountant) steerLevel(ctx context.Context, eta float64) (*levels, error) {
	if a.h != 0 {
		return a.levelAt(ctx, eta)
	}
	if lv := a.steerLevels[eta]; lv != nil {
		return lv, nil
	}
	r, err := a.setup.compose(ctx, 0, eta)
	if err != nil {
		return nil, err
	}
	r.h *= steerCoarsen
	if r.span > 0 {
		r.h = r.span / math.Ceil(r.span/r.h)
	}
	lv := &levels{res: r}
	if a.steerLevels == nil {
		a.steerLevels = map[float64]*levels{}
	}
	a.steerLevels[eta] = lv
	return lv, nil
}

// level returns the composition on the first grid refined k ≥ 1 times
// (computed from level k−1 and cached), or errTooLarge when its window
// would exceed the FFT cap.
func (lv *levels) level(k int) (*result, error) {
	for len(lv.finer) < k {
		prev := lv.res
		if n := len(lv.finer); n > 0 {
			prev = lv.finer[n-1]
		}
		finer, err := prev.halved()
		if err != nil {
			return nil, err
		}
		lv.finer = append(lv.finer, finer)
	}
	return lv.finer[k-1], nil
}

// refineStep is the ratio of consecutive grid widths in refinement: the
// bracket is of second order in h, so each step halves it at √2 the cost
// (a first grid a little above the target needs one such step, not a
// grid of twice the points).
var refineStep = 1 / math.Sqrt2

// halved returns r's composition on a grid refineStep as wide (not yet
// computed), or errTooLarge when the window, estimated from r's, would
// not fit.
func (r *result) halved() (*result, error) {
	for _, d := range r.dirs {
		if d.up != nil && float64(len(d.up.c))/refineStep > 2*autoFFT {
			return nil, errTooLarge
		}
		for _, g := range d.grids {
			if float64(len(g.tl))/refineStep > 4*maxStepGrid {
				return nil, errTooLarge
			}
		}
	}
	finer := &result{h: r.h * refineStep, eta: r.eta, auto: true, cut: r.cut, span: r.span}
	if r.span > 0 {
		finer.h = r.span / math.Ceil(r.span/finer.h)
	}
	for _, d := range r.dirs {
		finer.dirs = append(finer.dirs, &direction{pairs: d.pairs, counts: d.counts})
	}
	return finer, nil
}
