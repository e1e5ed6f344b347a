package pld

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting/mechanism"
)

// autoFFT is the largest FFT length the default grid aims for, and
// maxStepGrid the most grid points per step (the per-step discretisation
// costs a few erfc per point) before refinement.
const (
	autoFFT     = 1 << 19
	maxStepGrid = 1 << 15
)

// cutShare is the share of a query's δ that the per-step truncation
// may spend when the tails, not the spread, decide the grid (see
// composeSteps).
const cutShare = 1e-3

// cutMaxSteps is the most steps for which a query cuts the tails at its
// δ: beyond, the composed window, not the per-step range, limits the grid
// (the FFT coarsens it back), and a cut only costs δ.
const cutMaxSteps = 1 << 24

// etaFor returns the per-step truncation mass for a query at delta (0: not
// a δ query): 1e-20/steps, or, when delta > 0, the largest power of two
// below cutShare·delta/(2·steps) if that is larger. The upper
// distribution moves the truncated mass to +∞ (above) or up to the grid
// (below), so its δ rises by at most 2·steps·eta ≤ cutShare·delta.
func etaFor(steps int, delta float64) float64 {
	eta := 1e-20 / float64(steps)
	if delta > 0 {
		if e := math.Exp2(math.Floor(math.Log2(cutShare * delta / (2 * float64(steps))))); e > eta {
			eta = e
		}
	}
	return eta
}

// composeSteps discretises and composes both directions of the steps with
// pairs plds[i], repeated counts[i] times. delta is the query's δ, or 0
// (see setup.eta).
func composeSteps(ctx context.Context, plds []*mechanism.PLD, counts []int, h, delta float64) (*result, error) {
	st := newSetup(plds, counts)
	return st.compose(ctx, h, st.eta(h, delta))
}

// gridAtoms returns the atoms of a pair's loss that grids are aligned with
// (nil: none): those its Support lists, except for a pair whose truncation
// is cut at a query's δ, whose grids are not aligned.
func gridAtoms(p mechanism.Pair) []float64 {
	if _, cut := p.(*cutPair); cut {
		return nil
	}
	return p.Support().Atoms
}

// setup holds the dominating pairs of a composition per direction, with
// what the choice of grid needs.
type setup struct {
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

func newSetup(plds []*mechanism.PLD, counts []int) *setup {
	st := &setup{plds: plds, counts: counts}
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
// bisection on the exact tails when exact is set (see cutPair).
func (st *setup) rangeAt(eta float64, exact bool) float64 {
	var m float64
	for d := range st.pairs {
		for _, p := range st.pairs[d] {
			lo, hi := p.Truncation(eta)
			if exact {
				lo, hi = cutRange(p, eta)
			}
			m = math.Max(m, hi-lo)
		}
	}
	return m
}

// hStd returns the default grid width from the spread, 0.07·√(V/T).
func (st *setup) hStd() float64 {
	return defaultGridFactor * math.Sqrt(st.vTot/float64(st.steps))
}

// eta returns the per-step truncation mass for a query at delta (0: not a
// δ query) on grid width h (0: the default): 1e-20/steps, or, with the
// default grid when the range of the per-step loss rather than its spread
// would set the width (heavy tails of a small sampling rate), etaFor's
// cut at the query's δ, which narrows the range and so the grid.
func (st *setup) eta(h, delta float64) float64 {
	eta := etaFor(st.steps, 0)
	if delta == 0 || st.steps > cutMaxSteps {
		return eta
	}
	if h != 0 {
		if e := etaFor(st.steps, delta); st.tooFine && e > eta {
			return e
		}
		return eta
	}
	if e := etaFor(st.steps, delta); e > eta && !(st.hStd() >= st.rangeAt(eta, false)/maxStepGrid) {
		return e
	}
	return eta
}

// autoWidth returns the default grid width for the per-step loss range
// rangeMax, before compose widens it for heavy per-step tails (so never
// above the width compose uses).
func (st *setup) autoWidth(rangeMax float64) float64 {
	h := defaultGridFactor * math.Sqrt(st.vTot/float64(st.steps))
	if !(h > 0) || math.IsInf(h, 0) || math.IsNaN(h) {
		// The quadrature variance over/underflowed (extreme σ):
		// start from the per-step range instead.
		h = rangeMax / 1024
	}
	// Keep the per-step grid and the composed window within bounds.
	h = math.Max(h, rangeMax/maxStepGrid)
	if v := 24 * math.Sqrt(st.vTot) / (1 << 22); v < math.Inf(1) {
		h = math.Max(h, v)
	}
	if !(h > 0) || math.IsInf(h, 0) {
		h = 1e-3
	}
	// Below ~1e-12 the cell masses (differences of tails known to
	// ~1e-16) no longer resolve the loss; such tiny losses give ε ≈ 0
	// anyway, which a coarser grid still bounds soundly.
	return math.Max(h, 1e-12)
}

// compose discretises and composes both directions with per-step
// truncation mass eta, on grid width h (0: the default).
func (st *setup) compose(ctx context.Context, h, eta float64) (*result, error) {
	counts, steps, dirs, pairs := st.counts, st.steps, st.dirs, st.pairs
	cut := eta > etaFor(steps, 0)
	rangeMax := st.rangeAt(eta, cut)
	if cut {
		wrapped := make([][]mechanism.Pair, len(pairs))
		for d := range pairs {
			for _, p := range pairs[d] {
				wrapped[d] = append(wrapped[d], &cutPair{p})
			}
		}
		pairs = wrapped
	}
	auto := h == 0
	if auto {
		h = st.autoWidth(rangeMax)
		if rangeMax/h > 1<<16 {
			// Heavy per-step tails relative to the standard deviation
			// (tiny q, small σ): size the composed window on a coarse
			// grid first and keep the FFT length at most autoFFT.
			h0 := rangeMax / 4096
			for d, add := range dirs {
				var parts []part
				for i, n := range counts {
					_ = add
					g, err := newGrid(ctx, pairs[d][i], h0, eta)
					if err != nil {
						return nil, err
					}
					parts = append(parts, part{g.upper(), n})
				}
				_, _, _, top, bot := chernoffWindow(parts, h0)
				h = math.Max(h, (top-bot)/autoFFT)
			}
		}
	}
	if rangeMax/h > 1<<22 {
		return nil, errTooLarge
	}
	r := &result{h: h, eta: eta, auto: auto, cut: cut}
	if auto && len(counts) == 1 {
		// A loss with two atoms (Laplace): a width dividing their distance
		// puts both on one grid (lowerBestOffset aligns it).
		if a := gridAtoms(pairs[0][0]); len(a) == 2 && a[0] != a[1] {
			r.span = math.Abs(a[0] - a[1])
			r.h = r.span / math.Ceil(r.span/h)
		}
	}
	for d := range dirs {
		dir := &direction{pairs: pairs[d]}
		dir.counts = append(dir.counts, counts...)
		r.dirs = append(r.dirs, dir)
	}
	return r, nil
}
