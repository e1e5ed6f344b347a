package accounting

import (
	"context"
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// Group privacy: a bound for data sets at distance g under a method's
// neighbouring relation (g records added or removed under [AddRemove], g
// records replaced under [ReplaceOne]), from the method's bound for
// neighbours.
//
// The group privacy lemma: if a mechanism M is (ε, δ)-DP for neighbours,
// then for data sets x₀, x_g joined by a path x₀, x₁, …, x_g of
// neighbours, applying the definition along the path gives, for every
// set S of outputs,
//
//	P[M(x₀) ∈ S] ≤ e^{gε}·P[M(x_g) ∈ S] + δ·Σ_{i=0}^{g−1} e^{iε},
//
// so M is (gε, δ·Σ_{i<g} e^{iε})-DP at distance g. This is the chain
// argument of Vadhan, "The Complexity of Differential Privacy" (2017),
// Lemma 2.2, before its last step bounds the sum by g·e^{gε} (the sum
// form is the tighter one); for δ = 0 it is Dwork and Roth, "The
// Algorithmic Foundations of Differential Privacy" (2014), Theorem 2.2.
// It holds for any mechanism, adaptive compositions included, so it
// applies to every accountant's certified single-record curve δ₁(ε); it is
// not tight (for Poisson-sampled Gaussians the exact group event is the
// mixture of [UserLevel]). A method's δ₁ is a float64, often floored at
// the smallest positive one (about 4.9e-324), so the lemma certifies no
// ε₁ above about (745 + ln δ)/(g − 1) unless δ₁ is exactly 0 there: a
// group ε it cannot certify is reported as +Inf (no finite bound).

// MaxGroupSize is the largest group size [Group] takes (2^53, so that g
// is an exact float64).
const MaxGroupSize = MaxCount

// groupRelTol is the relative width at which [groupEpsilon]'s refinement
// stops; the answer is the valid end of the bracket, so the tolerance
// costs tightness, not soundness.
const groupRelTol = 1e-7

// groupScanSteps and groupBisectSteps bound [groupEpsilon]'s queries of
// δ₁: a geometric scan by groupScanGrowth from the single-record ε at
// δ/g (up to 1.25^160 ≈ 3·10^15 times it), then a bracketed refinement.
const (
	groupScanSteps   = 160
	groupScanGrowth  = 1.25
	groupBisectSteps = 64
)

// groupSafety is the relative margin GroupDelta adds to cover the
// rounding of its log-space arithmetic (a few ulps of a logarithm up to
// about 750 in size, about 1e-13 each), so that its value is never below
// the exact δ·Σ e^{iε}.
const groupSafety = 1e-10

// logExpm1 returns log(e^x − 1) for x > 0 without overflow, and for a
// subnormal x (e^x − 1 is x there; logmath.Log, since Go's math.Log is
// about −709.09 for every subnormal on amd64).
func logExpm1(x float64) float64 {
	if x > 30 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return logmath.Log(math.Expm1(x))
}

// logGroupSum returns log Σ_{i=0}^{g−1} e^{iε} for ε ≥ 0 (+Inf for ε =
// +Inf and g ≥ 2): log g at ε = 0, else log((e^{gε} − 1)/(e^ε − 1)).
func logGroupSum(eps float64, g int) float64 {
	switch {
	case g == 1:
		return 0
	case eps == 0:
		return math.Log(float64(g))
	case math.IsInf(eps, 1):
		return eps
	}
	return logExpm1(float64(g)*eps) - logExpm1(eps)
}

// GroupDelta returns δ·Σ_{i=0}^{g−1} e^{iε}, the δ of the group privacy
// lemma for data sets at distance g when the mechanism is (ε, δ)-DP for
// neighbours, rounded up and capped at 1. It is δ for g = 1, g·δ at ε =
// 0, 0 for δ = 0, and 1 for ε = +Inf with δ > 0 and g ≥ 2. It is
// computed in log space (no overflow for any g up to [MaxGroupSize]).
// It panics for g < 1, ε < 0 or NaN, or δ outside [0, 1].
func GroupDelta(epsilon, delta float64, g int) float64 {
	if g < 1 || !(epsilon >= 0) || !(delta >= 0 && delta <= 1) {
		panic(fmt.Sprintf("accounting: GroupDelta(%g, %g, %d): want ε ≥ 0, δ in [0, 1], g ≥ 1", epsilon, delta, g))
	}
	if g == 1 || delta == 0 {
		return delta
	}
	l := logmath.Log(delta) + logGroupSum(epsilon, g)
	if l >= 0 {
		return 1
	}
	return math.Min(1, math.Exp(l)*(1+groupSafety))
}

// deltaAt is a method's δ₁(ε), an upper bound for neighbours.
type deltaAt func(ctx context.Context, eps float64) (float64, error)

// groupEpsilon returns an ε for which the composition is (ε, delta)-DP at
// distance g by the group privacy lemma: g·ε₁ for an ε₁ with
// GroupDelta(ε₁, δ₁(ε₁), g) ≤ delta, rounded up; +Inf when none is found.
// Any such ε₁ gives a valid bound; the search looks for a small one.
// δ₁(ε)·Σ e^{iε} is not monotone in ε (δ₁ falls, the sum grows), so the
// search does not assume it is: it starts at e0, the single-record ε at
// delta/g (a valid ε₁ has δ₁(ε₁) ≤ delta/g, since the sum is at least g),
// scans upward geometrically to the first valid point, and refines the
// bracket between it and the last invalid point before it by the
// Illinois method (regula falsi on log of the lemma's δ over delta),
// keeping the valid end. If e0 itself is valid it refines between 0 and
// e0 instead. Once the sum alone is too large for any positive δ₁ it
// checks the scan's last point once and gives up unless δ₁ is 0 there.
// Its cost is at most groupScanSteps + groupBisectSteps + 3 queries of
// δ₁; 6 to 8 on the Gaussian mechanism (TestGroupSearch).
func groupEpsilon(ctx context.Context, eps func(ctx context.Context, delta float64) (float64, error), d deltaAt, delta float64, g int) (float64, error) {
	up := func(e1 float64) float64 {
		if e1 == 0 || math.IsInf(e1, 1) {
			return e1
		}
		p := float64(g) * e1
		if math.FMA(float64(g), e1, -p) > 0 { // p rounded down
			p = math.Nextafter(p, math.Inf(1))
		}
		return p
	}
	if delta == 0 {
		// (ε₁, 0)-DP for neighbours is (g·ε₁, 0)-DP at distance g.
		e1, err := eps(ctx, 0)
		return up(e1), err
	}
	// eval returns whether e1 is a valid ε₁, and h = log(δ₁(e1)·Σ e^{i·e1}/delta),
	// which the refinement interpolates.
	type point struct{ x, h float64 }
	eval := func(e1 float64) (bool, point, error) {
		d1, err := d(ctx, e1)
		if err != nil {
			return false, point{}, err
		}
		if math.IsNaN(d1) {
			return false, point{}, fmt.Errorf("accounting: group privacy: δ(%g) is NaN", e1)
		}
		gd := GroupDelta(e1, math.Min(math.Max(d1, 0), 1), g)
		return gd <= delta, point{e1, logmath.Log(gd) - logmath.Log(delta)}, nil
	}
	e0, err := eps(ctx, delta/float64(g))
	if err != nil || math.IsInf(e0, 1) || math.IsNaN(e0) {
		return math.Inf(1), err
	}
	ok, p0, err := eval(e0)
	if err != nil {
		return 0, err
	}
	var lo, hi point
	if ok {
		ok0, z, err := eval(0)
		if err != nil || ok0 {
			return 0, err
		}
		lo, hi = z, p0
	} else {
		lo = p0
		found, checked := false, false
		// The scan's last point, where it gives up.
		end := math.Max(e0, 1e-6) * math.Pow(groupScanGrowth, groupScanSteps)
		end = math.Min(end, math.MaxFloat64/2/float64(g))
		for i := 0; i < groupScanSteps && !found; i++ {
			if err := ctx.Err(); err != nil {
				return 0, fmt.Errorf("accounting: stopped: %w", err)
			}
			x := math.Max(lo.x*groupScanGrowth, lo.x+1e-6)
			if x > end {
				break
			}
			if !checked && GroupDelta(x, math.SmallestNonzeroFloat64, g) > delta {
				// From x on, only δ₁ = 0 is valid (the sum only grows):
				// unless δ₁ is 0 where the scan ends, none will be.
				checked = true
				if okEnd, _, err := eval(end); err != nil || !okEnd {
					return math.Inf(1), err
				}
			}
			var pt point
			if found, pt, err = eval(x); err != nil {
				return 0, err
			}
			if found {
				hi = pt
			} else {
				lo = pt
			}
		}
		if !found {
			return math.Inf(1), nil
		}
	}
	// Illinois (regula falsi that halves the h of an end kept twice),
	// with the valid end kept: lo is invalid (h > 0), hi valid.
	kept := 0 // +1: lo was kept last time, -1: hi was
	for i := 0; i < groupBisectSteps && hi.x-lo.x > groupRelTol*hi.x; i++ {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("accounting: stopped: %w", err)
		}
		x := lo.x + (hi.x-lo.x)/2
		if !math.IsInf(lo.h, 0) && !math.IsInf(hi.h, 0) && lo.h > hi.h {
			if s := hi.x - hi.h*(hi.x-lo.x)/(hi.h-lo.h); s > lo.x && s < hi.x {
				x = s
			}
		}
		ok, pt, err := eval(x)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = pt
			if kept == 1 {
				lo.h /= 2
			}
			kept = 1
		} else {
			lo = pt
			if kept == -1 {
				hi.h /= 2
			}
			kept = -1
		}
	}
	return up(hi.x), nil
}

// groupDelta returns the lemma's δ at distance g for ε: with ε₁ = ε/g
// rounded down (a smaller ε₁ only raises δ₁), δ₁(ε₁)·Σ_{i<g} e^{iε₁}.
func groupDelta(ctx context.Context, d deltaAt, eps float64, g int) (float64, error) {
	if math.IsInf(eps, 1) {
		// δ(∞) is the mass of infinite privacy loss; the lemma's sum is
		// infinite, so only δ₁(∞) = 0 gives a bound below 1.
		d1, err := d(ctx, eps)
		if err != nil || d1 == 0 {
			return 0, err
		}
		return 1, nil
	}
	e1 := eps / float64(g)
	if math.FMA(e1, float64(g), -eps) > 0 { // g·e1 above eps
		e1 = math.Nextafter(e1, 0)
	}
	d1, err := d(ctx, e1)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(d1) {
		return 0, fmt.Errorf("accounting: group privacy: δ(%g) is NaN", e1)
	}
	return GroupDelta(e1, math.Min(math.Max(d1, 0), 1), g), nil
}

// Group returns m answering for data sets at distance g under m's
// neighbouring relation, by the group privacy lemma applied to m's
// answers for neighbours (see [GroupDelta]): Delta(ε) is
// GroupDelta(ε/g, m.Delta(ε/g), g), and Epsilon(δ) is g·ε₁ for an ε₁
// whose GroupDelta is at most δ (a search of about ten queries of
// m.Delta). Compose and Supports are m's. The result is an [Accountant]
// when m is (its answers are upper bounds when m's are), a [Procedure]
// with m's caveat when m is one, and a [BoundsReporter] when m is one:
// its lower bounds are m's for neighbours (data sets at distance g include
// neighbours, so the true group ε and δ are at least the single-record
// ones), its upper bounds the lemma's. g = 1 returns m itself; g outside
// [1, MaxGroupSize] is a *ParamError named "group_size".
//
// The lemma is not tight: where the exact group event is known (Poisson
// sampling under add-remove, [UserLevel]; unsampled noise, [GroupEvent])
// accounting that event gives a smaller bound.
func Group(m Method, g int) (Method, error) {
	if g < 1 || g > MaxGroupSize {
		return nil, &ParamError{Name: "group_size", Value: float64(g), Want: "an integer in [1, 2^53]"}
	}
	if g == 1 {
		return m, nil
	}
	gm := groupMethod{m: m, g: g}
	br, bounded := m.(BoundsReporter)
	switch m := m.(type) {
	case Accountant:
		if bounded {
			return &groupBounds{groupAccountant{gm}, br}, nil
		}
		return &groupAccountant{gm}, nil
	case Procedure:
		return &groupProcedure{gm, m}, nil
	}
	return &gm, nil
}

// groupMethod is the Method of [Group].
type groupMethod struct {
	m Method
	g int
}

// Kind implements [Method]: m's kind.
func (gm *groupMethod) Kind() Kind { return gm.m.Kind() }

// Supports implements [Method].
func (gm *groupMethod) Supports(s Step) error { return gm.m.Supports(s) }

// Compose implements [Method].
func (gm *groupMethod) Compose(e Event, count int) error { return gm.m.Compose(e, count) }

// GroupBounder is implemented by methods with a group privacy statement
// of their own, which [Group] uses beside the lemma (taking the smaller
// bound): GroupEpsilon and GroupDelta answer for the current composition
// at distance g, with ok false where the statement does not apply.
// (zcdp: ρ-zCDP is g²ρ-zCDP at distance g.)
type GroupBounder interface {
	GroupEpsilon(ctx context.Context, delta float64, g int) (epsilon float64, ok bool, err error)
	GroupDelta(ctx context.Context, epsilon float64, g int) (delta float64, ok bool, err error)
}

// Epsilon implements [Method]: the lemma's ε at distance g, or m's own
// group bound ([GroupBounder]) where it is smaller.
func (gm *groupMethod) Epsilon(ctx context.Context, delta float64) (float64, error) {
	if err := CheckDeltaQuery(delta); err != nil {
		return 0, err
	}
	e, err := groupEpsilon(ctx, gm.m.Epsilon, gm.m.Delta, delta, gm.g)
	if err != nil {
		return 0, err
	}
	if gb, ok := gm.m.(GroupBounder); ok {
		e2, ok, err := gb.GroupEpsilon(ctx, delta, gm.g)
		if err != nil {
			return 0, err
		}
		if ok && e2 < e {
			e = e2
		}
	}
	return e, nil
}

// Delta implements [Method]: the lemma's δ at distance g, or m's own
// group bound ([GroupBounder]) where it is smaller.
func (gm *groupMethod) Delta(ctx context.Context, epsilon float64) (float64, error) {
	if math.IsNaN(epsilon) || epsilon < 0 {
		return 0, &ParamError{Name: "eps", Value: epsilon, Want: ">= 0"}
	}
	d, err := groupDelta(ctx, gm.m.Delta, epsilon, gm.g)
	if err != nil {
		return 0, err
	}
	if gb, ok := gm.m.(GroupBounder); ok {
		d2, ok, err := gb.GroupDelta(ctx, epsilon, gm.g)
		if err != nil {
			return 0, err
		}
		if ok && d2 < d {
			d = d2
		}
	}
	return d, nil
}

// GroupSize returns g.
func (gm *groupMethod) GroupSize() int { return gm.g }

type groupAccountant struct{ groupMethod }

// UpperBound implements [Accountant].
func (groupAccountant) UpperBound() {}

type groupProcedure struct {
	groupMethod
	p Procedure
}

// Caveat implements [Procedure]: the inner procedure's caveat.
func (gp *groupProcedure) Caveat() string { return gp.p.Caveat() }

type groupBounds struct {
	groupAccountant
	br BoundsReporter
}

// EpsilonBounds implements [BoundsReporter]: the single-record lower
// bound at delta and the lemma's upper bound.
func (gb *groupBounds) EpsilonBounds(ctx context.Context, delta float64) (lower, upper float64, err error) {
	if upper, err = gb.Epsilon(ctx, delta); err != nil {
		return 0, 0, err
	}
	if lower, _, err = gb.br.EpsilonBounds(ctx, delta); err != nil {
		return 0, 0, err
	}
	return math.Min(lower, upper), upper, nil
}

// DeltaBounds implements [BoundsReporter]: the single-record lower bound
// at epsilon and the lemma's upper bound.
func (gb *groupBounds) DeltaBounds(ctx context.Context, epsilon float64) (lower, upper float64, err error) {
	if upper, err = gb.Delta(ctx, epsilon); err != nil {
		return 0, 0, err
	}
	if lower, _, err = gb.br.DeltaBounds(ctx, epsilon); err != nil {
		return 0, 0, err
	}
	return math.Min(lower, upper), upper, nil
}

// divDown returns x/g rounded down (x ≥ 0, g ≥ 1): a noise multiplier
// over g, where rounding up would claim more noise than there is.
func divDown(x float64, g int) float64 {
	m := x / float64(g)
	if m > 0 && !math.IsInf(m, 1) && math.FMA(m, float64(g), -x) > 0 {
		m = math.Nextafter(m, 0)
	}
	return m
}

// GroupEvent returns the event e seen by data sets at distance g when
// every release in e is unsampled additive noise: each Gaussian's noise
// multiplier and each Laplace's scale divided by g, each discrete
// Gaussian's and discrete Laplace's sensitivity times g (rounded up; a
// discrete Laplace sensitivity past 2^53 falls back to the lemma). A query whose value
// moves by at most Δ between neighbours moves by at most g·Δ along a
// path of g neighbours (the triangle inequality), so at distance g each
// release is the same mechanism with sensitivity g·Δ, and the noise over
// the sensitivity is 1/g of what it was, rounded down (for the sum of clipped
// gradients, g records aligned attain g·Δ: the bound is exact). ok is
// false, and e is returned, when e has any other event (a sampled step,
// a mixture, an (ε, δ) or zCDP step), for which only [Group]'s lemma
// applies. PoissonSampled at rate 1 is unsampled.
func GroupEvent(e Event, g int) (Event, bool) {
	if g == 1 {
		return e, true
	}
	var scale func(e Event) (Event, bool)
	scale = func(e Event) (Event, bool) {
		switch e := e.(type) {
		case Gaussian:
			return Gaussian{NoiseMultiplier: divDown(e.NoiseMultiplier, g)}, true
		case Laplace:
			return Laplace{NoiseMultiplier: divDown(e.NoiseMultiplier, g)}, true
		case DiscreteGaussian:
			// The sensitivity times g, rounded up.
			s := e.Sensitivity * float64(g)
			if math.FMA(e.Sensitivity, float64(g), -s) > 0 {
				s = math.Nextafter(s, math.Inf(1))
			}
			if math.IsInf(s, 0) {
				return nil, false
			}
			e.Sensitivity = s
			return e, true
		case DiscreteLaplace:
			if e.Sensitivity > 0 && g > MaxCount/e.Sensitivity {
				return nil, false
			}
			e.Sensitivity *= g
			return e, true
		case NoOp:
			return e, true
		case PoissonSampled:
			if e.SamplingRate != 1 {
				return nil, false
			}
			return scale(e.Event)
		case SelfComposed:
			in, ok := scale(e.Event)
			return SelfComposed{Event: in, Count: e.Count}, ok
		case Composed:
			out := Composed{Events: make([]Event, len(e.Events))}
			for i, c := range e.Events {
				var ok bool
				if out.Events[i], ok = scale(c); !ok {
					return nil, false
				}
			}
			return out, true
		}
		return nil, false
	}
	if s, ok := scale(e); ok {
		return s, true
	}
	return e, false
}
