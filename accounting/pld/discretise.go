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
	// fallback is the P-mass the lower-bound merge had to round down.
	fallback float64
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

// newGridSpan is the grid {k·h + off : kLo ≤ k ≤ kHi} of pair.
func newGridSpan(ctx context.Context, pair mechanism.Pair, h, eta, off, fLo, fHi float64) (*grid, error) {
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
		evals += cost
		tl[i] = pair.Tails(float64(kLo+i)*h + off)
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
		a, b := lLo, lHi
		for it := 0; it < 64 && b-a > 1e-9*(math.Abs(a)+math.Abs(b)); it++ {
			m := a + (b-a)/2
			if pair.Tails(m).PBelow <= le {
				a = m
			} else {
				b = m
			}
		}
		lLo = a
	}
	if pair.Tails(lHi).PAbove <= le {
		a, b := lLo, lHi
		for it := 0; it < 64 && b-a > 1e-9*(math.Abs(a)+math.Abs(b)); it++ {
			m := a + (b-a)/2
			if pair.Tails(m).PAbove <= le {
				b = m
			} else {
				a = m
			}
		}
		lHi = b
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
		mLo = math.Max(0, math.Min(mLo, pm))
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
func lowMass(lp, refP float64) float64 {
	r := relSlack * (1 + 2*math.Exp(refP-lp))
	if !(r < 0.5) {
		return math.Inf(-1) // the mass is below its own error bound: drop it
	}
	return lp + math.Log1p(-r)
}

// lower returns the dominated per-step distribution (see discretise).
func (gr *grid) lower(ctx context.Context) (low pmf, err error) {
	h, kLo, kHi, tl, pair, at := gr.h, gr.kLo, gr.kHi, gr.tl, gr.pair, gr.at
	n := kHi - kLo
	var ks []int
	var ms []float64
	put := func(k int, m float64) {
		if m > 0 {
			ks = append(ks, k)
			ms = append(ms, m)
		}
	}
	// putLoss puts mass m at floor(loss/h), loss already lowered by its
	// rounding error bound.
	putLoss := func(loss, m float64) {
		if math.IsNaN(loss) {
			return // dropping mass keeps a lower bound
		}
		if loss > at(kHi) {
			loss = at(kHi) // rounding down further is still a lower bound
		}
		put(int(math.Floor((loss-gr.off)/h)), m)
	}
	a := at(kLo)
	ta := tl[0]
	// putTail merges the whole P-mass above a (tail values ta) into one
	// atom at its smallest possible loss, at least a.
	putTail := func() {
		if math.IsInf(ta.PAbove, -1) {
			return
		}
		loss := ta.PAbove - ta.QAbove
		if math.IsInf(ta.QAbove, -1) || loss < a {
			loss = a
		}
		putLoss(math.Max(loss-relSlack*(1+math.Abs(loss)), a), math.Exp(ta.PAbove)*(1-relSlack))
	}
	j := 1 // next grid index (into tl) above a
	// evals counts cells and pair evaluations (weighted by their cost)
	// since the last check of ctx: a check (one unit of work, see
	// accounting.Canceled) every checkEvery of them, however many
	// evaluations a cell takes.
	evals, cost := 0, pair.TailsCost()
	for {
		if evals++; evals >= checkEvery {
			evals = 0
			if err := accounting.Canceled(ctx); err != nil {
				return low, err
			}
		}
		if gr.dropTop && (ta.PAbove <= gr.logEta || a >= at(kHi)) {
			low.stop = a
			break
		}
		if ta.PAbove <= gr.logEta {
			// The P-mass above a is at most eta: merge it whole (as at
			// the top of the grid below). The grid's top point bounds
			// the q-weighted component of the remove direction only
			// through Φ̄(z) ≤ eta, so for small q the cells above here
			// carry far less than eta, and a root search per cell there
			// (the bulk of the cost) would change δ by less than
			// count·eta.
			putTail()
			break
		}
		kt := int(math.Floor((a-gr.off)/h)) + 1
		t := at(kt)
		// φ(b) = (merged loss of (a, b] less its rounding error) − t; it
		// is negative for b ≤ t and increasing beyond.
		phi := func(tb mechanism.Tails) (float64, float64) {
			lp, refP := binMass(ta.PAbove, tb.PAbove, ta.PBelow, tb.PBelow)
			if math.IsInf(lp, -1) {
				return math.Inf(-1), lp
			}
			lq, refQ := binMass(ta.QAbove, tb.QAbove, ta.QBelow, tb.QBelow)
			if math.IsInf(lq, -1) {
				return math.Inf(1), lowMass(lp, refP)
			}
			// Relative error of each mass is ≲ relSlack·ref/mass.
			errL := relSlack * (1 + math.Exp(refP-lp) + math.Exp(refQ-lq))
			return lp - lq - errL - t, lowMass(lp, refP)
		}
		for j <= n && at(kLo+j) <= t {
			j++
		}
		left, fl := t, math.NaN()
		found := false
		var fr float64
		j0 := j
		for ; j <= n && j < j0+mergeScan; j++ {
			f, _ := phi(tl[j])
			if f >= 0 {
				fr, found = f, true
				break
			}
			left, fl = at(kLo+j), f
		}
		if !found && j <= n {
			// The cells just above t cannot lift the merged loss to t
			// (a concentrated mass well below t, coarse grid): merge
			// only up to the first grid point above t and round its loss
			// down to the grid (still a lower bound, but first-order in
			// h; EpsilonBounds refines the grid when the gap shows it).
			tb := tl[j0]
			if f, lp := phi(tb); !math.IsInf(lp, -1) {
				// Every outcome in the cell has loss > a, so its merged
				// loss does too, whatever the rounding of the masses.
				loss := math.Max(t+f, a)
				if math.IsInf(f, 1) {
					loss = at(kHi)
				}
				putLoss(loss, math.Exp(lp))
				low.fallback += math.Exp(lp)
			}
			a, ta, j = at(kLo+j0), tb, j0
			continue
		}
		if !found && gr.dropTop {
			low.stop = a
			break
		}
		if !found {
			// Merge the whole upper tail (a, ∞).
			if !math.IsInf(ta.PAbove, -1) {
				loss := ta.PAbove - ta.QAbove
				if math.IsInf(ta.QAbove, -1) {
					loss = at(kHi) // Q-mass 0: loss +∞; any value is lower
				}
				putLoss(math.Max(loss-relSlack*(1+math.Abs(loss)), a), math.Exp(ta.PAbove)*(1-relSlack))
			}
			break
		}
		tb, lb := tl[j], at(kLo+j)
		if math.IsNaN(fl) {
			if kt <= kHi {
				fl, _ = phi(tl[kt-kLo]) // t is grid point kt > kLo
			} else {
				evals += cost
				fl, _ = phi(pair.Tails(t)) // a reached the top point
			}
		}
		// Illinois iteration on φ, keeping a right end with φ ≥ 0, until
		// the merged loss is within 1e-6·h above t.
		side := 0
		// (Or within a few ulps of t: a finer target is not representable.)
		for it := 0; it < 40 && fr > math.Max(1e-6*h, 8e-16*math.Abs(t)) && fl < 0 && !math.IsInf(fr, 1); it++ {
			var c float64
			if math.IsInf(fl, -1) {
				c = left + 0.5*(lb-left)
			} else {
				c = left + (lb-left)*(-fl)/(fr-fl)
			}
			if !(c > left && c < lb) {
				break
			}
			evals += cost
			tc := pair.Tails(c)
			fc, _ := phi(tc)
			if fc >= 0 {
				tb, lb, fr = tc, c, fc
				if side == 1 {
					fl /= 2
				}
				side = 1
			} else {
				left, fl = c, fc
				if side == -1 {
					fr /= 2
				}
				side = -1
			}
		}
		fr, lp := phi(tb) // undo Illinois scaling
		if !math.IsInf(lp, -1) {
			extra := 0
			if math.IsInf(fr, 1) {
				extra = kHi - kt
			} else if fr >= h {
				extra = int(math.Floor(fr / h))
			}
			put(min(kt+max(extra, 0), max(kHi, kt)), math.Exp(lp))
		}
		a, ta = lb, tb
		if a >= at(kHi) {
			if gr.dropTop {
				low.stop = a
				break
			}
			// Remaining tail above the grid.
			putTail()
			break
		}
	}
	if len(ks) > 0 {
		kmin, kmax := ks[0], ks[0]
		for _, k := range ks {
			kmin = min(kmin, k)
			kmax = max(kmax, k)
		}
		low.lo, low.off = kmin, gr.off
		low.p = make([]float64, kmax-kmin+1)
		for i, k := range ks {
			low.p[k-kmin] += ms[i]
		}
	}
	return low, nil
}
