package calibrate

import (
	"context"
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/search"
)

// SigmaSeeded is [SigmaFor] for an accountant whose queries cost seconds
// (pld at a small δ), seeded by a cheap one (rdp) whose σ is close. It
// calibrates σ0 with seed, evaluates newAcc there (ratio ρ = ε(σ0)/eps),
// calibrates seed again for the target eps/ρ, whose σ1 is where seed's
// curve scaled by ρ meets eps, and runs [search.SmallestFrom] on newAcc
// from σ0 and σ1. The result meets SigmaFor's contract: X was evaluated
// under newAcc and its ε is ≤ eps, Lo was evaluated and misses, and the
// bracket is within opt.RelTol. Nothing about the seed is trusted: a seed
// that fails or is far off costs evaluations, not soundness.
//
// It also returns the method holding event(X), queried at delta, so that
// a caller reporting more about X (its certified bracket) need not compose
// it again. (σ for ε 1, δ 1e-10, q 1e-4, T 1000 under pld took 10
// evaluations from σ = 1 with SigmaFor; seeded by rdp it takes 4 or 5.)
func SigmaSeeded(ctx context.Context, newAcc, seed Factory, event func(sigma float64) accounting.Event, eps, delta float64, opt Options) (Result, accounting.Method, error) {
	if err := accounting.CheckEpsilon(eps); err != nil {
		return Result{}, nil, err
	}
	if err := accounting.CheckDelta(delta); err != nil {
		return Result{}, nil, err
	}
	if opt.Min <= 0 {
		opt.Min = 1e-3
	}
	// Each σ is composed and queried once; the method at the smallest σ
	// that met the target is kept.
	type eval struct {
		v   float64
		acc accounting.Method
	}
	seen := map[float64]eval{}
	var best accounting.Method
	bestX := math.Inf(1)
	f := func(sigma float64) (float64, error) {
		if e, ok := seen[sigma]; ok {
			return e.v, nil
		}
		acc, err := composed(newAcc, event(sigma))
		if err != nil {
			return 0, err
		}
		v, err := acc.Epsilon(ctx, delta)
		if err != nil {
			return 0, err
		}
		seen[sigma] = eval{v: v}
		if v <= eps && sigma < bestX {
			best, bestX = acc, sigma
		}
		return v, nil
	}
	seedOpt := Options{RelTol: 1e-4, Min: opt.Min, Max: opt.Max}
	x0, x1 := 1.0, 1.1 // no seed: SmallestFrom's own bracketing
	if s, err := SigmaFor(ctx, seed, event, eps, delta, seedOpt); err == nil {
		x0, x1 = s.X, s.X*(1-1e-3)
		v, err := f(x0)
		if err != nil {
			return Result{}, nil, err
		}
		if target := eps * eps / v; v > 0 && !math.IsInf(v, 1) && target > 0 && !math.IsInf(target, 1) {
			if s1, err := SigmaFor(ctx, seed, event, target, delta, seedOpt); err == nil && s1.X != x0 {
				x1 = s1.X
			}
		}
	} else if err := accounting.Canceled(ctx); err != nil {
		return Result{}, nil, err
	}
	r, err := search.SmallestFrom(f, eps, x0, x1, opt)
	if err != nil {
		return r, nil, search.Prefix("calibrate", err)
	}
	if !(r.Value <= eps) || r.X != bestX { // defence in depth: SmallestFrom guarantees it
		return r, nil, fmt.Errorf("calibrate: internal error: ε(σ=%g) = %g against the target %g", r.X, r.Value, eps)
	}
	return r, best, nil
}
