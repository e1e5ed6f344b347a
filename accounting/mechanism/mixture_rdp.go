package mechanism

import (
	"context"
	"math"
	"sync"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// mixtureRDP is the Rényi curve of the mixture of Gaussians (M = Σ p_i
// N(c_i, σ²) with the record, N = N(0, σ²) without), both directions:
//
//	remove: K(λ) = log E_N[(M/N)^{λ+1}] = log ∫ φ_σ(x) e^{(λ+1)L(x)} dx
//	add:    K(λ) = log E_M[(N/M)^{λ+1}] = log ∫ φ_σ(x) e^{−λ L(x)} dx
//
// with L = log M/N the remove pair's loss (mixturePair.lRemove), each a
// one-dimensional integral bounded above by a proof, piece by piece
// (mixturePair.certMoment: lines above the convex or concave b·L, each
// integrated against the Gaussian in closed form, every rounding allowed
// for), refined until the bound is within about 1e-6 of K relative. The
// curve at λ is the larger of the two, and at most the certified bound
// log Σ p_i e^{λ(λ+1)c_i²/(2σ²)} (Jensen; at most the Gaussian curve of
// the largest shift, λ(λ+1)c_max²/(2σ²)). dp_accounting's RDP
// accountant has no curve for MixtureOfGaussiansDpEvent (only its PLD
// accountant takes it). Values are cached per λ; safe for concurrent use.
//
// With a binomial tail, M = (1 − η)A + T' with A the listed components
// (their curve K_A, both directions) and T' = Σ_{c ∉ listed} p_c N(c, σ²)
// the tail, of mass η. Each direction is bounded on its own:
//
//   - remove, b = λ + 1 ≥ 1: by Minkowski's inequality in L^b(N),
//     ‖M/N‖_b ≤ (1 − η)‖A/N‖_b + Σ_c p_c ‖N_c/N‖_b, and ‖N_c/N‖_b =
//     e^{λc²/(2σ²)} (the Gaussian's moment e^{b(b−1)c²/(2σ²)} to the
//     power 1/b), so K_rem(λ) ≤ b·log(e^{K_A(λ)/b} + S(λ/(2σ²))) with
//     S(a) = Σ_{c ∉ listed} p_c e^{a·c²};
//   - add: M ≥ (1 − η)A and y^{−λ} decreases, so E_N[(M/N)^{−λ}] ≤
//     (1 − η)^{−λ}·E_N[(A/N)^{−λ}]: K_add(λ) ≤ K_A(λ) − λ·log(1 − η).
//
// Both are also at most log(e^{K_A(λ)} + S(λ(λ+1)/(2σ²))), by convexity of
// y^b and y^{−λ} and Jensen over the tail's components (looser when the
// tail's probabilities are tiny: its terms are linear in p_c where
// Minkowski's are p_c^{λ+1}), and at most the Gaussian curve of the
// largest shift of all, k. S is bounded by accounting.BinomialTail.LogMoment.
type mixtureRDP struct {
	pair  *mixturePair
	gauss zcdpRDP // the largest listed shift's Gaussian curve
	// tail, when not nil, is the binomial tail, and tailGauss the Gaussian
	// curve of its largest shift.
	tail      *accounting.BinomialTail
	tailGauss zcdpRDP
	mu        *sync.Mutex
	memo      map[float64]float64
	stats     mixtureRDPStats // under mu
}

// mixtureRDPStats counts the certified moments computed, their loss
// evaluations and those that hit the work cap (mixtureCertMaxEval).
type mixtureRDPStats struct{ moments, evals, capped int }

func newMixtureRDP(sigma float64, c, logp []float64, rho float64) *mixtureRDP {
	lo, hi := core(c, logp)
	return &mixtureRDP{
		pair:  &mixturePair{sigma: sigma, c: c, logp: logp, coreLo: lo, coreHi: hi},
		gauss: zcdpRDP{rho: rho},
		mu:    new(sync.Mutex),
		memo:  make(map[float64]float64),
	}
}

func (r *mixtureRDP) AbadiMoments() bool { return false }

func (r *mixtureRDP) LogMoments(ctx context.Context, c *Cache, count float64, orders []float64) ([]float64, error) {
	return momentsAt(ctx, c, count, orders, r.LogMomentAt)
}

func (r *mixtureRDP) LogMomentAt(ctx context.Context, c *Cache, count, lambda float64) (float64, error) {
	if err := accounting.Canceled(ctx); err != nil {
		return 0, err
	}
	k := r.at(lambda)
	if r.tail != nil {
		k = r.withTail(lambda, k)
	}
	return search.MulUp(count, k), nil
}

// withTail returns the bound on K(λ) of the mixture with its tail from
// the listed components' bound kA, both directions (see mixtureRDP), each
// rounded up: the larger of the remove and add bounds, at most the Jensen
// bound and the Gaussian curve of the largest shift.
func (r *mixtureRDP) withTail(lambda, kA float64) float64 {
	s := r.pair.sigma
	s2 := 2 * s * s
	b := lambda + 1
	// Each bound is raised by 8 ulps of its own magnitude and of kA's: the
	// rounding of Add (a few ulps of the larger operand and of the result)
	// and of the products and quotients here; LogMoment has its own margin.
	ulps := func(v float64) float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return v
		}
		return v + 8*0x1p-52*(math.Abs(v)+math.Abs(kA))
	}
	sm := r.tail.LogMoment(lambda / s2 * (1 + 4*0x1p-52))
	rem := ulps(b * logmath.Add(kA/b, sm))
	// −λ·log(1 − η) with η at most e^{lm}: for η ≤ e^−700 at most
	// λ·η·(1 + 1e-9), taken in log space (λ·η may be above the smallest
	// float64 when η is below it), and at least the smallest float64.
	lm := r.tail.LogMass()
	pen := math.Exp(math.Log(lambda) + lm + 1e-9)
	if lm > -700 {
		pen = -lambda * math.Log1p(-math.Exp(lm)) * (1 + 1e-12)
	}
	add := ulps(kA + math.Max(pen, math.SmallestNonzeroFloat64))
	jensen := ulps(logmath.Add(kA, r.tail.LogMoment(lambda*b/s2*(1+4*0x1p-52))))
	g, _ := r.tailGauss.LogMomentAt(context.Background(), nil, 1, lambda)
	return math.Min(math.Min(math.Max(rem, add), jensen), search.RoundUp(g))
}

// at returns a proven upper bound on K(λ) of one step: the smallest of the
// certified piecewise bounds' larger direction (logMoment), the Jensen
// bound and the largest shift's Gaussian curve.
func (r *mixtureRDP) at(lambda float64) float64 {
	r.mu.Lock()
	v, ok := r.memo[lambda]
	r.mu.Unlock()
	if ok {
		return v
	}
	g, _ := r.gauss.LogMomentAt(context.Background(), nil, 1, lambda)
	lower, upper := r.bounds(lambda)
	v = math.Min(search.RoundUp(g), upper)
	// Below the pieces' absolute target the certified closed form is as
	// good (σ = 1e150): no pieces.
	if v > 1e-13 {
		// The remove direction first (the larger at all but the smallest
		// orders): the add direction then need only be refined until it is
		// below it.
		rem, okR := r.logMoment(lambda+1, math.Inf(-1), v)
		if okR && rem < v {
			add, okA := r.logMoment(-lambda, rem, v)
			// Both are proven; a remove bound below the certified lower
			// bound would be a defect (kept as a check).
			if okA && rem >= lower {
				v = math.Min(v, math.Max(0, math.Max(rem, add)))
			}
		}
	}
	r.mu.Lock()
	if len(r.memo) >= singleCacheSize {
		clear(r.memo)
	}
	r.memo[lambda] = v
	r.mu.Unlock()
	return v
}

// bounds returns certified bounds on K(λ) from the components alone, in
// closed form: lower ≤ the remove direction's, from (Σ y_i)^a ≥ Σ y_i^a
// for y_i ≥ 0 and a = λ + 1 ≥ 1, which gives E_N[(M/N)^a] ≥ Σ p_i^a
// e^{a(a−1)c_i²/(2σ²)}; upper ≥ both directions', log Σ p_i
// e^{λ(λ+1)c_i²/(2σ²)}, from the convexity of y^a and of y^−λ (Jensen:
// E_N[(Σ p_i r_i)^a] ≤ Σ p_i E_N[r_i^a] for the likelihood ratios r_i of
// the components, and likewise for the exponent −λ), at most the largest
// shift's Gaussian curve. Each is moved outwards by 8 ulps of its
// largest term's magnitude, 4 of its value and one per term: each term
// is within 4 ulps of its magnitude (five roundings of half an ulp), its
// exponential relative to the largest within as much again, and the log
// of the sum of at most n such exponentials within a few ulps.
func (r *mixtureRDP) bounds(lambda float64) (lower, upper float64) {
	p := r.pair
	a := lambda + 1
	s2 := 2 * p.sigma * p.sigma
	var lo, hi lse
	magLo, magHi := 0.0, 0.0
	for i, c := range p.c {
		e := lambda * a * (c * c / s2)
		tl, th := a*p.logp[i]+e, p.logp[i]+e
		if math.IsInf(e, 1) || math.IsNaN(e) {
			return math.Inf(1), math.Inf(1)
		}
		lo.add(tl)
		hi.add(th)
		magLo = math.Max(magLo, math.Abs(a*p.logp[i])+e)
		magHi = math.Max(magHi, math.Abs(p.logp[i])+e)
	}
	n := float64(len(p.c))
	lower, upper = lo.log(), hi.log()
	lower -= 0x1p-52 * (8*magLo + 4*math.Abs(lower) + n)
	upper += 0x1p-52 * (8*magHi + 4*math.Abs(upper) + n)
	return lower, upper
}

// mixtureRDPRelTol is the certified bound's target: its estimated excess
// over the log moment K, relative to K (at least 1e-13 absolute).
const mixtureRDPRelTol = 1e-5

// logMoment returns a proven upper bound on log ∫ φ_σ(x) e^{b·L(x)} dx
// (mixturePair.certMoment; floor and ceil end its refinement early where
// the caller's max and min decide), and false when it is not finite. It counts
// the certified moments and their loss evaluations in r.stats.
func (r *mixtureRDP) logMoment(b, floor, ceil float64) (float64, bool) {
	up, evals, met := r.pair.certMoment(b, mixtureRDPRelTol, floor, ceil)
	r.mu.Lock()
	r.stats.moments++
	r.stats.evals += evals
	if !met {
		r.stats.capped++
	}
	r.mu.Unlock()
	if math.IsNaN(up) || math.IsInf(up, 0) {
		return 0, false
	}
	return up, true
}
