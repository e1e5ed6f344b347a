package onerun

import (
	"math"

	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// EpsilonLowerFDP returns the f-DP refinement of [EpsilonLower]
// (Mahloujifar, Melis and Chaudhuri, arXiv 2410.22235, their one-run audit
// of a trade-off curve f with guesses and abstentions, for the Gaussian
// curves): the largest ε such that the Gaussian trade-off curve
// G_μ(x) = Φ(Φ⁻¹(1 − x) − μ) whose mechanism is exactly (ε, delta)-DP is
// rejected by c at confidence (0 if ε = 0 is not rejected). delta must be
// in (0, 1): no Gaussian curve is (ε, 0)-DP.
//
// The test: with s = 1 − confidence, r = s·v/m and h = s·(r_g − v)/m (r_g
// guesses, v correct, m canaries), for i = v−1 down to 0 set h′ =
// max(h, G⁻¹(r)) with G⁻¹(x) = Φ(Φ⁻¹(x) − μ) and r ← min(1, r + i/(r_g −
// i)·(h′ − h)), stopping when h no longer grows; the curve is rejected when
// r + h > r_g/m. This is the recursion of the paper's audit with a cap,
// as jax_privacy's auditing module computes it.
//
// It is a lower bound on ε only among mechanisms whose trade-off curve is
// Gaussian (see the package doc). μ is taken at the high end of its
// bisection (a less private curve, harder to reject), so the bound errs
// low.
func EpsilonLowerFDP(c Counts, confidence, delta float64) (float64, error) {
	if err := c.Check(); err != nil {
		return 0, err
	}
	if err := checkLevel(confidence, delta); err != nil {
		return 0, err
	}
	if delta == 0 {
		return 0, errDeltaFDP
	}
	return epsilonLowerFDP(c, 1-confidence, delta, 0), nil
}

func epsilonLowerFDP(c Counts, sig, delta, lo float64) float64 {
	rejected := func(eps float64) bool { return fdpRejects(c, sig, eps, delta) }
	if !rejected(lo) {
		return lo
	}
	return bracketUp(rejected, lo)
}

// fdpRejects reports whether c rejects the Gaussian curve that is exactly
// (eps, delta)-DP at significance sig.
func fdpRejects(c Counts, sig, eps, delta float64) bool {
	if c.Guesses == 0 || c.Correct == 0 {
		return false
	}
	mu := gaussianMu(eps, delta)
	inv := func(x float64) float64 { // G⁻¹(x) = Φ(Φ⁻¹(x) − μ)
		switch {
		case x >= 1:
			return 1
		case x <= 0:
			return 0
		}
		z := -math.Sqrt2 * math.Erfcinv(2*x) // Φ⁻¹(x)
		return math.Exp(logmath.NormCDF(z - mu))
	}
	m := float64(c.Canaries)
	r := sig * float64(c.Correct) / m
	h := sig * float64(c.Guesses-c.Correct) / m
	for i := c.Correct - 1; i >= 0; i-- {
		hn := math.Max(h, inv(r))
		if hn == h {
			break // neither h nor r changes again
		}
		r = math.Min(r+float64(i)/float64(c.Guesses-i)*(hn-h), 1)
		h = hn
	}
	return r+h > float64(c.Guesses)/m
}

// gaussianMu returns μ = 1/σ for the σ at which the Gaussian mechanism of
// sensitivity 1 is exactly (eps, delta)-DP (Balle and Wang 2018, Theorem
// 8, via gaussian.LogDelta), taken at the small-σ (large-μ) end of a
// bisection of relative width 1e-13: the curve tested is at most as
// private as the exact one.
func gaussianMu(eps, delta float64) float64 {
	logDelta := math.Log(delta)
	dp := func(s float64) (bool, error) { return gaussian.LogDelta(s, 1, eps) <= logDelta, nil } // (eps, delta)-DP at σ = s
	// From s = 1, halve down while DP or double up while not (2000 steps
	// at most); the bracket keeps 1 as its other end.
	down, up := 0, 0
	g, _ := search.Solve(search.Problem[float64]{
		Holds: dp,
		Lo:    1,
		Hi:    1,
		Down: func(s float64) (float64, bool) {
			down++
			return s / 2, down <= 2000
		},
		Up: func(s float64) (float64, bool) {
			up++
			return s * 2, up <= 2000
		},
		Done: func(lo, hi float64) bool { return true }, // bracket only
	})
	lo, hi := 1.0, 1.0
	if up > 0 {
		hi = g.Hi
	} else {
		lo = g.Lo
	}
	o, _ := search.Solve(search.Problem[float64]{
		Holds:   dp,
		Lo:      lo,
		Hi:      hi,
		LoKnown: true,
		HiKnown: true,
		Done:    func(lo, hi float64) bool { return !(hi-lo > 1e-13*hi) },
	})
	return 1 / o.Lo
}
