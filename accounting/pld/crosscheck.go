package pld

import (
	"context"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/moments"
	"github.com/dpcalc/dpcalc/internal/search"
)

// rdpAccountant returns an RDP accountant holding the same steps (cached
// until the next Compose), or nil when a step's mechanism has no Rényi
// curve or a is asked for lower bounds only (no cross-check).
func (a *Accountant) rdpAccountant() (*moments.RDP, error) {
	if a.rdp != nil || a.lowerOnly {
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
	// Walk down from d by the fractions below until a δ' fails, then
	// bisect to the float64 (at most 53 halvings: lo ≥ d/2). Even d/2
	// passing (RDP's two directions far apart) ends at the lower bound.
	walk := []float64{1e-12, 1e-9, 1e-6, 1e-3, 0.5}
	o, err := search.Solve(search.Problem[float64]{
		Holds:   good,
		Lo:      d,
		Hi:      d,
		HiKnown: true, // d is rdp's own δ(eps)
		Down: func(float64) (float64, bool) {
			if len(walk) == 0 {
				return 0, false
			}
			g := walk[0]
			walk = walk[1:]
			return d * (1 - g), true
		},
		MaxEvaluations: 64 + 5, // the walk and 64 halvings; never reached
	})
	if err != nil {
		return 0, err
	}
	return o.X, nil
}

// rdpOnly reports whether err means that the default grid could not hold
// the composition (very long runs with small σ, or steps with a loss too
// concentrated for the smallest grid width). Such queries are answered by
// the RDP bound alone, with the trivial lower bound 0. With a GridWidth set
// by the user the error is returned instead.
func (a *Accountant) rdpOnly(err error) bool {
	return err == errTooLarge && a.h == 0
}
