package pld

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// pmf is a privacy loss distribution on the grid {k·h}: mass p[i] at loss
// (lo+i)·h, plus mass inf at loss +∞. The finite part may be a
// sub-probability (mass dropped for a lower bound).
type pmf struct {
	lo  int
	off float64 // losses are (lo+i)·h + off
	p   []float64
	inf float64
	// fallback is the P-mass the lower-bound merge had to round down, and
	// fallbackAt the merged loss of its heaviest cell (before rounding).
	fallback, fallbackAt float64
	heaviest             float64 // the mass of that cell
	// stop is the loss above which a lower merge on a grid with dropTop
	// dropped the P-mass (see grid.dropTop).
	stop float64
}

// mergeScan is how many grid cells beyond its target the lower-bound
// merge may extend a cell before it falls back to rounding down.
const mergeScan = 8

// relSlack is the relative rounding slack allowed for a log-space mass or
// tail computed from erfc, log and exp (a few hundred ulps): the error
// within which every pair states its tails.
const relSlack = mechanism.TailsRelError

// binMass returns log of the mass of (a, b] given the log tails and heads at
// its ends, differencing whichever of the two is smaller so that the
// subtraction does not cancel, and logRef, the log of the larger operand of
// the difference (its rounding error is a few ulps of that operand).
func binMass(tA, tB, hA, hB float64) (logMass, logRef float64) {
	if hB < -math.Ln2 {
		if hB <= hA {
			return math.Inf(-1), hB
		}
		return logmath.Sub(hB, hA), hB
	}
	if tA <= tB {
		return math.Inf(-1), tA
	}
	return logmath.Sub(tA, tB), tA
}

// discretise returns the per-step privacy loss distributions of pair on the
// grid of width h: an upper one (dominating) and a lower one (dominated).
// Losses beyond the truncation points (P-mass at most eta on each side)
// are treated as described below.
//
// Upper ("connect the dots", Doroshenko, Ghazi, Kamath, Kumar, Manurangsi
// 2022, "Connect the Dots: Tighter Discrete Approximations of Privacy Loss
// Distributions", PETS, §3): the P-mass of L in each grid cell (kh, (k+1)h]
// is split between the two ends so that both its P- and its Q-mass are
// kept. The continuous pair is then a post-processing (merge) of the
// discrete one, so the discrete pair dominates it, and the domination is
// kept under composition; the error is of second order in h. Mass below
// the lowest grid point is moved up to it, mass above the highest goes to
// the +∞ atom (both only raise the privacy loss). Rounding in each split is
// resolved upward by a margin that covers the float64 error of the masses.
//
// Lower (a merge of the output space, i.e. a post-processing, so dominated
// by the true pair): starting from the lowest truncation point, consecutive
// intervals of L are merged greedily so that each merged cell's loss
// log(P(cell)/Q(cell)) is at or just above the next grid value t; its mass
// is put at floor(loss/h)·h ≤ its loss (after subtracting the float64
// error bound of the loss), which can only lower the privacy loss. The cell
// containing the upper tail is merged whole, and the P-mass below the lowest
// truncation point is dropped. Both steps only lower δ(ε) for every ε, for
// one step and (coupling the per-step losses) for any composition.
func discretise(ctx context.Context, pair mechanism.Pair, h, eta float64) (up, low pmf, err error) {
	g, err := newGrid(ctx, pair, h, eta)
	if err != nil {
		return up, low, err
	}
	low, err = g.lower(ctx)
	return g.upper(), low, err
}

// grid holds the log tails of one pair at the grid points kLo..kHi.
type grid struct {
	pair     mechanism.Pair
	h        float64
	kLo, kHi int
	off      float64 // grid point k is at loss k·h + off
	tl       []mechanism.Tails
	logEta   float64 // log of the truncation mass eta
	// dropTop makes lower drop the P-mass above the last merged cell
	// instead of merging it into one atom (the two-scale lower bound,
	// whose jumps above are discretised on their own grid); the loss it
	// stopped at is returned in pmf.stop.
	dropTop bool
	// lowerOnly marks a grid whose tails may lack heads (lowerTails): its
	// lower distribution is all it is made for.
	lowerOnly bool
}

// at returns the loss of grid point k.
func (gr *grid) at(k int) float64 { return float64(k)*gr.h + gr.off }

func newGrid(ctx context.Context, pair mechanism.Pair, h, eta float64) (*grid, error) {
	return newGridOffset(ctx, pair, h, eta, 0)
}

// checkEvery is how many grid points, cells or pair evaluations (each
// weighted by its TailsCost) a loop handles between checks of its context;
// each check counts one unit of work (accounting.Canceled), and an FFT of n
// points counts n/checkEvery more.
const checkEvery = 1024

// newGridOffset is newGrid on the shifted grid {k·h + off}.
func newGridOffset(ctx context.Context, pair mechanism.Pair, h, eta, off float64) (*grid, error) {
	lLo, lHi := pair.Truncation(eta)
	return newGridSpan(ctx, pair, h, eta, off, math.Floor((lLo-off)/h), math.Ceil((lHi-off)/h))
}

// newLowerGrid is newGridOffset for a grid whose lower distribution is
// all that is wanted: its tails are lowerTails', and upper panics.
func newLowerGrid(ctx context.Context, pair mechanism.Pair, h, eta, off float64) (*grid, error) {
	lLo, lHi := pair.Truncation(eta)
	g, err := newGridSpanTails(ctx, pair, h, eta, off, math.Floor((lLo-off)/h), math.Ceil((lHi-off)/h), nil, lowerTails(pair))
	if g != nil {
		g.lowerOnly = true
	}
	return g, err
}

// logHeadsNeeded is the log of the tail mass up to which lowerTails
// leaves the heads out.
var logHeadsNeeded = math.Log(0.4)

// lowerTails returns the function that the lower merge evaluates pair's
// tails with: pair.Tails, or, for a pair with mechanism.AboveTails (seen
// through cutPair), where both tails above l are at most 0.4 as masses,
// those two bit for bit with the heads set to 0 (log 1). The merge reads
// the heads only where they are below 1/2 (binMass differences them at a
// and b when the head at b is): the head is one minus the tail, and a
// head of at least 0.6 is above 1/2 whatever its rounding, and so is 0;
// and then a lies below b, so its head is below 1/2 too and was
// evaluated. The same masses at less cost (the sampled Gaussian's
// TailsAbove takes 70% of its Tails' time).
func lowerTails(pair mechanism.Pair) func(float64) mechanism.Tails {
	inner := pair
	if c, ok := inner.(*cutPair); ok {
		inner = c.Pair
	}
	ap, ok := inner.(mechanism.AboveTails)
	if !ok {
		return pair.Tails
	}
	return func(l float64) mechanism.Tails {
		pa, qa := ap.TailsAbove(l)
		if pa > logHeadsNeeded || qa > logHeadsNeeded {
			return pair.Tails(l)
		}
		return mechanism.Tails{PAbove: pa, QAbove: qa}
	}
}

// newGridFrom is newGrid, taking the tails at the points whose mirrored
// loss is a point of src from src when src's pair is pair's mirror (see
// mechanism.Mirrored): the same tails bit for bit, without evaluating
// them. src may be nil.
func newGridFrom(ctx context.Context, pair mechanism.Pair, h, eta float64, src *grid) (*grid, error) {
	if src == nil || src.h != h || src.off != 0 || !mirrors(pair, src.pair) {
		return newGrid(ctx, pair, h, eta)
	}
	lLo, lHi := pair.Truncation(eta)
	return newGridSpanFrom(ctx, pair, h, eta, 0, math.Floor(lLo/h), math.Ceil(lHi/h), src)
}

// mirrors reports whether pair b is pair a's mirror (mechanism.Mirrored),
// seeing through the cut of the tails (cutPair), which changes only the
// truncation.
func mirrors(a, b mechanism.Pair) bool {
	if c, ok := a.(*cutPair); ok {
		a = c.Pair
	}
	if c, ok := b.(*cutPair); ok {
		b = c.Pair
	}
	m, ok := a.(mechanism.Mirrored)
	return ok && m.MirrorOf(b)
}

// newGridSpan is the grid {k·h + off : kLo ≤ k ≤ kHi} of pair.
func newGridSpan(ctx context.Context, pair mechanism.Pair, h, eta, off, fLo, fHi float64) (*grid, error) {
	return newGridSpanFrom(ctx, pair, h, eta, off, fLo, fHi, nil)
}

// newGridSpanFrom is newGridSpan, taking the tails at the points whose
// negated loss is a point of src (a grid of the mirrored pair at the same
// width, offset 0, when off is 0) from src instead of evaluating them:
// point k's loss k·h is exactly −(−k·h), so the tails are the same bit
// for bit. A point taken so counts no evaluation toward the checks of ctx.
func newGridSpanFrom(ctx context.Context, pair mechanism.Pair, h, eta, off, fLo, fHi float64, src *grid) (*grid, error) {
	return newGridSpanTails(ctx, pair, h, eta, off, fLo, fHi, src, pair.Tails)
}

// newGridSpanTails is newGridSpanFrom, evaluating the tails with tails.
func newGridSpanTails(ctx context.Context, pair mechanism.Pair, h, eta, off, fLo, fHi float64, src *grid, tails func(float64) mechanism.Tails) (*grid, error) {
	if !(math.Abs(fLo) < 1<<53 && math.Abs(fHi) < 1<<53) {
		return nil, errTooLarge // also NaN
	}
	kLo, kHi := int(fLo), int(fHi)
	if kHi <= kLo {
		kHi = kLo + 1
	}
	n := kHi - kLo
	if !(n > 0 && n <= maxGrid) {
		return nil, errTooLarge // also NaN or overflowed ends
	}
	tl := make([]mechanism.Tails, n+1)
	cost := pair.TailsCost()
	evals := checkEvery // check before the first point
	for i := range tl {
		if evals >= checkEvery {
			evals = 0
			if err := accounting.Canceled(ctx); err != nil {
				return nil, err
			}
		}
		if src != nil && off == 0 {
			if j := -(kLo + i) - src.kLo; j >= 0 && j < len(src.tl) {
				tl[i] = src.tl[j].Mirror()
				continue
			}
		}
		evals += cost
		tl[i] = tails(float64(kLo+i)*h + off)
	}
	return &grid{pair: pair, h: h, kLo: kLo, kHi: kHi, off: off, tl: tl, logEta: math.Log(eta)}, nil
}

// cutPair is a pair whose truncation is narrowed by bisection on its
// exact tails: pair.truncation bounds each mixture component on its own,
// and for a small sampling rate the sampled component's tail carries only
// q of the mass, so the exact cut can be far narrower (a shorter grid at
// the same width). Used for truncations cut at a query's δ (see
// setup.eta), where the truncated mass is charged in full.
type cutPair struct{ mechanism.Pair }

func (p *cutPair) Truncation(eta float64) (lLo, lHi float64) {
	return cutRange(p.Pair, eta)
}

// cutDone and cutMid are cutRange's bisection: to relative width 1e-9,
// the midpoint evaluated even where it rounds to an end.
func cutDone(a, b float64) bool { return !(b-a > 1e-9*(math.Abs(a)+math.Abs(b))) }

func cutMid(a, b float64) (float64, bool) { return a + (b-a)/2, true }

// cutRange returns losses lLo < lHi outside which P has mass at most eta on
// each side, narrowing pair.truncation's by bisection on the exact tails.
func cutRange(pair mechanism.Pair, eta float64) (lLo, lHi float64) {
	lLo, lHi = pair.Truncation(eta)
	if !(lLo < lHi) || math.IsInf(lLo, 0) || math.IsInf(lHi, 0) || !(eta > 0) {
		return lLo, lHi
	}
	le := math.Log(eta)
	// Largest lo with P(L ≤ lo) ≤ eta, smallest hi with P(L > hi) ≤ eta;
	// the bisections keep those properties at their outer ends.
	if pair.Tails(lLo).PBelow <= le {
		o, _ := search.Solve(search.Problem[float64]{
			Holds:          func(m float64) (bool, error) { return pair.Tails(m).PBelow <= le, nil },
			Side:           search.Lower,
			Lo:             lLo,
			Hi:             lHi,
			LoKnown:        true,
			HiKnown:        true, // the outer end, as far as the bisection goes
			Done:           cutDone,
			Next:           cutMid,
			MaxEvaluations: 64,
		})
		lLo = o.X
	}
	// (lLo = lHi, which the first bisection can reach, leaves lHi as it is.)
	if pair.Tails(lHi).PAbove <= le && lLo < lHi {
		o, _ := search.Solve(search.Problem[float64]{
			Holds:          func(m float64) (bool, error) { return pair.Tails(m).PAbove <= le, nil },
			Lo:             lLo,
			Hi:             lHi,
			LoKnown:        true, // the outer end, as far as the bisection goes
			HiKnown:        true,
			Done:           cutDone,
			Next:           cutMid,
			MaxEvaluations: 64,
		})
		lHi = o.X
	}
	if !(lLo < lHi) {
		return pair.Truncation(eta)
	}
	return lLo, lHi
}

// maxGrid caps the grid points of one step's discretisation.
const maxGrid = 1 << 24

// upper returns the dominating per-step distribution (see discretise).
func (gr *grid) upper() (up pmf) { return gr.upperSpan(true, true) }

// upperSpan is upper restricted to the grid's cells: the P-mass below the
// lowest point is moved up to it only when below is set, and the mass
// above the highest goes to +∞ only when above is set (the two-scale
// split discretises each side on its own grid).
func (gr *grid) upperSpan(below, above bool) (up pmf) {
	if gr.lowerOnly {
		panic("pld: upper distribution of a grid made for the lower one")
	}
	h, kLo, tl := gr.h, gr.kLo, gr.tl
	n := gr.kHi - gr.kLo

	// Upper: split cell masses.
	up.lo, up.off = kLo, gr.off
	up.p = make([]float64, n+1)
	// Written with e^{−h} so that nothing overflows for coarse grids.
	omh := -math.Expm1(-h) // 1 − e^{−h}
	emh := math.Exp(-h)
	var sum, comp float64
	add := func(i int, m float64) {
		up.p[i] += m
		sum, comp = search.Neumaier(sum, comp, m)
	}
	// Every mass is raised by its rounding error bound (2·relSlack of
	// the larger operand of its difference, see binMass), so that each
	// is at least the exact mass it stands for: a dominating distribution
	// may carry more mass than 1, never less, and the excess is relative,
	// not the absolute 2^−52 per step that reassigning the deficit
	// 1 − Σ p to +∞ would cost (a floor of T·2e-16 on δ).
	if below {
		add(0, math.Exp(tl[0].PBelow)*(1+relSlack)) // mass below the grid, moved up
	}
	for i := 0; i < n; i++ {
		lp, refP := binMass(tl[i].PAbove, tl[i+1].PAbove, tl[i].PBelow, tl[i+1].PBelow)
		if math.IsInf(lp, -1) {
			continue
		}
		lq, refQ := binMass(tl[i].QAbove, tl[i+1].QAbove, tl[i].QBelow, tl[i+1].QBelow)
		b := gr.at(kLo + i + 1)
		pm := math.Exp(lp) + 2*relSlack*math.Exp(refP)
		// P-mass at the lower end: (e^{b}·Q(cell) − P(cell))/(e^h − 1).
		var mLo float64
		if !math.IsInf(lq, -1) {
			// = (e^{b}·Q − P)/(e^h − 1), divided through by e^h; e^{a}Q ≤ P
			// for a cell of losses above a = b − h, so this cannot overflow.
			a := b - h
			mLo = (math.Exp(a+lq) - pm*emh) / omh
			errLo := relSlack * (math.Exp(refP-h) + math.Exp(a+refQ) + pm*emh) / omh
			mLo -= errLo
		}
		mLo = max(0, min(mLo, pm)) // as math.Max and math.Min here, inline
		add(i, mLo)
		add(i+1, pm-mLo)
	}
	// Mass above the top grid point goes to +∞.
	if above {
		up.inf = math.Min(1, math.Exp(tl[n].PAbove)*(1+relSlack))
	}

	return up
}

// lowMass returns the log of a cell's P-mass e^{lp} lowered by its
// rounding error bound (2·relSlack of the larger operand e^{refP} of its
// difference, see binMass), so that a dominated distribution never
// carries more mass than the exact one: its δ is then a lower bound with
// no absolute floor.
func lowMass(lp, refP float64) float64 { return lowMassRatio(lp, math.Exp(refP-lp)) }

// lowMassRatio is lowMass given e^{refP−lp}.
func lowMassRatio(lp, ratio float64) float64 {
	r := relSlack * (1 + 2*ratio)
	if !(r < 0.5) {
		return math.Inf(-1) // the mass is below its own error bound: drop it
	}
	return lp + math.Log1p(-r)
}

// lower returns the dominated per-step distribution (see discretise): a
// greedy merge of the loss line from the lowest grid point up, one merged
// cell per step of [lowerMerge].
func (gr *grid) lower(ctx context.Context) (pmf, error) {
	m := gr.newLowerMerge()
	_, err := m.run(ctx, nil)
	return m.low, err
}

// newLowerMerge returns the lower merge of gr at its start (see lower).
func (gr *grid) newLowerMerge() *lowerMerge {
	return &lowerMerge{gr: gr, top: gr.at(gr.kHi), a: gr.at(gr.kLo), ta: gr.tl[0], j: 1, cost: gr.pair.TailsCost(), tails: lowerTails(gr.pair)}
}

// run merges cells until the merge is done, then lays the pmf out in
// m.low (assemble); when pause is not nil and reports true after a cell,
// it stops there, not done, and a later run goes on from that cell.
func (m *lowerMerge) run(ctx context.Context, pause func() bool) (done bool, err error) {
	for {
		if m.evals++; m.evals >= checkEvery {
			m.evals = 0
			if err := accounting.Canceled(ctx); err != nil {
				return false, err
			}
		}
		if m.step() {
			m.assemble()
			return true, nil
		}
		if pause != nil && pause() {
			return false, nil
		}
	}
}

// heaviestSettled reports whether no cell the merge has yet to make can
// replace the heaviest cell it rounded down (low.heaviest and
// low.fallbackAt): a later cell lies above a, so its P-mass is at most
// P(L > a), and it replaces the heaviest only when strictly heavier. The
// factor 2 covers the rounding of the tails (TailsRelError) and of the
// masses' differences many times over; a mass differenced from the heads
// (binMass) has P(L > a) ≥ 1/2 and so cannot pass the test.
func (m *lowerMerge) heaviestSettled() bool {
	return m.low.heaviest > 2*math.Exp(m.ta.PAbove)
}

// meanBound returns an upper bound on the mean loss Σ p·loss of the pmf
// this merge makes once finished (lower), from the masses placed so far,
// and the sum of the magnitudes of its terms (the scale of its rounding).
//
// Each cell the merge has yet to make lies above a and below the grid's
// top point, except the last (the tail above some a' ≥ a), and the merge
// places a mass at most the cell's P-mass at a loss at most the cell's
// merged loss (the premises of the lower bound itself; the tail's at
// most the top point). By the log-sum inequality a cell's P(c)·L_c is at
// most ∫_c L dP, so the cells contribute at most E_P[min(L⁺, top);
// L > a] = a⁺·P(L > a) + ∫_{a⁺}^{top} P(L > s) ds, bounded by the tails
// at the grid points below each s; the tail's mass sits at the top point
// instead of spread over (a', top], which costs at most (top − a')·
// P(a' < L ≤ top): with P(L > a') ≤ eta (the merge took the rest whole),
// a' ≥ top (0), or a' within mergeScan+2 grid points of the top (the
// scan reached the top).
func (m *lowerMerge) meanBound() (bound, scale float64) {
	gr := m.gr
	var placed float64
	for i, k := range m.ks {
		v := m.ms[i] * gr.at(k)
		placed += v
		scale += math.Abs(v)
	}
	// Each tail, as a mass, within TailsRelError of the exact one.
	const grow = 1 + 4*relSlack
	n := gr.kHi - gr.kLo
	pa := math.Exp(m.ta.PAbove) * grow
	top := max(m.top, 0) // with top ≤ 0 no mass above a adds to the mean
	x := min(max(m.a, 0), top)
	rest := x * pa
	if x < top {
		// ∫_x^{top} P(L > s) ds: P(L > s) ≤ P(L > a) up to the first
		// grid point k1 at or above x, and ≤ P(L > s_k) on (s_k, s_k+1].
		k1 := max(int(math.Ceil((x-gr.off)/gr.h))-gr.kLo, 0)
		for k1 > 0 && gr.at(gr.kLo+k1-1) >= x {
			k1--
		}
		for k1 < n && gr.at(gr.kLo+k1) < x {
			k1++
		}
		rest += (gr.at(gr.kLo+k1) - x) * pa
		var s float64
		for k := k1; k < n; k++ {
			s += math.Exp(gr.tl[k].PAbove)
		}
		rest += gr.h * s * grow
	}
	near := float64(mergeScan+2) * gr.h * math.Exp(gr.tl[max(n-mergeScan-2, 0)].PAbove)
	rest += (top*math.Exp(gr.logEta) + near) * grow
	return placed + rest, scale + rest
}

// lowerMerge is the state of the lower discretisation's merge: the masses
// placed so far, and the left end a of the next merged cell with the tails
// there.
type lowerMerge struct {
	gr  *grid
	top float64 // the loss of the grid's top point
	ks  []int   // grid indices of the placed masses
	ms  []float64
	low pmf // the result (fallback and stop accumulate here)
	a   float64
	ta  mechanism.Tails
	j   int // next grid index (into gr.tl) above a
	// evals counts cells and pair evaluations (weighted by their cost)
	// since the last check of ctx: a check (one unit of work, see
	// accounting.Canceled) every checkEvery of them, however many
	// evaluations a cell takes.
	evals, cost int
	tails       func(float64) mechanism.Tails // the pair's (lowerTails)
}

// put places mass m at grid index k.
func (m *lowerMerge) put(k int, mass float64) {
	if mass > 0 {
		m.ks = append(m.ks, k)
		m.ms = append(m.ms, mass)
	}
}

// putLoss puts mass at floor(loss/h), loss already lowered by its rounding
// error bound.
func (m *lowerMerge) putLoss(loss, mass float64) {
	if math.IsNaN(loss) {
		return // dropping mass keeps a lower bound
	}
	if loss > m.top {
		loss = m.top // rounding down further is still a lower bound
	}
	m.put(int(math.Floor((loss-m.gr.off)/m.gr.h)), mass)
}

// mergeTail merges the whole P-mass above a into one atom at its smallest
// possible loss, at least a; qZero is the loss used when the Q-mass above a
// is 0 (the loss is +∞ there: any value is lower).
func (m *lowerMerge) mergeTail(qZero float64) {
	ta := m.ta
	if math.IsInf(ta.PAbove, -1) {
		return
	}
	loss := ta.PAbove - ta.QAbove
	if math.IsInf(ta.QAbove, -1) {
		loss = qZero
	} else if loss < m.a {
		loss = m.a
	}
	m.putLoss(math.Max(loss-relSlack*(1+math.Abs(loss)), m.a), math.Exp(ta.PAbove)*(1-relSlack))
}

// phi returns φ(b) = (the merged loss of (a, b] less its rounding error) −
// t for the tails tb at b, negative for b ≤ t and increasing beyond, and
// the log of the cell's P-mass lowered by its error bound.
func (m *lowerMerge) phi(tb mechanism.Tails, t float64) (float64, float64) {
	c := m.cellAt(tb, t)
	return c.f, c.lowMass()
}

// mergedCell is φ of the cell (a, b] at a target t (see phi), with what
// its lowered P-mass needs, which is computed only for the cell kept
// (lowMass): a root search evaluates φ at several b. errL is the rounding
// error bound that φ subtracts from the merged loss (0 where φ is ±Inf).
// φ's float64 noise is of that size: for a narrow cell the masses are
// differences of tails that cancel, and errL grows as the tails over the
// cell's mass.
type mergedCell struct {
	f, errL float64
	lp      float64 // log P-mass (−Inf: none)
	ratio   float64 // e^{refP−lp} (see binMass)
}

// lowMass returns the log of the cell's P-mass lowered by its error bound
// (see the function lowMass).
func (c mergedCell) lowMass() float64 {
	if math.IsInf(c.lp, -1) {
		return c.lp
	}
	return lowMassRatio(c.lp, c.ratio)
}

// cellAt returns φ and the masses of the cell (a, b] for the tails tb at
// b (see mergedCell; each exp computed once).
func (m *lowerMerge) cellAt(tb mechanism.Tails, t float64) mergedCell {
	ta := m.ta
	lp, refP := binMass(ta.PAbove, tb.PAbove, ta.PBelow, tb.PBelow)
	if math.IsInf(lp, -1) {
		return mergedCell{f: math.Inf(-1), lp: lp}
	}
	ratio := math.Exp(refP - lp)
	lq, refQ := binMass(ta.QAbove, tb.QAbove, ta.QBelow, tb.QBelow)
	if math.IsInf(lq, -1) {
		return mergedCell{f: math.Inf(1), lp: lp, ratio: ratio}
	}
	// Relative error of each mass is ≲ relSlack·ref/mass.
	errL := relSlack * (1 + ratio + math.Exp(refQ-lq))
	return mergedCell{f: lp - lq - errL - t, errL: errL, lp: lp, ratio: ratio}
}

// illinoisNoise is how many times φ's own error bound (mergedCell.errL) the
// Illinois search accepts as its distance above the target, when that is
// more than its tolerance: below it, φ's sign is float64 noise, and the
// search used to alternate between noisy signs until its cap (σ 0.7985,
// q 0.0005428, T 821, δ 7.795e-10: 4.65 pair evaluations per merged cell,
// some cells 40, against 1.22 with the floor; the lower ε moved by 1e-10
// relative there, and by at most 7e-6 relative on the grid-width sweep
// (σ 10, q 1e-4, T 1e5, δ 1e-5), its width from 0.0873% to 0.0880%).
const illinoisNoise = 1

// step merges one cell from a, and reports whether the merge is done.
func (m *lowerMerge) step() (done bool) {
	gr := m.gr
	if gr.dropTop && (m.ta.PAbove <= gr.logEta || m.a >= m.top) {
		m.low.stop = m.a
		return true
	}
	if m.ta.PAbove <= gr.logEta {
		// The P-mass above a is at most eta: merge it whole (as at
		// the top of the grid below). The grid's top point bounds
		// the q-weighted component of the remove direction only
		// through Φ̄(z) ≤ eta, so for small q the cells above here
		// carry far less than eta, and a root search per cell there
		// (the bulk of the cost) would change δ by less than
		// count·eta.
		m.mergeTail(m.a)
		return true
	}
	kt := int(math.Floor((m.a-gr.off)/gr.h)) + 1
	t := gr.at(kt)
	n := gr.kHi - gr.kLo
	for m.j <= n && gr.at(gr.kLo+m.j) <= t {
		m.j++
	}
	j0 := m.j
	left, fl, cell, found := m.scan(t)
	switch {
	case !found && m.j <= n:
		m.fallback(t, j0)
		return false
	case !found && gr.dropTop:
		m.low.stop = m.a
		return true
	case !found:
		m.mergeTail(m.top) // the whole upper tail (a, ∞)
		return true
	}
	tb, lb, cell := m.illinois(kt, t, left, fl, cell)
	fr, lp := cell.f, cell.lowMass() // φ unscaled by Illinois
	if !math.IsInf(lp, -1) {
		extra := 0
		if math.IsInf(fr, 1) {
			extra = gr.kHi - kt
		} else if fr >= gr.h {
			extra = int(math.Floor(fr / gr.h))
		}
		m.put(min(kt+max(extra, 0), max(gr.kHi, kt)), math.Exp(lp))
	}
	m.a, m.ta = lb, tb
	if m.a >= m.top {
		if gr.dropTop {
			m.low.stop = m.a
			return true
		}
		m.mergeTail(m.a) // the remaining tail above the grid
		return true
	}
	return false
}

// scan looks for the first of the next mergeScan grid points whose cell
// from a lifts the merged loss to t (φ ≥ 0), leaving m.j there: found,
// that cell (φ there is cell.f), and the last point below with φ < 0
// (left and fl; t and NaN when there is none).
func (m *lowerMerge) scan(t float64) (left, fl float64, cell mergedCell, found bool) {
	gr := m.gr
	n := gr.kHi - gr.kLo
	left, fl = t, math.NaN()
	j0 := m.j
	for ; m.j <= n && m.j < j0+mergeScan; m.j++ {
		c := m.cellAt(gr.tl[m.j], t)
		if c.f >= 0 {
			return left, fl, c, true
		}
		left, fl = gr.at(gr.kLo+m.j), c.f
	}
	return left, fl, mergedCell{}, false
}

// fallback merges only up to the first grid point j0 above t, when the
// cells just above t cannot lift the merged loss to t (a concentrated mass
// well below t, coarse grid), and rounds its loss down to the grid (still
// a lower bound, but first-order in h; EpsilonBounds refines the grid when
// the gap shows it).
func (m *lowerMerge) fallback(t float64, j0 int) {
	gr := m.gr
	tb := gr.tl[j0]
	if f, lp := m.phi(tb, t); !math.IsInf(lp, -1) {
		// Every outcome in the cell has loss > a, so its merged
		// loss does too, whatever the rounding of the masses.
		loss := math.Max(t+f, m.a)
		if math.IsInf(f, 1) {
			loss = m.top
		}
		mass := math.Exp(lp)
		m.putLoss(loss, mass)
		m.low.fallback += mass
		if mass > m.low.heaviest && !math.IsInf(f, 1) {
			m.low.heaviest, m.low.fallbackAt = mass, loss
		}
	}
	m.a, m.ta, m.j = gr.at(gr.kLo+j0), tb, j0
}

// illinois narrows the right end b of the cell (a, b] from the grid point
// m.j, where φ = cell.f ≥ 0, toward the root of φ by Illinois steps,
// keeping φ(b) ≥ 0, until the merged loss is within 1e-6·h above t (or
// within a few ulps of t: a finer target is not representable; or within
// illinoisNoise times φ's own error bound at b, below which its sign is
// noise). Any b with φ(b) ≥ 0 keeps the lower bound valid; the target
// only decides how little loss the cell gives away. It returns the
// tails at b, b, and the cell (a, b] (φ unscaled).
func (m *lowerMerge) illinois(kt int, t, left, fl float64, cell mergedCell) (tb mechanism.Tails, lb float64, kept mergedCell) {
	gr := m.gr
	tb, lb, kept = gr.tl[m.j], gr.at(gr.kLo+m.j), cell
	fr := cell.f
	if math.IsNaN(fl) {
		if kt <= gr.kHi {
			fl = m.cellAt(gr.tl[kt-gr.kLo], t).f // t is grid point kt > kLo
		} else {
			m.evals += m.cost
			fl = m.cellAt(m.tails(t), t).f // a reached the top point
		}
	}
	// The bracket (left, lb] with φ(left) = fl < 0 ≤ φ(lb) = fr; the
	// predicate φ(c) ≥ 0 holds at the upper end, which is returned with
	// its tails.
	side := 0
	tol := math.Max(1e-6*gr.h, 8e-16*math.Abs(t))
	var errR float64 // φ's error bound at lb (0: not evaluated here)
	o, _ := search.Solve(search.Problem[float64]{
		Holds: func(c float64) (bool, error) {
			m.evals += m.cost
			tc := m.tails(c)
			cc := m.cellAt(tc, t)
			fc := cc.f
			if fc >= 0 {
				tb, fr, errR, kept = tc, fc, cc.errL, cc
				if side == 1 {
					fl /= 2
				}
				side = 1
				return true, nil
			}
			fl = fc
			if side == -1 {
				fr /= 2
			}
			side = -1
			return false, nil
		},
		Lo:      left,
		Hi:      lb,
		LoKnown: true,
		HiKnown: true,
		Done: func(lo, hi float64) bool {
			return !(fr > max(tol, illinoisNoise*errR) && fl < 0 && !math.IsInf(fr, 1))
		},
		Next: func(lo, hi float64) (float64, bool) {
			var c float64
			if math.IsInf(fl, -1) {
				c = lo + 0.5*(hi-lo)
			} else {
				c = lo + (hi-lo)*(-fl)/(fr-fl)
			}
			return c, c > lo && c < hi
		},
		MaxEvaluations: 40,
	})
	return tb, o.Hi, kept
}

// assemble lays the placed masses out as the pmf's array.
func (m *lowerMerge) assemble() {
	if len(m.ks) == 0 {
		return
	}
	kmin, kmax := m.ks[0], m.ks[0]
	for _, k := range m.ks {
		kmin = min(kmin, k)
		kmax = max(kmax, k)
	}
	m.low.lo, m.low.off = kmin, m.gr.off
	m.low.p = make([]float64, kmax-kmin+1)
	for i, k := range m.ks {
		m.low.p[k-kmin] += m.ms[i]
	}
}
