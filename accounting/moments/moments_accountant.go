package moments

import (
	"context"
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/internal/search"
)

// state is the ledger shared by [MA] and [RDP]: the
// plan composed so far and, computed lazily at the first query, for every
// moment order λ the sum over its steps of the rounded-up α(λ) (Abadi et al.
// 2016, Theorem 2.1: log moments add under adaptive composition). Each
// step's log moments come from its mechanism's Rényi curve
// ([mechanism.RDP]); cache keeps what the curves computed for the orders.
//
// With continuous set (orders nil) the queries search λ beyond the grid
// (see minimize): extra holds the composed totals at the off-grid orders
// met so far for the current plan; it holds values that depend only on
// the plan and λ, so no answer depends on the queries asked before.
type state struct {
	kind       accounting.Kind
	orders     []float64
	plan       accounting.Plan
	total      []float64 // nil until computed for the current plan
	cache      *mechanism.Cache
	continuous bool
	extra      map[float64]float64
}

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
	return state{kind: kind, orders: uniq, plan: cfg.Plan(), cache: mechanism.NewCache(), continuous: continuous}, nil
}

// supports says which steps the moments family bounds: those whose
// mechanism has a Rényi curve; ma only the Gaussian's, which its paper
// tracks.
func (s *state) supports(st accounting.Step) error {
	m, err := mechanism.Of(st)
	if err != nil {
		return err
	}
	r, err := m.RDP()
	if err != nil {
		return st.Unsupported(s.kind, err.Error())
	}
	if s.kind == accounting.KindMA && !r.AbadiMoments() {
		use := "rdp"
		if _, err := m.PLD(); err == nil {
			use = "rdp or pld"
		}
		return st.Unsupported(s.kind, "the moments accountant tracks Gaussian mechanisms only; use "+use+" for "+m.Name())
	}
	return nil
}

// curve returns the Rényi curve of a step of the plan (supports accepted it).
func curve(st accounting.Step) (mechanism.RDP, error) {
	m, err := mechanism.Of(st)
	if err != nil {
		return nil, err
	}
	return m.RDP()
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
		r, err := curve(st)
		if err != nil {
			return nil, err
		}
		v, err := r.LogMoments(ctx, s.cache, float64(st.Count), s.orders)
		if err != nil {
			return nil, err // canceled; the plan holds valid steps
		}
		for i := range s.orders {
			// Each addition is rounded up (4 ulp), so a long ledger of
			// heterogeneous segments never under-reports by rounding.
			total[i] = search.RoundUp(total[i] + v[i])
		}
	}
	s.total = total
	return total, nil
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
