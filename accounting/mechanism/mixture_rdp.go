package mechanism

import (
	"context"
	"math"
	"slices"
	"sync"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/integrate"
	"github.com/dpcalc/dpcalc/internal/search"
)

// mixtureRDP is the Rényi curve of the mixture of Gaussians (M = Σ p_i
// N(c_i, σ²) with the record, N = N(0, σ²) without), both directions:
//
//	remove: K(λ) = log E_N[(M/N)^{λ+1}] = log ∫ φ_σ(x) e^{(λ+1)L(x)} dx
//	add:    K(λ) = log E_M[(N/M)^{λ+1}] = log ∫ φ_σ(x) e^{−λ L(x)} dx
//
// with L = log M/N the remove pair's loss (mixturePair.lRemove), each a
// one-dimensional integral of a smooth positive function, computed by
// adaptive Gauss–Kronrod quadrature in log space (integrate.Log) and
// rounded up by its error estimate and the rounding of the integrand. The
// curve at λ is the larger of the two, and at most the certified bound
// log Σ p_i e^{λ(λ+1)c_i²/(2σ²)} (Jensen; at most the Gaussian curve of
// the largest shift, λ(λ+1)c_max²/(2σ²)): the bound used where the
// quadrature fails or falls below a certified lower bound (see at). dp_accounting's RDP
// accountant has no curve for MixtureOfGaussiansDpEvent (only its PLD
// accountant takes it). Values are cached per λ; safe for concurrent use.
type mixtureRDP struct {
	pair  *mixturePair
	gauss zcdpRDP // the largest shift's Gaussian curve
	mu    *sync.Mutex
	memo  map[float64]float64
}

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
	return search.MulUp(count, k), nil
}

// at returns an upper bound on K(λ) of one step: the quadrature's, where
// it is at least the certified lower bound of bounds, else (it has missed
// part of the integrand) the smaller of the certified upper bounds.
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
	// Below the quadrature's tolerance the certified bound is the smaller
	// one anyway (σ = 1e150): no quadrature.
	if v > mixtureRDPRelTol {
		rem, okR := r.logMoment(lambda + 1)
		add, okA := r.logMoment(-lambda)
		// The quadrature's error estimate is not a proof: next to a long
		// interval it can miss half of a peak σ wide (user-level K = 2, q
		// = 0.5, σ = 1, λ = 2048: 0.74 below the lower bound). Below the
		// lower bound it is wrong; there the certified bound stands.
		if okR && okA && rem >= lower {
			v = math.Min(v, math.Max(0, math.Max(rem, add)))
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

// mixtureRDPRelTol is the quadrature's target: the relative error of the
// integral, the absolute error of its log.
const mixtureRDPRelTol = 1e-10

// logMoment returns an upper bound on log ∫ φ_σ(x) e^{b·L(x)} dx, or false
// when the quadrature does not reach its tolerance. log f is about the
// largest of the concave parabolas −x²/(2σ²) + b(log p_i + c_i(2x −
// c_i)/(2σ²)), whose peaks lie at b·c_i: those points and 0 split the
// range first, so that no component's bump is missed (a far shift of tiny
// probability can carry the whole moment: at λ = 1 the shift 44 of
// probability e^−745 adds 2·(−745) + 44² = 446 to its log). For b < 0
// (the add direction) log f is concave, −x²/(2σ²) minus |b| times the
// convex L, so it has one peak and 0 alone splits the range.
func (r *mixtureRDP) logMoment(b float64) (float64, bool) {
	p := r.pair
	sigma := p.sigma
	ls := math.Log(sigma) + 0.5*math.Log(2*math.Pi)
	s2 := 2 * sigma * sigma
	// mag tracks the largest |term| summed into log f at the nodes within
	// e^−50 of the largest log f seen so far (those that carry the
	// integral; a node that falls out of that band later keeps its
	// magnitude, which only raises the allowance), for the rounding
	// allowance below.
	mag, top := 0.0, math.Inf(-1)
	logf := func(x float64) float64 {
		l := p.lRemove(x)
		a, bl := x*x/s2, b*l
		v := -a - ls + bl
		if v > top+50 {
			mag = 0
		}
		if v > top-50 {
			mag = math.Max(mag, a+math.Abs(bl)+math.Abs(ls))
		}
		top = math.Max(top, v)
		return v
	}
	pts := []float64{0}
	if b > 0 {
		for _, c := range p.c {
			pts = append(pts, b*c)
		}
	}
	slices.Sort(pts)
	pts = slices.Compact(pts)
	res, err := integrate.Log(logf, math.Inf(-1), math.Inf(1), &integrate.Options{
		RelTol: mixtureRDPRelTol, Scale: sigma, Breakpoints: pts, MaxEval: 400000,
	})
	if err != nil || res.Status != integrate.Success || math.IsNaN(res.LogValue) || math.IsInf(res.LogValue, 0) {
		return 0, false
	}
	// The quadrature's error estimate, the rounding of log f at the nodes
	// that carry the integral (64 ulps of its largest term) and the terms
	// the loss's log-sum-exp leaves out (each below e^−50 of its sum, which
	// lowers L by at most n·e^−50 and b·L by |b| times that).
	up := res.LogValue + res.AbsErr + 64*0x1p-52*(mag+math.Abs(res.LogValue)+1) + math.Abs(b)*float64(len(p.c))*math.Exp(-lseCut)
	return search.RoundUp(up), true
}
