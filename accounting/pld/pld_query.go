package pld

import (
	"context"
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/accounting/moments"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// EpsilonBounds returns a certified lower and upper bound on the smallest ε
// for which the composition is (ε, δ)-DP. The upper bound is the smaller
// of the PLD bound and the RDP bound on the same steps (see
// [Accountant.EpsilonBoundsFrom]); it is +Inf only when both are. Its
// upper bound is what [Accountant.Epsilon] returns.
func (a *Accountant) EpsilonBounds(ctx context.Context, delta float64) (lower, upper float64, err error) {
	lower, upper, _, err = a.EpsilonBoundsFrom(ctx, delta)
	return lower, upper, err
}

// EpsilonBoundsFrom is [Accountant.EpsilonBounds] that also names the
// certificate behind the upper bound: accounting.KindPLD when the
// discretised PLD gave it, accounting.KindRDP when the RDP bound on the same
// steps (default orders, [moments.RDP]) was smaller. RDP wins where the
// PLD's float64 error bounds (FFT round-off, truncation, see [Accountant])
// approach δ, and where the composition is too large for the PLD grid.
func (a *Accountant) EpsilonBoundsFrom(ctx context.Context, delta float64) (lower, upper float64, from accounting.Kind, err error) {
	lower, upper, from, err = a.epsilonBounds(ctx, delta)
	if err == nil {
		lower, err = a.sumLower(ctx, lower, upper, func(s mechanism.CompositionLower) (float64, error) { return s.EpsilonLower(ctx, delta) })
	}
	return lower, upper, from, a.public(err)
}

// Epsilon returns the upper bound of [Accountant.EpsilonBounds], exactly.
// On one accountant, Delta(Epsilon(δ)) ≤ δ.
func (a *Accountant) Epsilon(ctx context.Context, delta float64) (float64, error) {
	_, u, _, err := a.epsilonBounds(ctx, delta)
	return u, a.public(err)
}

// DeltaBounds returns a certified lower and upper bound on the smallest δ
// for which the composition is (eps, δ)-DP, for eps ≥ 0. The upper bound is
// the smaller of the PLD bound and the RDP bound on the same steps (see
// [Accountant.DeltaBoundsFrom]), and it is never 0 at a finite eps once a
// step has been composed (a Gaussian is never pure DP: an underflowed δ
// rounds up to the smallest float64).
func (a *Accountant) DeltaBounds(ctx context.Context, eps float64) (lower, upper float64, err error) {
	lower, upper, _, err = a.DeltaBoundsFrom(ctx, eps)
	return lower, upper, err
}

// DeltaBoundsFrom is [Accountant.DeltaBounds] that also names the
// certificate behind the upper bound (accounting.KindPLD or
// accounting.KindRDP), as [Accountant.EpsilonBoundsFrom] does.
func (a *Accountant) DeltaBoundsFrom(ctx context.Context, eps float64) (lower, upper float64, from accounting.Kind, err error) {
	lower, upper, from, err = a.deltaBounds(ctx, eps)
	if err == nil {
		lower, err = a.sumLower(ctx, lower, upper, func(s mechanism.CompositionLower) (float64, error) { return s.DeltaLower(ctx, eps) })
	}
	return lower, upper, from, a.public(err)
}

// pldSumWide is how wide (relative to its upper end) a bracket must be for
// a mechanism's composition lower bound to be tried.
const pldSumWide = 0.05

// sumLower raises a lower bound that is weak (below 1 − pldSumWide of the
// upper one) to the one the mechanism states for its repetitions
// (mechanism.PLD.Lower; the sum statistic of a Poisson-sampled Gaussian),
// where that applies (one step, repeated).
func (a *Accountant) sumLower(ctx context.Context, lower, upper float64, f func(s mechanism.CompositionLower) (float64, error)) (float64, error) {
	if !(upper-lower > pldSumWide*upper) || math.IsInf(upper, 1) {
		return lower, nil
	}
	s, ok := a.compositionLower()
	if !ok {
		return lower, nil
	}
	lo, err := f(s)
	if err != nil {
		return 0, err
	}
	return math.Min(math.Max(lower, lo), upper), nil
}

// Delta returns the upper bound of [Accountant.DeltaBounds], exactly.
func (a *Accountant) Delta(ctx context.Context, eps float64) (float64, error) {
	_, u, _, err := a.deltaBounds(ctx, eps)
	return u, a.public(err)
}

// public turns the internal errPLDTooLarge into the error callers see: a
// *accounting.ParamError naming GridWidth (only a user-set width gets
// there; the default grid falls back to RDP).
func (a *Accountant) public(err error) error {
	if err == errPLDTooLarge {
		return &accounting.ParamError{Name: "GridWidth", Value: a.h, Want: "a width at which this composition fits the FFT grid (0 picks one)"}
	}
	return err
}

// epsF and deltaF evaluate one composed distribution.
func epsF(delta float64) func(c *pldComposed, upper bool) float64 {
	return func(c *pldComposed, upper bool) float64 { return c.epsilon(delta, upper) }
}

func deltaF(eps float64) func(c *pldComposed, upper bool) float64 {
	return func(c *pldComposed, upper bool) float64 { return c.delta(eps, upper) }
}

// pldTargetGap and pldMaxRefine control the grid refinement: with the
// default grid, a bracket wider than pldTargetGap of its upper end is
// recomputed on a grid pldRefineStep as wide, at most pldMaxRefine times.
const (
	pldTargetGap = 0.001
	pldMaxRefine = 6
)

func (a *Accountant) epsilonBounds(ctx context.Context, delta float64) (lower, upper float64, from accounting.Kind, err error) {
	if err := accounting.CheckDeltaQuery(delta); err != nil {
		return 0, 0, accounting.KindPLD, err
	}
	if !a.private {
		return math.Inf(1), math.Inf(1), accounting.KindPLD, nil
	}
	if len(a.counts) == 0 {
		return 0, 0, accounting.KindPLD, nil
	}
	if delta == 0 {
		// A Gaussian step is never (ε, 0)-DP; Laplace steps alone are.
		e := a.pureEpsilon()
		return e, e, accounting.KindPLD, nil
	}
	if err := accounting.Canceled(ctx); err != nil {
		return 0, 0, accounting.KindPLD, err
	}
	if g := a.grouped(); g != nil {
		return g.epsilonBounds(ctx, delta)
	}
	lv, err := a.resultFor(ctx, delta)
	var r *pldResult
	if err == nil {
		r = lv.res
	}
	var upper0 float64 // the first grid's upper bound, certified by Delta
	switch {
	case err == nil && r.closed:
		if r.closedSigma == 0 {
			// Σ n/σ² overflowed: μ² > MaxFloat64 and ε(δ) > μ²/2 for
			// δ < 0.49 (δ(μ²/2) ≥ 1/2 − 1/(μ√(2π))).
			lower = 0
			if delta < 0.49 {
				lower = math.MaxFloat64 / 2
			}
			return lower, math.Inf(1), accounting.KindPLD, nil
		}
		lower, upper = pldGaussianEpsilon(r.closedSigma, delta)
		upper0 = upper
	case err == nil:
		wide := func(lo, up float64) bool {
			return !math.IsInf(up, 1) && up-lo > math.Max(pldTargetGap*up, 1e-9)
		}
		point := func(lo, up float64) (float64, float64, error) {
			return a.epsEstimate(ctx, delta, up)
		}
		lower, upper, upper0, err = a.refined(ctx, lv, epsF(delta), wide, point)
		if err == nil && r.cut {
			lower, upper, err = a.cutFallbacks(ctx, epsF(delta), lower, upper, upper-lower, wide, point, func(lo, up float64) (float64, float64, error) {
				return a.twoScaleEpsilon(ctx, lv, delta, lo, up)
			})
		}
	}
	switch {
	case a.rdpOnly(err):
		lower, upper, upper0 = 0, math.Inf(1), math.Inf(1)
	case err != nil:
		return 0, 0, accounting.KindPLD, err
	}
	from = accounting.KindPLD
	if upper > 0 {
		rdp, err := a.rdpAccountant()
		if err != nil {
			return 0, 0, accounting.KindPLD, err
		}
		// The RDP value itself, so that the result is never above
		// moments.RDP's for the same steps, to the bit.
		if rdp == nil {
			// No cross-check: a step has no Rényi curve.
		} else if e, err := rdp.Epsilon(ctx, delta); err == nil && e < upper {
			upper, from = e, accounting.KindRDP
			upper0 = math.Min(upper0, e)
		} else if err := accounting.Canceled(ctx); err != nil {
			return 0, 0, accounting.KindPLD, err
		}
		if upper, err = a.certifyEpsilon(ctx, delta, upper, upper0); err != nil {
			return 0, 0, accounting.KindPLD, err
		}
	}
	if pe := a.pureEpsilon(); pe < upper {
		upper = pe // Laplace steps alone: pure DP at that ε
	}
	if !(lower >= 0) {
		lower = 0
	}
	return math.Min(lower, upper), upper, from, nil
}

// pureEpsilon returns the ε at δ = 0 when every step's loss is bounded
// (Laplace): the sum of the steps' largest losses in either direction,
// rounded up (+Inf when a step's loss is unbounded, as a Gaussian's).
func (a *Accountant) pureEpsilon() float64 {
	var e float64
	for _, k := range a.keys() {
		m := a.pld(k).MaxLoss
		if math.IsInf(m, 1) {
			return math.Inf(1)
		}
		e += float64(a.counts[k]) * m * (1 + 1e-12)
	}
	return e
}

// compositionLower returns the lower bound a's steps' mechanism states for
// their repetitions (mechanism.PLD.Lower), when a holds one kind of step
// and it has one (ok false otherwise).
func (a *Accountant) compositionLower() (mechanism.CompositionLower, bool) {
	if len(a.counts) != 1 {
		return nil, false
	}
	for k, n := range a.counts {
		if f := a.pld(k).Lower; f != nil {
			return f(n)
		}
	}
	return nil, false
}

// certifyEpsilon returns the smallest of e, e raised by 1e-12 relative
// (doubling) and e0 at which [Accountant.Delta] is at most delta, so that
// the round trip Delta(Epsilon(δ)) ≤ δ holds exactly. e0 (the first grid's
// bound, or RDP's) always passes: Delta's bound is at most the first grid's
// and RDP's (see rdpDelta). Refinement makes Delta and Epsilon visit grids
// depending on their argument, so e, from a finer grid, may need a step.
func (a *Accountant) certifyEpsilon(ctx context.Context, delta, e, e0 float64) (float64, error) {
	if math.IsInf(e, 1) {
		return e, nil
	}
	step := 1e-12 * math.Max(1, e)
	for k := 0; k < 64 && e < e0; k++ {
		d, err := a.Delta(ctx, e)
		if err != nil {
			return 0, err
		}
		if d <= delta {
			return e, nil
		}
		e = math.Min(e+step, e0)
		step *= 2
	}
	return e0, nil
}

func (a *Accountant) deltaBounds(ctx context.Context, eps float64) (lower, upper float64, from accounting.Kind, err error) {
	if math.IsNaN(eps) || eps < 0 {
		return 0, 0, accounting.KindPLD, &accounting.ParamError{Name: "eps", Value: eps, Want: ">= 0"}
	}
	if !a.private {
		return 1, 1, accounting.KindPLD, nil
	}
	if len(a.counts) == 0 || math.IsInf(eps, 1) || eps >= a.pureEpsilon() {
		return 0, 0, accounting.KindPLD, nil // (pure DP: Laplace steps alone)
	}
	if err := accounting.Canceled(ctx); err != nil {
		return 0, 0, accounting.KindPLD, err
	}
	if g := a.grouped(); g != nil {
		return g.deltaBounds(ctx, eps)
	}
	// The δ the truncation is cut for (see pldSetup.eta): an upper bound
	// on δ(eps) from RDP, which only matters when the tails set the grid.
	var dEst float64
	if a.tailsCut(ctx) {
		rdp, err := a.rdpAccountant()
		if err != nil {
			return 0, 0, accounting.KindPLD, err
		}
		dEst = 1
		if rdp != nil {
			if dEst, err = rdpDelta(ctx, rdp, eps); err != nil {
				return 0, 0, accounting.KindPLD, err
			}
		}
	}
	if dEst > 0 {
		// RDP's δ may be far above the PLD's, and a truncation cut for it
		// would cost more than pldCutShare of the δ found: cut again at
		// the untilted PLD upper bound until the cut settles (only upper
		// compositions are needed for that).
		for it := 0; it < 8; it++ {
			up, err := a.roughDelta(ctx, eps, dEst)
			if a.rdpOnly(err) {
				break
			}
			if err != nil {
				return 0, 0, accounting.KindPLD, err
			}
			if !(up > 0 && a.setup.eta(a.h, up) < a.setup.eta(a.h, dEst)) {
				break
			}
			dEst = up
		}
	}
	lower, upper, err = a.deltaBracket(ctx, eps, dEst)
	if err == nil && dEst > 0 && lower > 0 && a.setup.eta(a.h, lower) < a.setup.eta(a.h, dEst) {
		// The untilted bound steering the cut may sit far above δ (its
		// round-off): cut once more at the certified lower bound, so that
		// the truncation costs at most pldCutShare of δ, and keep both
		// certified brackets.
		lo2, up2, err2 := a.deltaBracket(ctx, eps, lower)
		if err2 != nil && !a.rdpOnly(err2) {
			return 0, 0, accounting.KindPLD, err2
		}
		if err2 == nil {
			lower, upper = math.Max(lower, lo2), math.Min(upper, up2)
		}
	}
	switch {
	case a.rdpOnly(err):
		lower, upper = 0, 1
	case err != nil:
		return 0, 0, accounting.KindPLD, err
	}
	from = accounting.KindPLD
	if upper > 0 {
		d := dEst
		if d == 0 {
			rdp, err := a.rdpAccountant()
			if err != nil {
				return 0, 0, accounting.KindPLD, err
			}
			d = 1
			if rdp != nil {
				if d, err = rdpDelta(ctx, rdp, eps); err != nil {
					return 0, 0, accounting.KindPLD, err
				}
			}
		}
		if d < upper {
			upper, from = d, accounting.KindRDP
		}
	}
	// Never 0 at a finite ε: a Gaussian step is not pure DP.
	upper = math.Max(upper, math.SmallestNonzeroFloat64)
	if !(lower >= 0) {
		lower = 0
	}
	return math.Min(lower, upper), upper, from, nil
}

// cutFallbacks tightens a bracket found with the tails cut at the query's
// δ while it is wide: first with the uncut truncation (uncut; scale as
// there), then with the two-scale bounds (twoScale).
func (a *Accountant) cutFallbacks(ctx context.Context, f func(c *pldComposed, upper bool) float64, lower, upper, scale float64, wide func(lo, up float64) bool, point func(lo, up float64) (eps, delta float64, err error), twoScale func(lo, up float64) (float64, float64, error)) (float64, float64, error) {
	var err error
	if wide(lower, upper) {
		if lower, upper, err = a.uncut(ctx, f, lower, upper, scale, wide, point); err != nil {
			return 0, 0, err
		}
	}
	if wide(lower, upper) {
		return twoScale(lower, upper)
	}
	return lower, upper, nil
}

// uncut intersects the bracket [lower, upper] found with the tails cut at a
// query's δ with the bracket of the default truncation (pldEta(steps, 0)),
// for a query whose cut bracket is still wide: the cut narrows the grid
// for tiny ε (issue 11 §4), but where δ is small the narrower per-step
// range can leave the tilted composition coarser than the uncut one (σ
// 0.5, q 1e-4, T 1e4, δ 1e-10: cut [4.347, 5.783], uncut [5.0841,
// 5.0848]). Both are certified, so their intersection is. A composition
// that does not fit the uncut grid keeps the cut bracket.
//
// scale is the size in ε below which the uncut grid is of no use: where
// its width (at least the whole range over pldMaxStepGrid) is not below
// it, the uncut composition is not tried (the tiny-ε corners the cut is
// for).
func (a *Accountant) uncut(ctx context.Context, f func(c *pldComposed, upper bool) float64, lower, upper, scale float64, wide func(lo, up float64) bool, point func(lo, up float64) (eps, delta float64, err error)) (float64, float64, error) {
	eta := pldEta(a.setup.steps, 0)
	if a.setup.tooFine {
		return lower, upper, nil // a set width already found not to fit (probeWidth)
	}
	if hMin := a.setup.rangeAt(eta, false) / pldMaxStepGrid; a.h == 0 && !(hMin < scale) {
		return lower, upper, nil
	}
	lv, err := a.levelAt(ctx, eta)
	if err == errPLDTooLarge {
		return lower, upper, nil
	}
	if err != nil {
		return 0, 0, err
	}
	// Refine only while the intersection is wide.
	lo, up, _, err := a.refined(ctx, lv, f, func(lo, up float64) bool {
		return wide(math.Max(lo, lower), math.Min(up, upper))
	}, point)
	if err == errPLDTooLarge {
		return lower, upper, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return math.Max(lower, lo), math.Min(upper, up), nil
}

// roughDelta returns the untilted PLD upper bound on δ(eps) with the tails
// cut for a δ of dEst (steering only: it chooses the cut).
func (a *Accountant) roughDelta(ctx context.Context, eps, dEst float64) (float64, error) {
	lv, err := a.resultFor(ctx, dEst)
	if err != nil {
		return 0, err
	}
	r := lv.res
	ups := make([]float64, len(r.dirs))
	var up float64
	for d := range r.dirs {
		c, err := r.get(ctx, d, true, 0)
		if err != nil {
			return 0, err
		}
		ups[d] = c.delta(eps, true)
		up = math.Max(up, ups[d])
	}
	if r.cut && up > 0 && r.noisy(eps, up) {
		// The untilted bound is its own round-off here (often far above
		// δ), and a cut chosen by it would be recomputed once the bracket
		// is known: steer by the upper compositions tilted at the saddle
		// instead (no lower distributions needed, so cheap), direction by
		// direction where the tilt fits.
		up = 0
		for d := range r.dirs {
			if lam := r.saddle(d, eps); lam > 0 {
				c, err := r.get(ctx, d, true, lam)
				if err != nil && err != errPLDTooLarge {
					return 0, err
				}
				if err == nil {
					if v := c.delta(eps, true); v > 0 {
						ups[d] = math.Min(ups[d], v)
					}
				}
			}
			up = math.Max(up, ups[d])
		}
	}
	return up, nil
}

// deltaBracket returns the PLD's certified bracket on δ(eps), with the
// per-step tails cut for a δ of dEst (0: the default truncation).
func (a *Accountant) deltaBracket(ctx context.Context, eps, dEst float64) (lower, upper float64, err error) {
	lv, err := a.resultFor(ctx, dEst)
	var r *pldResult
	if err == nil {
		r = lv.res
	}
	switch {
	case err == nil && r.closed:
		lower, upper = 0, 1 // σ underflowed: see epsilonBounds
		if r.closedSigma > 0 {
			llo, lhi := gaussian.LogDeltaBounds(r.closedSigma, 1, eps)
			d := math.Exp(lhi)
			lower, upper = math.Exp(llo)*(1-1e-11), math.Min(1, d*(1+1e-11))
			if d < 0x1p-1022 {
				// Subnormal or underflowed to 0 (log δ < −708): the relative
				// margin is lost to the absolute spacing; add two of its steps.
				upper = d + 2*math.SmallestNonzeroFloat64
			}
		}
	case err == nil:
		// A δ bracket is wide when the ε bracket it stands for is: its
		// log-width over the slope s = −d log δ/dε exceeds the target.
		wide := func(lo, up float64) bool {
			if !(up > 0) {
				return false
			}
			if !(lo > 0) {
				return true
			}
			return math.Log(up/lo) > pldTargetGap*math.Max(eps, 1e-6)*r.slope(eps)
		}
		point := func(lo, up float64) (float64, float64, error) {
			return eps, up, nil
		}
		lower, upper, _, err = a.refined(ctx, lv, deltaF(eps), wide, point)
		if err == nil && r.cut {
			lower, upper, err = a.cutFallbacks(ctx, deltaF(eps), lower, upper, 0.01*eps, wide, point, func(lo, up float64) (float64, float64, error) {
				return a.twoScaleDelta(ctx, lv, eps, math.Max(dEst, up), lo, up)
			})
		}
	}
	return lower, upper, err
}

// epsEstimate returns the ε at which to judge the PLD bracket of ε(delta)
// whose upper end is up: up itself, or RDP's ε when that is smaller (the
// untilted PLD bound may be far off, or +Inf, at small delta).
func (a *Accountant) epsEstimate(ctx context.Context, delta, up float64) (float64, float64, error) {
	rdp, err := a.rdpAccountant()
	if err != nil || rdp == nil {
		return up, delta, err
	}
	if e, err := rdp.Epsilon(ctx, delta); err == nil && e < up {
		return e, delta, nil
	} else if err := accounting.Canceled(ctx); err != nil {
		return 0, 0, err
	}
	return up, delta, nil
}

// rdpDelta returns an upper bound on δ(eps) from rdp: the smaller of rdp's
// own δ(eps) and the smallest δ' ≤ it (to the float64, down to half of it)
// with rdp.Epsilon(δ') ≤ eps, found by bisection.
// Both are sound ((ε(δ'), δ')-DP implies (eps, δ')-DP for eps ≥ ε(δ')).
// The second is what makes pld's round trip exact where RDP's own is not:
// rdp.Delta(rdp.Epsilon(δ)) exceeds δ by 1e-12 relative typically (6e-6
// at ε ≈ 7e9), while δ
// itself satisfies rdp.Epsilon(δ) ≤ rdp.Epsilon(δ).
func rdpDelta(ctx context.Context, rdp *moments.RDP, eps float64) (float64, error) {
	d, err := rdp.Delta(ctx, eps)
	if err != nil {
		if cerr := accounting.Canceled(ctx); cerr != nil {
			return 0, cerr
		}
		return 1, nil
	}
	if !(d > 0) || d >= 1 {
		return d, nil
	}
	good := func(x float64) (bool, error) {
		e, err := rdp.Epsilon(ctx, x)
		if err != nil {
			return false, accounting.Canceled(ctx)
		}
		return e <= eps, nil
	}
	// Walk down from d until a δ' fails, then bisect to the float64.
	hi, lo := d, d
	for _, g := range []float64{1e-12, 1e-9, 1e-6, 1e-3, 0.5} {
		lo = d * (1 - g)
		ok, err := good(lo)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		hi = lo
	}
	if hi == lo {
		return hi, nil // even d/2 passes (RDP's two directions far apart)
	}
	for k := 0; k < 64; k++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		ok, err := good(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// rdpOnly reports whether err means that the default grid could not hold
// the composition (very long runs with small σ, or steps with a loss too
// concentrated for the smallest grid width). Such queries are answered by
// the RDP bound alone, with the trivial lower bound 0. With a GridWidth set
// by the user the error is returned instead.
func (a *Accountant) rdpOnly(err error) bool {
	return err == errPLDTooLarge && a.h == 0
}

// refined evaluates f on the first grid and, with the default grid, on
// grids refined in turn (by pldRefineStep) while wide(lower, upper) holds and the bracket
// shrinks by a quarter per halving; it returns the intersection of the
// certified brackets and the first grid's upper bound. The grids visited
// depend only on the composition and on f's argument, not on earlier
// queries.
//
// point(lower, upper) names the (ε, δ) at which the bracket is decided
// (for ε(δ), the upper ε; +Inf asks for an estimate). When the first
// grid's FFT round-off and window tails there exceed pldNoiseFrac of δ,
// each direction is composed again tilted to its saddle point at that ε
// (see pldCompose), once more if the tilted bracket moves ε to another
// tilt, and the finer grids use the same tilt.
func (a *Accountant) refined(ctx context.Context, lv *pldLevels, f func(c *pldComposed, upper bool) float64, wide func(lo, up float64) bool, point func(lo, up float64) (eps, delta float64, err error)) (lower, upper, upper0 float64, err error) {
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
	var lams []float64
	r.lams = nil
	eps, delta, err := point(0, upper)
	if err != nil {
		return 0, 0, 0, err
	}
	if r.noisy(eps, delta) {
		for it := 0; it < 2; it++ {
			next := make([]float64, len(r.dirs))
			same := lams != nil
			for d := range r.dirs {
				next[d] = r.saddle(d, eps)
				same = same && next[d] == lams[d]
			}
			if same {
				break
			}
			lo2, up2, err := r.bounds(ctx, f, next)
			if err == errPLDTooLarge || (err == nil && (math.IsInf(up2, 1) || r.tiltNoisy(next, eps, delta))) {
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
		if lower, upper, err = r.bigTilt(ctx, f, eps, delta, lower, upper); err != nil {
			return 0, 0, 0, err
		}
	}
	stalled := 0 // consecutive levels that did not shrink the bracket
	for k := 1; r.auto && k <= pldMaxRefine && wide(lower, upper); k++ {
		fr, err := lv.level(k)
		if err == errPLDTooLarge {
			break // keep the certified bracket we have
		}
		if err != nil {
			return 0, 0, 0, err
		}
		lo2, up2, err := fr.bounds(ctx, f, lams)
		if err == errPLDTooLarge {
			break
		}
		if err != nil {
			return 0, 0, 0, err
		}
		// Both brackets are certified: keep their intersection.
		shrunk := math.Min(up2, upper)-math.Max(lo2, lower) < 0.75*(upper-lower)
		lower, upper = math.Max(lower, lo2), math.Min(upper, up2)
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
func (r *pldResult) bigTilt(ctx context.Context, f func(c *pldComposed, upper bool) float64, eps, delta, lower, upper float64) (float64, float64, error) {
	big := make([]float64, len(r.dirs))
	beyond := false
	for d := range r.dirs {
		big[d] = r.saddleUpTo(d, eps, 120)
		beyond = beyond || big[d] > 0x1p10
	}
	if !beyond {
		return lower, upper, nil
	}
	lo2, up2, err := r.bounds(ctx, f, big)
	if err == errPLDTooLarge || (err == nil && (math.IsInf(up2, 1) || r.tiltNoisy(big, eps, delta))) {
		return lower, upper, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return math.Max(lower, lo2), math.Min(upper, up2), nil
}

// pldNoiseFrac is the share of the target gap (in ε) above which the FFT
// round-off and window tails of the untilted composition call for a
// tilted one.
const pldNoiseFrac = 0.2

// noisy reports whether, in some direction, the untilted upper
// composition's error terms at eps move ε by more than pldNoiseFrac of
// the target gap: noise/(δ·s) > pldNoiseFrac·pldTargetGap·eps, s = −d log
// δ/dε (see slope).
func (r *pldResult) noisy(eps, delta float64) bool {
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
		if dir.up.noise(eps) > pldNoiseFrac*pldTargetGap*math.Max(eps, 0.01)*s*delta {
			return true
		}
	}
	return false
}

// tiltNoisy reports whether the error terms of some direction's upper
// composition tilted by lams exceed pldTiltNoise of delta at eps.
func (r *pldResult) tiltNoisy(lams []float64, eps, delta float64) bool {
	for d, dir := range r.dirs {
		c := dir.tilt[pldTiltKey{true, lams[d]}]
		if c == nil {
			continue
		}
		i := c.index(eps)
		if i <= 0 {
			return true // eps below the tilted window: its bound is trivial
		}
		if c.noise(eps)+c.inf > pldTiltNoise*delta {
			return true
		}
	}
	return false
}

// pldTiltNoise is the largest share of δ that the error terms and the
// truncated mass of a tilted composition may take for it to be used.
const pldTiltNoise = 1e-2

// slope returns −d log δ/dε of the upper bound at eps (of the tilted
// compositions of r.lams when set) in the direction with the larger δ (within a cell δ = k − e^ε·b, so it is
// e^ε·b/δ), at least 1e-3; it only steers the choice of tilt and
// refinement, no bound depends on it.
func (r *pldResult) slope(eps float64) float64 {
	var best, s float64 = -1, 1e-3
	for d, dir := range r.dirs {
		c := dir.up
		if r.lams != nil {
			c = dir.tilt[pldTiltKey{true, r.lams[d]}]
		}
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

// level returns the composition on the first grid refined k ≥ 1 times
// (computed from level k−1 and cached), or errPLDTooLarge when its window
// would exceed the FFT cap.
func (lv *pldLevels) level(k int) (*pldResult, error) {
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

// pldRefineStep is the ratio of consecutive grid widths in refinement: the
// bracket is of second order in h, so each step halves it at √2 the cost
// (a first grid a little above the target needs one such step, not a
// grid of twice the points).
var pldRefineStep = 1 / math.Sqrt2

// halved returns r's composition on a grid pldRefineStep as wide (not yet
// computed), or errPLDTooLarge when the window, estimated from r's, would
// not fit.
func (r *pldResult) halved() (*pldResult, error) {
	for _, d := range r.dirs {
		if d.up != nil && float64(len(d.up.c))/pldRefineStep > 2*pldAutoFFT {
			return nil, errPLDTooLarge
		}
		for _, g := range d.grids {
			if float64(len(g.tl))/pldRefineStep > 4*pldMaxStepGrid {
				return nil, errPLDTooLarge
			}
		}
	}
	finer := &pldResult{h: r.h * pldRefineStep, eta: r.eta, auto: true, cut: r.cut, span: r.span}
	if r.span > 0 {
		finer.h = r.span / math.Ceil(r.span/finer.h)
	}
	for _, d := range r.dirs {
		finer.dirs = append(finer.dirs, &pldDir{pairs: d.pairs, counts: d.counts})
	}
	return finer, nil
}

// bounds evaluates f (ε or δ of one composed distribution) over the
// directions, each tilted by lams[d] (nil: no tilt): the upper bound is the maximum of the directions' upper
// bounds; the lower bound is the maximum of their lower bounds, where a
// direction whose upper bound is at most the lower bound found so far
// cannot raise it and is skipped. A lower distribution too large for the
// FFT cap contributes the trivial lower bound 0.
func (r *pldResult) bounds(ctx context.Context, f func(c *pldComposed, upper bool) float64, lams []float64) (lower, upper float64, err error) {
	lam := func(d int) float64 {
		if lams == nil {
			return 0
		}
		return lams[d]
	}
	ups := make([]float64, len(r.dirs))
	best := 0
	for d := range r.dirs {
		c, err := r.get(ctx, d, true, lam(d))
		if err != nil {
			return 0, 0, err
		}
		ups[d] = f(c, true)
		if ups[d] > ups[best] {
			best = d
		}
		upper = math.Max(upper, ups[d])
	}
	if upper == 0 {
		return 0, 0, nil // lower ≤ upper = 0 needs no work
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
		if err == errPLDTooLarge {
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

// rdpAccountant returns an RDP accountant holding the same steps (cached
// until the next Compose), or nil when a step's mechanism has no Rényi
// curve (no cross-check).
func (a *Accountant) rdpAccountant() (*moments.RDP, error) {
	if a.rdp != nil {
		return a.rdp, nil
	}
	for k := range a.counts {
		if _, err := k.RDP(); err != nil {
			return nil, nil
		}
	}
	r, err := a.newRDP()
	if err != nil {
		return nil, err
	}
	if !a.private {
		if err := r.Compose(accounting.NonPrivate{}, 1); err != nil {
			return nil, err
		}
	}
	for _, k := range a.keys() {
		if err := r.Compose(k.Event(), a.counts[k]); err != nil {
			return nil, err
		}
	}
	a.rdp = r
	return r, nil
}

// newRDP returns an empty RDP accountant under a's adjacency.
func (a *Accountant) newRDP() (*moments.RDP, error) {
	return moments.NewRDP(nil, accounting.WithAdjacency(a.adj))
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

// pldGaussianEpsilon returns a bracket [lo, hi] around the ε at which the
// Gaussian mechanism with noise σ (sensitivity 1) has δ(ε) = delta (δ is
// decreasing in ε). hi is certified against the upper δ that deltaBounds
// reports, d·(1+1e-11): log δ(hi) ≤ log(delta) − 2e-11, so Delta(hi) ≤
// delta. lo has log δ(lo) > log(delta) + 2e-11, so δ(lo) > delta even if
// gaussian.LogDelta is off by the 1e-11 that deltaBounds allows. Each end
// is found to a relative 1e-13.
func pldGaussianEpsilon(sigma, delta float64) (lo, hi float64) {
	const slack = 2e-11
	ld := logmath.Log(delta)
	// The upper end solves with the profile's upper bound, the lower end
	// with its lower bound (they differ at σ below 1.5e-5; LogDeltaBounds).
	fhi := func(e float64) float64 { _, h := gaussian.LogDeltaBounds(sigma, 1, e); return h }
	flo := func(e float64) float64 { l, _ := gaussian.LogDeltaBounds(sigma, 1, e); return l }
	_, hi = search.SmallestNonNegative(fhi, ld-slack, 1e-13)
	lo, _ = search.SmallestNonNegative(flo, ld+slack, 1e-13)
	return math.Min(lo, hi), hi
}

// result composes the recorded steps on the first grid with the default
// truncation (cached until the next Compose); the caller has checked that
// a step was composed.
func (a *Accountant) result(ctx context.Context) (*pldResult, error) {
	lv, err := a.resultFor(ctx, 0)
	if err != nil {
		return nil, err
	}
	return lv.res, nil
}

// tailsCut reports whether queries cut the per-step tails at their δ
// (see pldSetup.eta).
func (a *Accountant) tailsCut(ctx context.Context) bool {
	for _, k := range a.keys() {
		if a.pld(k).GaussianSigma == 0 || pldNoClosedForm {
			if a.setup == nil {
				a.setup = newPLDSetup(a.pldsOf(a.keys()))
			}
			a.probeWidth(ctx)
			return a.setup.eta(a.h, 1) > pldEta(a.setup.steps, 0)
		}
	}
	return false // the closed form
}

// resultFor returns the compositions for a query at delta (0: not a δ
// query), whose per-step truncation pldSetup.eta picks.
func (a *Accountant) resultFor(ctx context.Context, delta float64) (*pldLevels, error) {
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
		a.levels = map[float64]*pldLevels{}
	}
	if allGaussian && !pldNoClosedForm {
		lv := a.levels[0]
		if lv == nil {
			lv = &pldLevels{res: &pldResult{closed: true, closedSigma: 1 / math.Sqrt(inv)}}
			a.levels[0] = lv
		}
		return lv, nil
	}
	if a.setup == nil {
		a.setup = newPLDSetup(a.pldsOf(keys))
	}
	a.probeWidth(ctx)
	return a.levelAt(ctx, a.setup.eta(a.h, delta))
}

// probeWidth tries a set GridWidth on the whole per-step range once: where
// it does not fit, queries at δ cut the tails as the default grid does
// for tiny ε (pldSetup.tooFine).
func (a *Accountant) probeWidth(ctx context.Context) {
	if a.h == 0 || a.setup.probed {
		return
	}
	_, err := a.levelAt(ctx, pldEta(a.setup.steps, 0))
	if err != nil && err != errPLDTooLarge {
		return // cancelled: probe again next time
	}
	a.setup.probed, a.setup.tooFine = true, err == errPLDTooLarge
}

// levelAt returns the composition with per-step truncation mass eta,
// composed on first use.
func (a *Accountant) levelAt(ctx context.Context, eta float64) (*pldLevels, error) {
	if lv := a.levels[eta]; lv != nil {
		return lv, nil
	}
	r, err := a.setup.compose(ctx, a.h, eta)
	if err != nil {
		return nil, err
	}
	lv := &pldLevels{res: r}
	a.levels[eta] = lv
	return lv, nil
}
