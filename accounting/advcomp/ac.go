// Package advcomp bounds compositions with the advanced composition theorem
// (Dwork and Roth 2014, Theorem 3.20) over per-step (ε, δ) guarantees, with
// amplification by Poisson sampling.
package advcomp

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/internal/search"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// Amplification selects how Accountant bounds a Poisson-subsampled
// (ε0, δ0)-DP step.
type Amplification string

const (
	// AmplificationLog is the amplification theorem for Poisson sampling
	// (Li, Qardaji and Su 2012, Theorem 1, as quoted by the DPD paper's
	// Theorem 3): (log(1+q(e^ε0−1)), qδ0). It is a theorem for every ε0, and
	// in this mode the per-step ε0 of a Gaussian is the exact analytic
	// Gaussian bound (Balle and Wang 2018, Theorem 8), so every number is a
	// proven upper bound. This is the default.
	AmplificationLog Amplification = "log"
	// AmplificationLinear is Abadi et al. (2016) §3.1's reading: each step
	// is (qε0, qδ0)-DP with ε0 = √(2 ln(1.25/δ0))/σ from Dwork and Roth
	// (2014) Theorem A.1, used for every ε0, including ε0 ≥ 1 where Theorem
	// A.1 does not apply. (qε0, qδ0) is below log(1+q(e^ε0−1)) by a factor
	// up to (e^ε0−1)/ε0, so this mode is NOT a proven bound; it exists to
	// reproduce Abadi et al. §5.1 (ε ≈ 9.34 at E = 100, 24.22 at E = 400).
	AmplificationLinear Amplification = "linear"
)

// Accountant bounds a composition with the advanced ("strong")
// composition theorem (Dwork and Roth 2014, Theorem 3.20): k adaptive
// (ε_s, δ_s)-DP steps are (√(2k ln(1/δ'))ε_s + kε_s(e^{ε_s}−1), kδ_s+δ')-DP
// for every δ' > 0.
//
// Per-step bounds. A Gaussian{σ} step is (ε0, δ0)-DP for a δ0 the
// accountant chooses; under PoissonSampled{q, ·} it is amplified as
// ACOptions.Amplification says (q = 1 for an unsampled Gaussian). An
// EpsilonDelta{ε, δ} step has its own fixed (ε, δ), amplified the same way
// when subsampled. PoissonSampled{q1, PoissonSampled{q2, e}} is
// PoissonSampled{q1·q2, e}. ZCDP and subsampled compositions are not
// supported.
//
// Splitting δ. For Epsilon(δ), δ minus the δ of EpsilonDelta steps is split
// into a share f spent on the K Gaussian steps, equally (each subsampled step
// gets δ_s = f·δ/K, so δ0 = δ_s/q) and the slack δ' = (1−f)·δ. f is chosen
// numerically (a grid over logit f, then golden-section refinement) to
// minimise ε; every f gives a valid bound, so an imperfect optimum is only
// loose, never unsound. A share that would make δ0 ≥ 1 is not needed in
// full: every mechanism is (0, 1)-DP, so such a step is (0, q)-DP. With that,
// the splits available at δ include (up to unspent δ) those at every smaller
// δ, so the minimum is non-increasing in δ; the numerical minimiser keeps
// that exactly on the grids of δ from 1e-300 to 0.5 that
// TestACEpsilonNonIncreasingInDelta checks. For Gaussian steps alone, ε is
// 0 once δ exceeds the sum of their q (basic composition of (0, q) steps).
// Delta(ε) bisects on δ and returns the upper end of the final bracket, a δ
// at which the bound has been verified.
//
// Heterogeneous steps. Steps with different (ε_i, δ_i) are composed with the
// bound that the proof of Dwork and Roth Theorem 3.20 gives when Azuma's
// inequality is applied with per-step ranges [−ε_i, ε_i] (the privacy loss
// of step i, outside its δ_i event, lies there and has conditional mean at
// most ε_i(e^{ε_i}−1), Dwork and Roth Lemma 3.18's argument):
// ε = √(2 ln(1/δ') Σ ε_i²) + Σ ε_i(e^{ε_i}−1), δ = Σ δ_i + δ'. For k equal
// steps it is Theorem 3.20 exactly. The result is also capped by basic
// composition (Σ ε_i, Σ δ_i) (Dwork and Roth Theorem 3.16) with δ' = 0.
//
// Numerics: counts are float64, all terms are sums of non-negative numbers,
// e^{ε_s}−1 is math.Expm1, and the amplified ε is formed in log space, so
// nothing overflows for large counts or large ε (a genuinely unbounded
// result is +Inf).
//
// An Accountant is not safe for concurrent use.
type Accountant struct{ core }

// Linear is advanced composition with Abadi et al. (2016) §3.1's linear
// amplification ([AmplificationLinear]): a [accounting.Procedure], not an
// accountant, because (qε0, qδ0) is not a proven bound for a subsampled
// step. It exists to reproduce Abadi et al. §5.1.
type Linear struct{ core }

// core is the state both share.
type core struct {
	amp  Amplification
	segs map[acSeg]float64 // step kind → number of steps
	plan accounting.Plan
}

// acSeg is one kind of step: a Gaussian (gauss true; sigma, q) or a fixed
// (eps, delta)-DP mechanism subsampled with rate q (q = 1: not subsampled).
type acSeg struct {
	gauss      bool
	sigma, q   float64
	eps, delta float64
}

// New returns an empty advanced-composition accountant (AmplificationLog).
// opts set the neighbouring relation (accounting.WithAdjacency; the
// default is add-remove). Under replace-one it bounds unsampled steps,
// shuffled epochs (see [accounting.Plan.Bounded]) and steps sampled
// without replacement, with noise multipliers relative to the replace-one
// sensitivity. An unknown relation makes every Compose an error.
func New(opts ...accounting.Option) *Accountant {
	return &Accountant{newCore(AmplificationLog, opts)}
}

// NewLinear returns an empty advanced-composition procedure with linear
// amplification; opts as for [New].
func NewLinear(opts ...accounting.Option) *Linear {
	return &Linear{newCore(AmplificationLinear, opts)}
}

func newCore(amp Amplification, opts []accounting.Option) core {
	cfg, _ := accounting.NewConfig(opts...) // an unknown relation fails in Compose (NormalizeUnder)
	return core{amp: amp, segs: map[acSeg]float64{}, plan: cfg.Plan()}
}

// ParseAmplification returns the Amplification named s ("log" or "linear").
func ParseAmplification(s string) (Amplification, error) {
	switch Amplification(s) {
	case AmplificationLog, AmplificationLinear:
		return Amplification(s), nil
	}
	return "", fmt.Errorf("advcomp: unknown amplification %q, want log or linear", s)
}

// Kind returns accounting.KindAC.
func (a *core) Kind() accounting.Kind { return accounting.KindAC }

// UpperBound marks Accountant as an [accounting.Accountant].
func (a *Accountant) UpperBound() {}

// Caveat says why Linear's numbers are not proven bounds.
func (a *Linear) Caveat() string {
	return "Abadi §3.1 linear-sampling reading: not a proven bound"
}

// Amplification returns the amplification mode in use.
func (a *core) Amplification() Amplification { return a.amp }

// Supports accepts Gaussian and (ε, δ) steps (randomized response and
// permute-and-flip are (ε, 0) steps) and those of pure-DP mechanisms
// ([accounting.Step.PureEpsilon]: Laplace as (1/b, 0)-DP, the discrete
// Laplace as (aΔ, 0)-DP, the exponential mechanism as (ε, 0)-DP),
// unsampled, Poisson-sampled under add-remove, or sampled without
// replacement under replace-one. Fixed-size sampling of m of n under
// replace-one amplifies an (ε, δ) step exactly as Poisson sampling with
// γ = m/n does under add-remove, to (log(1 + γ(e^ε − 1)), γδ) (Balle,
// Barthe and Gaboardi 2018, Theorem 10 and Table 1), so both take the
// same per-step path.
//
// A Poisson-sampled Gaussian step under replace-one is amplified the same
// way. Its pair is P = (1−q)N(0) + qN(−C), Q = (1−q)N(0) + qN(+C), which
// dominates every pair of neighbours (Lebeda, Regehr, Kamath and Steinke
// 2025, Proposition 13); by advanced joint convexity (Balle, Barthe and
// Gaboardi 2018, Theorem 2) its (log(1 + q(e^ε − 1)), qδ) needs N(−C)
// against N(0) and against N(+C) to be (ε, δ)-close, and the shift of the
// step's Gaussian, 2C, is the larger of the two.
func (a *core) Supports(s accounting.Step) error {
	wor := s.Sampling == accounting.SamplingWithoutReplacement && s.Adjacency == accounting.ReplaceOne
	_, gauss := s.Leaf.(accounting.Gaussian)
	poissonReplace := s.Sampling == accounting.SamplingPoisson && s.Adjacency == accounting.ReplaceOne && gauss
	if !(s.ClassicSampling() || wor || poissonReplace) {
		return s.Unsupported(a.Kind(), "no advanced-composition bound for a "+s.Describe()+" step")
	}
	switch s.Leaf.(type) {
	case accounting.Gaussian, accounting.EpsilonDelta:
		return nil
	case accounting.ZCDP:
		return s.Unsupported(accounting.KindAC, "zCDP has no per-step (ε, δ) for advanced composition; use the zcdp accountant")
	}
	if _, ok := s.PureEpsilon(); ok {
		return nil // a pure-DP mechanism: (ε, 0) per step
	}
	return s.Unsupported(accounting.KindAC, "advanced composition needs a per-step (ε, δ), which the "+s.Describe()+" does not state; use rdp, zcdp or pld")
}

// Compose adds count adaptive repetitions of e. On error the method is
// unchanged.
func (a *core) Compose(e accounting.Event, count int) error {
	merged, p, err := a.plan.Compose(e, count, a.Supports)
	if err != nil {
		return err
	}
	a.plan = merged
	for _, s := range p.Steps {
		seg := acSeg{q: s.Rate}
		switch e := s.Leaf.(type) {
		case accounting.Gaussian:
			seg.gauss, seg.sigma = true, e.NoiseMultiplier
		case accounting.EpsilonDelta:
			seg.eps, seg.delta = e.Epsilon, e.Delta
		default:
			seg.eps, _ = s.PureEpsilon() // Laplace (1/b, 0)-DP, or another pure-DP mechanism (Supports)
		}
		a.segs[seg] += float64(s.Count)
	}
	return nil
}

// Epsilon returns the smallest ε over the δ split (see the type's doc) for
// which the composition is (ε, δ)-DP by advanced or basic composition.
func (a *core) Epsilon(ctx context.Context, delta float64) (float64, error) {
	if err := accounting.CheckDeltaQuery(delta); err != nil {
		return 0, err
	}
	if delta == 0 {
		return a.plan.EpsilonAtZeroDelta(), nil
	}
	if a.plan.Unbounded {
		return math.Inf(1), nil
	}
	if k, ok := gridIndex(delta); ok {
		delta = gridDelta(k)
	}
	return a.epsilon(delta), nil
}

// Delta returns the smallest δ (to relative precision 1e-9, rounded up) for
// which Epsilon(δ) ≤ epsilon, or 1 if there is none.
func (a *core) Delta(ctx context.Context, epsilon float64) (float64, error) {
	if math.IsNaN(epsilon) || epsilon < 0 {
		return 0, &accounting.ParamError{Name: "eps", Value: epsilon, Want: ">= 0"}
	}
	if a.plan.Unbounded {
		return 1, nil
	}
	if len(a.segs) == 0 || math.IsInf(epsilon, 1) {
		return 0, nil
	}
	d, err := a.gridInvert(ctx, epsilon)
	if err != nil {
		return 0, err
	}
	return a.plan.FloorDelta(d, epsilon), nil
}

// The δ grid of ac: Epsilon answers at δ rounded down to the grid
// {exp(k·acLogStep)} (for δ ≥ 1e-300), and Delta returns the smallest grid
// δ whose ε meets the target, found by bisection over k. The ε of a split
// is non-increasing in δ, but the numerical minimisation over splits is
// not exactly so at the last bits; on the grid, Epsilon and Delta are
// inverse exactly: Delta(Epsilon(δ)) ≤ δ and Epsilon(Delta(ε)) ≤ ε.
// Rounding δ down (by at most 1e-6 relative) only raises ε, by about
// 1e-7 relative: still a bound. It also moves the δ at which a
// composition of Gaussian steps becomes (0, δ)-DP (δ ≥ Σ q) up by 1e-6.
const acLogStep = 1e-6

var acGridMin = int64(math.Ceil(math.Log(1e-300) / acLogStep))

// gridIndex returns the k of the largest grid δ ≤ delta, or false below
// the grid (δ < 1e-300).
func gridIndex(delta float64) (int64, bool) {
	if !(delta >= 1e-300) {
		return 0, false
	}
	k := int64(math.Floor(math.Log(delta) / acLogStep))
	for gridDelta(k+1) <= delta {
		k++
	}
	for k > acGridMin && gridDelta(k) > delta {
		k--
	}
	return k, gridDelta(k) <= delta
}

func gridDelta(k int64) float64 { return math.Exp(float64(k) * acLogStep) }

// gridInvert is Delta on the grid: the smallest grid δ < 1 with
// epsilon(δ) ≤ eps, 1e-300's grid point if even that meets eps (a valid δ;
// the true one may be smaller), or 1 if none does.
func (a *core) gridInvert(ctx context.Context, eps float64) (float64, error) {
	lo := acGridMin
	hi := int64(-1) // exp(−1e-6) < 1
	if a.epsilon(gridDelta(lo)) <= eps {
		return gridDelta(lo), nil
	}
	if a.epsilon(gridDelta(hi)) > eps {
		return 1, nil
	}
	o, err := search.Solve(search.Problem[int64]{
		Holds:   func(k int64) (bool, error) { return a.epsilon(gridDelta(k)) <= eps, nil },
		Lo:      lo, // epsilon(lo) > eps
		Hi:      hi, // eps ≥ epsilon(hi)
		LoKnown: true,
		HiKnown: true,
		Done:    func(lo, hi int64) bool { return hi-lo <= 1 },
		Check:   func() error { return accounting.Canceled(ctx) },
	})
	if err != nil {
		return 0, err
	}
	return gridDelta(o.X), nil
}

// Invert returns the smallest δ ∈ [1e-300, maxDelta] with epsOf(δ) ≤ eps
// that bisection on log δ finds, to relative precision 1e-9
// ([search.SmallestLog]). It returns a δ at which epsOf has been checked
// (the upper end of the final bracket, so never a δ whose ε is above eps),
// or 1 when no δ it tries reaches eps. For an epsOf that is not monotone
// (the DPD procedures) it scans upwards from 1e-300 before bisecting, so it
// does not give up when a smaller δ would do. On cancellation of ctx it
// returns an error wrapping ctx.Err().
func Invert(ctx context.Context, epsOf func(float64) float64, eps, maxDelta float64) (float64, error) {
	d, found, err := search.SmallestLog(ctx, epsOf, eps, 1e-300, maxDelta)
	if err != nil {
		return 0, accounting.Canceled(ctx)
	}
	if !found {
		return 1, nil
	}
	return d, nil
}

// epsilon evaluates the bound, the state being private.
func (a *core) epsilon(delta float64) float64 {
	if len(a.segs) == 0 {
		return 0
	}
	// Deterministic order of the steps, so results do not depend on map
	// iteration.
	segs := make([]acSeg, 0, len(a.segs))
	for s := range a.segs {
		segs = append(segs, s)
	}
	sort.Slice(segs, func(i, j int) bool { return acLess(segs[i], segs[j]) })
	counts := make([]float64, len(segs))
	var nGauss, fixedDelta float64
	for i, s := range segs {
		counts[i] = a.segs[s]
		if s.gauss {
			nGauss += counts[i]
		} else {
			fixedDelta += counts[i] * a.amplifyDelta(s.delta, s.q)
		}
	}
	// The δ's spent are fixedDelta, Σ count·q·δ0 with δ0 = (f·rest/nGauss)/q,
	// and (1−f)·rest, each a few roundings from its exact value. fixedDelta
	// is rounded up by its summation error bound (one rounding per term
	// and per product), and the rest is spent only to (1 − 2^-49): 16 ulps
	// against at most 6 roundings in the split. So the δ's sum to at most δ;
	// ε grows by about 1e-15 relative.
	fixedDelta *= 1 + float64(len(segs)+2)*0x1p-52
	rest := (delta - fixedDelta) * (1 - 0x1p-49)
	if rest <= 0 {
		return math.Inf(1)
	}
	// eval returns ε when a share f of rest goes to the Gaussian steps and
	// 1−f is the slack δ' (basic: δ' = 0 and f = 1).
	epsS := make([]float64, len(segs))
	eval := func(f float64, basic bool) float64 {
		for i, s := range segs {
			if s.gauss {
				epsS[i] = a.gaussStepEpsilon(s.sigma, s.q, LogShare(f, rest, nGauss, s.q))
			} else {
				epsS[i] = a.amplifyEpsilon(s.eps, s.q)
			}
		}
		if basic {
			return acBasic(epsS, counts)
		}
		return acAdvanced(epsS, counts, LogShare(1-f, rest, 1, 1))
	}
	best := eval(1, true)
	if nGauss == 0 {
		return math.Min(best, eval(0, false))
	}
	// Grid over x = logit f, then golden-section refinement around the best
	// grid point. Soundness does not depend on finding the true minimum.
	logistic := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	adv := search.GridGolden(func(x float64) float64 { return eval(logistic(x), false) }, -30, 30, 1)
	return math.Min(best, adv)
}

func acLess(a, b acSeg) bool {
	if a.gauss != b.gauss {
		return a.gauss
	}
	if a.sigma != b.sigma {
		return a.sigma < b.sigma
	}
	if a.q != b.q {
		return a.q < b.q
	}
	if a.eps != b.eps {
		return a.eps < b.eps
	}
	return a.delta < b.delta
}

// LogShare returns log(f·rest/n/q), the log of a δ share, or −Inf when
// the share is 0. Where the share is a normal float64 it is computed
// directly, exactly as before; below 2^-1000 (from δ around 1e-300 and
// smaller) it is formed from the logs of its factors, because the product
// would be subnormal, rounded by up to half a subnormal ulp (up to +100%
// relative, spending more δ than the split allows) or flushed to 0 (an
// infinite ε where a finite one exists). The log form is lowered by 4e-12,
// above the rounding of the four logs and two sums (a few ulps of |log| ≤
// 745, ulp 1.1e-13), so the share spent is never more than allotted.
func LogShare(f, rest, n, q float64) float64 {
	if d := f * rest / n / q; d >= 0x1p-1000 {
		return math.Log(d)
	}
	if !(f > 0) || !(rest > 0) {
		return math.Inf(-1)
	}
	return logmath.Log(f) + logmath.Log(rest) - math.Log(n) - logmath.Log(q) - 4e-12
}

// gaussStepEpsilon returns the ε of one Gaussian{σ} step subsampled with
// rate q when the step may spend an (amplified) δ of q·δ0, given as
// logD0 = log δ0, or +Inf for δ0 = 0.
//
// For δ0 ≥ 1 it returns 0: every mechanism is (0, 1)-DP, so the
// subsampled step is (0, q)-DP (the amplification theorem at ε0 = 0, δ0 = 1:
// its output distributions on neighbours differ by at most q in total
// variation), and spending q ≤ deltaS is sound. Without this case ε would
// grow with δ (TestACReportedLargeDelta).
func (a *core) gaussStepEpsilon(sigma, q, logD0 float64) float64 {
	if math.IsInf(logD0, -1) || math.IsNaN(logD0) {
		return math.Inf(1)
	}
	if logD0 >= 0 {
		return 0
	}
	if a.amp == AmplificationLinear {
		return q * acClassicalGaussianEpsilonLog(sigma, logD0)
	}
	return AmplifyLog(acAnalyticGaussianEpsilonLog(sigma, logD0), q)
}

func (a *core) amplifyEpsilon(eps, q float64) float64 {
	if a.amp == AmplificationLinear {
		return q * eps
	}
	return AmplifyLog(eps, q)
}

func (a *core) amplifyDelta(delta, q float64) float64 { return q * delta }

// AmplifyLog returns log(1 + q(e^ε − 1)) without overflow for large ε,
// rounded up by four ulps.
func AmplifyLog(eps, q float64) float64 {
	if q == 1 || math.IsInf(eps, 1) {
		return eps
	}
	var v float64
	if eps < 1 {
		v = math.Log1p(q * math.Expm1(eps))
	} else {
		// 1 + q(e^ε − 1) = (1−q) + q e^ε.
		v = logmath.Add(math.Log1p(-q), logmath.Log(q)+eps)
	}
	return up(v)
}

// acClassicalGaussianEpsilon returns √(2 ln(1.25/δ))/σ, the ε for which Dwork
// and Roth (2014) Theorem A.1 calls the Gaussian mechanism with noise
// multiplier σ (ε, δ)-DP. The theorem assumes ε < 1; for larger values this
// is the formula as Abadi et al. (2016) §3.1 and the DPD paper (§4.3,
// Theorem 2) apply it, not a proven bound. The caller validates σ > 0 and
// δ ∈ (0, 1).
func acClassicalGaussianEpsilon(sigma, delta float64) float64 {
	return acClassicalGaussianEpsilonLog(sigma, logmath.Log(delta))
}

// acClassicalGaussianEpsilonLog is acClassicalGaussianEpsilon given log δ.
func acClassicalGaussianEpsilonLog(sigma, logDelta float64) float64 {
	return up(math.Sqrt(2*(math.Log(1.25)-logDelta)) / sigma)
}

// acAnalyticGaussianEpsilon returns an upper bound, to relative precision
// about 1e-12, on the smallest ε for which the Gaussian mechanism with
// sensitivity 1 and noise multiplier σ is (ε, δ)-DP, from the exact privacy
// profile of Balle and Wang (2018), Theorem 8:
//
//	δ(ε) = Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ).
//
// The profile is evaluated in log space with a margin for the rounding error
// of log Φ. The root is bracketed by 0 and the tail bound
// 1/(2σ²) + √(2 ln(1/δ))/σ (the privacy loss is N(1/(2σ²), 1/σ²)), refined
// by the Illinois variant of false position, and the upper end of the
// bracket, where the profile has been checked, is returned.
func acAnalyticGaussianEpsilon(sigma, delta float64) float64 {
	return acAnalyticGaussianEpsilonLog(sigma, logmath.Log(delta))
}

// acAnalyticGaussianEpsilonLog is acAnalyticGaussianEpsilon given ld = log δ.
func acAnalyticGaussianEpsilonLog(sigma, ld float64) float64 {
	g := func(eps float64) float64 { return acLogGaussianDeltaUpper(sigma, eps) - ld }
	glo := g(0)
	if glo <= 0 {
		return 0
	}
	// The margin can push g above 0 at the tail bound: double it until
	// g ≤ 0 there (up to 1e300).
	ghi := 0.0
	b, _ := search.Solve(search.Problem[float64]{
		Holds: func(x float64) (bool, error) {
			v := g(x)
			if v > 0 {
				glo = v
				return false, nil
			}
			ghi = v
			return true, nil
		},
		Lo:      0,
		Hi:      1/(2*sigma*sigma) + math.Sqrt(-2*ld)/sigma,
		LoKnown: true,
		Up:      func(x float64) (float64, bool) { return x * 2, x*2 <= 1e300 },
		Done:    func(lo, hi float64) bool { return true }, // bracket only
	})
	if b.Status == search.NoBracket {
		return math.Inf(1)
	}
	return search.Illinois(g, b.Lo, b.Hi, glo, ghi, 1e-13)
}

// acLogGaussianDeltaUpper returns an upper bound on log δ(ε) of the Gaussian
// mechanism (Balle and Wang 2018, Theorem 8): the computed difference plus a
// margin of 64 machine epsilons times (1 + |log terms|) of the larger term,
// which covers the relative error of the two log Φ values.
func acLogGaussianDeltaUpper(sigma, eps float64) float64 {
	if 1/sigma > 0x1p16 {
		// Tiny σ: ε ≈ 1/(2σ²) is huge, the argument 1/(2σ) − εσ is a
		// cancellation and ε + log Φ(…) another, each worth far more than
		// the margin below (ε came out 2.4e-8 relative below the exact one
		// at σ = 1e-10). gaussian.LogDeltaBounds accounts for both.
		_, hi := gaussian.LogDeltaBounds(sigma, 1, eps)
		return hi
	}
	a := logmath.NormCDF(1/(2*sigma) - eps*sigma)
	b := eps + logmath.NormCDF(-1/(2*sigma)-eps*sigma)
	margin := a + math.Log(64*0x1p-52*(1+math.Abs(a)+math.Abs(b)))
	if b >= a {
		return margin
	}
	return logmath.Add(logmath.Sub(a, b), margin)
}

// acBasic returns Σ count_i ε_i (Dwork and Roth 2014, Theorem 3.16).
func acBasic(epsS, counts []float64) float64 {
	var s float64
	for i, e := range epsS {
		s += counts[i] * e
	}
	return up(s)
}

// acAdvanced returns √(2 ln(1/δ') Σ n_i ε_i²) + Σ n_i ε_i(e^{ε_i}−1), the ε
// of Dwork and Roth (2014) Theorem 3.20 for n_i steps of ε_i each, rounded
// up. logSlack is log δ'; it is +Inf for δ' = 0 (logSlack = −Inf).
func acAdvanced(epsS, counts []float64, logSlack float64) float64 {
	if math.IsInf(logSlack, -1) || math.IsNaN(logSlack) {
		return math.Inf(1)
	}
	// Σ n_i ε_i² is formed relative to the largest ε_i, so that tiny ε_i
	// (σ near SigmaCeiling with a tiny rate: ε_i ~ 1e-299) do not square
	// to 0; each drift term is rounded up (search.MulUp), so it never
	// underflows to 0 either.
	m := 0.0
	for _, e := range epsS {
		if math.IsInf(e, 1) {
			return math.Inf(1)
		}
		m = math.Max(m, e)
	}
	if m == 0 {
		return 0
	}
	var sq, drift float64
	for i, e := range epsS {
		r := e / m
		sq += counts[i] * r * r
		drift += search.MulUp(counts[i], search.MulUp(e, math.Expm1(e)))
	}
	return up(math.Sqrt(2*-logSlack*sq)*m + drift)
}

var (
	_ accounting.Accountant = (*Accountant)(nil)
	_ accounting.Procedure  = (*Linear)(nil)
)

// up rounds x > 0 up by four ulps (0 stays 0).
func up(x float64) float64 { return search.Up(x, 4) }
