package mechanism

import (
	"context"

	"github.com/dpcalc/dpcalc/accounting"
)

// zcdpGuarantee is a mechanism known only by its (ξ, ρ)-zCDP guarantee
// ([accounting.ZCDP]): D_α ≤ ξ + ρα for every α > 1.
type zcdpGuarantee struct {
	rho, xi float64
	sampling
}

func (z zcdpGuarantee) Name() string { return "zCDP" }

func (z zcdpGuarantee) Event() accounting.Event {
	return z.wrap(accounting.ZCDP{Rho: z.rho, Xi: z.xi})
}

func (z zcdpGuarantee) order() []float64 { return z.sampling.order(0, 2, z.rho, z.xi) }

func (z zcdpGuarantee) PLD() (*PLD, error) {
	return nil, errorf("no privacy-loss pair for a zCDP guarantee")
}

// RDP: ξ + ρα at Rényi order α, unsampled only (no amplification by
// subsampling is known for a zCDP guarantee alone).
func (z zcdpGuarantee) RDP() (RDP, error) {
	if z.kind != accounting.SamplingNone {
		return nil, errorf("no Rényi bound for a subsampled zCDP mechanism")
	}
	return zcdpRDP{rho: z.rho, xi: z.xi}, nil
}

func (z zcdpGuarantee) ZCDP() (rho, xi float64, err error) { return z.rho, z.xi, nil }

// zcdpRDP is the curve ξ + ρα: at moment order λ (Rényi order λ+1) the
// log moment λ·(ξ + ρ(λ+1)).
type zcdpRDP struct{ rho, xi float64 }

func (r zcdpRDP) AbadiMoments() bool { return false }

func (r zcdpRDP) LogMoments(ctx context.Context, c *Cache, count float64, orders []float64) ([]float64, error) {
	out := make([]float64, len(orders))
	for i, l := range orders {
		out[i] = count * l * (r.xi + r.rho*(l+1))
	}
	return out, nil
}

func (r zcdpRDP) LogMomentAt(ctx context.Context, c *Cache, count, lambda float64) (float64, error) {
	return count * lambda * (r.xi + r.rho*(lambda+1)), nil
}

// approxDP is a mechanism known only by its (ε, δ)-DP guarantee
// ([accounting.EpsilonDelta]).
type approxDP struct {
	eps, delta float64
	sampling
}

func (a approxDP) Name() string { return "EpsilonDelta" }

func (a approxDP) Event() accounting.Event {
	return a.wrap(accounting.EpsilonDelta{Epsilon: a.eps, Delta: a.delta})
}

func (a approxDP) order() []float64 { return a.sampling.order(0, 3, a.eps, a.delta) }

// PLD: for δ = 0, unsampled, the pair R_ε that dominates every ε-DP
// mechanism (see pure.go); none for δ > 0 or sampled.
func (a approxDP) PLD() (*PLD, error) {
	switch {
	case a.delta > 0:
		return nil, errorf("no privacy-loss pair for an (ε, δ) guarantee with δ > 0")
	case a.kind != accounting.SamplingNone:
		return nil, errorf("no privacy-loss pair for a %s", a.describe("(ε, 0) guarantee"))
	}
	return purePLD(a.eps), nil
}

// RDP: for δ = 0, unsampled, the Rényi curve of R_ε, the largest of any
// ε-DP mechanism; none for δ > 0 or sampled.
func (a approxDP) RDP() (RDP, error) {
	switch {
	case a.delta > 0:
		return nil, errorf("no Rényi bound for an (ε, δ) guarantee with δ > 0")
	case a.kind != accounting.SamplingNone:
		return nil, errorf("no Rényi bound for a %s", a.describe("(ε, 0) guarantee"))
	}
	return pureRDP{eps: a.eps}, nil
}

// ZCDP: ε-DP is (ε²/2)-zCDP (Bun and Steinke 2016, Proposition 1.4); δ > 0
// has no zCDP bound.
func (a approxDP) ZCDP() (rho, xi float64, err error) {
	if a.delta > 0 {
		return 0, 0, errorf("(ε, δ)-DP with δ = %g > 0 has no zCDP bound", a.delta)
	}
	return pureRho(a.eps), 0, nil
}
