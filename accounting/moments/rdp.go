package moments

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/search"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// RDP reads the moments of [LogMoments] as Rényi divergences
// (Mironov 2017, arXiv:1702.07476v3): the RDP of the composition at Rényi
// order a = λ+1 is α(λ)/λ, with α(λ) summed over the composed steps. It
// converts to (ε, δ) with the improved bound of Canonne, Kamath, Steinke
// (2020, arXiv:2004.00010v5, Proposition 12) = Balle et al. (2020,
// arXiv:1905.09982v2, Theorem 21):
//
//	ε = rdp(a) + log((a−1)/a) − (log δ + log a)/(a−1),   clamped at 0,
//
// minimised over the orders, and its inverse
//
//	δ = exp((a−1)(rdp(a) − ε + log(1 − 1/a)) − log a),   capped at 1.
//
// Besides the events of [MA] it accepts ZCDP{Rho, Xi}, whose
// RDP is Xi + Rho·a. It is never looser than the moments accountant on the
// same ledger, exactly: Epsilon and Delta return the smaller of the
// conversion above and [MA]'s bound on the same moments (both are sound;
// the conversion is the smaller up to rounding). Where δ ≥ √(1 − e^(−D))
// for the Rényi divergence D at its smallest order, ε is 0 (the KL
// shortcut, see klLogDelta), and δ(ε) is never above that δ. An RDP is not
// safe for concurrent use.
type RDP struct {
	s state
}

// NewRDP returns an RDP accountant over the moment orders λ (Rényi orders
// λ+1). With orders nil it minimises over every real λ in [MinOrder,
// MaxSearchOrder] instead (Rényi orders 1 + 2⁻¹⁰ to 1 + 2²⁰, starting from
// [DefaultOrders]; see [RDP.EpsilonAndOrder]). It returns a
// *accounting.ParamError if an order is not finite or below [MinOrder], or
// if orders is empty but not nil, and an error for an unknown neighbouring
// relation. opts set the relation (accounting.WithAdjacency; the default
// is add-remove). Under replace-one it bounds unsampled steps, shuffled
// epochs (see [accounting.Plan.Bounded]) and Gaussian steps sampled
// without replacement, with noise multipliers relative to the replace-one
// sensitivity.
func NewRDP(orders []float64, opts ...accounting.Option) (*RDP, error) {
	s, err := newState(accounting.KindRDP, orders, opts)
	if err != nil {
		return nil, err
	}
	return &RDP{s: s}, nil
}

// Kind returns accounting.KindRDP.
func (a *RDP) Kind() accounting.Kind { return accounting.KindRDP }

// UpperBound marks RDP as an [accounting.Accountant].
func (a *RDP) UpperBound() {}

// Supports accepts Gaussian steps (unsampled, Poisson-sampled under
// add-remove, or fixed-size-sampled under replace-one), Laplace steps
// (unsampled, or Poisson-sampled under add-remove; see laplaceAlpha) and
// unsampled zCDP steps.
func (a *RDP) Supports(s accounting.Step) error { return a.s.supports(s) }

// Orders returns a copy of the accountant's moment orders λ, ascending
// (Rényi orders are λ+1; for the continuous default, the starting grid
// [DefaultOrders]).
func (a *RDP) Orders() []float64 { return append([]float64(nil), a.s.orders...) }

// Compose adds count adaptive repetitions of e. It validates the whole
// event tree first; on error the accountant is unchanged.
func (a *RDP) Compose(e accounting.Event, count int) error { return a.s.compose(e, count) }

// Epsilon returns ε(δ) by the conversion of Canonne, Kamath, Steinke (2020)
// Proposition 12.
func (a *RDP) Epsilon(ctx context.Context, delta float64) (float64, error) {
	eps, _, err := a.EpsilonAndOrder(ctx, delta)
	return eps, err
}

// EpsilonAndOrder returns ε(δ) and the minimising moment order λ (Rényi
// order λ+1; NaN when no order gives a finite bound or nothing was
// composed). δ = 0 gives +Inf unless nothing private was composed.
//
// In the continuous default the minimum is over every real λ, as for
// [MA.EpsilonAndOrder]: the conversion is quasi-convex in λ too, since
// λ·log(λ/(λ+1)) − log(λ+1) is convex, so its sublevel sets
// {λ : α(λ) + λ log(λ/(λ+1)) − log(λ+1) − log δ ≤ ελ} are intervals.
// The result is still never above MA's: at each order the bound is the
// smaller of the conversion and MA's.
func (a *RDP) EpsilonAndOrder(ctx context.Context, delta float64) (eps, lambda float64, err error) {
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
		return a.epsilonSearch(ctx, delta)
	}
	total, err := a.s.totals(ctx)
	if err != nil {
		return 0, math.NaN(), err
	}
	logDelta := logmath.Log(delta)
	eps, lambda = math.Inf(1), math.NaN()
	for i, l := range a.s.orders {
		o := l + 1 // Rényi order
		rdp := total[i] / l
		t1, t2 := math.Log1p(-1/o), (logDelta+math.Log(o))/l
		e := rdp + t1 - t2
		e += search.Slack(rdp, t1, t2) // terms of both signs cancel
		if e < eps {
			eps, lambda = e, l
		}
	}
	if eps < 0 {
		eps = 0 // (ε', δ)-DP with ε' < 0 implies (0, δ)-DP
	}
	eps = certify(search.RoundUp(eps), delta, func(e float64) float64 { return rdpLogDelta(total, a.s.orders, e) })
	// The moments accountant's bound on the same moments is sound too (and
	// certified under RDP's Delta, which is never above MA's); taking the
	// smaller makes RDP ≤ MA exact, not only up to rounding.
	e, l := maEpsilon(total, a.s.orders, delta)
	if e = certify(e, delta, func(e float64) float64 { l, _ := maLogDelta(total, a.s.orders, e); return l }); e < eps {
		eps, lambda = e, l
	}
	return a.klEpsilon(ctx, eps, lambda, delta)
}

// klEpsilon returns 0 and the KL shortcut's order in place of eps and
// lambda when δ is at least the shortcut's δ (see [RDP.klLogDelta]).
func (a *RDP) klEpsilon(ctx context.Context, eps, lambda, delta float64) (float64, float64, error) {
	if !(eps > 0) {
		return eps, lambda, nil
	}
	kl, l, err := a.klLogDelta(ctx)
	if err != nil {
		return 0, math.NaN(), err
	}
	if delta >= finishDelta(kl) {
		return 0, l, nil
	}
	return eps, lambda, nil
}

// klLogDelta returns the log of δ_KL = √(1 − e^(−D)), rounded up, with D
// the composition's Rényi divergence at the smallest order the accountant
// evaluates (MinOrder in the continuous default, else the grid's first),
// and that order. D_{λ+1} is non-decreasing in the order and D_1 is the
// KL divergence (van Erven and Harremoës 2014, Theorems 3 and 5), so
// D ≥ KL, and by the Bretagnolle–Huber inequality the total variation
// distance is at most √(1 − e^(−KL)) ≤ δ_KL: the composition is
// (0, δ_KL)-DP. dp_accounting's compute_epsilon takes the same shortcut at
// its smallest order (Rényi order 1.1).
func (a *RDP) klLogDelta(ctx context.Context) (logD, lambda float64, err error) {
	var t float64
	if a.s.continuous {
		lambda = MinOrder
		if t, err = a.s.totalAt(ctx, lambda); err != nil {
			return 0, math.NaN(), err
		}
	} else {
		total, err := a.s.totals(ctx)
		if err != nil {
			return 0, math.NaN(), err
		}
		lambda, t = a.s.orders[0], total[0]
	}
	d := search.Up(t/lambda, 2)
	v := search.Up(-math.Expm1(-d), 2) // 1 − e^(−D)
	if !(v > 0) {
		v = math.SmallestNonzeroFloat64
	}
	return search.Up(0.5*math.Log(v), 4), lambda, nil
}

// Delta returns δ(ε), the inverse of the conversion of [RDP.Epsilon].
func (a *RDP) Delta(ctx context.Context, epsilon float64) (float64, error) {
	d, _, err := a.DeltaAndOrder(ctx, epsilon)
	return d, err
}

// DeltaAndOrder returns δ(ε) and the minimising moment order λ (NaN when
// δ = 1 or nothing was composed).
func (a *RDP) DeltaAndOrder(ctx context.Context, epsilon float64) (delta, lambda float64, err error) {
	if err := checkEpsilonArg(epsilon); err != nil {
		return 0, math.NaN(), err
	}
	switch {
	case a.s.plan.Unbounded:
		return 1, math.NaN(), nil
	case a.s.plan.Empty() || math.IsInf(epsilon, 1):
		return 0, math.NaN(), nil
	}
	var logD float64
	if a.s.continuous {
		logD, lambda, err = a.s.minimize(ctx, func(t, l float64) float64 { return rdpLogDeltaAt(t, l, epsilon) })
	} else {
		var total []float64
		if total, err = a.s.totals(ctx); err == nil {
			logD, lambda = rdpLogDeltaOrder(total, a.s.orders, epsilon)
		}
	}
	if err != nil {
		return 0, math.NaN(), err
	}
	// The KL shortcut's δ holds at every ε ≥ 0 (see klLogDelta).
	kl, l, err := a.klLogDelta(ctx)
	if err != nil {
		return 0, math.NaN(), err
	}
	if kl < logD {
		logD, lambda = kl, l
	}
	if !(logD < 0) {
		return 1, math.NaN(), nil
	}
	return finishDelta(logD), lambda, nil
}

// AtGridEdge reports whether lambda is the smallest or the largest order of
// the grid: an optimum there may improve with a wider grid.
func (a *RDP) AtGridEdge(lambda float64) bool { return a.s.atEdge(lambda) }

// rdpLogDeltaOrder is RDP's log δ(ε): the smaller of the inverse conversion
// and MA's Theorem 2.2 on the same moments (as in EpsilonAndOrder: RDP ≤ MA
// exactly), capped at 0 and rounded up, with its order (NaN at the cap).
func rdpLogDeltaOrder(total, orders []float64, epsilon float64) (logD, lambda float64) {
	logD, lambda = 0, math.NaN()
	for i, l := range orders {
		o := l + 1
		rdp := total[i] / l
		t1, t2 := math.Log1p(-1/o), math.Log(o)
		v := l*(rdp-epsilon+t1) - t2
		v += search.Slack(l*rdp, l*epsilon, l*t1, t2) // rounding of log δ, upward
		if v < logD {
			logD, lambda = v, l
		}
	}
	if v, l := maLogDelta(total, orders, epsilon); v < logD {
		logD, lambda = v, l
	}
	return logD, lambda
}

func rdpLogDelta(total, orders []float64, epsilon float64) float64 {
	l, _ := rdpLogDeltaOrder(total, orders, epsilon)
	return l
}

// epsilonSearch is EpsilonAndOrder in continuous mode: one search for the
// smaller of the conversion and MA's bound at each order (the per-order
// inverse of rdpLogDeltaAt), certified against rdpLogDeltaAt at its order.
// Both bounds are evaluated at every order MA's search could meet and the
// conversion is the smaller at each, so the minimum is never above MA's.
func (a *RDP) epsilonSearch(ctx context.Context, delta float64) (eps, lambda float64, err error) {
	s := &a.s
	logDelta := logmath.Log(delta)
	eps, lambda, err = s.minimize(ctx, func(t, l float64) float64 {
		return math.Min(cksEpsAt(t, l, logDelta), maEpsAt(t, l, -logDelta))
	})
	if err != nil || math.IsNaN(lambda) {
		return math.Inf(1), lambda, err
	}
	t, err := s.totalAt(ctx, lambda)
	if err != nil {
		return 0, math.NaN(), err
	}
	eps = certify(search.RoundUp(math.Max(eps, 0)), delta, func(e float64) float64 { return rdpLogDeltaAt(t, lambda, e) })
	return a.klEpsilon(ctx, eps, lambda, delta)
}
