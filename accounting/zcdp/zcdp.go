// Package zcdp is the zero-concentrated DP accountant (Bun and Steinke
// 2016): ρ and ξ add under composition and convert to (ε, δ) in closed form.
package zcdp

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/internal/search"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// Accountant composes events under zero-concentrated differential
// privacy (Bun and Steinke 2016, arXiv:1605.02065) and converts the total
// (ξ, ρ)-zCDP guarantee to (ε, δ)-DP.
//
// Per-event bounds:
//   - Gaussian{σ}: ρ = Δ²/(2τ) with Δ = 1 and τ = σ² (Proposition 1.6).
//   - PoissonSampled{q, e}: bounded by e itself. Bun and Steinke give no
//     amplification by subsampling for zCDP, so none is claimed. The bound
//     is sound under add/remove adjacency: with Poisson sampling the two
//     output distributions are mixtures, with equal weights, of the outputs
//     of e on identical or on neighbouring subsamples, and Rényi divergence
//     is jointly quasi-convex (van Erven and Harremoës 2014), so
//     sampling never increases any D_α.
//   - EpsilonDelta{ε, 0} (pure ε-DP): ρ = ε²/2 (Proposition 1.4).
//     EpsilonDelta with δ > 0 has no zCDP bound and is rejected.
//   - ZCDP{ρ, ξ}: taken as is.
//   - NoOp: ρ = 0. NonPrivate: no bound (ε = +Inf, δ = 1).
//
// Composition adds ξ and ρ (Lemma 1.7, which holds for (ξ, ρ)-zCDP as well).
// The conversion is Proposition 1.3: (ξ, ρ)-zCDP implies
// (ξ + ρ + 2√(ρ log(1/δ)), δ)-DP for every δ > 0; Delta inverts it in closed
// form. This conversion is not the tightest known (Canonne, Kamath and
// Steinke 2020 give a better one), but it is the one the DPD paper uses.
//
// A Accountant is not safe for concurrent use.
type Accountant struct {
	rho, xi float64
	plan    accounting.Plan
}

// New returns an empty zCDP accountant (ρ = ξ = 0). opts set the
// neighbouring relation (accounting.WithAdjacency; the default is
// add-remove). Under replace-one it bounds unsampled steps, shuffled
// epochs (see [accounting.Plan.Bounded]) and steps sampled without
// replacement, with noise multipliers relative to the replace-one
// sensitivity. An unknown relation makes every Compose an error.
func New(opts ...accounting.Option) *Accountant {
	cfg, _ := accounting.NewConfig(opts...) // an unknown relation fails in Compose (NormalizeUnder)
	return &Accountant{plan: cfg.Plan()}
}

// Kind returns accounting.KindZCDP.
func (a *Accountant) Kind() accounting.Kind { return accounting.KindZCDP }

// UpperBound marks Accountant as an [accounting.Accountant].
func (a *Accountant) UpperBound() {}

// Supports accepts every step except an EpsilonDelta with δ > 0, which has
// no zCDP bound. Sampling is not amplified: a sampled step is bounded as
// the unsampled one (sound, since neighbouring datasets give samples that
// are neighbours or equal), so fixed-size and Poisson sampling under
// replace-one are accepted too (the same draw of positions picks the
// replaced record in both data sets or in neither), and so is a
// 1-out-of-t random-allocation group (its mixture of shifted Gaussians is
// no worse than one, by the joint convexity of exp((α−1)D_α)).
func (a *Accountant) Supports(s accounting.Step) error {
	ro := s.Adjacency == accounting.ReplaceOne && (s.Sampling == accounting.SamplingWithoutReplacement || s.Sampling == accounting.SamplingPoisson)
	alloc := s.Sampling == accounting.SamplingRandomAllocation && s.SampleSize == 1
	if !(s.ClassicSampling() || ro || alloc) {
		return s.Unsupported(accounting.KindZCDP, "no zCDP bound for a "+s.Describe()+" step")
	}
	m, err := mechanism.Of(s)
	if err != nil {
		return err
	}
	if _, _, err := m.ZCDP(); err != nil {
		return s.Unsupported(accounting.KindZCDP, err.Error())
	}
	return nil
}

// stepRho returns the (ρ, ξ) of one repetition of s, as its mechanism
// states it (mechanism.Mechanism.ZCDP): for a Gaussian Proposition 1.6
// with Δ = 1, τ = σ²; for an ε-DP step (Laplace, EpsilonDelta with δ = 0)
// Proposition 1.4, ε²/2 rounded up (and at least the smallest positive
// float64: it underflows for ε < 2e-162).
func stepRho(s accounting.Step) (rho, xi float64, err error) {
	m, err := mechanism.Of(s)
	if err != nil {
		return 0, 0, err
	}
	return m.ZCDP()
}

// Rho returns the composed ρ, or +Inf for an unbounded composition.
func (a *Accountant) Rho() float64 {
	if a.plan.Unbounded {
		return math.Inf(1)
	}
	return a.rho
}

// Xi returns the composed ξ, or +Inf for an unbounded composition.
func (a *Accountant) Xi() float64 {
	if a.plan.Unbounded {
		return math.Inf(1)
	}
	return a.xi
}

// Compose adds count adaptive repetitions of e. On error the accountant is
// unchanged.
func (a *Accountant) Compose(e accounting.Event, count int) error {
	merged, _, err := a.plan.Compose(e, count, a.Supports)
	if err != nil {
		return err
	}
	a.plan = merged
	a.rho, a.xi = 0, 0
	// From the merged plan, so the result depends on what was composed, not
	// on how it was split into calls (count linearity exactly). Adding
	// non-negative products: round-to-nearest may lose at most half an ulp
	// each; the conversion rounds its result upward by more than that.
	for _, s := range merged.Steps {
		r, x, _ := stepRho(s) // Supports accepted s
		a.rho += float64(s.Count) * r
		a.xi += float64(s.Count) * x
	}
	return nil
}

// Epsilon returns ε(δ) = ξ + ρ + 2√(ρ log(1/δ)) (Bun and Steinke 2016,
// Proposition 1.3), rounded up by a few ulps so that floating-point error
// never under-reports.
func (a *Accountant) Epsilon(ctx context.Context, delta float64) (float64, error) {
	if err := accounting.CheckDeltaQuery(delta); err != nil {
		return 0, err
	}
	if delta == 0 {
		return a.plan.EpsilonAtZeroDelta(), nil
	}
	if a.plan.Unbounded || math.IsInf(a.rho, 1) || math.IsInf(a.xi, 1) {
		return math.Inf(1), nil
	}
	// Certified in log space: at subnormal δ the spacing of δ itself is
	// coarse (up to 100% relative).
	return search.CertifyUp(EpsilonFromRho(a.rho, a.xi, delta), logmath.Log(delta),
		func(e float64) float64 { return zcdpLogDelta(a.rho, a.xi, e) }), nil
}

// Delta returns δ(ε), the inverse of Proposition 1.3 of Bun and Steinke
// (2016): δ = exp(−(ε−ξ−ρ)²/(4ρ)) for ε ≥ ξ + ρ and δ = 1 below. With ρ = 0
// it is 0 for ε ≥ ξ and 1 below. The result is rounded up by a few ulps.
func (a *Accountant) Delta(ctx context.Context, epsilon float64) (float64, error) {
	if math.IsNaN(epsilon) || epsilon < 0 {
		return 0, &accounting.ParamError{Name: "eps", Value: epsilon, Want: ">= 0"}
	}
	if a.plan.Unbounded || math.IsInf(a.rho, 1) || math.IsInf(a.xi, 1) {
		return 1, nil
	}
	pure := a.pureEpsilon()
	if epsilon >= pure {
		return 0, nil // pure DP at this ε (exact; t² may underflow below)
	}
	d := zcdpDelta(a.rho, a.xi, epsilon)
	if d == 0 {
		// exp underflowed, or ρ underflowed to 0: the true δ is positive.
		d = math.SmallestNonzeroFloat64
	}
	return d, nil
}

// pureEpsilon returns the ε at which the composition is pure DP for certain
// (δ = 0), or +Inf if it is never pure DP. A ZCDP step with ρ = 0 is
// (ξ, 0)-zCDP: D_α ≤ ξ for every α, so D_∞ ≤ ξ and the step is ξ-DP (Bun
// and Steinke 2016, Definition 1.1 as α → ∞); an EpsilonDelta with δ = 0
// is ε-DP; basic composition adds them. Every other step (a Gaussian, a
// zCDP step with ρ > 0) has δ(ε) > 0 at every finite ε.
func (a *Accountant) pureEpsilon() float64 {
	var e float64
	for _, s := range a.plan.Steps {
		var x float64
		switch e := s.Leaf.(type) {
		case accounting.ZCDP:
			if e.Rho != 0 {
				return math.Inf(1)
			}
			x = e.Xi
		case accounting.EpsilonDelta:
			if e.Delta != 0 {
				return math.Inf(1)
			}
			x = e.Epsilon
		default:
			return math.Inf(1)
		}
		// Rounded up exactly, so that δ = 0 is claimed only at or above
		// the true sum, and exact sums (one step) stay exact.
		e = search.AddUp(e, search.MulUp(float64(s.Count), x))
	}
	return e
}

// EpsilonFromRho returns ξ + ρ + 2√(ρ log(1/δ)), the ε of Bun and Steinke (2016)
// Proposition 1.3 for (ξ, ρ)-zCDP, rounded up by four ulps. The caller
// validates ρ, ξ ≥ 0 and δ ∈ (0, 1).
func EpsilonFromRho(rho, xi, delta float64) float64 {
	return up(xi + rho + 2*math.Sqrt(rho*-logmath.Log(delta)))
}

// zcdpDelta returns exp(−(ε−ξ−ρ)²/(4ρ)) for ε ≥ ξ + ρ and 1 otherwise, the
// inverse of Bun and Steinke (2016) Proposition 1.3, rounded up by four
// ulps. The caller validates ρ, ξ ≥ 0 and ε ≥ 0.
func zcdpDelta(rho, xi, epsilon float64) float64 {
	l := zcdpLogDelta(rho, xi, epsilon)
	if l >= 0 {
		return 1
	}
	return math.Min(1, up(math.Exp(l)))
}

// zcdpLogDelta is log of zcdpDelta before its final rounding: an upper
// bound on log(−(ε−ξ−ρ)²/(4ρ)) (0 where δ = 1, −Inf where it underflows).
func zcdpLogDelta(rho, xi, epsilon float64) float64 {
	if math.IsInf(epsilon, 1) {
		return math.Inf(-1)
	}
	t := epsilon - xi - rho
	if t < 0 || (t == 0 && rho > 0) {
		return 0
	}
	if rho == 0 {
		return math.Inf(-1)
	}
	// δ is decreasing in t: use a lower bound on t (the subtraction's
	// rounding error) and an upper bound on the exponent, whose rounding
	// is relative to its size (hundreds for δ near 1e-200).
	t -= search.Slack(epsilon, xi, rho)
	if t <= 0 {
		return 0
	}
	v := -t * t / (4 * rho)
	if math.IsInf(v, -1) {
		return v
	}
	return v + search.Slack(v)
}

// groupRho returns g²ρ rounded up, and whether the composition is
// ρ-zCDP with ξ = 0 (the group statement's premise) and bounded.
func (a *Accountant) groupRho(g int) (float64, bool) {
	if a.plan.Unbounded || a.xi != 0 || math.IsInf(a.rho, 1) || g < 1 {
		return 0, false
	}
	return search.MulUp(search.MulUp(float64(g), float64(g)), a.rho), true
}

// GroupEpsilon implements [accounting.GroupBounder]: a ρ-zCDP composition
// is g²ρ-zCDP for data sets at distance g (Bun and Steinke 2016,
// Proposition 1.9, group privacy), converted as [Accountant.Epsilon]
// converts ρ. ok is false for a composition with ξ > 0 (the statement is
// for ρ-zCDP), an unbounded one, and δ = 0.
func (a *Accountant) GroupEpsilon(ctx context.Context, delta float64, g int) (float64, bool, error) {
	if err := accounting.CheckDeltaQuery(delta); err != nil {
		return 0, false, err
	}
	rho, ok := a.groupRho(g)
	if !ok || delta == 0 {
		return 0, false, nil
	}
	return search.CertifyUp(EpsilonFromRho(rho, 0, delta), logmath.Log(delta),
		func(e float64) float64 { return zcdpLogDelta(rho, 0, e) }), true, nil
}

// GroupDelta implements [accounting.GroupBounder]: δ(ε) of g²ρ-zCDP (see
// [Accountant.GroupEpsilon]).
func (a *Accountant) GroupDelta(ctx context.Context, epsilon float64, g int) (float64, bool, error) {
	if math.IsNaN(epsilon) || epsilon < 0 {
		return 0, false, &accounting.ParamError{Name: "eps", Value: epsilon, Want: ">= 0"}
	}
	rho, ok := a.groupRho(g)
	if !ok {
		return 0, false, nil
	}
	d := zcdpDelta(rho, 0, epsilon)
	if d == 0 && rho > 0 && !math.IsInf(epsilon, 1) {
		d = math.SmallestNonzeroFloat64 // underflowed: the true δ is positive
	}
	return d, true, nil
}

var _ accounting.Accountant = (*Accountant)(nil)
var _ accounting.GroupBounder = (*Accountant)(nil)

// up rounds x > 0 up by four ulps (0 stays 0), covering the rounding error
// of the few floating-point operations in a closed-form bound.
func up(x float64) float64 { return search.Up(x, 4) }
