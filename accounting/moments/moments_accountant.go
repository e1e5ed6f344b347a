package moments

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/search"
)

// state is the ledger shared by [MA] and [RDP]: the
// plan composed so far and, computed lazily at the first query, for every
// moment order λ the sum over its steps of the rounded-up α(λ) (Abadi et al.
// 2016, Theorem 2.1: log moments add under adaptive composition).
//
// With continuous set (orders nil) the queries search λ beyond the grid
// (see minimize): extra holds the composed totals at the off-grid orders
// met so far for the current plan and alphaCache the per-step α at single
// orders; both hold values that depend only on the plan and λ, so no
// answer depends on the queries asked before.
type state struct {
	kind       accounting.Kind
	orders     []float64
	plan       accounting.Plan
	total      []float64 // nil until computed for the current plan
	cache      map[[2]float64][]float64
	continuous bool
	extra      map[float64]float64
	alphaCache map[[3]float64]float64
	grids      map[[3]float64]*momentGrid // logMomentOne's partitions
}

// momentCacheSize caps the per-accountant cache of α vectors keyed by
// (σ, q); a calibrator that tries many σ values should not grow it without
// bound.
const momentCacheSize = 64

// newState validates and sorts orders (nil selects the continuous search,
// starting from DefaultOrders) and applies opts.
func newState(kind accounting.Kind, orders []float64, opts []accounting.Option) (state, error) {
	cfg, err := accounting.NewConfig(opts...)
	if err != nil {
		return state{}, err
	}
	continuous := orders == nil
	if continuous {
		orders = DefaultOrders
	}
	if len(orders) == 0 {
		return state{}, &accounting.ParamError{Name: "orders", Value: 0, Want: "at least one order"}
	}
	o := append([]float64(nil), orders...)
	for _, l := range o {
		if err := accounting.CheckOrder(l, MinOrder); err != nil {
			return state{}, err
		}
	}
	sort.Float64s(o)
	uniq := o[:0]
	for i, l := range o {
		if i == 0 || l != o[i-1] {
			uniq = append(uniq, l)
		}
	}
	return state{kind: kind, orders: uniq, plan: cfg.Plan(), cache: make(map[[2]float64][]float64), continuous: continuous}, nil
}

// supports says which steps the moments family bounds: Gaussian steps,
// unsampled or Poisson-sampled, and (RDP only) zCDP steps, unsampled.
func (s *state) supports(st accounting.Step) error {
	wor := st.Sampling == accounting.SamplingWithoutReplacement && st.Adjacency == accounting.ReplaceOne && st.Mechanism == accounting.MechGaussian
	lap := st.Mechanism == accounting.MechLaplace && (st.Sampling == accounting.SamplingNone ||
		st.Sampling == accounting.SamplingPoisson && st.Adjacency == accounting.AddRemove)
	if !st.Classic() && !wor && !lap {
		return st.Unsupported(s.kind, "no moments bound for a "+st.Describe()+" step")
	}
	switch st.Mechanism {
	case accounting.MechGaussian:
		return nil
	case accounting.MechLaplace:
		if s.kind != accounting.KindRDP {
			return st.Unsupported(s.kind, "the moments accountant tracks Gaussian mechanisms only; use rdp or pld for Laplace")
		}
		return nil
	case accounting.MechZCDP:
		if s.kind != accounting.KindRDP {
			return st.Unsupported(s.kind, "the moments accountant tracks Gaussian mechanisms only; use rdp for zCDP")
		}
		if st.Sampling != accounting.SamplingNone {
			return st.Unsupported(s.kind, "no Rényi bound for a subsampled zCDP mechanism")
		}
		return nil
	}
	return st.Unsupported(s.kind, fmt.Sprintf("no moments bound for a %s mechanism", st.Mechanism))
}

// compose normalises e and adds count·e to the plan.
func (s *state) compose(e accounting.Event, count int) error {
	merged, _, err := s.plan.Compose(e, count, s.supports)
	if err != nil {
		return err
	}
	s.plan, s.total, s.extra = merged, nil, nil
	return nil
}

// totals returns the composed log moments per order, computing them on the
// first call after a Compose.
func (s *state) totals(ctx context.Context) ([]float64, error) {
	if s.total != nil {
		return s.total, nil
	}
	total := make([]float64, len(s.orders))
	for _, st := range s.plan.Steps {
		if err := accounting.Canceled(ctx); err != nil {
			return nil, err
		}
		n := float64(st.Count)
		switch st.Mechanism {
		case accounting.MechZCDP:
			for i, l := range s.orders {
				// RDP ξ + ρ·(λ+1) at Rényi order λ+1 is a log moment λ·(ξ + ρ(λ+1)).
				total[i] = search.RoundUp(total[i] + n*l*(st.Xi+st.Rho*(l+1)))
			}
		case accounting.MechLaplace:
			for i, l := range s.orders {
				total[i] = search.RoundUp(total[i] + n*laplaceAlpha(st.Sigma, st.Rate, l))
			}
		case accounting.MechGaussian:
			if st.Sampling == accounting.SamplingWithoutReplacement {
				for i, l := range s.orders {
					total[i] = search.RoundUp(total[i] + n*worAlpha(st.Sigma, st.Rate, l))
				}
				continue
			}
			a, err := s.alphas(ctx, st.Sigma, st.Rate)
			if err != nil {
				return nil, err
			}
			for i := range s.orders {
				// Each addition is rounded up (4 ulp), so a long ledger of
				// heterogeneous segments never under-reports by rounding.
				total[i] = search.RoundUp(total[i] + n*a[i])
			}
		}
	}
	s.total = total
	return total, nil
}

// alphas returns the rounded-up α(λ) per order for one step, cached.
func (s *state) alphas(ctx context.Context, sigma, q float64) ([]float64, error) {
	key := [2]float64{sigma, q}
	if a, ok := s.cache[key]; ok {
		return a, nil
	}
	ms, err := logMoments(ctx, sigma, q, s.orders)
	if err != nil {
		return nil, err // canceled; the plan holds valid σ and q
	}
	a := make([]float64, len(s.orders))
	for i := range a {
		a[i] = ms[i].Upper()
	}
	if len(s.cache) >= momentCacheSize {
		clear(s.cache)
	}
	s.cache[key] = a
	return a, nil
}

// checkEpsilonArg validates ε for Delta: ε ≥ 0 (+Inf allowed).
func checkEpsilonArg(eps float64) error {
	if math.IsNaN(eps) || eps < 0 {
		return &accounting.ParamError{Name: "eps", Value: eps, Want: ">= 0"}
	}
	return nil
}

// finishDelta turns log δ into the δ an accountant reports: capped at 1,
// rounded up, and never 0 for a plan that is not pure DP (every step here
// has δ(ε) > 0 at finite ε, so an underflow rounds up to the smallest
// float64, not down to 0).
func finishDelta(logD float64) float64 {
	d := math.Min(1, search.RoundUp(math.Exp(logD)))
	if d == 0 {
		d = math.SmallestNonzeroFloat64
	}
	return d
}

// atEdge reports whether lambda is the smallest or largest order (in
// continuous mode: MinOrder or MaxSearchOrder).
func (s *state) atEdge(lambda float64) bool {
	if s.continuous {
		return lambda <= MinOrder || lambda >= MaxSearchOrder
	}
	return lambda == s.orders[0] || lambda == s.orders[len(s.orders)-1]
}

// Both accountants implement accounting.Accountant.
var (
	_ accounting.Accountant = (*MA)(nil)
	_ accounting.Accountant = (*RDP)(nil)
)

// certify is search.CertifyUp with the accountant's log δ(ε).
func certify(eps, delta float64, logDeltaAt func(float64) float64) float64 {
	return search.CertifyUp(eps, delta, func(e float64) float64 { return finishDelta(logDeltaAt(e)) })
}
