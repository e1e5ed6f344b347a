package mechanism

import (
	"context"
	"math"
	"slices"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/search"

	"github.com/dpcalc/dpcalc/integrate"
	"github.com/dpcalc/dpcalc/internal/logmath"
)

// GaussianMoment is the log moment generating function of the privacy loss of one
// step of the Poisson-subsampled Gaussian mechanism at moment order Lambda
// (Abadi et al. 2016, §3.2, eqs. 3–4).
type GaussianMoment struct {
	// Lambda is the moment order λ ≥ [MinOrder] (Rényi order λ+1).
	Lambda float64
	// LogE1 is log E1 = log E_{z∼μ0}[(μ0(z)/μ(z))^λ] (eq. 3).
	LogE1 float64
	// LogE2 is log E2 = log E_{z∼μ}[(μ(z)/μ0(z))^λ] (eq. 4).
	LogE2 float64
	// Alpha is α(λ) = log max(E1, E2).
	Alpha float64
	// AbsError bounds |Alpha − α(λ)|: quadrature error estimate, bounds on
	// the truncated tails and skipped panels, and a rounding allowance.
	// Alpha+AbsError is the value the accountants use. Where α is bounded
	// in closed form instead (see [GaussianLogMoments]), LogE1 and LogE2 are upper
	// bounds, Alpha is the midpoint of a bracket on α(λ) and AbsError its
	// half-width. An order with no finite bound has Alpha = AbsError = +Inf.
	AbsError float64
}

// Upper returns Alpha + AbsError, the rounded-up α(λ) used for accounting.
func (m GaussianMoment) Upper() float64 { return m.Alpha + m.AbsError }

// The partition and truncation constants of the shared-node integrator.
const (
	// momentTailSD is the number of standard deviations kept beyond the
	// last significant Gaussian component; the tails beyond are bounded
	// analytically and the bound is added to the error.
	momentTailSD = 9.0
	// momentPanelSD is the initial panel width in units of min(σ, σ²):
	// the integrands are sums of N(k, σ²) components times factors that
	// vary on the scale σ².
	momentPanelSD = 3.0
	// momentMaxPanels caps the shared partition; orders it cannot reach get
	// α = +Inf (or the exact binomial form when λ is an integer).
	momentMaxPanels = 4096
	// momentRelTol is the target of the error estimate |K15 − G7| relative
	// to E−1; panels are bisected until every order meets it or
	// momentMaxRounds is reached. The estimate is that of the G7 result and
	// is reported unscaled as the error of the K15 value, which on these
	// analytic integrands is smaller by many orders of magnitude (measured
	// agreement with the exact binomial form: a few ulp). Reporting it
	// unscaled keeps AbsError a bound at a cost of ~1e-6 relative in α
	// (Abadi §5.1 setting: ε changes in the 7th digit).
	momentRelTol    = 1e-6
	momentMaxRounds = 12
	// momentSkip: panels whose analytic bound lies this far (in log) below
	// the largest panel bound are not evaluated; their bound is added to
	// the error instead.
	momentSkip = 45.0
)

// GaussianLogMoments returns α(λ) = log max(E1, E2) of Abadi et al. (2016) §3.2,
// eqs. 3–4, for the sampled Gaussian mechanism with noise multiplier sigma
// and sampling rate q, at every real order λ ≥ [MinOrder] in lambdas, each
// with an error bound. Orders below 1 (Rényi orders in (1, 2); Mironov,
// Talwar, Zhang 2019, §3.3) use the same integrals: for b = −λ ∈ (−1, 0)
// and b = λ+1 ∈ (1, 2), (1+r)^b is convex, so the integrand is ≥ 0, and the
// Taylor and tail bounds below hold for every real b.
//
// E1 and E2 are integrated numerically as E−1 = E_{z∼μ0}[(1+r)^b − 1 − b·r]
// with r = μ(z)/μ0(z) − 1 = q·expm1((2z−1)/(2σ²)), b = −λ for E1 and b = λ+1
// for E2 (E_{μ0}[r] = 0, and the integrand is ≥ 0 by convexity), so tiny α
// keeps its relative accuracy and large α does not overflow. All orders
// share one partition of the real line into G7/K15 panels refined for the
// hardest order; each order gets its own Kronrod–Gauss error estimate. For
// q = 1, α(λ) = λ(λ+1)/(2σ²) exactly.
//
// Where the integrator cannot work, α is bounded in closed form instead
// (see [GaussianMoment] for how Alpha and AbsError then read): for σ > 2^32, for
// α below about 1e-261 (q²λ(λ+1)/(2σ²) < e^-600, where its nodes would
// underflow), for σ below about 0.012 (the partition would exceed its cap)
// and for single orders the partition cannot reach. The bound uses the
// exact binomial log E2 at the integers around λ (log E2 = λ·D_{λ+1}(μ‖μ0)
// does not decrease in λ, van Erven and Harremoës 2014, Theorem 3) and
// log E1 ≤ qλ(λ+1)/(2σ²) (Rényi divergence is convex in its second
// argument, ibid. Theorem 12); beyond λ = 10⁴ it is λ(λ+1)/(2σ²), the q = 1
// value, which subsampling never exceeds. An order whose bound overflows
// gets Alpha = AbsError = +Inf. No input panics; the work is
// O(panels·orders), or O(λ) per order in closed form.
func GaussianLogMoments(sigma, q float64, lambdas []float64) ([]GaussianMoment, error) {
	return logMoments(context.Background(), sigma, q, lambdas)
}

// The switches between the integrator and the closed-form bounds.
const (
	// momentSigmaMax: above it, every order is bounded in closed form.
	momentSigmaMax = 0x1p32
	// momentTinyLog: below this log of q²λ(λ+1)/(2σ²) at the largest
	// order, every order is bounded in closed form.
	momentTinyLog = -600.0
	// momentBinomialMax is the largest order the binomial sum evaluates
	// inside GaussianLogMoments.
	momentBinomialMax = 1e4
	// maxBinomialOrder is the largest order GaussianLogMomentBinomial accepts.
	maxBinomialOrder = 1_000_000
)

// logMoments is GaussianLogMoments; it returns accounting.Canceled(ctx) when ctx
// is done between orders or refinement rounds.
func logMoments(ctx context.Context, sigma, q float64, lambdas []float64) ([]GaussianMoment, error) {
	if err := accounting.CheckNoiseMultiplier(sigma); err != nil {
		return nil, err
	}
	if err := accounting.CheckSamplingRate(q); err != nil {
		return nil, err
	}
	maxL := 1.0 // the largest order the integrator serves
	anySmall := false
	for _, l := range lambdas {
		if err := accounting.CheckOrder(l, MinOrder); err != nil {
			return nil, err
		}
		if l <= momentBinomialMax {
			maxL, anySmall = math.Max(maxL, l), true
		}
	}
	out := make([]GaussianMoment, len(lambdas))
	if q == 1 {
		for i, l := range lambdas {
			a := halfSquare(l, sigma)
			out[i] = GaussianMoment{Lambda: l, LogE1: a, LogE2: a, Alpha: a, AbsError: 4*0x1p-52*a + 4*math.SmallestNonzeroFloat64}
		}
		return out, nil
	}
	tiny := 2*logmath.Log(q) + math.Log(maxL) + math.Log1p(maxL) - math.Ln2 - 2*math.Log(sigma)
	var g *momentGrid
	if anySmall && sigma <= momentSigmaMax && tiny >= momentTinyLog {
		g = newMomentGrid(sigma, q, maxL)
	}
	if g == nil {
		for i, l := range lambdas {
			if err := accounting.Canceled(ctx); err != nil {
				return nil, err
			}
			out[i] = boundMoment(sigma, q, l)
		}
		return out, nil
	}
	// Orders beyond 10⁴ would stretch the shared partition past its cap:
	// they get the closed-form bound, the others the integrator.
	var small []float64
	var at []int
	for i, l := range lambdas {
		if l <= momentBinomialMax {
			small, at = append(small, l), append(at, i)
		} else {
			out[i] = boundMoment(sigma, q, l)
		}
	}
	if len(small) == len(lambdas) {
		return out, g.moments(ctx, lambdas, out)
	}
	ms := make([]GaussianMoment, len(small))
	if err := g.moments(ctx, small, ms); err != nil {
		return nil, err
	}
	for j, i := range at {
		out[i] = ms[j]
	}
	return out, nil
}

// logMomentOne is logMoments for the single order l (a valid σ, q and
// order), with the partition laid out for the top of l's octave, 2^⌈log2 l⌉
// (at least 1, at most 10⁴), instead of for l itself: every order of an
// octave starts from the same partition, which is built once per (σ, q,
// octave) and kept in grids (a copy is refined for each order). The value
// depends on σ, q and l only. The continuous order search evaluates orders
// one at a time through it.
func logMomentOne(ctx context.Context, sigma, q, l float64, grids map[[3]float64]*momentGrid) (GaussianMoment, error) {
	if q == 1 || l > momentBinomialMax {
		ms, err := logMoments(ctx, sigma, q, []float64{l})
		if err != nil {
			return GaussianMoment{}, err
		}
		return ms[0], nil
	}
	top := math.Min(math.Max(1, math.Exp2(math.Ceil(math.Log2(l)))), momentBinomialMax)
	tiny := 2*logmath.Log(q) + math.Log(top) + math.Log1p(top) - math.Ln2 - 2*math.Log(sigma)
	if sigma > momentSigmaMax || tiny < momentTinyLog {
		return boundMoment(sigma, q, l), nil
	}
	key := [3]float64{sigma, q, top}
	base, ok := grids[key]
	if !ok {
		if err := accounting.Canceled(ctx); err != nil {
			return GaussianMoment{}, err
		}
		base = newMomentGrid(sigma, q, top)
		if len(grids) >= partsCacheSize {
			clear(grids)
		}
		grids[key] = base
	}
	if base == nil {
		return boundMoment(sigma, q, l), nil
	}
	out := make([]GaussianMoment, 1)
	g := base.clone()
	g.exactE2 = l == math.Trunc(l)
	if err := g.moments(ctx, []float64{l}, out); err != nil {
		return GaussianMoment{}, err
	}
	return out[0], nil
}

// clone returns a copy of g that can be refined without changing g.
func (g *momentGrid) clone() *momentGrid {
	c := *g
	c.panels = slices.Clone(g.panels)
	c.logphi, c.phi = slices.Clone(g.logphi), slices.Clone(g.phi)
	c.r, c.lr, c.d = slices.Clone(g.r), slices.Clone(g.lr), slices.Clone(g.d)
	c.wk, c.wg = slices.Clone(g.wk), slices.Clone(g.wg)
	c.ub, c.perr = nil, nil
	return &c
}

// GaussianLogMoment returns the [GaussianMoment] at a single order λ; see [GaussianLogMoments].
func GaussianLogMoment(sigma, q, lambda float64) (GaussianMoment, error) {
	m, err := GaussianLogMoments(sigma, q, []float64{lambda})
	if err != nil {
		return GaussianMoment{}, err
	}
	return m[0], nil
}

// GaussianLogMomentBinomial returns log E2 at an integer order λ ≥ 1 by the exact
// binomial expansion (Abadi et al. 2016, proof of Lemma 3; Mironov, Talwar,
// Zhang 2019, §3.3, with Rényi order λ+1):
//
//	E2 = Σ_{k=0}^{λ+1} C(λ+1, k) (1−q)^{λ+1−k} q^k exp((k²−k)/(2σ²)).
//
// It sums E2 − 1 = Σ_{k≥2} C(λ+1,k)(1−q)^{λ+1−k} q^k expm1((k²−k)/(2σ²)),
// whose terms are all positive, in log space and returns log1p of it, so a
// tiny α keeps its digits. Cost O(λ) time and memory, so λ is at most
// 10⁶.
func GaussianLogMomentBinomial(sigma, q float64, lambda int) (float64, error) {
	if err := accounting.CheckNoiseMultiplier(sigma); err != nil {
		return 0, err
	}
	if err := accounting.CheckSamplingRate(q); err != nil {
		return 0, err
	}
	if lambda < 1 || lambda > maxBinomialOrder {
		return 0, &accounting.ParamError{Name: "lambda", Value: float64(lambda), Want: "integer in [1, 1e6]"}
	}
	return logMomentBinomial(sigma, q, lambda), nil
}

// logMomentBinomial is GaussianLogMomentBinomial without validation.
func logMomentBinomial(sigma, q float64, lambda int) float64 {
	if q == 1 {
		return halfSquare(float64(lambda), sigma)
	}
	v, _, _ := binomialLogE2(sigma, q, lambda)
	return v
}

// binomialLogE2 returns log E2 at the integer order λ by the binomial sum
// of [GaussianLogMomentBinomial] (q < 1), and a lower and an upper bound covering
// its rounding. x = (k²−k)/(2σ²) enters through its log, so neither σ² nor
// a tiny E2 − 1 overflows or underflows on the way.
func binomialLogE2(sigma, q float64, lambda int) (v, lo, up float64) {
	const eps = 0x1p-52
	a := lambda + 1
	lq, l1q := logmath.Log(q), math.Log1p(-q)
	ls2 := 2*math.Log(sigma) + math.Ln2 // log(2σ²)
	terms := make([]float64, 0, a)
	mag := 0.0
	// C(a, k) by the multiplicative recurrence while it fits in float64
	// (a ≤ 1020), else by log-gamma.
	c := float64(a) // C(a, 1)
	for k := 2; k <= a; k++ {
		var lc float64
		if a <= 1020 {
			c = c * float64(a-k+1) / float64(k)
			lc = math.Log(c)
		} else {
			lc = logmath.Comb(float64(a), float64(k))
		}
		lkk := math.Log(float64(k) * float64(k-1))
		lx := lkk - ls2
		t1, t2 := float64(a-k)*l1q, float64(k)*lq
		le := logExpm1Log(lx)
		t := lc + t1 + t2 + le
		terms = append(terms, t)
		// Rounding error of t in units of eps: a few ulps of each log and
		// of the sum, and lx's error (a few ulps of log k(k−1) and of
		// log 2σ²) times d log(e^x − 1)/d lx = x·e^x/(e^x − 1) ≤ max(1, 2x).
		m := math.Abs(lc) + math.Abs(t1) + math.Abs(t2) + math.Abs(t) +
			math.Max(1, 2*math.Exp(lx))*(math.Abs(lkk)+math.Abs(ls2)+1)
		mag = math.Max(mag, m)
	}
	L := logmath.SumExp(terms)
	d := 16*eps*mag + 4*eps*float64(a) // the terms' rounding + the sum's
	v = log1pExp(L)
	up = search.Up(log1pExp(L+d), 4)
	if up < 0x1p-1022 {
		// exp(L+d) near or below the subnormal range: its absolute error is
		// at most a subnormal ulp; q > 0 makes the true value positive.
		up += 2 * math.SmallestNonzeroFloat64
	}
	lo = math.Max(0, search.Down(log1pExp(L-d), 4)-2*math.SmallestNonzeroFloat64)
	return v, lo, up
}

// logExpm1Log returns log(e^x − 1) given lx = log x, forming x only where
// it neither overflows nor underflows.
func logExpm1Log(lx float64) float64 {
	switch {
	case lx < -40:
		// e^x − 1 = x(1 + x/2 + …) with x < 5e-18: log = lx + (below x).
		return lx + math.Exp(lx)
	case lx > 700:
		return math.Exp(lx) // log(e^x − 1) = x to double precision (+Inf past 709.78)
	}
	return logExpm1(math.Exp(lx))
}

// halfSquare returns λ(λ+1)/(2σ²), rounded up, without forming σ²: the α
// of the unsampled Gaussian (q = 1), and an upper bound on α for every q.
// It is positive (at least the smallest float64) and +Inf on overflow.
func halfSquare(l, sigma float64) float64 {
	v := 0.5 * (l / sigma) * ((l + 1) / sigma)
	if v < 0x1p-1022 {
		return v + 4*math.SmallestNonzeroFloat64
	}
	return search.Up(v, 4)
}

// boundMoment bounds α(λ) in closed form (see [GaussianLogMoments]), for q < 1:
// log E1 ≤ qλ(λ+1)/(2σ²) and log E2(⌊λ⌋) ≤ log E2(λ) ≤ log E2(⌈λ⌉). Alpha
// is the midpoint of the bracket [lower, upper] on α(λ) and AbsError its
// half-width, so Upper() is the upper end.
func boundMoment(sigma, q, l float64) GaussianMoment {
	e1 := q * halfSquare(l, sigma)
	if e1 < 0x1p-1022 {
		e1 += 2 * math.SmallestNonzeroFloat64
	} else {
		e1 = search.Up(e1, 2)
	}
	var lo, e2 float64
	if c := math.Ceil(l); c <= momentBinomialMax {
		_, _, e2 = binomialLogE2(sigma, q, int(c))
		if f := math.Floor(l); f >= 1 { // below 1, α ≥ 0 is the lower end
			_, lo, _ = binomialLogE2(sigma, q, int(f))
		}
	} else {
		e2 = halfSquare(l, sigma)
	}
	up := math.Max(e1, e2)
	if math.IsInf(up, 1) || math.IsNaN(up) {
		return GaussianMoment{Lambda: l, LogE1: e1, LogE2: e2, Alpha: math.Inf(1), AbsError: math.Inf(1)}
	}
	alpha := lo + (up-lo)/2
	abs := up - alpha
	for alpha+abs < up {
		abs = math.Nextafter(abs, math.Inf(1))
	}
	return GaussianMoment{Lambda: l, LogE1: e1, LogE2: e2, Alpha: alpha, AbsError: abs}
}

// logExpm1 returns log(e^x − 1) for x > 0.
func logExpm1(x float64) float64 {
	if x > 30 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return math.Log(math.Expm1(x))
}

// log1pExp returns log(1 + e^x).
func log1pExp(x float64) float64 {
	if x > 30 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// GaussianMomentBound returns the asymptotic bound q²λ(λ+1)/((1−q)σ²) on α(λ) from
// the proof of Abadi et al. (2016) Theorem 1 (Lemma 3), which holds for
// q < 1/(16σ), σ ≥ 1 and λ ≤ σ² log(1/(qσ)). It is for comparison only and
// returns NaN outside its validity conditions or for invalid input.
func GaussianMomentBound(sigma, q, lambda float64) float64 {
	if accounting.CheckNoiseMultiplier(sigma) != nil || accounting.CheckSamplingRate(q) != nil || accounting.CheckOrder(lambda, 1) != nil ||
		sigma < 1 || q >= 1/(16*sigma) || lambda > sigma*sigma*math.Log(1/(q*sigma)) {
		return math.NaN()
	}
	return q * q * lambda * (lambda + 1) / ((1 - q) * sigma * sigma)
}

// expm1mx returns e^A − 1 − A for |A| ≤ 1/2 by its Taylor series
// A²·Σ_k A^k/(k+2)!, with as many terms as |A| needs for a relative
// truncation error below 6e-17 (6, 9 or 15 terms).
func expm1mx(A float64) float64 {
	const (
		c2  = 1.0 / 2
		c3  = c2 / 3
		c4  = c3 / 4
		c5  = c4 / 5
		c6  = c5 / 6
		c7  = c6 / 7
		c8  = c7 / 8
		c9  = c8 / 9
		c10 = c9 / 10
		c11 = c10 / 11
		c12 = c11 / 12
		c13 = c12 / 13
		c14 = c13 / 14
		c15 = c14 / 15
		c16 = c15 / 16
	)
	a := math.Abs(A)
	var p float64
	switch {
	case a <= 0.01: // next term A^8/8! ≤ 5e-17 of A²/2
		p = c2 + A*(c3+A*(c4+A*(c5+A*(c6+A*c7))))
	case a <= 0.1: // next term A^11/11! ≤ 5e-17 of A²/2
		p = c2 + A*(c3+A*(c4+A*(c5+A*(c6+A*(c7+A*(c8+A*(c9+A*c10)))))))
	default: // next term A^17/17! ≤ 2e-19 of A²/2
		p = c2 + A*(c3+A*(c4+A*(c5+A*(c6+A*(c7+A*(c8+A*(c9+A*(c10+A*(c11+A*(c12+A*(c13+A*(c14+A*(c15+A*c16)))))))))))))
	}
	return A * A * p
}

// rMinusLog1p returns r − log1p(r) (≥ 0) given lr = log1p(r): by its
// series for |r| < 0.1 and directly elsewhere (where the cancellation costs
// at most 2/|r| ≤ 20 ulp).
func rMinusLog1p(r, lr float64) float64 {
	if math.Abs(r) >= 0.1 {
		return r - lr
	}
	// r − log1p r = Σ_{k≥2} (−1)^k r^k / k; 18 terms: |r|^18/18 < 1e-19.
	s := 0.0
	for k := 19; k >= 2; k-- {
		s = s*(-r) + 1/float64(k)
	}
	return s * r * r
}

// momentPanel is one G7/K15 panel of the shared partition.
type momentPanel struct {
	lo, hi    float64
	first     int     // index of its first node
	maxLogPhi float64 // max log μ0 over its nodes
	absLogPhi float64 // max |log μ0|
	lrMin     float64 // min log L over its nodes (L = μ/μ0 = 1 + r)
	lrMax     float64 // max log L
	logRW     float64 // 2·log max|r| + log(hi − lo); r is monotone, so max|r| is at an end
	// log μ0 and log L at the two endpoints, for the skip bound.
	lpLo, lpHi, lrLo, lrHi float64
}

// momentGrid is the shared partition and the λ-independent node data.
type momentGrid struct {
	sigma, q  float64
	zlo, zhi  float64 // partition range
	width     float64 // initial panel width
	panels    []momentPanel
	logphi    []float64 // log μ0(z)
	phi       []float64 // μ0(z) (0 where it underflows)
	r, lr     []float64 // r = L − 1 and log L
	d         []float64 // r − log L ≥ 0, accurate for small r
	wk, wg    []float64 // Kronrod and Gauss weights times half-width
	ub        []float64 // scratch: per-panel bounds
	perr      []float64 // scratch: per-panel error
	logQ, l1q float64
	// exactE2 makes moments bound E2 at integer orders by the binomial sum
	// as well, keeping the smaller upper bound.
	exactE2 bool
	// Cached pieces of the lower-tail bound at zlo.
	lowCached                bool
	lowCDF, lowPost, lowLogL float64
}

var gkX, gkWK, gkWG = integrate.GaussKronrod15()

// newMomentGrid lays out the initial partition for orders up to maxL.
func newMomentGrid(sigma, q, maxL float64) *momentGrid {
	g := &momentGrid{sigma: sigma, q: q, logQ: logmath.Log(q), l1q: math.Log1p(-q)}
	g.width = momentPanelSD * math.Min(sigma, sigma*sigma)
	// Left end: the mode of μ0·L^{-λ} (log-concave) minus the tail margin.
	mode := g.e1Mode(maxL)
	g.zlo = math.Min(-momentTailSD*sigma, mode-momentTailSD*sigma)
	n := math.Ceil((maxL + 1 + momentTailSD*sigma - g.zlo) / g.width)
	if n > momentMaxPanels {
		n = momentMaxPanels
	}
	// E1 needs the range up to 1 + momentTailSD·σ at least; for tiny σ
	// (below about 0.012) that exceeds the cap and every order is +Inf.
	if need := math.Ceil((1 + momentTailSD*sigma - g.zlo) / g.width); n < need {
		if need > momentMaxPanels {
			return nil
		}
		n = need
	}
	g.zhi = g.boundary(int(n))
	// Room for the initial nodes and some refinement without regrowing.
	c := int(n) * 15 * 5 / 4
	g.logphi, g.phi = make([]float64, 0, c), make([]float64, 0, c)
	g.r, g.lr = make([]float64, 0, c), make([]float64, 0, c)
	g.d = make([]float64, 0, c)
	g.wk, g.wg = make([]float64, 0, c), make([]float64, 0, c)
	g.panels = make([]momentPanel, 0, int(n)*5/4+1)
	for k := 0; k < int(n); k++ {
		g.addPanel(g.boundary(k), g.boundary(k+1))
	}
	return g
}

// boundary returns the k-th boundary of the initial partition; the same
// expression is used everywhere so that comparisons are exact.
func (g *momentGrid) boundary(k int) float64 { return g.zlo + float64(k)*g.width }

// upperLimit returns the first initial boundary ≥ z, or +Inf beyond zhi.
func (g *momentGrid) upperLimit(z float64) float64 {
	if !(z <= g.zhi) {
		return math.Inf(1) // also keeps the float → int conversion below in range
	}
	k := math.Ceil((z - g.zlo) / g.width)
	if k < 1 {
		k = 1
	}
	b := g.boundary(int(k))
	if b < z {
		b = g.boundary(int(k) + 1)
	}
	if b > g.zhi {
		return math.Inf(1)
	}
	return b
}

// e1Mode returns the mode of μ0(z)·L(z)^{-λ}, found by bisection on its
// log-derivative −z/σ² − λ·P(z)/σ² (decreasing; P ∈ (0, 1) is the posterior
// weight of μ1), which has its root in [−λ, 0].
func (g *momentGrid) e1Mode(lambda float64) float64 {
	// 40 halvings: the mode only places the partition's left end, to far
	// better than the tail margin of momentTailSD·σ.
	o, _ := search.Solve(search.Problem[float64]{
		Holds:          func(z float64) (bool, error) { return -z-lambda*g.posterior(z) > 0, nil },
		Side:           search.Lower,
		Lo:             -lambda - 1,
		Hi:             0,
		LoKnown:        true,
		HiKnown:        true,
		Next:           func(lo, hi float64) (float64, bool) { return 0.5 * (lo + hi), true },
		MaxEvaluations: 40,
	})
	return o.X
}

// posterior returns q·μ1(z)/μ(z).
func (g *momentGrid) posterior(z float64) float64 {
	s2 := g.sigma * g.sigma
	return math.Exp(g.logQ + (2*z-1)/(2*s2) - g.logL(z))
}

// logL returns log(μ(z)/μ0(z)) = log(1 − q + q·e^{(2z−1)/(2σ²)}).
func (g *momentGrid) logL(z float64) float64 {
	x := (2*z - 1) / (2 * g.sigma * g.sigma)
	if x > 30 {
		// log(q e^x (1 + (1−q)e^{−x}/q))
		return g.logQ + x + math.Log1p(math.Exp(g.l1q-g.logQ-x))
	}
	return math.Log1p(g.q * math.Expm1(x))
}

// logAbsR returns log|r(z)| = log|q·expm1((2z−1)/(2σ²))|.
func (g *momentGrid) logAbsR(z float64) float64 {
	x := (2*z - 1) / (2 * g.sigma * g.sigma)
	if x > 30 {
		return g.logQ + x + math.Log1p(-math.Exp(-x))
	}
	return g.logQ + math.Log(math.Abs(math.Expm1(x)))
}

// addPanel appends a panel on [lo, hi] and its 15 nodes.
func (g *momentGrid) addPanel(lo, hi float64) int {
	mid, h := 0.5*(lo+hi), 0.5*(hi-lo)
	s2 := g.sigma * g.sigma
	logNorm := -math.Log(g.sigma) - 0.5*math.Log(2*math.Pi)
	p := momentPanel{lo: lo, hi: hi, first: len(g.r), maxLogPhi: math.Inf(-1),
		lrMin: math.Inf(1), lrMax: math.Inf(-1)}
	for i := 0; i < 15; i++ {
		z := mid + h*gkX[i]
		lp := -z*z/(2*s2) + logNorm
		x := (2*z - 1) / (2 * s2)
		var r, lr float64
		if x > 30 {
			lr = g.logL(z)
			// r overflows beyond log L ≈ 709; the clamp only touches nodes
			// where μ0 is below e^{-10^5}, far under every bound kept.
			r = math.Exp(math.Min(lr, 709)) - 1
		} else {
			r = g.q * math.Expm1(x)
			lr = math.Log1p(r)
		}
		g.logphi = append(g.logphi, lp)
		g.phi = append(g.phi, math.Exp(lp))
		g.r = append(g.r, r)
		g.lr = append(g.lr, lr)
		g.d = append(g.d, rMinusLog1p(r, lr))
		g.wk = append(g.wk, gkWK[i]*h)
		g.wg = append(g.wg, gkWG[i]*h)
		p.absLogPhi = math.Max(p.absLogPhi, math.Abs(lp))
		p.lrMin = math.Min(p.lrMin, lr)
		p.lrMax = math.Max(p.lrMax, lr)
	}
	zc := math.Max(lo, math.Min(hi, 0)) // max of log μ0 over the panel
	p.maxLogPhi = -zc*zc/(2*s2) + logNorm
	p.logRW = 2*math.Max(g.logAbsR(lo), g.logAbsR(hi)) + math.Log(hi-lo)
	p.lpLo, p.lpHi = -lo*lo/(2*s2)+logNorm, -hi*hi/(2*s2)+logNorm
	p.lrLo, p.lrHi = g.logL(lo), g.logL(hi)
	g.panels = append(g.panels, p)
	return len(g.panels) - 1
}

// integral returns log(E−1) and the log of its error bound for exponent b
// (b = −λ for E1, λ+1 for E2), integrating the panels up to zmax. If
// wantPerr is set, the per-panel error estimates (relative to e^S) are left
// in g.perr and S is returned as shift.
func (g *momentGrid) integral(b, zmax float64, wantPerr bool) (logX, logErr, shift float64) {
	np := len(g.panels)
	if cap(g.ub) < np {
		g.ub = make([]float64, np, 2*np)
		g.perr = make([]float64, np, 2*np)
	}
	g.ub, g.perr = g.ub[:np], g.perr[:np]
	// Taylor bound: G(b, r) = b(b−1)/2 (1+ξ)^{b−2} r² for ξ between 0 and r.
	lbb := math.Log(math.Abs(b*(b-1)) / 2)
	s2 := g.sigma * g.sigma
	curv := 1 / s2
	if b < 2 {
		curv += (2 - b) / (4 * s2 * s2)
	}
	S := math.Inf(-1)
	for i := range g.panels {
		p := &g.panels[i]
		g.perr[i] = 0
		if p.hi > zmax {
			g.ub[i] = math.NaN()
			continue
		}
		// h = log μ0 + (b−2)·log L exceeds its chord between the panel
		// ends by at most width²/8 times its largest concave curvature:
		// 1/σ² from log μ0, plus |b−2|/(4σ⁴) from (b−2)·log L when b < 2
		// (log L is convex with (log L)'' = P(1−P)/σ⁴ ≤ 1/(4σ⁴)).
		w := p.hi - p.lo
		m := math.Max(p.lpLo+(b-2)*p.lrLo, p.lpHi+(b-2)*p.lrHi) + w*w/8*curv
		// (1+ξ)^{b−2} ≤ max(1, L^{b−2}): the 1 pairs with max log μ0.
		m = math.Max(m, p.maxLogPhi)
		u := m + lbb + p.logRW
		g.ub[i] = u
		S = math.Max(S, u)
	}
	if math.IsInf(S, -1) || math.IsNaN(S) {
		return math.Inf(-1), math.Inf(-1), 0
	}
	thr := S - momentSkip
	// Linear-scale shortcut φ·e^{−S}: safe when S > −500, since nodes whose
	// μ0 underflows (log μ0 < −708) then contribute below e^{−100} of the
	// integral; and S < 600 keeps e^{−S} finite.
	fast := S > -500 && S < 600
	eS := math.Exp(-S)
	var sK, cK, sE float64
	skipped := math.Inf(-1)
	mag := 0.0
	absB := math.Abs(b)
	for i := range g.panels {
		u := g.ub[i]
		if math.IsNaN(u) {
			continue
		}
		if u < thr {
			skipped = logmath.Add(skipped, u)
			g.perr[i] = 0
			continue
		}
		p := &g.panels[i]
		mag = math.Max(mag, absB*math.Max(math.Abs(p.lrMin), math.Abs(p.lrMax))+p.absLogPhi)
		var k, gs float64
		f := p.first
		rs, lrs, ds := g.r[f:f+15:f+15], g.lr[f:f+15:f+15], g.d[f:f+15:f+15]
		phis, lps := g.phi[f:f+15:f+15], g.logphi[f:f+15:f+15]
		wks, wgs := g.wk[f:f+15:f+15], g.wg[f:f+15:f+15]
		for j := range 15 {
			A := b * lrs[j]
			var s float64 // G(b, r) = (1+r)^b − 1 − b·r, or its scaled form
			big := false
			switch {
			case A <= 0.5 && A >= -0.5:
				// G = (e^A − 1 − A) − b·(r − log1p r): the first term by its
				// Taylor series, the second precomputed; for b ≥ 2 they
				// cancel by at most a factor b/(b−1) ≤ 2, for b < 0 not at
				// all.
				s = expm1mx(A) - b*ds[j]
			case A < 30:
				// exp(A) − 1 is within 2.5 ulp of expm1(A) for |A| > 0.5.
				s = (math.Exp(A) - 1) - b*rs[j]
			default:
				big = true
			}
			var v float64
			switch {
			case big && lrs[j] > 700:
				// (1+b·r)e^{−A} < (1+b)e^{(1−b)·log L} < e^{−690}: dropping it
				// rounds up.
				v = math.Exp(lps[j] + A - S)
			case big:
				v = math.Exp(lps[j]+A-S) * (1 - (1+b*rs[j])*math.Exp(-A))
			case s <= 0: // rounding; the true value is ≥ 0 and covered by the allowance
			case fast:
				v = phis[j] * eS * s
			default:
				v = math.Exp(lps[j]-S) * s
			}
			k += wks[j] * v
			gs += wgs[j] * v
		}
		sK, cK = search.Neumaier(sK, cK, k)
		e := math.Abs(k - gs)
		sE += e
		g.perr[i] = e
	}
	K := sK + cK
	logX = S + math.Log(K)
	// Error: Kronrod–Gauss estimate, rounding (node values carry about
	// eps·(|log μ0| + |b log L| + |S|) relative error, the series and expm1
	// forms a few hundred eps), skipped panels, and the two tails.
	const eps = 0x1p-52
	round := eps * (300 + 8*(mag+math.Abs(S))) * K
	logErr = S + math.Log(sE+round)
	logErr = logmath.Add(logErr, skipped)
	logErr = logmath.Add(logErr, g.tailLow(b))
	logErr = logmath.Add(logErr, g.tailHigh(b, zmax))
	return logX, logErr, S
}

// tailLow bounds log ∫_{−∞}^{zlo} μ0·G(b, r) with r ∈ [−q, 0) there.
func (g *momentGrid) tailLow(b float64) float64 {
	z := g.zlo
	s2 := g.sigma * g.sigma
	if !g.lowCached {
		g.lowCached = true
		g.lowCDF = logmath.NormCDF(z / g.sigma)
		g.lowPost = g.posterior(z)
		g.lowLogL = g.logL(z)
	}
	// Taylor: G ≤ |b(b−1)|/2 · q² · max(1, (1−q)^{b−2}).
	t := math.Log(math.Abs(b*(b-1))/2) + 2*g.logQ + math.Max(0, (b-2)*g.l1q) + g.lowCDF
	if b < 0 {
		// G ≤ L^b and μ0·L^b is log-concave: beyond a point where its log
		// slope s is positive, the tail is at most μ0(z)L(z)^b/s.
		if s := (-z + b*g.lowPost) / s2; s > 0 {
			lc := -z*z/(2*s2) - math.Log(g.sigma) - 0.5*math.Log(2*math.Pi) + b*g.lowLogL - math.Log(s)
			t = math.Min(t, lc)
		}
	}
	return t
}

// tailHigh bounds log ∫_Z^∞ μ0·G(b, r) for Z ≥ 1/2, where r ≥ 0 and
// G ≤ max(1,|b|)·L^c with c = max(b, 1), and log L(z) ≤ log L(Z) + (z−Z)/σ².
func (g *momentGrid) tailHigh(b, Z float64) float64 {
	if math.IsInf(Z, 1) {
		return math.Inf(-1)
	}
	s2 := g.sigma * g.sigma
	c := math.Max(b, 1)
	return math.Log(math.Max(1, math.Abs(b))) + c*g.logL(Z) - c*Z/s2 + c*c/(2*s2) +
		logmath.NormSF((Z-c)/g.sigma)
}

// moments fills out for the orders lambdas (q < 1).
func (g *momentGrid) moments(ctx context.Context, lambdas []float64, out []GaussianMoment) error {
	type job struct {
		b, zmax float64
		logX    float64
		logErr  float64
	}
	jobs := make([]job, 2*len(lambdas))
	for i, l := range lambdas {
		jobs[2*i] = job{b: -l, zmax: g.upperLimit(math.Max(0.5, 1+momentTailSD*g.sigma))}
		jobs[2*i+1] = job{b: l + 1, zmax: g.upperLimit(math.Max(0.5, l+1+momentTailSD*g.sigma))}
	}
	// Round 0 integrates every order on the initial partition; later rounds
	// bisect the panels that carry most of the error of the orders that
	// missed momentRelTol and integrate only those orders again.
	pending := make([]int, len(jobs))
	for i := range pending {
		pending[i] = i
	}
	type marked struct {
		panel int
		err   float64
	}
	var cand []marked
	var mark map[int]bool
	for round := 0; len(pending) > 0; round++ {
		clear(mark)
		next := pending[:0]
		for _, ji := range pending {
			if err := accounting.Canceled(ctx); err != nil {
				return err
			}
			jb := &jobs[ji]
			if math.IsInf(jb.zmax, 1) {
				jb.logX, jb.logErr = math.NaN(), math.Inf(1)
				continue
			}
			var S float64
			jb.logX, jb.logErr, S = g.integral(jb.b, jb.zmax, true)
			if math.IsInf(jb.logX, -1) {
				continue
			}
			var sE float64
			for _, e := range g.perr {
				sE += e
			}
			K := math.Exp(jb.logX - S)
			if sE <= momentRelTol*K {
				continue
			}
			next = append(next, ji)
			if mark == nil {
				mark = make(map[int]bool)
			}
			// Mark the largest contributors until they cover 90% of sE.
			cand = cand[:0]
			for pi, e := range g.perr {
				if e > 0 {
					cand = append(cand, marked{pi, e})
				}
			}
			sort.Slice(cand, func(i, j int) bool {
				if cand[i].err != cand[j].err {
					return cand[i].err > cand[j].err
				}
				return cand[i].panel < cand[j].panel
			})
			var covered float64
			for _, c := range cand {
				if covered >= 0.9*sE {
					break
				}
				mark[c.panel] = true
				covered += c.err
			}
		}
		pending = next
		if len(pending) == 0 || round == momentMaxRounds || len(g.panels) >= 4*momentMaxPanels {
			break
		}
		// Bisect the marked panels in place (left half replaces, right half
		// is appended); iterate in panel order for determinism.
		n := len(g.panels)
		for pi := 0; pi < n; pi++ {
			if !mark[pi] {
				continue
			}
			p := g.panels[pi]
			mid := 0.5 * (p.lo + p.hi)
			left := g.addPanel(p.lo, mid)
			g.panels[pi] = g.panels[left]
			g.panels = g.panels[:left]
			g.addPanel(mid, p.hi)
		}
	}
	for i, l := range lambdas {
		e1, e2 := jobs[2*i], jobs[2*i+1]
		m := GaussianMoment{Lambda: l}
		var up1, up2 float64
		m.LogE1, up1 = logOnePlus(e1.logX, e1.logErr)
		m.LogE2, up2 = logOnePlus(e2.logX, e2.logErr)
		if l == math.Trunc(l) && l <= momentBinomialMax && math.IsNaN(e2.logX) {
			// Beyond the partition: the exact binomial form of E2, with its
			// rounding bound.
			m.LogE2, _, up2 = binomialLogE2(g.sigma, g.q, int(l))
		} else if g.exactE2 && l == math.Trunc(l) && l <= momentBinomialMax {
			// An integer order evaluated alone (logMomentOne): the binomial
			// sum's bound where it is the tighter of the two upper bounds
			// on E2 (its rounding, ~1e-11 relative, against the
			// quadrature's certified 1e-7 to 1e-6; near a steep rise of α,
			// as at σ = 2.53, q = 4.633e-5, λ = 127, that difference moves
			// ε by 5e-5 relative).
			if v, _, bup := binomialLogE2(g.sigma, g.q, int(l)); bup < up2 {
				m.LogE2, up2 = v, bup
			}
		}
		m.Alpha = math.Max(m.LogE1, m.LogE2)
		up := math.Max(up1, up2)
		if math.IsNaN(m.Alpha) || math.IsInf(up, 1) || math.IsNaN(up) {
			// The integral failed for this order: bound it in closed form.
			m = boundMoment(g.sigma, g.q, l)
		} else {
			m.AbsError = up - m.Alpha
		}
		out[i] = m
	}
	return nil
}

// logOnePlus returns log(1+X) and the upper bound log(1+X+Err) from logs.
func logOnePlus(logX, logErr float64) (v, up float64) {
	if math.IsNaN(logX) {
		return math.NaN(), math.Inf(1)
	}
	v = log1pExp(logX)
	up = log1pExp(logmath.Add(logX, logErr))
	// Round the upper bound up by a few ulp of its own computation; for
	// q > 0 the true E − 1 is positive, so an upper bound that underflowed
	// to 0 becomes the smallest positive float.
	up += 4 * 0x1p-52 * math.Abs(up)
	if up <= 0 {
		up = math.SmallestNonzeroFloat64
	}
	return v, up
}
