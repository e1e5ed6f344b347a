package accounting

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// MomentsAccountant is the moments accountant of Abadi et al. (2016) §3.2
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
// A MomentsAccountant is not safe for concurrent use.
type MomentsAccountant struct {
	s momentsState
}

// NewMA returns a moments accountant over the moment orders λ (nil selects
// [DefaultOrders]). It panics if an order is not finite or below 1, or if
// orders is empty but not nil.
func NewMA(orders []float64) *MomentsAccountant {
	return &MomentsAccountant{s: newMomentsState(KindMA, orders)}
}

// Kind returns KindMA.
func (a *MomentsAccountant) Kind() Kind { return KindMA }

// Orders returns a copy of the accountant's moment orders, ascending.
func (a *MomentsAccountant) Orders() []float64 { return append([]float64(nil), a.s.orders...) }

// Compose adds count adaptive repetitions of e. It validates the whole
// event tree first; on error the accountant is unchanged. Per-step α values
// are cached per (σ, q), so composing many identical segments is cheap.
func (a *MomentsAccountant) Compose(e Event, count int) error { return a.s.compose(e, count) }

// Epsilon returns ε(δ) by Abadi et al. (2016) Theorem 2.2.
func (a *MomentsAccountant) Epsilon(delta float64) (float64, error) {
	eps, _, err := a.EpsilonAndOrder(delta)
	return eps, err
}

// EpsilonAndOrder returns ε(δ) = min_λ (α(λ) + log(1/δ))/λ and the
// minimising order λ (NaN when no order gives a finite bound or nothing has
// been composed). δ = 0 gives +Inf unless nothing private was composed.
// Use [MomentsAccountant.AtGridEdge] to see whether the optimum may lie
// beyond the grid.
func (a *MomentsAccountant) EpsilonAndOrder(delta float64) (eps, lambda float64, err error) {
	if err := checkDeltaArg(delta); err != nil {
		return 0, math.NaN(), err
	}
	switch {
	case a.s.nonPrivate:
		return math.Inf(1), math.NaN(), nil
	case a.s.empty():
		return 0, math.NaN(), nil
	case delta == 0:
		return math.Inf(1), math.NaN(), nil
	}
	logInvDelta := -logmath.Log(delta)
	eps, lambda = math.Inf(1), math.NaN()
	for i, l := range a.s.orders {
		if e := (a.s.total[i] + logInvDelta) / l; e < eps {
			eps, lambda = e, l
		}
	}
	return roundUp(eps), lambda, nil
}

// Delta returns δ(ε) by Abadi et al. (2016) Theorem 2.2.
func (a *MomentsAccountant) Delta(epsilon float64) (float64, error) {
	d, _, err := a.DeltaAndOrder(epsilon)
	return d, err
}

// DeltaAndOrder returns δ(ε) = min(1, min_λ exp(α(λ) − λε)) and the
// minimising order (NaN when δ = 1 or nothing was composed).
func (a *MomentsAccountant) DeltaAndOrder(epsilon float64) (delta, lambda float64, err error) {
	if err := checkEpsilonArg(epsilon); err != nil {
		return 0, math.NaN(), err
	}
	switch {
	case a.s.nonPrivate:
		return 1, math.NaN(), nil
	case a.s.empty() || math.IsInf(epsilon, 1):
		return 0, math.NaN(), nil
	}
	logD, lambda := 0.0, math.NaN()
	for i, l := range a.s.orders {
		v := a.s.total[i] - l*epsilon
		v += slack(a.s.total[i], l*epsilon) // rounding of log δ, upward
		if v < logD {
			logD, lambda = v, l
		}
	}
	return math.Min(1, roundUp(math.Exp(logD))), lambda, nil
}

// AtGridEdge reports whether lambda is the smallest or the largest order of
// the grid: an optimum there may improve with a wider grid.
func (a *MomentsAccountant) AtGridEdge(lambda float64) bool { return a.s.atEdge(lambda) }
