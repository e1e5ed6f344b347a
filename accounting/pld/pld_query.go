package pld

import (
	"context"
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/gaussian"
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
	lower, upper, _, err = a.epsilonBounds(ctx, delta)
	return lower, upper, a.public(err)
}

// EpsilonBoundsFrom is [Accountant.EpsilonBounds] that also names the
// certificate behind the upper bound: accounting.KindPLD when the
// discretised PLD gave it, accounting.KindRDP when the RDP bound on the same
// steps (default orders, [moments.RDP]) was smaller. RDP wins where the
// PLD's float64 error bounds (FFT round-off, truncation, see [Accountant])
// approach δ, and where the composition is too large for the PLD grid.
func (a *Accountant) EpsilonBoundsFrom(ctx context.Context, delta float64) (lower, upper float64, from accounting.Kind, err error) {
	lower, upper, from, err = a.epsilonBounds(ctx, delta)
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
	lower, upper, _, err = a.deltaBounds(ctx, eps)
	return lower, upper, a.public(err)
}

// DeltaBoundsFrom is [Accountant.DeltaBounds] that also names the
// certificate behind the upper bound (accounting.KindPLD or
// accounting.KindRDP), as [Accountant.EpsilonBoundsFrom] does.
func (a *Accountant) DeltaBoundsFrom(ctx context.Context, eps float64) (lower, upper float64, from accounting.Kind, err error) {
	lower, upper, from, err = a.deltaBounds(ctx, eps)
	return lower, upper, from, a.public(err)
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
// recomputed on a grid half as wide, at most pldMaxRefine times.
const (
	pldTargetGap = 0.005
	pldMaxRefine = 4
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
		// A Gaussian step is never (ε, 0)-DP.
		return math.Inf(1), math.Inf(1), accounting.KindPLD, nil
	}
	if err := accounting.Canceled(ctx); err != nil {
		return 0, 0, accounting.KindPLD, err
	}
	r, err := a.result(ctx)
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
		lower, upper, upper0, err = a.refined(ctx, epsF(delta), func(lo, up float64) bool {
			return !math.IsInf(up, 1) && up-lo > math.Max(pldTargetGap*up, 1e-6)
		})
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
		if e, err := rdp.Epsilon(ctx, delta); err == nil && e < upper {
			upper, from = e, accounting.KindRDP
			upper0 = math.Min(upper0, e)
		} else if err := accounting.Canceled(ctx); err != nil {
			return 0, 0, accounting.KindPLD, err
		}
		if upper, err = a.certifyEpsilon(ctx, delta, upper, upper0); err != nil {
			return 0, 0, accounting.KindPLD, err
		}
	}
	if !(lower >= 0) {
		lower = 0
	}
	return math.Min(lower, upper), upper, from, nil
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
	if len(a.counts) == 0 || math.IsInf(eps, 1) {
		return 0, 0, accounting.KindPLD, nil
	}
	if err := accounting.Canceled(ctx); err != nil {
		return 0, 0, accounting.KindPLD, err
	}
	r, err := a.result(ctx)
	switch {
	case err == nil && r.closed:
		lower, upper = 0, 1 // σ underflowed: see epsilonBounds
		if r.closedSigma > 0 {
			d := math.Exp(gaussian.LogDelta(r.closedSigma, 1, eps))
			lower, upper = d*(1-1e-11), math.Min(1, d*(1+1e-11))
			if d < 0x1p-1022 {
				// Subnormal or underflowed to 0 (log δ < −708): the relative
				// margin is lost to the absolute spacing; add two of its steps.
				upper = d + 2*math.SmallestNonzeroFloat64
			}
		}
	case err == nil:
		lower, upper, _, err = a.refined(ctx, deltaF(eps), func(lo, up float64) bool {
			return up > 0 && up-lo > pldTargetGap*up
		})
	}
	switch {
	case a.rdpOnly(err):
		lower, upper = 0, 1
	case err != nil:
		return 0, 0, accounting.KindPLD, err
	}
	from = accounting.KindPLD
	if upper > 0 {
		rdp, err := a.rdpAccountant()
		if err != nil {
			return 0, 0, accounting.KindPLD, err
		}
		d, err := rdpDelta(ctx, rdp, eps)
		if err != nil {
			return 0, 0, accounting.KindPLD, err
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
// grids halved in turn while wide(lower, upper) holds and the bracket
// shrinks by a quarter per halving; it returns the intersection of the
// certified brackets and the first grid's upper bound. The grids visited
// depend only on the composition and on f's argument, not on earlier
// queries.
func (a *Accountant) refined(ctx context.Context, f func(c *pldComposed, upper bool) float64, wide func(lo, up float64) bool) (lower, upper, upper0 float64, err error) {
	r, err := a.result(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	if lower, upper, err = r.bounds(ctx, f); err != nil {
		return 0, 0, 0, err
	}
	upper0 = upper
	for k := 1; r.auto && k <= pldMaxRefine && wide(lower, upper); k++ {
		fr, err := a.level(k)
		if err == errPLDTooLarge {
			break // keep the certified bracket we have
		}
		if err != nil {
			return 0, 0, 0, err
		}
		lo2, up2, err := fr.bounds(ctx, f)
		if err == errPLDTooLarge {
			break
		}
		if err != nil {
			return 0, 0, 0, err
		}
		// Both brackets are certified: keep their intersection.
		shrunk := math.Min(up2, upper)-math.Max(lo2, lower) < 0.75*(upper-lower)
		lower, upper = math.Max(lower, lo2), math.Min(upper, up2)
		if !shrunk {
			break
		}
	}
	return lower, upper, upper0, nil
}

// level returns the composition on the first grid halved k ≥ 1 times
// (computed from level k−1 and cached), or errPLDTooLarge when its window
// would exceed the FFT cap.
func (a *Accountant) level(k int) (*pldResult, error) {
	for len(a.finer) < k {
		prev := a.res
		if n := len(a.finer); n > 0 {
			prev = a.finer[n-1]
		}
		finer, err := prev.halved()
		if err != nil {
			return nil, err
		}
		a.finer = append(a.finer, finer)
	}
	return a.finer[k-1], nil
}

// halved returns r's composition on a grid half as wide (not yet
// computed), or errPLDTooLarge when the window, estimated from r's, would
// not fit.
func (r *pldResult) halved() (*pldResult, error) {
	for _, d := range r.dirs {
		if d.up != nil && 2*len(d.up.c) > 2*pldAutoFFT {
			return nil, errPLDTooLarge
		}
		for _, g := range d.grids {
			if 2*len(g.tl) > 4*pldMaxStepGrid {
				return nil, errPLDTooLarge
			}
		}
	}
	finer := &pldResult{h: r.h / 2, eta: r.eta, auto: true}
	for _, d := range r.dirs {
		finer.dirs = append(finer.dirs, &pldDir{pairs: d.pairs, counts: d.counts})
	}
	return finer, nil
}

// bounds evaluates f (ε or δ of one composed distribution) over the
// directions: the upper bound is the maximum of the directions' upper
// bounds; the lower bound is the maximum of their lower bounds, where a
// direction whose upper bound is at most the lower bound found so far
// cannot raise it and is skipped. A lower distribution too large for the
// FFT cap contributes the trivial lower bound 0.
func (r *pldResult) bounds(ctx context.Context, f func(c *pldComposed, upper bool) float64) (lower, upper float64, err error) {
	ups := make([]float64, len(r.dirs))
	best := 0
	for d := range r.dirs {
		c, err := r.get(ctx, d, true)
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
		c, err := r.get(ctx, d, false)
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
// until the next Compose).
func (a *Accountant) rdpAccountant() (*moments.RDP, error) {
	if a.rdp != nil {
		return a.rdp, nil
	}
	r, err := moments.NewRDP(nil)
	if err != nil {
		return nil, err
	}
	if !a.private {
		if err := r.Compose(accounting.NonPrivate{}, 1); err != nil {
			return nil, err
		}
	}
	for _, k := range a.keys() {
		if err := r.Compose(pldStepEvent(k), a.counts[k]); err != nil {
			return nil, err
		}
	}
	a.rdp = r
	return r, nil
}

// keys returns the recorded (σ, q) in a fixed order.
func (a *Accountant) keys() [][2]float64 {
	keys := make([][2]float64, 0, len(a.counts))
	for k := range a.counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	return keys
}

// pldStepEvent is the event of one step with key (σ, q).
func pldStepEvent(k [2]float64) accounting.Event {
	var e accounting.Event = accounting.Gaussian{NoiseMultiplier: k[0]}
	if k[1] < 1 {
		e = accounting.PoissonSampled{SamplingRate: k[1], Event: e}
	}
	return e
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
	f := func(e float64) float64 { return gaussian.LogDelta(sigma, 1, e) }
	_, hi = search.SmallestNonNegative(f, ld-slack, 1e-13)
	lo, _ = search.SmallestNonNegative(f, ld+slack, 1e-13)
	return math.Min(lo, hi), hi
}

// result composes the recorded steps on the first grid (cached until the
// next Compose); the caller has checked that a step was composed.
func (a *Accountant) result(ctx context.Context) (*pldResult, error) {
	if a.res != nil {
		return a.res, nil
	}
	keys := a.keys()
	allGaussian := true
	var inv float64
	for _, k := range keys {
		if k[1] != 1 {
			allGaussian = false
		}
		inv += float64(a.counts[k]) / (k[0] * k[0])
	}
	if allGaussian && !pldNoClosedForm {
		a.res = &pldResult{closed: true, closedSigma: 1 / math.Sqrt(inv)}
		return a.res, nil
	}
	r, err := composePLD(ctx, keys, a.counts, a.h)
	if err != nil {
		return nil, err
	}
	a.res = r
	return r, nil
}
