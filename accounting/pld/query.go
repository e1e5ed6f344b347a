package pld

import (
	"context"
	"errors"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/internal/search"
)

// EpsilonBounds returns a certified lower and upper bound on the true ε of
// the composition: the smallest ε for which the run of its steps is
// (ε, δ)-DP. The upper bound is the smaller of the PLD bound and the RDP
// bound on the same steps (see [Accountant.EpsilonBoundsFrom]); it is +Inf
// only when both are. Its upper bound is what [Accountant.Epsilon] returns.
// The lower bound is that of the mechanisms run, not only of their
// dominating pairs (see [Accountant.EpsilonBracket]).
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
	b, err := a.EpsilonBracket(ctx, delta)
	return b.Lower, b.Upper, b.From, err
}

// Bracket is what the accountant certifies about ε(δ) or δ(ε).
type Bracket struct {
	// Lower is a certified lower bound on the true value of the run: some
	// pair of neighbouring data sets, and queries of the steps'
	// sensitivities, make the run of the composed steps at least this
	// private-loss-wise. Upper is the certified upper bound.
	Lower, Upper float64
	// PairLower is the lower end of the dominating pairs' composition: a
	// bound on the pairs, and on the run only when they are attained
	// ([mechanism.PLD.Attained]); then it equals Lower.
	PairLower float64
	// PairOnly reports that some step's pairs are not attained, so that
	// Lower comes from witnesses ([mechanism.PLD.Witness], the shuffled
	// construction of [ShuffledLowerEpsilon]) and may lie below PairLower.
	PairOnly bool
	// From names the certificate of Upper: accounting.KindPLD or
	// accounting.KindRDP.
	From accounting.Kind
}

// EpsilonBracket returns the bracket of ε(delta): the upper and pair
// bounds of [Accountant.EpsilonBoundsFrom], and a lower bound on the true
// ε of the run. Where every step's pairs are attained (unsampled and
// Poisson-sampled steps) the pairs' lower bound is one on the run. Where
// they only dominate, the lower bound is the largest of: the composition
// of the steps' witnesses (for fixed-size sampling, the Poisson pairs a
// fixed pair of neighbours attains; for random allocation, post-processings
// of the pair a linear query attains: the dominated pairs of a 1-out-of-t
// group, the sum of the cells of an epoch's outputs for k-out-of-t with
// k > 1, [mechanism.AllocationWitness]), and for
// each shuffled Gaussian step
// [ShuffledLowerEpsilon] (the true ε of a composition is at least that of
// any part of it, whose releases are a post-processing of the whole).
// Steps whose pairs are attained only up to a slack
// ([mechanism.PLD.Slack]) lower it by that slack (see slackEpsilon).
func (a *Accountant) EpsilonBracket(ctx context.Context, delta float64) (Bracket, error) {
	return a.slackEpsilon(ctx, delta)
}

// pairsEpsilonBracket is [Accountant.EpsilonBracket] without the slack.
func (a *Accountant) pairsEpsilonBracket(ctx context.Context, delta float64) (Bracket, error) {
	lower, upper, from, err := a.epsilonBounds(ctx, delta)
	if err == nil {
		lower, err = a.sumLower(ctx, lower, upper, func(s mechanism.CompositionLower) (float64, error) { return s.EpsilonLower(ctx, delta) })
	}
	if err != nil {
		return Bracket{}, a.public(err)
	}
	b := Bracket{Lower: lower, PairLower: lower, Upper: upper, From: from}
	w, attained := a.witness()
	if attained {
		return b, nil
	}
	b.PairOnly, b.Lower = true, 0
	if w != nil {
		lo, _, _, err := w.EpsilonBoundsFrom(ctx, delta)
		if err != nil {
			return Bracket{}, err
		}
		b.Lower = lo
	}
	for k, n := range a.shuffles {
		// Fewer epochs release less: a lower bound for them is one for all.
		lo, err := ShuffledLowerEpsilon(ctx, k.sigma, k.batches, min(n, maxSteps), k.unused, delta)
		if err != nil {
			return Bracket{}, err
		}
		b.Lower = math.Max(b.Lower, lo)
	}
	b.Lower = math.Min(b.Lower, b.Upper)
	return b, nil
}

// EpsilonAgainst is [Accountant.EpsilonBracket] for a search that needs
// to know only where ε(delta) stands against target (a σ calibration far
// from its answer): it stops narrowing the bracket once it lies above
// target (Lower > target) or below it by againstMargin of target (Upper <
// (1 − againstMargin)·target), each with its width at most clearWidth of
// its distance from target, and returns that bracket with certified
// false: both ends are certified bounds on ε(delta), but Upper is not
// raised to where [Accountant.Delta]'s upper δ is within delta (the
// round trip Delta(Epsilon(δ)) ≤ δ, see certifyEpsilon), so it can lie
// below Epsilon(delta). A bracket narrowed in full whose Upper lies above
// target is left uncertified too: certifying only raises it, so
// Epsilon(delta) is above target as well (σ 0.999999674, q 1e-4, T 1e5,
// δ 1e-15 against 0.409541, just below a σ search's answer: the same
// 0.409542193, 4,533 work units where certifying took 5,758). Otherwise,
// and where some step's pairs are not
// attained, it is EpsilonBracket's bracket with certified true. (σ
// 1.1845924, q 1e-3, T 1e4, δ 1e-15 against 1.83541: [0.877235, 0.879431]
// in 748 work units, where EpsilonBracket narrowed it to [0.878160,
// 0.878538] and then raised the upper end by δ queries to 0.879537, 9,344
// units, for a search that only needed "below".)
func (a *Accountant) EpsilonAgainst(ctx context.Context, delta, target float64) (b Bracket, certified bool, err error) {
	if _, attained := a.witness(); !attained || !(target > 0) || math.IsInf(target, 1) {
		b, err := a.EpsilonBracket(ctx, delta)
		return b, true, err
	}
	lower, upper, from, certified, err := a.epsilonBoundsAgainst(ctx, delta, target)
	if err == nil {
		lower, err = a.sumLower(ctx, lower, upper, func(s mechanism.CompositionLower) (float64, error) { return s.EpsilonLower(ctx, delta) })
	}
	if err != nil {
		return Bracket{}, false, a.public(err)
	}
	return Bracket{Lower: lower, PairLower: lower, Upper: upper, From: from}, certified, nil
}

// againstMargin is how far below its target (relative) the bracket of
// [Accountant.EpsilonAgainst] must lie to be left uncertified: a σ
// search's answer has its ε within about 1e-5 of the target, so a point
// that far below is not its answer, and a raise of its upper end by
// certifyEpsilon (1.1e-3 relative in the example there) leaves it below.
const againstMargin = 1e-2

// DeltaBracket is [Accountant.EpsilonBracket] for δ(eps): shuffled steps
// add no lower bound on δ; a slack lowers it (see slackDelta).
func (a *Accountant) DeltaBracket(ctx context.Context, eps float64) (Bracket, error) {
	return a.slackDelta(ctx, eps)
}

// pairsDeltaBracket is [Accountant.DeltaBracket] without the slack.
func (a *Accountant) pairsDeltaBracket(ctx context.Context, eps float64) (Bracket, error) {
	lower, upper, from, err := a.deltaBounds(ctx, eps)
	if err == nil {
		lower, err = a.sumLower(ctx, lower, upper, func(s mechanism.CompositionLower) (float64, error) { return s.DeltaLower(ctx, eps) })
	}
	if err != nil {
		return Bracket{}, a.public(err)
	}
	b := Bracket{Lower: lower, PairLower: lower, Upper: upper, From: from}
	w, attained := a.witness()
	if attained {
		return b, nil
	}
	b.PairOnly, b.Lower = true, 0
	if w != nil {
		lo, _, _, err := w.DeltaBoundsFrom(ctx, eps)
		if err != nil {
			return Bracket{}, err
		}
		b.Lower = math.Min(lo, b.Upper)
	}
	return b, nil
}

// DeltaAgainst returns a bracket of δ(eps) for a search that needs to
// know only where δ(eps) stands against target (a σ search approaching
// the σ at which δ(eps) is target): its bracket is narrowed only until it
// lies on one side of target with its log-width at most clearWidth of
// its log-distance from target (so that its upper end is, for such a
// search, as good as the one [Accountant.DeltaBounds] would narrow it
// to), and the truncation is cut for target where RDP's δ is above it
// (where δ(eps) is near target, the cut the query would settle on). Both
// ends are certified; the bracket can be wider than DeltaBounds', whose
// upper end is [Accountant.Delta]. (σ 1.0066, q 1e-4, T 1e5, ε 0.409541
// against 1e-15: the two-scale bracket [6.0446e-16, 6.0971e-16] decides;
// DeltaBounds went on to the uncut and cut grids refined, which left it
// as it was.)
func (a *Accountant) DeltaAgainst(ctx context.Context, eps, target float64) (lower, upper float64, err error) {
	if !(target > 0 && target < 1) {
		lower, upper, err = a.DeltaBounds(ctx, eps)
		return lower, upper, err
	}
	a.deltaTarget = target
	defer func() { a.deltaTarget = 0 }()
	lower, upper, _, err = a.deltaBounds(ctx, eps)
	return lower, upper, a.public(err)
}

// DeltaUpperAgainst returns the upper end of [Accountant.DeltaAgainst]'s
// bracket for a search that steers by it alone (the approach of a σ
// calibration), where the query ends at the two-scale bounds once it
// reaches them, and makes their upper bound only: the finer and uncut
// grids that DeltaAgainst may go on to rarely move the upper end there,
// and the two-scale lower bound is half of their cost (σ 1.0066, q 1e-4,
// T 1e5, ε 0.409541: 6.0971e-16 both). Where the steering of its cut
// settles two orders or more below target, it ends there (see farBelow).
func (a *Accountant) DeltaUpperAgainst(ctx context.Context, eps, target float64) (float64, error) {
	if !(target > 0 && target < 1) {
		return a.Delta(ctx, eps)
	}
	a.deltaTarget, a.upperOnly = target, true
	defer func() { a.deltaTarget, a.upperOnly = 0, false }()
	_, upper, _, err := a.deltaBounds(ctx, eps)
	return upper, a.public(err)
}

// farBelow reports whether a query of [Accountant.DeltaUpperAgainst] may
// end at the certified upper bound up that its steering settled on (once
// the coarse grids' cut has settled): up lies farShare of the target or
// further below it. The approach of a σ search steers by such a point's
// log δ alone, and the bracket that would follow, whose tilted cut grid
// is made for a cut no other query shares, rarely lowers it there (σ
// 1.1325, q 1e-4, T 1e5, ε 0.409541 against 1e-15: the bracket's upper
// end 1.83e-17 against the steering's 1.03e-19, which stood; 3,094 work
// units, 0.37 s, of which the default grid and the bracket took 0.26 s).
func (a *Accountant) farBelow(up float64) bool {
	return a.upperOnly && a.deltaTarget > 0 && up > 0 && up <= farShare*a.deltaTarget
}

// farShare is how far below its target (relative) the upper δ of
// [Accountant.DeltaUpperAgainst] must lie for farBelow.
const farShare = 1e-2

// clearWidth is how narrow, against its distance from the target (in log
// δ or relative ε), a bracket of [Accountant.DeltaAgainst] or
// [Accountant.EpsilonAgainst] must be to stand clear of the target.
const clearWidth = 0.1

// deltaClear reports whether the δ bracket [lo, up] stands clear of
// a.deltaTarget (see DeltaAgainst).
func (a *Accountant) deltaClear(lo, up float64) bool {
	t := a.deltaTarget
	if !(t > 0 && lo > 0 && up >= lo) {
		return false
	}
	w := math.Log(up / lo)
	return (up < t && w <= clearWidth*math.Log(t/up)) || (lo > t && w <= clearWidth*math.Log(lo/t))
}

// witness reports whether every recorded step's pairs are attained, and
// otherwise returns the accountant of the attained part: each step whose
// pairs are attained, and each other step's witness (nil when none is
// left). Its lower bounds are ones on the run's true ε or δ.
func (a *Accountant) witness() (w *Accountant, attained bool) {
	attained = true
	for k := range a.counts {
		if !a.pld(k).Attained || a.unattained[k] > 0 {
			attained = false
			break
		}
	}
	if attained {
		return nil, true
	}
	if a.witnesses != nil {
		return a.witnesses, false
	}
	w = a.empty()
	w.lowerOnly = true
	for k, n := range a.counts {
		p := a.pld(k)
		if n -= a.unattained[k]; n <= 0 {
			continue
		}
		switch {
		case p.Attained:
			w.counts[k] += n
			w.steps += n
		case p.Witness != nil:
			w.counts[p.Witness] += n
			w.steps += n
		}
	}
	for k, n := range a.projections {
		w.counts[k] += n
		w.steps += n
	}
	if len(w.counts) == 0 {
		return nil, false
	}
	a.witnesses = w
	return w, false
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
// accounting.KindRDP), as [Accountant.EpsilonBoundsFrom] does; its lower
// bound is that of [Accountant.DeltaBracket].
func (a *Accountant) DeltaBoundsFrom(ctx context.Context, eps float64) (lower, upper float64, from accounting.Kind, err error) {
	b, err := a.DeltaBracket(ctx, eps)
	return b.Lower, b.Upper, b.From, err
}

// Delta returns the upper bound of [Accountant.DeltaBounds], exactly.
func (a *Accountant) Delta(ctx context.Context, eps float64) (float64, error) {
	_, u, _, err := a.deltaBounds(ctx, eps)
	return u, a.public(err)
}

// public turns the internal errTooLarge into the error callers see: a
// *accounting.ParamError naming GridWidth (only a user-set width gets
// there; the default grid falls back to RDP).
func (a *Accountant) public(err error) error {
	if err == errTooLarge {
		return &accounting.ParamError{Name: "GridWidth", Value: a.h, Want: "a width at which this composition fits the FFT grid (0 picks one)"}
	}
	return err
}

// lowerWide is how wide (relative to its upper end) a bracket must be for
// a mechanism's composition lower bound to be tried.
const lowerWide = 0.05

// sumLower raises a lower bound that is weak (below 1 − lowerWide of the
// upper one) to the one the mechanism states for its repetitions
// (mechanism.PLD.Lower; the sum statistic of a Poisson-sampled Gaussian),
// where that applies (one step, repeated).
func (a *Accountant) sumLower(ctx context.Context, lower, upper float64, f func(s mechanism.CompositionLower) (float64, error)) (float64, error) {
	if !(upper-lower > lowerWide*upper) || math.IsInf(upper, 1) {
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

// epsF and deltaF evaluate one composed distribution.
func epsF(delta float64) func(c *composition, upper bool) float64 {
	return func(c *composition, upper bool) float64 { return c.epsilon(delta, upper) }
}

func deltaF(eps float64) func(c *composition, upper bool) float64 {
	return func(c *composition, upper bool) float64 { return c.delta(eps, upper) }
}

func (a *Accountant) epsilonBounds(ctx context.Context, delta float64) (lower, upper float64, from accounting.Kind, err error) {
	lower, upper, from, _, err = a.epsilonBoundsAgainst(ctx, delta, 0)
	return lower, upper, from, err
}

// epsilonBoundsAgainst is epsilonBounds that, for a target > 0, stops
// once the bracket stands clear of target (see [Accountant.EpsilonAgainst])
// and leaves its upper end uncertified then (certified false).
func (a *Accountant) epsilonBoundsAgainst(ctx context.Context, delta, target float64) (lower, upper float64, from accounting.Kind, certified bool, err error) {
	certified = true
	if err := accounting.CheckDeltaQuery(delta); err != nil {
		return 0, 0, accounting.KindPLD, certified, err
	}
	if !a.private {
		return math.Inf(1), math.Inf(1), accounting.KindPLD, certified, nil
	}
	if len(a.counts) == 0 {
		return 0, 0, accounting.KindPLD, certified, nil
	}
	if delta == 0 {
		// A Gaussian step is never (ε, 0)-DP; Laplace steps alone are.
		e := a.pureEpsilon()
		return e, e, accounting.KindPLD, certified, nil
	}
	if err := accounting.Canceled(ctx); err != nil {
		return 0, 0, accounting.KindPLD, certified, err
	}
	if g := a.grouped(); g != nil {
		lower, upper, from, err = g.epsilonBounds(ctx, delta)
		return lower, upper, from, certified, err
	}
	// standsClear reports whether a bracket stands clear of the target.
	standsClear := func(lo, up float64) bool {
		return target > 0 && ((lo > target && up-lo <= clearWidth*(lo-target)) ||
			(up < (1-againstMargin)*target && up-lo <= clearWidth*(target-up)))
	}
	lv, err := a.resultFor(ctx, delta)
	var r *result
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
			return lower, math.Inf(1), accounting.KindPLD, certified, nil
		}
		lower, upper = closedEpsilon(r.closedSigma, delta)
		upper0 = upper
	case err == nil:
		wide := func(lo, up float64) bool {
			return !math.IsInf(up, 1) && up-lo > math.Max(targetGap*up, 1e-9) && !standsClear(lo, up)
		}
		point := func(lo, up float64) (float64, float64, error) {
			return a.epsEstimate(ctx, delta, up)
		}
		hopeless := func(lo, up float64) bool {
			return !math.IsInf(up, 1) && up-lo > hopelessFactor*math.Max(targetGap*up, 1e-9)
		}
		twoScale := func(lo, up float64) (float64, float64, error) {
			return a.twoScaleEpsilon(ctx, lv, delta, lo, up, wide)
		}
		lower, upper, upper0, err = a.cutFirst(ctx, lv, epsF(delta), wide, hopeless, point, func(lo, up float64) float64 { return up - lo }, twoScale)
		if err == nil && r.cut {
			lower, upper, err = a.cutFallbacks(ctx, epsF(delta), lower, upper, upper-lower, wide, point, twoScale)
		}
	}
	switch {
	case a.rdpOnly(err):
		lower, upper, upper0 = 0, math.Inf(1), math.Inf(1)
	case err != nil:
		return 0, 0, accounting.KindPLD, certified, err
	}
	from = accounting.KindPLD
	if upper > 0 {
		rdp, err := a.rdpAccountant()
		if err != nil {
			return 0, 0, accounting.KindPLD, certified, err
		}
		// The RDP value itself, so that the result is never above
		// moments.RDP's for the same steps, to the bit.
		if rdp == nil {
			// No cross-check: a step has no Rényi curve.
		} else if e, err := rdp.Epsilon(ctx, delta); err == nil && e < upper {
			upper, from = e, accounting.KindRDP
			upper0 = math.Min(upper0, e)
		} else if err := accounting.Canceled(ctx); err != nil {
			return 0, 0, accounting.KindPLD, certified, err
		}
		if (standsClear(lower, upper) || (target > 0 && upper > target)) && upper < upper0 {
			// Clear of target, or above it: certifyEpsilon would only
			// raise upper (to at most upper0), which stays above target.
			certified = false // (upper0 passes as it is: see certifyEpsilon)
		} else if upper, err = a.certifyEpsilon(ctx, delta, upper, upper0); err != nil {
			return 0, 0, accounting.KindPLD, certified, err
		}
	}
	if pe := a.pureEpsilon(); pe < upper {
		upper, certified = pe, true // Laplace steps alone: pure DP at that ε
	}
	if !(lower >= 0) {
		lower = 0
	}
	return math.Min(lower, upper), upper, from, certified, nil
}

// certifyEpsilon returns the first of e and its raises below e0 at which
// [Accountant.Delta] is at most delta, or e0, so that the round trip
// Delta(Epsilon(δ)) ≤ δ holds exactly. e0 (the first grid's bound, or
// RDP's) always passes: Delta's bound is at most the first grid's and
// RDP's (see rdpDelta). Refinement makes Delta and Epsilon visit grids
// depending on their argument, and the two-scale ε bounds may lie below
// what any δ query reaches, so e may need a raise. The raises grow at
// least by doubling from 1e-12 relative; once two points have failed, a
// step goes at least to the secant root of log δ over the two latest,
// 10% past it (aiming at a δ below delta), but no more than 64 times the
// raise so far. (σ 1, q 1e-4, T 1e4, δ 1e-10: the two-scale ε
// 0.07983298 needed a raise of about 1.5e-4 relative, which doubling
// reached on its 25th δ query.)
func (a *Accountant) certifyEpsilon(ctx context.Context, delta, e, e0 float64) (float64, error) {
	if math.IsInf(e, 1) {
		return e, nil
	}
	// The points tried are e and its raises below e0, at most 64.
	if !(e < e0) {
		return e0, nil
	}
	step := 1e-12 * math.Max(1, e)
	k := 1 // points tried
	// The two latest failing points and their upper δ (0: not known).
	var xa, ua, xb, ub float64
	o, err := search.Solve(search.Problem[float64]{
		Holds: func(x float64) (bool, error) {
			if x == xb && ub > 0 {
				return false, nil // (Solve asks at e twice: Lo and Hi)
			}
			ok, u, err := a.deltaUpperAtMost(ctx, x, delta)
			if err == nil && !ok {
				xa, ua, xb, ub = xb, ub, x, u
			}
			return ok, err
		},
		Lo: e,
		Hi: e,
		Up: func(x float64) (float64, bool) {
			next := x + step
			if ua > delta && ub > delta && ua > ub && xb > xa {
				// log δ falls from ua to ub over [xa, xb]: its secant
				// meets log delta at root.
				lt := math.Log(delta)
				root := xb + (xb-xa)*(math.Log(ub)-lt)/(math.Log(ua)-math.Log(ub))
				next = math.Max(next, math.Min(xb+1.1*(root-xb), xb+64*(xb-e)))
			}
			x = math.Min(next, e0)
			step *= 2
			k++
			return x, k <= 64 && x < e0
		},
		Done: func(lo, hi float64) bool { return true }, // the first point that holds
	})
	if err != nil {
		return 0, err
	}
	if o.Status == search.NoBracket {
		return e0, nil
	}
	return o.X, nil
}

// errStopped ends a δ query of [Accountant.deltaAtMost] early.
var errStopped = errors.New("pld: the upper δ is known to be small enough")

// deltaAtMost reports whether [Accountant.Delta](eps) ≤ delta, computing
// only as much as it takes: the upper δ that Delta returns is the minimum
// of every bound its query accepts on the way (the untilted and the kept
// tilted compositions, the refined grids, the uncut and two-scale
// bounds, the steering and RDP bounds), so the first of them at most
// delta decides, before any lower distribution is made for it (the
// certification of an ε query spent 80% of the query on the lower
// bounds of a δ query it only needed the upper end of).
func (a *Accountant) deltaAtMost(ctx context.Context, eps, delta float64) (bool, error) {
	ok, _, err := a.deltaUpperAtMost(ctx, eps, delta)
	return ok, err
}

// deltaUpperAtMost is deltaAtMost that also returns Delta's upper δ at
// eps when it is above delta (0 when the query stopped early).
func (a *Accountant) deltaUpperAtMost(ctx context.Context, eps, delta float64) (bool, float64, error) {
	if !(delta > 0) {
		d, err := a.Delta(ctx, eps)
		return d <= delta, d, err
	}
	a.stopDelta = delta
	defer func() { a.stopDelta = 0 }()
	_, u, _, err := a.deltaBounds(ctx, eps)
	if err == errStopped {
		return true, 0, nil
	}
	return u <= delta, u, a.public(err)
}

// stopped reports whether a δ query of deltaAtMost may stop at the
// accepted upper bound up.
func (a *Accountant) stopped(up float64) bool {
	return a.stopDelta > 0 && up <= a.stopDelta
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
	// The δ the truncation is cut for (see setup.eta): an upper bound
	// on δ(eps) from RDP, which only matters when the tails set the grid.
	var dEst float64
	dFrom := accounting.KindRDP // where dEst comes from
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
	if dEst > 0 && a.stopped(dEst) {
		return 0, 0, accounting.KindPLD, errStopped // the upper δ is at most dEst
	}
	steer := dEst // the δ the cut is chosen for; dEst stays a certified upper bound
	fromTarget, rdpSteer := false, steer
	if t := a.deltaTarget; t > 0 && t < steer {
		steer, fromTarget = t, true // (DeltaAgainst)
	}
	if dEst > 0 {
		// RDP's δ may be far above the PLD's, and a truncation cut for it
		// would cost more than cutShare of the δ found: cut again at
		// the PLD's upper bound until the cut settles (only upper
		// compositions are needed for that). With the default grid the
		// steps on the way are made on coarse grids (steerLevel) until
		// the cut takes at most steerSettled of the bound found, and the
		// cut settled there is then checked on the default grid, which
		// the bracket below uses (σ 0.7985, q 0.0005428, T 821 at ε
		// 0.85505: RDP's δ 3.7e-5, then 1.19e-8 and 7.8e-10 on the
		// default grid took 38% of the ε query this δ query certified).
		// Every upper bound found on the way is kept.
		coarse := a.h == 0
		for it := 0; it < 8; it++ {
			up, err := a.roughDelta(ctx, eps, steer, coarse)
			if a.rdpOnly(err) {
				break
			}
			if err != nil {
				return 0, 0, accounting.KindPLD, err
			}
			if up > 0 && up < dEst {
				dEst, dFrom = up, accounting.KindPLD
				if a.stopped(dEst) {
					return 0, 0, accounting.KindPLD, errStopped
				}
			}
			if fromTarget {
				fromTarget = false
				if up > 0 && up < 1e-2*steer {
					// Far below DeltaAgainst's target: a cut for the
					// target floors the bound near cutShare of it (σ
					// 1.1325, q 1e-4, T 1e5, ε 0.409541: 3.4e-19 against
					// 1.0e-19 steered from RDP's δ, and a σ search's
					// approach took a step more): steer as Delta does.
					steer = rdpSteer
					continue
				}
			}
			if eta := a.setup.eta(a.h, steer); up > 0 && a.setup.eta(a.h, up) < eta {
				// The cut at eta raised δ by at most 2·steps·eta.
				if coarse && 2*float64(a.setup.steps)*eta <= steerSettled*up {
					coarse = false
				}
				steer = up
				continue
			}
			if !coarse || a.farBelow(dEst) {
				break
			}
			coarse = false
		}
	}
	if a.farBelow(dEst) {
		return 0, dEst, dFrom, nil // DeltaUpperAgainst: settled far below its target
	}
	lower, upper, err = a.deltaBracket(ctx, eps, steer)
	if err == nil && steer > 0 && lower > 0 && a.setup.eta(a.h, lower) < a.setup.eta(a.h, steer) && !a.deltaClear(lower, upper) && !a.upperOnly {
		// The untilted bound steering the cut may sit far above δ (its
		// round-off): cut once more at the certified lower bound, so that
		// the truncation costs at most cutShare of δ, and keep both
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
			upper, from = d, dFrom
		}
	}
	// Never 0 at a finite ε: a Gaussian step is not pure DP.
	upper = math.Max(upper, math.SmallestNonzeroFloat64)
	if !(lower >= 0) {
		lower = 0
	}
	return math.Min(lower, upper), upper, from, nil
}

// uncutCoarse is how many times the cut grid's width the uncut first
// grid's (as composed by default, at least) must be for cutFirst to skip
// it where the cut grid's bracket is not hopeless.
const uncutCoarse = 1.5

// hopelessFactor is how many times wider than the target a bracket on a
// cut level's first grid must be for the uncut composition to be tried
// before the cut grid is refined: 2^maxRefine, past what maxRefine
// refinements, each halving a bracket of second order in h, can bring to
// the target.
const hopelessFactor = 1 << maxRefine

// cutFirst is refined, except that on a level with the tails cut at the
// query's δ no grid is refined before the cheaper brackets have had their
// turn; each is tried only while the intersection so far is wide, and a
// δ query of deltaAtMost stops at the first upper bound that settles it.
// First the cut first grid. Where its bracket is not hopeless (see
// hopelessFactor): the two-scale bounds (twoScale; the certifying δ
// query of σ 1, q 1e-4, T 1e4, δ 1e-15 refined the cut and uncut grids
// twice each, 60% of the ε query, before the two-scale bound settled
// it), where they apply; then the uncut first grid (σ 1, q 1e-4, T 1000,
// δ 1e-15: tried before the two-scale bounds, it composed 434,000 cells
// for [0.0977, 0.3151] around the cut grid's [0.23171, 0.23270], and
// the two-scale bounds decided, 7,816 units, now 6,757; the certifying
// δ query of T 1e4 takes this turn too); then the cut grid refined as
// refined does (σ 0.7985, q 0.0005428, T 821, δ 7.795e-10: two cut
// refinements stalled, 40% of the query, before the uncut first grid
// decided). Where it is hopeless:
// the two-scale bounds, where they apply (σ 1, q 1e-4, T 1e4, δ 1e-10:
// the uncut and cut grids refined twice each left [0.07981, 0.08116], 60%
// of the query; the two-scale bounds [0.0798007, 0.0798330]; the uncut
// first grid, tried before them, composed 308,000 cells for [0.1068,
// 0.4405] at δ 1e-15, and their three queries of the width sweep took
// 5,034 / 6,041 / 9,380 units, now 4,290 / 5,232 / 7,302); the uncut
// grid, refined while the bracket is not hopeless (σ 0.5, q 1e-4, T 1e4,
// δ 1e-15: the cut grid and two refinements gave [4.35, 10.26], 75% of
// the query's time; the uncut first grid [8.30571, 8.30658]); the cut
// grid refined. The width sweep's other queries take the same work.
// scale is uncut's for the bracket (as cutFallbacks passes it). Every
// bracket is certified, so their intersection is.
func (a *Accountant) cutFirst(ctx context.Context, lv *levels, f func(c *composition, upper bool) float64, wide, hopeless func(lo, up float64) bool, point func(lo, up float64) (eps, delta float64, err error), scale func(lo, up float64) float64, twoScale func(lo, up float64) (float64, float64, error)) (lower, upper, upper0 float64, err error) {
	r := lv.res
	if !r.cut {
		return a.refined(ctx, lv, f, wide, point)
	}
	// The cut grid's first bracket; where it is wide but not hopeless,
	// the uncut first grid's before the cut grid is refined (refining a
	// cut grid whose bracket is set by the cut, not by h, is the costly
	// way to find out that it stalls: σ 0.7985, q 0.0005428, T 821,
	// δ 7.795e-10 refined it twice, 40% of the query, before the uncut
	// first grid decided).
	never := func(lo, up float64) bool { return false }
	lower, upper, upper0, err = a.refined(ctx, lv, f, never, point)
	if err != nil || !wide(lower, upper) {
		return lower, upper, upper0, err
	}
	// A bracket that refinement can still narrow (not hopeless) is tried
	// on the uncut first grid as it is; for a hopeless one the uncut grid
	// is refined while its bracket stays hopeless against the cut grid's
	// first. The two paths differ only in these two predicates.
	hope := !hopeless(lower, upper)
	refineUncut := never
	if !hope {
		lo0, up0 := lower, upper
		refineUncut = func(lo, up float64) bool {
			return wide(lo, up) && !hopeless(math.Max(lo, lo0), math.Min(up, up0))
		}
	}
	sc := scale(lower, upper)
	if twoScale != nil {
		if lower, upper, err = twoScale(lower, upper); err != nil || !wide(lower, upper) {
			return lower, upper, upper0, err
		}
		if a.stopped(upper) {
			// (σ 1, q 1e-4, T 1000, δ 1e-15: the certifying δ query
			// went on to refine the cut and uncut grids twice each,
			// 60% of the ε query, after the two-scale bound settled it.)
			return 0, 0, 0, errStopped
		}
	}
	if hope && a.h == 0 && a.setup.autoWidth(a.setup.rangeAt(etaFor(a.setup.steps, 0), false)) >= uncutCoarse*r.h {
		// The uncut first grid is coarser than the cut one by
		// uncutCoarse or more, and a bracket that refinement can
		// narrow is set by h: the uncut one would be wider (σ 0.5,
		// q 1e-4, T 1e5, δ 1e-5 near ε 2.058: [2.05493, 2.06276]
		// around the cut grid's [2.05703, 2.05909], 0.08 s of each of
		// the σ search's four queries there; its grid is 2.7 times as coarse).
	} else if lower, upper, err = a.uncut(ctx, f, lower, upper, sc, refineUncut, point); err != nil || !wide(lower, upper) {
		return lower, upper, upper0, err
	}
	if a.stopped(upper) {
		return 0, 0, 0, errStopped
	}
	lo2, up2, _, err := a.refined(ctx, lv, f, func(lo, up float64) bool {
		return wide(math.Max(lo, lower), math.Min(up, upper)) && (!hope || !hopeless(lo, up))
	}, point)
	return math.Max(lower, lo2), math.Min(upper, up2), upper0, err
}

// cutFallbacks tightens a bracket found with the tails cut at the query's
// δ while it is wide: first with the uncut truncation (uncut; scale as
// there), then with the two-scale bounds (twoScale).
func (a *Accountant) cutFallbacks(ctx context.Context, f func(c *composition, upper bool) float64, lower, upper, scale float64, wide func(lo, up float64) bool, point func(lo, up float64) (eps, delta float64, err error), twoScale func(lo, up float64) (float64, float64, error)) (float64, float64, error) {
	var err error
	if wide(lower, upper) {
		if lower, upper, err = a.uncut(ctx, f, lower, upper, scale, wide, point); err != nil {
			return 0, 0, err
		}
		if a.stopped(upper) {
			return 0, 0, errStopped
		}
	}
	if wide(lower, upper) {
		return twoScale(lower, upper)
	}
	return lower, upper, nil
}

// uncut intersects the bracket [lower, upper] found with the tails cut at a
// query's δ with the bracket of the default truncation (etaFor(steps, 0)),
// for a query whose cut bracket is still wide: the cut narrows the grid
// for tiny ε, but where δ is small the narrower per-step
// range can leave the tilted composition coarser than the uncut one (σ
// 0.5, q 1e-4, T 1e4, δ 1e-10: cut [4.347, 5.783], uncut [5.0841,
// 5.0848]). Both are certified, so their intersection is. A composition
// that does not fit the uncut grid keeps the cut bracket.
//
// scale is the size in ε below which the uncut grid is of no use: where
// its width (at least the whole range over maxStepGrid) is not below
// it, the uncut composition is not tried (the tiny-ε corners the cut is
// for).
func (a *Accountant) uncut(ctx context.Context, f func(c *composition, upper bool) float64, lower, upper, scale float64, wide func(lo, up float64) bool, point func(lo, up float64) (eps, delta float64, err error)) (float64, float64, error) {
	eta := etaFor(a.setup.steps, 0)
	if a.setup.tooFine {
		return lower, upper, nil // a set width already found not to fit (probeWidth)
	}
	if hMin := a.setup.rangeAt(eta, false) / maxStepGrid; a.h == 0 && !(hMin < scale) {
		return lower, upper, nil
	}
	lv, err := a.levelAt(ctx, eta)
	if err == errTooLarge {
		return lower, upper, nil
	}
	if err != nil {
		return 0, 0, err
	}
	// Refine only while the intersection is wide.
	lo, up, _, err := a.refined(ctx, lv, f, func(lo, up float64) bool {
		return wide(math.Max(lo, lower), math.Min(up, upper))
	}, point)
	if err == errTooLarge {
		return lower, upper, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return math.Max(lower, lo), math.Min(upper, up), nil
}

// steerSettled is the share of the upper bound found on a coarse grid
// that the cut it was made with may take for the cut it steers to to be
// made on the default grid (see deltaBounds).
const steerSettled = 0.05

// roughDelta returns the untilted PLD upper bound on δ(eps) with the tails
// cut for a δ of dEst, on the default grid or, when coarse is set, a coarse
// one (steerLevel): certified, it chooses the next cut.
func (a *Accountant) roughDelta(ctx context.Context, eps, dEst float64, coarse bool) (float64, error) {
	var lv *levels
	var err error
	if coarse {
		lv, err = a.steerLevel(ctx, a.setup.eta(a.h, dEst))
	} else {
		lv, err = a.resultFor(ctx, dEst)
	}
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
			lam, err := r.tiltFor(ctx, d, eps)
			if err != nil {
				return 0, err
			}
			if lam > 0 {
				c, err := r.get(ctx, d, true, lam)
				if err != nil && err != errTooLarge {
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
	var r *result
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
		// (DeltaUpperAgainst ends at the two-scale bounds.)
		twoScaled := false
		wide := func(lo, up float64) bool {
			if !(up > 0) || (a.upperOnly && twoScaled) {
				return false
			}
			if !(lo > 0) {
				return true
			}
			return math.Log(up/lo) > targetGap*math.Max(eps, 1e-6)*r.slope(eps) && !a.deltaClear(lo, up)
		}
		point := func(lo, up float64) (float64, float64, error) {
			return eps, up, nil
		}
		hopeless := func(lo, up float64) bool {
			return up > 0 && (!(lo > 0) || math.Log(up/lo) > hopelessFactor*targetGap*math.Max(eps, 1e-6)*r.slope(eps))
		}
		twoScale := func(lo, up float64) (float64, float64, error) {
			twoScaled = true
			return a.twoScaleDelta(ctx, lv, eps, math.Max(dEst, up), lo, up, wide)
		}
		if a.upperOnly && r.cut {
			// DeltaUpperAgainst ends at the two-scale bounds where the
			// cut grid's bracket is wide, and their upper bound does not
			// depend on that grid's lower end. Where the cut grid's
			// upper bound carries error terms that suggest a wide
			// bracket (errorShare), the two-scale bounds come before
			// that grid's lower distributions, which are then made only
			// where the two-scale upper bound up2 leaves it open whether
			// the bracket was wide: its lower end is at most up2, so
			// where log(up/up2) exceeds what a narrow or clear bracket
			// spans, it was wide, and the usual way would have ended at
			// up2 too (σ 1.0066, q 1e-4, T 1e5, ε 0.409541: [2.4e-16,
			// 9.8e-16], 6.1e-16 from the two-scale bounds; 0.11 of the
			// query's 0.17 s of bracket). Elsewhere the usual way, with
			// the uppers (and any two-scale bounds) kept: σ 1, q 1e-4,
			// T 1000, ε 0.0481699 against 1e-10 has a narrow cut
			// bracket, and the two-scale bounds would be made for
			// nothing.
			r.noLows = true
			lo, up, _, err := a.refined(ctx, lv, deltaF(eps), func(lo, up float64) bool { return false }, point)
			r.noLows = false
			if err != nil {
				return 0, 0, err
			}
			gate := targetGap * math.Max(eps, 1e-6) * r.slope(eps) // wide's
			if t := a.deltaTarget; t > 0 && up > 0 {
				gate = math.Max(gate, clearWidth*math.Abs(math.Log(t/up))) // deltaClear's
			}
			if r.errorShare(eps) > gate {
				lo2, up2, err := twoScale(lo, up)
				if err != nil || (a.twoScales[r.eta] != nil && len(r.dirs) == 2 && up2 > 0 && math.Log(up/up2) > gate) {
					return lo2, up2, err
				}
				twoScaled = false // the usual way, with the uppers and the two-scale bounds kept
			}
		}
		lower, upper, _, err = a.cutFirst(ctx, lv, deltaF(eps), wide, hopeless, point, func(lo, up float64) float64 { return 0.01 * eps }, twoScale)
		if err == nil && r.cut {
			lower, upper, err = a.cutFallbacks(ctx, deltaF(eps), lower, upper, 0.01*eps, wide, point, twoScale)
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

// errorShare returns log(u/l) for the upper composition (as the query in
// progress left it tilted) of the direction with the largest upper δ(eps)
// u, where l is that composition's δ(eps) less its error terms: +Inf
// where l is 0. A bracket whose upper end carries error terms that large
// is usually as wide (deltaBracket tries the two-scale bounds first
// there; only the cost depends on it).
func (r *result) errorShare(eps float64) float64 {
	best, share := -1.0, 0.0
	for d := range r.dirs {
		c := r.upperAsTilted(d)
		if c == nil {
			continue
		}
		if u := c.delta(eps, true); u > best {
			best, share = u, math.Inf(1)
			if l := c.delta(eps, false); l > 0 {
				share = math.Log(u / l)
			}
		}
	}
	return share
}
