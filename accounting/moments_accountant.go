package accounting

import (
	"fmt"
	"math"
	"sort"
)

// momentsState is the ledger shared by [MomentsAccountant] and
// [RDPAccountant]: for every moment order λ, the sum over composed steps of
// the rounded-up α(λ) (Abadi et al. 2016, Theorem 2.1: log moments add
// under adaptive composition).
type momentsState struct {
	kind       Kind
	orders     []float64
	total      []float64
	nonPrivate bool
	private    bool // some event with possibly nonzero privacy loss was composed
	cache      map[[2]float64][]float64
}

// momentCacheSize caps the per-accountant cache of α vectors keyed by
// (σ, q); a calibrator that tries many σ values should not grow it without
// bound.
const momentCacheSize = 64

func newMomentsState(kind Kind, orders []float64) momentsState {
	if orders == nil {
		orders = DefaultOrders
	}
	o := append([]float64(nil), orders...)
	sort.Float64s(o)
	uniq := o[:0]
	for i, l := range o {
		if !finite(l) || l < 1 {
			panic(fmt.Sprintf("accounting: order %g invalid, want finite and >= 1", l))
		}
		if i == 0 || l != o[i-1] {
			uniq = append(uniq, l)
		}
	}
	if len(uniq) == 0 {
		panic("accounting: no moment orders")
	}
	return momentsState{kind: kind, orders: uniq, total: make([]float64, len(uniq)),
		cache: make(map[[2]float64][]float64)}
}

// momentTerm is one leaf of a validated event tree, repeated mult times.
type momentTerm struct {
	mult       float64
	sigma, q   float64 // Gaussian leaf (q = 1 when not sampled)
	zcdp       bool
	rho, xi    float64
	nonPrivate bool
}

// collect validates e completely and appends its leaves to terms; it
// changes no accountant state (the dry run of Compose).
func (s *momentsState) collect(e Event, path string, mult float64, terms *[]momentTerm) error {
	if path == "" {
		path = "event"
	}
	switch ev := e.(type) {
	case nil:
		return &UnsupportedEventError{Event: e, Path: path, Reason: "nil event"}
	case NoOp:
		return nil
	case NonPrivate:
		*terms = append(*terms, momentTerm{mult: mult, nonPrivate: true})
		return nil
	case Gaussian:
		return s.gaussian(ev.NoiseMultiplier, 1, mult, terms)
	case PoissonSampled:
		q := ev.SamplingRate
		if math.IsNaN(q) || q < 0 || q > 1 {
			return &ParamError{Name: "q", Value: q, Want: "in [0, 1]"}
		}
		switch inner := ev.Event.(type) {
		case Gaussian:
			if q == 0 {
				// Nothing is ever sampled: the mechanism ignores the data.
				// Validate σ all the same.
				return s.gaussian(inner.NoiseMultiplier, 0, mult, &[]momentTerm{})
			}
			return s.gaussian(inner.NoiseMultiplier, q, mult, terms)
		case NoOp:
			return nil
		case NonPrivate:
			if q > 0 {
				*terms = append(*terms, momentTerm{mult: mult, nonPrivate: true})
			}
			return nil
		default:
			return &UnsupportedEventError{Event: ev.Event, Path: path + ".Event",
				Reason: "only a Poisson-sampled Gaussian has a moments bound here"}
		}
	case SelfComposed:
		if err := CheckSteps(ev.Count); err != nil {
			return err
		}
		return s.collect(ev.Event, path+".Event", mult*float64(ev.Count), terms)
	case Composed:
		for i, sub := range ev.Events {
			if err := s.collect(sub, fmt.Sprintf("%s.Events[%d]", path, i), mult, terms); err != nil {
				return err
			}
		}
		return nil
	case ZCDP:
		if s.kind != KindRDP {
			return &UnsupportedEventError{Event: e, Path: path,
				Reason: "the moments accountant tracks Gaussian mechanisms only; use rdp for zCDP"}
		}
		if !finite(ev.Rho) || ev.Rho < 0 {
			return &ParamError{Name: "rho", Value: ev.Rho, Want: "finite and >= 0"}
		}
		if !finite(ev.Xi) || ev.Xi < 0 {
			return &ParamError{Name: "xi", Value: ev.Xi, Want: "finite and >= 0"}
		}
		*terms = append(*terms, momentTerm{mult: mult, zcdp: true, rho: ev.Rho, xi: ev.Xi})
		return nil
	}
	return &UnsupportedEventError{Event: e, Path: path, Reason: fmt.Sprintf("%s accountant cannot bound it", s.kind)}
}

// gaussian validates σ and appends the leaf: σ = 0 is non-private and
// σ = +Inf is free (the boundary rows of STYLE §7).
func (s *momentsState) gaussian(sigma, q, mult float64, terms *[]momentTerm) error {
	switch {
	case math.IsNaN(sigma) || sigma < 0:
		return &ParamError{Name: "sigma", Value: sigma, Want: ">= 0"}
	case math.IsInf(sigma, 1):
		return nil
	case sigma == 0:
		*terms = append(*terms, momentTerm{mult: mult, nonPrivate: true})
		return nil
	}
	*terms = append(*terms, momentTerm{mult: mult, sigma: sigma, q: q})
	return nil
}

// compose validates e and count, then adds count·e to the ledger.
func (s *momentsState) compose(e Event, count int) error {
	if err := CheckSteps(count); err != nil {
		return err
	}
	var terms []momentTerm
	if err := s.collect(e, "", float64(count), &terms); err != nil {
		return err
	}
	for _, t := range terms {
		switch {
		case t.nonPrivate:
			s.nonPrivate = true
		case t.zcdp:
			if t.rho == 0 && t.xi == 0 {
				continue
			}
			s.private = true
			for i, l := range s.orders {
				// RDP ξ + ρ·(λ+1) at Rényi order λ+1 is a log moment λ·(ξ + ρ(λ+1)).
				s.total[i] = roundUp(s.total[i] + t.mult*l*(t.xi+t.rho*(l+1)))
			}
		default:
			s.private = true
			a := s.alphas(t.sigma, t.q)
			for i := range s.orders {
				// Each addition is rounded up (4 ulp), so a long ledger of
				// heterogeneous segments never under-reports by rounding.
				s.total[i] = roundUp(s.total[i] + t.mult*a[i])
			}
		}
	}
	return nil
}

// alphas returns the rounded-up α(λ) per order for one step, cached.
func (s *momentsState) alphas(sigma, q float64) []float64 {
	key := [2]float64{sigma, q}
	if a, ok := s.cache[key]; ok {
		return a
	}
	ms, err := LogMoments(sigma, q, s.orders)
	a := make([]float64, len(s.orders))
	for i := range a {
		if err != nil {
			a[i] = math.Inf(1) // unreachable: inputs were validated
			continue
		}
		a[i] = ms[i].Upper()
	}
	if len(s.cache) >= momentCacheSize {
		clear(s.cache)
	}
	s.cache[key] = a
	return a
}

// empty reports whether nothing with privacy loss has been composed.
func (s *momentsState) empty() bool { return !s.private && !s.nonPrivate }

// checkDeltaArg validates δ for Epsilon: δ ∈ [0, 1).
func checkDeltaArg(delta float64) error {
	if math.IsNaN(delta) || delta < 0 || delta >= 1 {
		return &ParamError{Name: "delta", Value: delta, Want: "in [0, 1)"}
	}
	return nil
}

// checkEpsilonArg validates ε for Delta: ε ≥ 0 (+Inf allowed).
func checkEpsilonArg(eps float64) error {
	if math.IsNaN(eps) || eps < 0 {
		return &ParamError{Name: "eps", Value: eps, Want: ">= 0"}
	}
	return nil
}

// roundUp returns x increased by 4 ulp (x ≥ 0), for soundness of the last
// floating-point operations of a bound.
func roundUp(x float64) float64 { return x * (1 + 4*0x1p-52) }

// slack returns 8 ulp of the sum of the magnitudes of the terms of a
// floating-point sum: an upper bound on its accumulated rounding error,
// added where terms of both signs may cancel.
func slack(terms ...float64) float64 {
	m := 0.0
	for _, t := range terms {
		m += math.Abs(t)
	}
	return 8 * 0x1p-52 * m
}

// atEdge reports whether lambda is the smallest or largest order.
func (s *momentsState) atEdge(lambda float64) bool {
	return lambda == s.orders[0] || lambda == s.orders[len(s.orders)-1]
}

// Both accountants implement Accountant.
var (
	_ Accountant = (*MomentsAccountant)(nil)
	_ Accountant = (*RDPAccountant)(nil)
)
