package pld

import (
	"context"
	"math"
	"slices"
)

// targetGap and maxRefine control the grid refinement: with the
// default grid, a bracket wider than targetGap of its upper end is
// recomputed on a grid refineStep as wide, at most maxRefine times.
const (
	targetGap = 0.001
	maxRefine = 6
)

// ownStall is the share of a grid's own bracket by which one of its ends
// must move in when h halves for refined to refine further.
const ownStall = 0.05

// smooth reports whether every step's loss, in every direction, has a
// density and no atoms.
func (r *result) smooth() bool {
	for _, dir := range r.dirs {
		for _, p := range dir.pairs {
			if sp := p.Support(); sp.Lattice || sp.Atoms != nil {
				return false
			}
		}
	}
	return true
}

// refined evaluates f on the first grid and, with the default grid, on
// grids refined in turn (by refineStep) while wide(lower, upper) holds and the bracket
// shrinks by a quarter per halving; it returns the intersection of the
// certified brackets and the first grid's upper bound. The grids visited
// depend only on the composition and on f's argument, not on earlier
// queries.
//
// point(lower, upper) names the (ε, δ) at which the bracket is decided
// (for ε(δ), the upper ε; +Inf asks for an estimate). When the first
// grid's FFT round-off and window tails there exceed noiseFrac of δ,
// each direction is composed again tilted to its saddle point at that ε
// (see composeParts), once more if the tilted bracket moves ε to another
// tilt, and the finer grids use the same tilt.
func (a *Accountant) refined(ctx context.Context, lv *levels, f func(c *composition, upper bool) float64, wide func(lo, up float64) bool, point func(lo, up float64) (eps, delta float64, err error)) (lower, upper, upper0 float64, err error) {
	r := lv.res
	// The untilted upper bounds first: when they call for a tilt, the
	// untilted lower distributions are not needed.
	for d := range r.dirs {
		c, err := r.get(ctx, d, true, 0)
		if err != nil {
			return 0, 0, 0, err
		}
		upper = math.Max(upper, f(c, true))
	}
	upper0 = upper
	if a.stopped(upper) {
		return 0, 0, 0, errStopped
	}
	var lams []float64
	r.lams = nil
	eps, delta, err := point(0, upper)
	if err != nil {
		return 0, 0, 0, err
	}
	if r.noisy(eps, delta) {
		// held is a first tilt whose upper bound (heldUp) is in and whose
		// lower distributions are made only if the tilt after it fails.
		var held []float64
		var heldUp float64
		for it := 0; it < 2; it++ {
			next, err := r.tilts(ctx, eps)
			if err != nil {
				return 0, 0, 0, err
			}
			if lams != nil && slices.Equal(next, lams) {
				break
			}
			stop := func(up float64) bool {
				// Only a tilt that will be kept may stop the query.
				return a.stopped(up) && !math.IsInf(up, 1) && !r.tiltNoisy(next, eps, delta)
			}
			if it == 0 {
				// The upper bounds first: where they move ε to another
				// tilt, the lower distributions at this one would be
				// made for nothing (σ 0.935, q 1e-4, T 1e5, δ 1e-10:
				// the remove direction's at λ 90.5, 800,000 cells and
				// 40% of the query, where λ 76 decided).
				up2, err := r.upperUntil(ctx, f, next, stop)
				if err == errTooLarge || (err == nil && (math.IsInf(up2, 1) || r.tiltNoisy(next, eps, delta))) {
					break // as below
				}
				if err != nil {
					return 0, 0, 0, err
				}
				e2, _, err := point(lower, math.Min(upper, up2))
				if err != nil {
					return 0, 0, 0, err
				}
				then, err := r.tilts(ctx, e2)
				if err != nil {
					return 0, 0, 0, err
				}
				if !slices.Equal(then, next) {
					held, heldUp, eps = next, up2, e2
					continue
				}
			}
			lo2, up2, err := r.boundsUntil(ctx, f, next, stop)
			if err == errTooLarge || (err == nil && (math.IsInf(up2, 1) || r.tiltNoisy(next, eps, delta))) {
				// The untilted bracket stands. (A tilt whose own error
				// terms are not small is the PLD's floor, far below the
				// δ of interest: keeping it would make δ(ε) depend on
				// which tilt each ε picked, and not monotone.)
				break
			}
			if err != nil {
				return 0, 0, 0, err
			}
			if lams == nil {
				lower = lo2
			}
			lams, r.lams = next, next
			lower, upper = math.Max(lower, lo2), math.Min(upper, up2)
			if eps, _, err = point(lower, upper); err != nil {
				return 0, 0, 0, err
			}
		}
		if held != nil {
			if lams == nil {
				// The tilt after it did not stand: the first one does.
				lo2, up2, err := r.boundsUntil(ctx, f, held, nil)
				if err != nil {
					return 0, 0, 0, err
				}
				lams, r.lams = held, held
				lower, upper = lo2, math.Min(upper, up2)
			}
			upper = math.Min(upper, heldUp) // certified either way
		}
	}
	if lams == nil {
		if lower, upper, err = r.bounds(ctx, f, nil); err != nil {
			return 0, 0, 0, err
		}
	}
	if !r.cut && wide(lower, upper) {
		if eps, delta, err = point(lower, upper); err != nil {
			return 0, 0, 0, err
		}
		if lower, upper, err = r.bigTilt(ctx, f, eps, delta, lower, upper, a.stopped); err != nil {
			return 0, 0, 0, err
		}
	}
	stalled := 0                 // consecutive levels that did not shrink the bracket
	ownLo, ownUp := lower, upper // the last grid's own bracket
	for k := 1; r.auto && k <= maxRefine && wide(lower, upper); k++ {
		fr, err := lv.level(k)
		if err == errTooLarge {
			break // keep the certified bracket we have
		}
		if err != nil {
			return 0, 0, 0, err
		}
		lo2, up2, err := fr.boundsUntil(ctx, f, lams, a.stopped)
		if err == errTooLarge {
			break
		}
		if err != nil {
			return 0, 0, 0, err
		}
		// Both brackets are certified: keep their intersection.
		shrunk := math.Min(up2, upper)-math.Max(lo2, lower) < 0.75*(upper-lower)
		lower, upper = math.Max(lower, lo2), math.Min(upper, up2)
		if w := ownUp - ownLo; r.smooth() && w > 0 && !math.IsInf(w, 1) && math.Max(lo2-ownLo, ownUp-up2) < ownStall*w {
			// Neither end of the grid's own bracket moved in by
			// ownStall of its width when h halved: for a loss with a
			// density it is set by something finer grids keep (the cut,
			// a window tail, FFT round-off), where a second-order
			// bracket would have shrunk by three quarters. (A loss on a
			// lattice or with atoms can stall at one width and shrink
			// at the next: a Poisson-sampled discrete Gaussian, 200
			// steps, δ 1e-5 stopped at [4.707, 5.0507], where refined on
			// it gives [4.96506, 5.05029].)
			break
		}
		ownLo, ownUp = lo2, up2
		if shrunk {
			stalled = 0
		} else if stalled++; stalled == 2 {
			break
		}
	}
	return lower, upper, upper0, nil
}

// bigTilt intersects [lower, upper] with the bracket of the composition
// tilted at saddles beyond the default cap of 2^10, where one is: tiny
// losses (a small sampling rate with a large σ) at a small δ (σ 4, q 1e-4,
// T 1e3, δ 1e-15: λ ≈ 7000 gives [0.0055560, 0.0055592], the capped tilt
// [0.00426, 0.00718]). Only for a bracket still wide: past the cap the
// tilted window can also be worse (σ 0.5), and both are certified.
func (r *result) bigTilt(ctx context.Context, f func(c *composition, upper bool) float64, eps, delta, lower, upper float64, stop func(up float64) bool) (float64, float64, error) {
	big := make([]float64, len(r.dirs))
	beyond := false
	for d := range r.dirs {
		big[d] = r.saddleUpTo(d, eps, 120)
		beyond = beyond || big[d] > 0x1p10
	}
	if !beyond {
		return lower, upper, nil
	}
	lo2, up2, err := r.boundsUntil(ctx, f, big, func(up float64) bool {
		return stop(up) && !math.IsInf(up, 1) && !r.tiltNoisy(big, eps, delta)
	})
	if err == errTooLarge || (err == nil && (math.IsInf(up2, 1) || r.tiltNoisy(big, eps, delta))) {
		return lower, upper, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return math.Max(lower, lo2), math.Min(upper, up2), nil
}

// noiseFrac is the share of the target gap (in ε) above which the FFT
// round-off and window tails of the untilted composition call for a
// tilted one.
const noiseFrac = 0.2

// noisy reports whether, in some direction, the untilted upper
// composition's error terms at eps move ε by more than noiseFrac of
// the target gap: noise/(δ·s) > noiseFrac·targetGap·eps, s = −d log
// δ/dε (see slope).
func (r *result) noisy(eps, delta float64) bool {
	if math.IsNaN(eps) || eps < 0 {
		return false
	}
	if math.IsInf(eps, 1) {
		return true
	}
	s := r.slope(eps)
	for _, dir := range r.dirs {
		if dir.up == nil {
			continue
		}
		if dir.up.noise(eps) > noiseFrac*targetGap*math.Max(eps, 0.01)*s*delta {
			return true
		}
	}
	return false
}

// tiltNoisy reports whether the error terms of some direction's upper
// composition tilted by lams exceed tiltNoise of delta at eps.
func (r *result) tiltNoisy(lams []float64, eps, delta float64) bool {
	for d, dir := range r.dirs {
		c := dir.tilt[tiltKey{true, lams[d]}]
		if c == nil {
			continue
		}
		i := c.index(eps)
		if i <= 0 {
			return true // eps below the tilted window: its bound is trivial
		}
		if c.noise(eps)+c.inf > tiltNoise*delta {
			return true
		}
	}
	return false
}

// tiltNoise is the largest share of δ that the error terms and the
// truncated mass of a tilted composition may take for it to be used.
const tiltNoise = 1e-2

// upperAsTilted returns direction d's upper composition as the query in
// progress left it tilted (r.lams; untilted where nil), or nil where it
// is not made.
func (r *result) upperAsTilted(d int) *composition {
	dir := r.dirs[d]
	if r.lams != nil {
		return dir.tilt[tiltKey{true, r.lams[d]}]
	}
	return dir.up
}

// slope returns −d log δ/dε of the upper bound at eps (of the tilted
// compositions of r.lams when set) in the direction with the larger δ (within a cell δ = k − e^ε·b, so it is
// e^ε·b/δ), at least 1e-3; it only steers the choice of tilt and
// refinement, no bound depends on it.
func (r *result) slope(eps float64) float64 {
	var best, s float64 = -1, 1e-3
	for d := range r.dirs {
		c := r.upperAsTilted(d)
		if c == nil {
			continue
		}
		i := c.index(eps)
		d := c.at(eps, i, true)
		if d <= best {
			continue
		}
		best = d
		_, b := c.linear(i, true)
		if d > 0 && b > 0 {
			s = math.Max(1e-3, math.Exp(eps-c.bScale)*b/d)
		}
	}
	return s
}

// bounds evaluates f (ε or δ of one composed distribution) over the
// directions, each tilted by lams[d] (nil: no tilt): the upper bound is the maximum of the directions' upper
// bounds; the lower bound is the maximum of their lower bounds, where a
// direction whose upper bound is at most the lower bound found so far
// cannot raise it and is skipped. A lower distribution too large for the
// FFT cap contributes the trivial lower bound 0.
func (r *result) bounds(ctx context.Context, f func(c *composition, upper bool) float64, lams []float64) (lower, upper float64, err error) {
	return r.boundsUntil(ctx, f, lams, nil)
}

// tilts returns each direction's tilt for a query at eps (tiltFor).
func (r *result) tilts(ctx context.Context, eps float64) ([]float64, error) {
	lams := make([]float64, len(r.dirs))
	for d := range r.dirs {
		var err error
		if lams[d], err = r.tiltFor(ctx, d, eps); err != nil {
			return nil, err
		}
	}
	return lams, nil
}

// upperUntil is boundsUntil's upper bound alone (no lower distribution
// is made).
func (r *result) upperUntil(ctx context.Context, f func(c *composition, upper bool) float64, lams []float64, stop func(up float64) bool) (float64, error) {
	ups, err := r.uppers(ctx, f, lams)
	if err != nil {
		return 0, err
	}
	upper := slices.Max(ups)
	if stop != nil && stop(upper) {
		return 0, errStopped
	}
	return upper, nil
}

// uppers returns f's upper bound of each direction, tilted by lams[d]
// (nil: no tilt).
func (r *result) uppers(ctx context.Context, f func(c *composition, upper bool) float64, lams []float64) ([]float64, error) {
	ups := make([]float64, len(r.dirs))
	for d := range r.dirs {
		lam := 0.0
		if lams != nil {
			lam = lams[d]
		}
		c, err := r.get(ctx, d, true, lam)
		if err != nil {
			return nil, err
		}
		ups[d] = f(c, true)
	}
	return ups, nil
}

// boundsUntil is bounds that returns errStopped once the upper bound is
// known, before any lower distribution is made, when stop (if not nil)
// holds for it.
func (r *result) boundsUntil(ctx context.Context, f func(c *composition, upper bool) float64, lams []float64, stop func(up float64) bool) (lower, upper float64, err error) {
	lam := func(d int) float64 {
		if lams == nil {
			return 0
		}
		return lams[d]
	}
	ups, err := r.uppers(ctx, f, lams)
	if err != nil {
		return 0, 0, err
	}
	best := 0
	for d := range r.dirs {
		if ups[d] > ups[best] {
			best = d
		}
		upper = math.Max(upper, ups[d])
	}
	if stop != nil && stop(upper) {
		return 0, 0, errStopped
	}
	if upper == 0 || r.noLows {
		return 0, upper, nil // lower ≤ upper = 0 needs no work
	}
	order := []int{best}
	for d := range r.dirs {
		if d != best {
			order = append(order, d)
		}
	}
	for _, d := range order {
		if d != best && ups[d] <= lower {
			continue
		}
		c, err := r.get(ctx, d, false, lam(d))
		if err == errTooLarge {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		if v := f(c, false); v > lower {
			lower = v
		}
	}
	return math.Min(lower, upper), upper, nil
}
