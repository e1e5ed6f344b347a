package mechanism

import (
	"context"
	"math"
	"sync"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// allocRDP is the Rényi curve of one 1-out-of-t balls-in-bins group of the
// Gaussian (see [allocation]): with μ = 1/σ and S = Σ_i Y_i,
// Y_i = exp(μX_i − μ²/2), X_i independent N(0, 1), the log moment at
// order λ is the larger of the two directions'
//
//	remove: log E[(S/t)^{λ+1}]  (D_{λ+1}(P‖Q), dP/dQ = S/t under Q)
//	add:    log E[(t/S)^λ]      (D_{λ+1}(Q‖P))
//
// Remove is exact at integer λ + 1 (Feldman and Shenfeld 2025, arXiv
// 2502.08202, compute it by a recursion over the allocation; here the
// moments of a sum of independent terms by the binomial theorem,
// E[(A+B)^a] = Σ_j C(a, j)·E[A^j]·E[B^{a−j}], with E[Y^j] = e^{μ²j(j−1)/2},
// by binary powering over t; all terms positive). Between integers the
// chord of log E[(S/t)^α], convex in α (Hölder), bounds it from above.
//
// Add is bounded by [addMoment]. Each order takes the smaller of that and
// the unsampled Gaussian's λ(λ+1)μ²/2.
type allocRDP struct {
	mu float64
	t  int
}

func (r allocRDP) AbadiMoments() bool { return false }

func (r allocRDP) LogMoments(ctx context.Context, c *Cache, count float64, orders []float64) ([]float64, error) {
	return momentsAt(ctx, c, count, orders, r.LogMomentAt)
}

func (r allocRDP) LogMomentAt(ctx context.Context, _ *Cache, count, lambda float64) (float64, error) {
	if math.IsInf(lambda, 1) {
		return math.Inf(1), nil
	}
	rem := r.removeMoment(lambda + 1)
	add := r.addMoment(lambda)
	// The unsampled Gaussian's λ(λ+1)μ²/2 bounds both directions too
	// (joint convexity); it is the smaller where the grids are coarse.
	k := math.Min(math.Max(rem, add), lambda*(lambda+1)*r.mu*r.mu/2)
	if k < 0 {
		k = 0
	}
	// Rounding: a relative margin for the sums of positive terms.
	return count * (k + 1e-12*(1+math.Abs(k))), nil
}

// allocMomentsKey caches the remove moments per (μ, t).
type allocMomentsKey struct {
	mu float64
	t  int
}

var (
	allocMomentsMu sync.Mutex
	allocMoments   = map[allocMomentsKey][]float64{} // log E[S^a], a = 0..len−1
)

// maxMomentOrder is the largest integer Rényi order computed exactly;
// above it the remove moment is +Inf (a valid bound).
const maxMomentOrder = 1100

// logSumMoments returns log E[S^a] for a = 0..n, S the sum of t terms.
func logSumMoments(mu float64, t, n int) []float64 {
	key := allocMomentsKey{mu, t}
	allocMomentsMu.Lock()
	defer allocMomentsMu.Unlock()
	if m, ok := allocMoments[key]; ok && len(m) > n {
		return m
	}
	lc := make([]float64, n+1) // log a!
	for a := 1; a <= n; a++ {
		lc[a] = lc[a-1] + math.Log(float64(a))
	}
	one := make([]float64, n+1) // log E[Y^a]
	for a := range one {
		one[a] = mu * mu * float64(a) * float64(a-1) / 2
	}
	conv := func(x, y []float64) []float64 {
		out := make([]float64, n+1)
		for a := 0; a <= n; a++ {
			acc := math.Inf(-1)
			for j := 0; j <= a; j++ {
				acc = logmath.Add(acc, lc[a]-lc[j]-lc[a-j]+x[j]+y[a-j])
			}
			out[a] = acc
		}
		return out
	}
	var res []float64
	pw := one
	for k := t; k > 0; k >>= 1 {
		if k&1 == 1 {
			if res == nil {
				res = pw
			} else {
				res = conv(res, pw)
			}
		}
		if k > 1 {
			pw = conv(pw, pw)
		}
	}
	if len(allocMoments) > 64 {
		clear(allocMoments)
	}
	allocMoments[key] = res
	return res
}

// removeMoment returns an upper bound on log E[(S/t)^alpha], alpha ≥ 1.
func (r allocRDP) removeMoment(alpha float64) float64 {
	lo := math.Floor(alpha)
	if lo+1 > maxMomentOrder {
		return math.Inf(1)
	}
	m := logSumMoments(r.mu, r.t, int(lo)+1)
	lt := math.Log(float64(r.t))
	f := func(a int) float64 { return m[a] - float64(a)*lt }
	if alpha == lo {
		return f(int(lo))
	}
	w := alpha - lo
	return (1-w)*f(int(lo)) + w*f(int(lo)+1)
}

// allocAddGrid caches the u-grid of addMoment per (μ, t).
type allocAddGrid struct {
	u, logL []float64 // u_k and t·log L̄(u_k)
	yLo     float64
	logRho  float64 // log Q(Y < yLo)
}

var (
	allocAddMu    sync.Mutex
	allocAddCache = map[allocMomentsKey]*allocAddGrid{} // at most allocCacheSize
)

// The add direction's Laplace grid: u from addU0 to addU1 in ratio addR.
const (
	addU0 = 1e-9
	addR  = 1.004
	addZ  = 10.0 // y_lo = exp(−addZ·μ − μ²/2): Q(Y < y_lo) = Φ(−addZ)
	// addC is the relative width of the cells of L̄.
	addC = 0.004
)

// addMoment returns an upper bound on log E[(t/S)^m], m > 0. Split on
// whether some Y_i < y_lo. If one is, S ≥ S_{−i}, the sum of the other
// t − 1, and by the AM–GM inequality S_n ≥ n·exp(μX̄ − μ²/2), X̄ ~ N(0, 1/n),
// so E[(n/S_n)^m] ≤ exp(mμ²/2 + m²μ²/(2n)): that part is at most
// t·Φ(−addZ)·(t/(t−1))^m·exp(mμ²/2 + m²μ²/(2(t−1))). Otherwise, by
// s^{−m} = Γ(m)^{−1}∫₀^∞ u^{m−1}e^{−us}du and independence,
// E[S^{−m}; all Y_i ≥ y_lo] = Γ(m)^{−1}∫₀^∞ u^{m−1}·L(u)^t du with
// L(u) = E[e^{−uY}; Y ≥ y_lo] ≤ L̄(u): on each cell [a, a(1+addC)) from
// y_lo, e^{−uy} lies below its chord, so the cell contributes at most
// w_a·e^{−ua} + w_b·e^{−ub}, the weights keeping the cell's mass and mean
// (the mass above the grid is rounded down to its lower end). The
// integral is bounded on each interval of a geometric grid (see the
// loop), ∫₀^{u₀} ≤ u₀^m/m, and beyond the last point U by
// L̄(u) ≤ L̄(U)·e^{−(u−U)y_lo}.
func (r allocRDP) addMoment(m float64) float64 {
	if !(m > 0) {
		return 0
	}
	g := r.addGrid()
	t := float64(r.t)
	// The event some Y_i < y_lo.
	ev := math.Log(t) + g.logRho + m*math.Log(t/(t-1)) + m*r.mu*r.mu/2 + m*m*r.mu*r.mu/(2*(t-1))
	// The integral, in log space.
	acc := m*math.Log(addU0) - math.Log(m) // ∫₀^{u₀} u^{m−1} du, L̄ ≤ 1
	n := len(g.u)
	for k := 0; k+1 < n; k++ {
		u0, u1 := g.u[k], g.u[k+1]
		// ∫ u^{m−1} over the interval, exactly: (u1^m − u0^m)/m.
		lp := m*math.Log(u1) + logmath.Log1mExp(m*(math.Log(u0)-math.Log(u1))) - math.Log(m)
		if m < 1 {
			// Both factors decrease: L̄^t at its left end.
			acc = logmath.Add(acc, lp+g.logL[k])
			continue
		}
		// u^{m−1} increases and L̄^t decreases: by Chebyshev's integral
		// inequality ∫fg ≤ (∫f)(∫g)/(u1 − u0), and log L̄ is convex (a
		// Laplace transform), so L̄^t ≤ e^{chord} and ∫L̄^t ≤
		// L̄(u0)^t·(1 − e^{βh})/(−β), β the chord's slope, h = u1 − u0.
		h := u1 - u0
		beta := (g.logL[k+1] - g.logL[k]) / h
		lg := g.logL[k] + math.Log(h)
		if beta < 0 {
			lg = g.logL[k] + logmath.Log1mExp(beta*h) - math.Log(-beta)
		}
		acc = logmath.Add(acc, lp+lg-math.Log(h))
	}
	// Tail beyond U: ∫_U^∞ u^{m−1}e^{−c(u−U)}du with c = t·y_lo.
	U, c := g.u[n-1], t*g.yLo
	var tail float64
	switch {
	case m <= 1:
		tail = (m-1)*math.Log(U) - math.Log(c)
	case c > (m-1)/U:
		tail = (m-1)*math.Log(U) - math.Log(c-(m-1)/U)
	default:
		return math.Inf(1)
	}
	acc = logmath.Add(acc, tail+g.logL[n-1])
	main := m*math.Log(t) - logGamma(m) + acc
	return logmath.Add(main, ev)
}

func logGamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// addGrid builds (once per (μ, t)) the Laplace grid of addMoment.
func (r allocRDP) addGrid() *allocAddGrid {
	key := allocMomentsKey{r.mu, r.t}
	allocAddMu.Lock()
	v, ok := allocAddCache[key]
	allocAddMu.Unlock()
	if ok {
		return v
	}
	mu, t := r.mu, float64(r.t)
	yLo := math.Exp(-addZ*mu - mu*mu/2)
	yMax, _ := allocGrid(mu)
	// Cells [a, a·(1+addC)) from y_lo to y_max: relative widths, so the
	// chord of e^{−uy} on each is within (ua·addC)²/8·e^{−ua} ≤ addC²/15 of
	// it, at every u.
	var a, c []float64
	prev := yLo
	for prev < yMax {
		b := prev * (1 + addC)
		// e^{−uy} is convex in y: below its chord on the cell, so the
		// cell's part of L(u) is at most w_a·e^{−ua} + w_b·e^{−ub} with the
		// weights that keep the cell's mass and mean at its two ends.
		m0, m1 := cellMoments(mu, prev, b, prev)
		wb := math.Min(math.Max(m1/(b-prev), 0), m0)
		a, c = append(a, prev, b), append(c, m0-wb, wb)
		prev = b
	}
	top := (math.Log(prev) + mu*mu/2) / mu
	a, c = append(a, prev), append(c, 0.5*math.Erfc(top/math.Sqrt2))
	// U: far enough that the tail bound holds up to order 1000
	// (c·U = t·y_lo·U ≥ 2000).
	U := math.Max(2000/(t*yLo), 1e4)
	g := &allocAddGrid{yLo: yLo, logRho: logmath.NormCDF(-addZ)}
	for u := addU0; ; u *= addR {
		if u > U {
			u = U
		}
		// The points ascend: once u·a_j passes 745 every further term
		// underflows (at most e^{−745} each, below what a float64 keeps;
		// their sum, less than e^{−745}·(cells), is added back).
		var s kahan
		j := 0
		for ; j < len(a) && u*a[j] < 745; j++ {
			s.add(c[j] * math.Exp(-u*a[j]))
		}
		rest := float64(len(a)-j) * 0x1p-1074
		lL := t * math.Log(s.sum()+rest)
		g.u, g.logL = append(g.u, u), append(g.logL, lL)
		if u >= U {
			break
		}
	}
	allocAddMu.Lock()
	if len(allocAddCache) >= allocCacheSize {
		clear(allocAddCache)
	}
	allocAddCache[key] = g
	allocAddMu.Unlock()
	return g
}

// momentsAt evaluates at at each order: LogMoments for the curves that
// are computed one order at a time.
func momentsAt(ctx context.Context, c *Cache, count float64, orders []float64, at func(context.Context, *Cache, float64, float64) (float64, error)) ([]float64, error) {
	out := make([]float64, len(orders))
	for i, l := range orders {
		v, err := at(ctx, c, count, l)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
