package moments

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/search"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// MA is the moments accountant of Abadi et al. (2016) §3.2
// (arXiv:1607.00133v2) with the tail bound of Theorem 2.2 exactly as the
// paper states it:
//
//	δ(ε) = min_λ exp(α(λ) − λε),   ε(δ) = min_λ (α(λ) + log(1/δ))/λ,
//
// where α(λ) is the sum over composed steps of the per-step log moment
// (Theorem 2.1), computed by [LogMoments] and rounded up by its error bound.
// It supports Gaussian, PoissonSampled{q, Gaussian}, SelfComposed, Composed
// (any nesting), NoOp and NonPrivate events.
//
// An MA is not safe for concurrent use.
type MA struct {
	s state
}

// NewMA returns a moments accountant over the moment orders λ. With orders
// nil it minimises over every real λ in [MinOrder, MaxSearchOrder] instead
// (starting from [DefaultOrders]; see [MA.EpsilonAndOrder]). It returns a
// *accounting.ParamError if an order is not finite or below [MinOrder], or
// if orders is empty but not nil, and an error for an unknown neighbouring
// relation. opts set the relation (accounting.WithAdjacency; the default
// is add-remove). Under replace-one it bounds unsampled steps, shuffled
// epochs (see [accounting.Plan.Bounded]) and Gaussian steps sampled
// without replacement, with noise multipliers relative to the replace-one
// sensitivity.
func NewMA(orders []float64, opts ...accounting.Option) (*MA, error) {
	s, err := newState(accounting.KindMA, orders, opts)
	if err != nil {
		return nil, err
	}
	return &MA{s: s}, nil
}

// Kind returns accounting.KindMA.
func (a *MA) Kind() accounting.Kind { return accounting.KindMA }

// UpperBound marks MA as an [accounting.Accountant].
func (a *MA) UpperBound() {}

// Supports accepts Gaussian steps, unsampled or Poisson-sampled.
func (a *MA) Supports(s accounting.Step) error { return a.s.supports(s) }

// Orders returns a copy of the accountant's moment orders, ascending (for
// the continuous default, the starting grid [DefaultOrders]).
func (a *MA) Orders() []float64 { return append([]float64(nil), a.s.orders...) }

// Compose adds count adaptive repetitions of e. It validates the whole
// event tree first; on error the accountant is unchanged. Per-step α values
// are cached per (σ, q), so composing many identical segments is cheap.
func (a *MA) Compose(e accounting.Event, count int) error {
	return a.s.compose(e, count)
}

// Epsilon returns ε(δ) by Abadi et al. (2016) Theorem 2.2.
func (a *MA) Epsilon(ctx context.Context, delta float64) (float64, error) {
	eps, _, err := a.EpsilonAndOrder(ctx, delta)
	return eps, err
}

// EpsilonAndOrder returns ε(δ) = min_λ (α(λ) + log(1/δ))/λ and the
// minimising order λ (NaN when no order gives a finite bound or nothing has
// been composed). δ = 0 gives +Inf unless nothing private was composed.
// Use [MA.AtGridEdge] to see whether the optimum may lie
// beyond the grid.
//
// In the continuous default the minimum is over the grid and the lattice
// λ = 2^(k/1024) in [MinOrder, MaxSearchOrder]: the bound is quasi-convex
// in λ (its sublevel sets {λ : α(λ) − ελ + log(1/δ) ≤ 0} are intervals
// because α is convex, Hölder), so a bracketing search on the lattice from
// the grid's best order finds the lattice's minimum; the value returned is
// always that of an order actually evaluated, never above the grid's.
func (a *MA) EpsilonAndOrder(ctx context.Context, delta float64) (eps, lambda float64, err error) {
	if err := accounting.CheckDeltaQuery(delta); err != nil {
		return 0, math.NaN(), err
	}
	switch {
	case a.s.plan.Unbounded:
		return math.Inf(1), math.NaN(), nil
	case a.s.plan.Empty():
		return 0, math.NaN(), nil
	case delta == 0:
		return math.Inf(1), math.NaN(), nil
	}
	if a.s.continuous {
		return maEpsilonSearch(ctx, &a.s, delta)
	}
	total, err := a.s.totals(ctx)
	if err != nil {
		return 0, math.NaN(), err
	}
	eps, lambda = maEpsilon(total, a.s.orders, delta)
	return certify(eps, delta, func(e float64) float64 { l, _ := maLogDelta(total, a.s.orders, e); return l }), lambda, nil
}

// maEpsilon is Theorem 2.2's ε(δ) for the composed log moments total at
// orders (0 < δ < 1), rounded up, and its order.
func maEpsilon(total, orders []float64, delta float64) (eps, lambda float64) {
	logInvDelta := -logmath.Log(delta)
	eps, lambda = math.Inf(1), math.NaN()
	for i, l := range orders {
		if e := (total[i] + logInvDelta) / l; e < eps {
			eps, lambda = e, l
		}
	}
	return search.RoundUp(eps), lambda
}

// maLogDelta is Theorem 2.2's log δ(ε), capped at 0, rounded up, and its
// order (NaN when the cap applies).
func maLogDelta(total, orders []float64, epsilon float64) (logD, lambda float64) {
	logD, lambda = 0, math.NaN()
	for i, l := range orders {
		v := total[i] - l*epsilon
		v += search.Slack(total[i], l*epsilon) // rounding of log δ, upward
		if v < logD {
			logD, lambda = v, l
		}
	}
	return logD, lambda
}

// Delta returns δ(ε) by Abadi et al. (2016) Theorem 2.2.
func (a *MA) Delta(ctx context.Context, epsilon float64) (float64, error) {
	d, _, err := a.DeltaAndOrder(ctx, epsilon)
	return d, err
}

// DeltaAndOrder returns δ(ε) = min(1, min_λ exp(α(λ) − λε)) and the
// minimising order (NaN when δ = 1 or nothing was composed).
func (a *MA) DeltaAndOrder(ctx context.Context, epsilon float64) (delta, lambda float64, err error) {
	if err := checkEpsilonArg(epsilon); err != nil {
		return 0, math.NaN(), err
	}
	switch {
	case a.s.plan.Unbounded:
		return 1, math.NaN(), nil
	case a.s.plan.Empty() || math.IsInf(epsilon, 1):
		return 0, math.NaN(), nil
	}
	if a.s.continuous {
		logD, l, err := a.s.minimize(ctx, func(t, l float64) float64 { return maLogDeltaAt(t, l, epsilon) })
		if err != nil {
			return 0, math.NaN(), err
		}
		if !(logD < 0) {
			return 1, math.NaN(), nil
		}
		return finishDelta(logD), l, nil
	}
	total, err := a.s.totals(ctx)
	if err != nil {
		return 0, math.NaN(), err
	}
	logD, lambda := maLogDelta(total, a.s.orders, epsilon)
	return finishDelta(logD), lambda, nil
}

// AtGridEdge reports whether lambda is the smallest or the largest order of
// the grid: an optimum there may improve with a wider grid.
func (a *MA) AtGridEdge(lambda float64) bool { return a.s.atEdge(lambda) }

// maEpsilonSearch is MA's ε(δ) in continuous mode, certified against
// Theorem 2.2's δ at its order: Delta, which searches the same orders for
// its minimum, is then at most δ.
func maEpsilonSearch(ctx context.Context, s *state, delta float64) (eps, lambda float64, err error) {
	logInvDelta := -logmath.Log(delta)
	eps, lambda, err = s.minimize(ctx, func(t, l float64) float64 { return maEpsAt(t, l, logInvDelta) })
	if err != nil || math.IsNaN(lambda) {
		return math.Inf(1), lambda, err
	}
	t, err := s.totalAt(ctx, lambda)
	if err != nil {
		return 0, math.NaN(), err
	}
	eps = certify(search.RoundUp(eps), delta, func(e float64) float64 { return maLogDeltaAt(t, lambda, e) })
	return eps, lambda, nil
}
