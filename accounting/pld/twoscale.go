package pld

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/internal/search"
)

// twoScaleBound bounds δ(ε) for T identical steps of one direction whose
// privacy loss lives on two scales: a bulk of tiny losses and rare large
// ones (a small sampling rate: with σ = 0.742, q = 2.1e-9, T = 7512 the
// bulk spreads over 5e-7 while single losses reach 1e-4, and ε ≈ 3.5e-6).
// One uniform grid fine enough for the bulk cannot span the large losses;
// here each step's loss is split at a point a into a bulk
// part β (losses ≤ a, a fine grid) and a jump part γ (losses ≥ a, a coarse
// grid), both discretised as in discretise (connect the dots above, a
// merge below; the cells of both grids partition the loss line, so each
// step stays dominating, resp. dominated). Composing T steps, the number k
// of steps drawn from γ is binomial:
//
//	μ = Σ_k C(T,k)·β^{*(T−k)} * γ^{*k},
//	δ(ε) = Σ_k C(T,k)·γ̄^k·Σ_j g_j·D_{T−k}(ε − y_j),
//
// where g is γ^{*k}/γ̄^k (mass g_j at loss y_j) and D_n(x) = ∫(1 −
// e^{x−s})₊ dβ^{*n}(s). β^{*n} and the normalised γ^{*k} are composed by
// FFT (composeParts, with its certified error terms); k runs to K, the
// binomial remainder bounds the rest. The terms of 4 or more jumps, a
// small share of δ, take the bulk of 3 jumps shifted (bulkAt) and γ on a
// coarser grid (coarsen). D is bounded three ways, each sound,
// and the tightest is used (see bulk.d): the FFT sum above x, the
// exact totals of β^{*n} less the FFT sum below x (for x below the bulk,
// where the jumps decide δ), and a Chernoff bound (far above it). This
// keeps every error term small next to δ where a single grid's FFT
// round-off would not (δ = 2.6e-12 there).
type twoScaleBound struct {
	steps int
	bulk  []*bulk   // bulk[k]: β^{*(T−k)}, k = 0..min(K, twoScaleBulks−1) (see bulkAt)
	jumps []*jumps  // jumps[k]: γ^{*k}/γ̄^k, k = 1..K (jumps[0] unused)
	logW  []float64 // log(C(T,k)·γ̄^k), k = 0..K
	rest  float64   // upper: the binomial remainder and the +∞ atom
	upper bool      // an upper (dominating) or lower (dominated) bound
	// step is β's lowest loss (upper) or its highest (lower), and bBar
	// its mass Σβ: what bulkAt's shift needs.
	step, bBar float64
	// calls is the work of the last delta in bulk.d evaluations (see
	// bulk.jumpSum).
	calls int
}

// twoScaleK caps the number of jumps composed.
const twoScaleK = 12

// twoScaleBulks is how many bulks β^{*(T−k)} are composed, k = 0, 1, …;
// the terms of more jumps take the last one, shifted (see bulkAt).
const twoScaleBulks = 4

// bulkAt returns the bulk that bounds D_{T−k}, the bulk of term k, and j:
// bulk[k] itself (j = 0), or beyond the bulks made the last one,
// bulk[k0] with k0 = k − j, by β's range: every loss t of β lies in [lo,
// hi], and D is decreasing, so D_n(x) = Σ_t β(t)·D_{n−1}(x − t) lies
// between β̄·D_{n−1}(x − lo) and β̄·D_{n−1}(x − hi), and j steps of it give
//
//	D_{n}(x + j·hi)/β̄^j ≤ D_{n−j}(x) ≤ D_{n}(x + j·lo)/β̄^j:
//
// the upper bound takes the right side at n = T − k0 (step = lo), the
// lower the left (step = hi); see shift. This saves the composition (an
// FFT of the bulk's window, 43,200 points at σ 1, q 1e-4, T 1e5) of each
// term beyond the fourth, whose share of δ is small: at that setting and
// δ 1e-15, 9.5e-10, 4.6e-13 and 1.9e-16 of δ for 4, 5 and 6 jumps, and
// the shift by lo (−1.1e-4 per step) raises them by 0.3% per step, the
// one by hi (the split, 0.016) lowers them by a third; at σ 0.5, q 1e-4,
// T 1000, δ 1e-15, 2.8e-8 for 4 jumps, lowered by a sixth. The width
// sweep's 180 brackets are the same to 6 digits.
func (ts *twoScaleBound) bulkAt(k int) (*bulk, int) {
	k0 := min(k, len(ts.bulk)-1)
	return ts.bulk[k0], k - k0
}

// shift returns, for j steps beyond the last bulk (see bulkAt), the ε at
// which that bulk bounds the sum of term k over the jumps jp (eps +
// j·step, rounded the safe way: down for the upper bound, up for the
// lower, by 4u of the magnitudes, those of the jumps' losses y included,
// which covers the roundings of eps + j·step and of each x = that − y
// against eps − y + j·step), and 1/β̄^j rounded the bound's way (scale)
// and up (scaleUp, for the error term that the lower bound subtracts): j
// divisions (u each) of β̄, a compensated sum (within 2u), 8u per step in
// all.
func (ts *twoScaleBound) shift(eps float64, j int, jp *jumps) (e, scale, scaleUp float64) {
	const u = 0x1p-53
	d := float64(j) * ts.step
	yMax := math.Max(math.Abs(jp.y0), math.Abs(jp.y0+float64(len(jp.g))*jp.h))
	m := 4 * u * (math.Abs(eps) + math.Abs(d) + yMax)
	inv := 1.0
	for range j {
		inv /= ts.bBar
	}
	r := 8 * float64(j+1) * u
	if ts.upper {
		return eps + d - m, inv * (1 + r), inv * (1 + r)
	}
	return eps + d + m, inv * (1 - r), inv * (1 + r)
}

// bulk is β^{*n} composed on the fine grid with what D needs. Every
// sum it keeps has nonnegative terms, so its rounding is relative to the
// sum itself (see d).
type bulk struct {
	c          *composition
	h, s0      float64   // loss of cell i: s0 + i·h
	suf0, suf2 []float64 // Σ_{k≥i} c_k, Σ_{k≥i} c_k·(1 − e^{s_i−s_k})
	pre0, pre2 []float64 // Σ_{k<i} c_k, Σ_{k<i} c_k·(e^{s_{i−1}−s_k} − 1); nil when e^{width} overflows
	logA, logB float64   // log Σ β^{*n} and log Σ β^{*n}·e^{−s}, exact from β
	rhoA, rhoB float64   // relative error bounds of e^{logA}, e^{logB}
	slack      float64   // relative rounding of the suffix and prefix sums
	sMin       float64   // the lowest loss β^{*n} can have
	logChern   []float64 // log of the Chernoff bound on D at s_i (upper only)
	// a and chern are e^{logA} and e^{logChern[i]}, made once (d takes
	// them at every call).
	a     float64
	chern []float64
	// The exponentials of d as products (see expTables): e^{−i·h} =
	// eHi[i>>expBits]·eLo[i&expMask], and eB0 = e^{s0 + logB}, eMin0 =
	// e^{s0 − sMin}; tabP, tabB and tabMin bound the relative error of
	// the products e^{x−s0}·e^{−i·h}, e^{x−s0}·eB0 and e^{x−s0}·eMin0
	// against the exponentials they stand for, less that of e^{x−s0}
	// itself. eLo is nil where they are not made.
	eLo, eHi           []float64
	eB0, eMin0         float64
	tabP, tabB, tabMin float64
	// ds0 is u·(2·m·h + |s0|)·1.01, the part of d's cell-split distance
	// (see dAt) that does not depend on x.
	ds0 float64
}

// expBits sets the split of the tables of e^{−i·h}: 2^expBits entries
// in eLo, m/2^expBits in eHi, about 2√m exponentials for m cells.
const (
	expBits = 8
	expMask = 1<<expBits - 1
)

// jumps is γ^{*k}/γ̄^k: mass g[j] at loss y0 + j·h, with the FFT's
// error terms (0 for k = 1, placed exactly).
type jumps struct {
	g      []float64
	y0, h  float64
	errSum float64 // bound on |Σ_j (ĝ_j − g_j)·f_j| for 0 ≤ f ≤ 1, and the mass outside
	// ey[j] is e^{−y_j}, y_j = y0 + j·h (made on first use by jumpSum; nil
	// until then, or when one is not finite).
	ey []float64
}

// newTwoScaleBound discretises pair (one direction, tails cut at eta) split at
// a with bulk grid hB and jump grid hJ, and composes steps of it for the
// upper or lower bound, with k up to the first K whose binomial remainder
// is below restMax.
func newTwoScaleBound(ctx context.Context, pair mechanism.Pair, steps int, eta, a, hB, hJ, restMax float64, upper bool) (*twoScaleBound, error) {
	lLo, lHi := pair.Truncation(eta)
	if !(lLo < a && a < lHi) {
		return nil, errTooLarge
	}
	kA := math.Round(a / hB)
	a = kA * hB // a point of the bulk grid
	gb, err := newGridSpan(ctx, pair, hB, eta, 0, math.Floor(lLo/hB), kA)
	if err != nil {
		return nil, err
	}
	var beta, gamma pmf
	if upper {
		beta = gb.upperSpan(true, false)
		offJ := a - math.Floor(a/hJ)*hJ
		kS := math.Round((a - offJ) / hJ)
		for kS*hJ+offJ > a {
			offJ = math.Nextafter(offJ, math.Inf(-1)) // no gap above a
		}
		gj, err := newGridSpan(ctx, pair, hJ, eta, offJ, kS, math.Ceil((lHi-offJ)/hJ))
		if err != nil {
			return nil, err
		}
		gamma = gj.upperSpan(false, true)
	} else {
		gb.dropTop = true
		if beta, err = gb.lower(ctx); err != nil {
			return nil, err
		}
		stop := beta.stop
		if !(stop > lLo) || stop >= lHi {
			stop = a
		}
		offJ := stop - math.Floor(stop/hJ)*hJ
		kS := math.Round((stop - offJ) / hJ)
		for kS*hJ+offJ < stop {
			offJ = math.Nextafter(offJ, math.Inf(1)) // the jump cells start at or above stop
		}
		gj, err := newGridSpan(ctx, pair, hJ, eta, offJ, kS, math.Ceil((lHi-offJ)/hJ))
		if err != nil {
			return nil, err
		}
		if gamma, err = gj.lower(ctx); err != nil {
			return nil, err
		}
	}
	return composeTwoScale(ctx, beta, gamma, hB, hJ, steps, restMax, upper)
}

// composeTwoScale composes steps of β + γ (+ the +∞ atom of γ).
func composeTwoScale(ctx context.Context, beta, gamma pmf, hB, hJ float64, steps int, restMax float64, upper bool) (*twoScaleBound, error) {
	bBar, gBar := totalMass(beta.p), totalMass(gamma.p)
	if !(gBar > 0 && bBar > 0) {
		return nil, errTooLarge // one scale only: the grid's bounds serve
	}
	ts := &twoScaleBound{steps: steps, upper: upper, bBar: bBar}
	if upper {
		ts.step = float64(beta.lo)*hB + beta.off
	} else {
		ts.step = float64(beta.lo+len(beta.p)-1)*hB + beta.off
	}
	T := float64(steps)
	// log(C(T,k)·γ̄^k·β̄^{T−k})-free weights: β^{*(T−k)} carries β̄^{T−k}.
	logG := math.Log(gBar)
	var logC float64 // log C(T,k)
	K := 0
	for k := 0; k <= min(steps, twoScaleK); k++ {
		if k > 0 {
			logC += math.Log((T - float64(k-1)) / float64(k))
		}
		ts.logW = append(ts.logW, logC+float64(k)*logG)
		K = k
		// Remainder Σ_{j>k} C(T,j)·γ̄^j·β̄^{T−j}: the ratio of consecutive
		// terms, (T−j)/(j+1)·γ̄/β̄, decreases in j.
		if k == steps {
			break
		}
		next := logC + math.Log((T-float64(k))/float64(k+1)) + float64(k+1)*logG + (T-float64(k+1))*math.Log(bBar)
		r := (T - float64(k+1)) / float64(k+2) * gBar / bBar
		if r < 1 {
			rest := math.Exp(next) / (1 - r)
			if rest <= restMax || k == twoScaleK {
				if upper {
					ts.rest = rest * (1 + 1e-10)
				}
				break
			}
		} else if k == twoScaleK {
			return nil, errTooLarge
		}
	}
	if upper && gamma.inf > 0 {
		ts.rest += infPaths(bBar+gBar, gamma.inf, T)
	}
	for k := 0; k <= min(K, twoScaleBulks-1); k++ {
		if err := accounting.Canceled(ctx); err != nil {
			return nil, err
		}
		b, err := newBulk(ctx, beta, hB, steps-k, upper)
		if err != nil {
			return nil, err
		}
		ts.bulk = append(ts.bulk, b)
	}
	ts.jumps = make([]*jumps, K+1)
	gn := gamma
	gn.p = make([]float64, len(gamma.p))
	for i, v := range gamma.p {
		gn.p[i] = v / gBar
	}
	gn.inf = 0
	for k := 1; k <= K; k++ {
		if k == 1 {
			ts.jumps[1] = &jumps{g: gn.p, y0: float64(gn.lo)*hJ + gn.off, h: hJ}
			continue
		}
		g, h := gn, hJ
		if k >= twoScaleCoarseJumps {
			g, h = coarsen(gn, twoScaleJumpCoarsen, upper), float64(twoScaleJumpCoarsen)*hJ
		}
		c, err := composeParts(ctx, []part{{g, k}}, h, false, 0)
		if err != nil {
			return nil, err
		}
		ts.jumps[k] = &jumps{g: c.c, y0: c.loss(0), h: h,
			errSum: c.e2*math.Sqrt(float64(len(c.c))) + c.tailTop + c.tailBot}
	}
	return ts, nil
}

// twoScaleCoarseJumps and twoScaleJumpCoarsen: the jumps of that many
// steps or more are composed on a jump grid that many times coarser
// (coarsen), an FFT of a quarter of the points (18,225–20,480 → 4,608–
// 5,120 at σ 1, q 1e-4, T 1e5, δ 1e-15) whose sums the bounds then take
// over a quarter of the cells. Each jump moves by less than 4 fine cells, so the term of k
// jumps moves by less than its share of δ times e^{|d log δ/dε|·4k·hJ} − 1:
// 2% of 9.5e-10 of δ for 4 jumps at σ 1, q 1e-4, T 1e5, δ 1e-15 (hJ
// 5.7e-5), less for more.
const (
	twoScaleCoarseJumps = 4
	twoScaleJumpCoarsen = 4
)

// coarsen returns p on the grid r times as coarse, with the same offset
// (fine loss index L·h + off, coarse m·(r·h) + off): each cell's mass
// moved up to the coarse point at or above it (up: the coarse steps then
// dominate, and so does every sum of them, whose D(ε − y) only grows) or
// down to the one at or below it (dominated). A coarse mass sums at most
// r fine ones, a relative rounding of r·u, which the weights' 1e-10 covers
// (see delta).
func coarsen(p pmf, r int, up bool) pmf {
	idx := func(l int) int { // the coarse index of fine index l
		m := l / r
		if l%r != 0 && (l < 0) != up {
			if up {
				m++
			} else {
				m--
			}
		}
		return m
	}
	lo, hi := idx(p.lo), idx(p.lo+len(p.p)-1)
	q := make([]float64, hi-lo+1)
	for i, v := range p.p {
		q[idx(p.lo+i)-lo] += v
	}
	return pmf{lo: lo, off: p.off, p: q, inf: p.inf}
}

// newBulkUpper bounds δ(ε) from above for T identical steps of a
// direction with no large losses above (the add direction of a small
// sampling rate, whose loss is at most −log(1 − q)): the P-mass below a
// (T·P(L ≤ a) small) is moved up to a, which dominates, and the rest is
// discretised on the fine grid hB and composed as one bulk (bulk).
func newBulkUpper(ctx context.Context, pair mechanism.Pair, steps int, eta, a, hB float64) (*twoScaleBound, error) {
	_, lHi := pair.Truncation(eta)
	if !(a < lHi) {
		return nil, errTooLarge
	}
	gb, err := newGridSpan(ctx, pair, hB, eta, 0, math.Floor(a/hB), math.Ceil(lHi/hB))
	if err != nil {
		return nil, err
	}
	beta := gb.upperSpan(true, true)
	ts := &twoScaleBound{steps: steps, upper: true, logW: []float64{0}, jumps: []*jumps{nil}}
	if beta.inf > 0 {
		ts.rest = infPaths(totalMass(beta.p), beta.inf, float64(steps))
	}
	b, err := newBulk(ctx, beta, hB, steps, true)
	if err != nil {
		return nil, err
	}
	ts.bulk = []*bulk{b}
	return ts, nil
}

// infPaths bounds the mass of the T-step paths through a +∞ atom of
// mass inf beside finite mass s: (s + inf)^T − s^T, rounded up.
func infPaths(s, inf, T float64) float64 {
	return math.Exp(T*math.Log(s)) * math.Expm1(T*math.Log1p(inf/s)) * (1 + 1e-10)
}

// totalMass returns Σ p (compensated).
func totalMass(p []float64) float64 {
	var s, comp float64
	for _, v := range p {
		s, comp = search.Neumaier(s, comp, v)
	}
	return s + comp
}

// delta returns the bound on δ(eps).
func (ts *twoScaleBound) delta(eps float64) float64 {
	// Relative rounding of a weight e^{logW} (log C summed over k terms,
	// k·log γ̄) and of the normalised γ.
	const wRel = 1e-10
	sum := ts.rest
	ts.calls = 0
	for k, lw := range ts.logW {
		b, j := ts.bulkAt(k)
		var h float64
		if k == 0 {
			h = b.d(eps, ts.upper)
			ts.calls++
		} else {
			jp := ts.jumps[k]
			e, scale, scaleUp := eps, 1.0, 1.0
			if j > 0 {
				e, scale, scaleUp = ts.shift(eps, j, jp)
			}
			var calls int
			h, calls = b.jumpSum(jp, e, ts.upper)
			h *= scale
			ts.calls += calls
			// The error of g and its mass outside the window, against D ≤
			// Σβ^{*(T−k)} = Σβ^{*n}/β̄^j.
			if ts.upper {
				h += jp.errSum * b.a * scaleUp
			} else {
				h -= jp.errSum * b.a * scaleUp
			}
		}
		if ts.upper {
			sum += math.Exp(lw) * h * (1 + wRel)
		} else if h > 0 {
			sum += math.Exp(lw) * h * (1 - wRel)
		}
	}
	if math.IsNaN(sum) {
		if ts.upper {
			return 1
		}
		return 0
	}
	return math.Max(0, math.Min(1, sum))
}

// newBulk composes n steps of beta on grid h.
func newBulk(ctx context.Context, beta pmf, h float64, n int, upper bool) (*bulk, error) {
	b := &bulk{h: h}
	nn := float64(n)
	lo := float64(beta.lo)*h + beta.off
	b.sMin = nn * lo
	b.logA, b.rhoA = logPowSum(beta.p, nil, n)
	b.a = math.Exp(b.logA)
	em := make([]float64, len(beta.p))
	for i := range em {
		em[i] = math.Expm1(-(lo + float64(i)*h))
	}
	b.logB, b.rhoB = logPowSum(beta.p, em, n)
	if n == 0 {
		b.c = &composition{h: h, c: []float64{1}}
		b.s0 = 0
	} else {
		c, err := composeParts(ctx, []part{{beta, n}}, h, false, 0)
		if err != nil {
			return nil, err
		}
		b.c, b.s0 = c, c.loss(0)
	}
	c := b.c.c
	m := len(c)
	const u = 0x1p-53
	// Each recurrence step rounds a product and a sum (and the factors
	// carry one rounding each): at most 4u per step, relative.
	b.slack = 4 * float64(m+4) * u
	b.suf0 = make([]float64, m+1)
	b.suf2 = make([]float64, m+1)
	emh, omh := math.Exp(-h), -math.Expm1(-h)
	for i := m - 1; i >= 0; i-- {
		b.suf0[i] = b.suf0[i+1] + c[i]
		// 1 − e^{s_i−s_k} = (1 − e^{−h}) + e^{−h}(1 − e^{s_{i+1}−s_k}).
		b.suf2[i] = omh*b.suf0[i+1] + emh*b.suf2[i+1]
	}
	if float64(m)*h < 600 {
		b.pre0 = make([]float64, m+1)
		b.pre2 = make([]float64, m+1)
		eh, emh1 := math.Exp(h), math.Expm1(h)
		for i := 1; i <= m; i++ {
			b.pre0[i] = b.pre0[i-1] + c[i-1]
			// e^{s_{i−1}−s_k} − 1 = (e^h − 1) + e^h(e^{s_{i−2}−s_k} − 1).
			b.pre2[i] = emh1*b.pre0[i-1] + eh*b.pre2[i-1]
		}
	}
	if upper && n > 0 {
		b.chernoff(beta, h, nn)
	}
	b.ds0 = (2*float64(m)*h + math.Abs(b.s0)) * u * 1.01
	b.expTables()
	return b, nil
}

// expTables makes the tables with which d forms its exponentials as
// products with e^{x−s0}, one multiplication each instead of an exp
// (they were two thirds of d's cost), where the window is narrow enough
// that e^{−i·h} stays far from underflow (m·h < 600, as for the prefix
// sums) and e^{s0 + logB} and e^{s0 − sMin} are finite and normal.
//
// A product e0·eHi[i>>expBits]·eLo[i&expMask] stands for e^{x − s_i},
// s_i = s0 + i·h rounded as d rounds it: each table entry is within
// 2u + u·m·h of its exponential (math.Exp is within 1 ulp; its argument
// r·h or q·2^expBits·h is rounded), each product adds u, and s_i differs
// from s0 + i·h (exact) by at most u·(i·h + |s_i|) ≤ u·(2m·h + |s0|),
// which enters the exponential as a relative error of the same size (to
// first order; the 1.01 covers the rest). eB0 and eMin0 carry 2u, the
// rounding of their arguments, u·|s0 + logB| and u·|s0 − sMin|, and the
// product's u.
func (b *bulk) expTables() {
	const u = 0x1p-53
	m := len(b.c.c)
	width := float64(m) * b.h
	if m == 0 || !(width < 600) {
		return
	}
	eB0, eMin0 := math.Exp(b.s0+b.logB), math.Exp(b.s0-b.sMin)
	if !(eB0 >= 0x1p-1000 && eB0 <= 0x1p1000) {
		return
	}
	if !(eMin0 >= 0x1p-1000 && eMin0 <= 0x1p1000) {
		eMin0 = 0 // d takes math.Exp(x − sMin) (the add direction's sMin is −1637 at T 1e5)
	}
	eLo := make([]float64, expMask+1)
	for r := range eLo {
		eLo[r] = math.Exp(-float64(r) * b.h)
	}
	eHi := make([]float64, (m>>expBits)+1)
	for q := range eHi {
		eHi[q] = math.Exp(-float64(q<<expBits) * b.h)
	}
	b.eLo, b.eHi, b.eB0, b.eMin0 = eLo, eHi, eB0, eMin0
	b.tabP = (6 + 4*width + math.Abs(b.s0)) * u * 1.01
	b.tabB = (3 + math.Abs(b.s0+b.logB)) * u * 1.01
	b.tabMin = (3 + math.Abs(b.s0-b.sMin)) * u * 1.01
}

// logPowSum returns n·log Σ_i p_i(1 + e_i) (e nil: all 0) and a bound
// on the relative error of its exponential. The sum less 1 is kept
// exactly as a compensated pair and passed to log1p, so that the error
// is relative to the logarithm (n·|log| can be far below n·u for a sum
// near 1), not to the sum.
func logPowSum(p, e []float64, n int) (logS, rho float64) {
	const u = 0x1p-53
	var s, comp, abs float64
	for i, v := range p {
		s, comp = search.Neumaier(s, comp, v)
		if e != nil {
			t := v * e[i]
			s, comp = search.Neumaier(s, comp, t)
			abs += math.Abs(t)
		}
	}
	total := s + comp
	d := (s - 1) + comp // s − 1 is exact for s in [0.5, 2]
	if !(s >= 0.5 && s <= 2) {
		d = total - 1
		abs += total // the subtraction's rounding
	}
	l := math.Log1p(d)
	// |d̂ − d| ≤ u|d| + 3u·Σ|t_i| + the compensated sum's second-order term.
	errD := u*math.Abs(d) + 3*u*abs + 4*u*u*float64(len(p)+1)*(total+abs)
	errL := 2*u*math.Abs(l) + errD/math.Max(1+d-errD, 0x1p-1022)
	nn := float64(n)
	logS = nn * l
	return logS, math.Expm1(nn*errL+2*u*math.Abs(logS)) + 2*u
}

// chernoff fills logChern: D_n(x) ≤ E(S − x)₊ ≤ e^{K(λ) − λx}/(eλ) for
// every λ > 0 ((z)₊ ≤ e^{λz}/(eλ)), K(λ) = n·log Σ β_i e^{λ s_i}.
func (b *bulk) chernoff(beta pmf, h, n float64) {
	width := math.Max(b.h*float64(len(b.c.c)), h)
	var lams, ks, logLams []float64
	for j := 0; j <= 120; j++ {
		lam := math.Exp2(float64(j)/3) / width
		k := n * (logMGF(&beta, h, lam) + lam*beta.off)
		if math.IsNaN(k) || math.IsInf(k, 0) {
			break
		}
		lams = append(lams, lam)
		ks = append(ks, k+1e-9*(1+math.Abs(k))) // rounding of the Horner sum
		// log λ once per λ, not once per cell and λ (it was 85% of
		// the two-scale bounds' cost at σ 1, q 1e-4, T 1e4, δ 1e-10).
		logLams = append(logLams, math.Log(lam))
	}
	b.logChern = chernoffMin(lams, ks, logLams, b.s0, b.h, len(b.c.c))
	b.chern = make([]float64, len(b.logChern))
	for i, v := range b.logChern {
		b.chern[i] = math.Exp(v)
	}
}

// chernoffMin returns, at each of the m losses s_i = s0 + i·h, the least
// over j of v_j(s_i) = ks[j] − lams[j]·s_i − 1 − logLams[j] (+Inf when
// there is no λ), for lams increasing and ks[j] = K(lams[j]) with K
// convex. v_j(s) is then convex in λ (K and −log λ are), so along the λ_j
// it falls to its minimum and rises after it, and the λ of the minimum
// does not decrease as s grows (∂v/∂s = −λ): one walk over the losses and
// the λ_j finds every minimum, where a scan of every λ per loss was 11% of
// the σ search's CPU at σ 1, q 1e-4, T 1e5, δ 1e-15. Every λ gives a
// bound, so a walk stopped by a rounding-level bump (ks carry a slack of
// 1e-9) still gives one.
func chernoffMin(lams, ks, logLams []float64, s0, h float64, m int) []float64 {
	out := make([]float64, m)
	if len(lams) == 0 {
		for i := range out {
			out[i] = math.Inf(1)
		}
		return out
	}
	v := func(j int, s float64) float64 { return ks[j] - lams[j]*s - 1 - logLams[j] }
	j := 0
	for i := range out {
		s := s0 + float64(i)*h
		best := v(j, s)
		// (ks, λ and s are finite: no NaN in the comparisons.)
		for j+1 < len(lams) {
			next := v(j+1, s)
			if next > best {
				break
			}
			j, best = j+1, next
		}
		out[i] = best
	}
	return out
}

// d returns an upper or lower bound on D(x) = ∫(1 − e^{x−s})₊ dβ^{*n}(s).
//
// (i) Σ_{s_i>x} ĉ_i(1 − e^{x−s_i}): the FFT's error is at most e2·√cnt
// (Cauchy–Schwarz), the mass outside the window at most tailTop + tailBot,
// and aliased mass only raises ĉ.
// (ii) A − e^x·B + Σ_{s_i≤x} ĉ_i(e^{x−s_i} − 1), with A, B the exact
// totals Σβ^{*n} = (Σβ)^n and Σβ^{*n}e^{−s} = (Σβe^{−s})^n: the same
// error terms enter weighted by e^{x−s} − 1, small when x is near or below
// the bulk.
// (iii) (upper) the Chernoff bound at the grid point at or below x.
// The weights are split so that every sum has nonnegative terms: (i) as
// (1 − e^{x−s_i})·suf0 + e^{x−s_i}·suf2, (ii) as (e^{x−s_{i−1}} − 1)·pre0 +
// e^{x−s_{i−1}}·pre2; their rounding is then slack times the value.
func (b *bulk) d(x float64, upper bool) float64 {
	// math.Exp's ulp and the rounding of its argument.
	const u = 0x1p-53
	return b.dAt(x, math.Exp(x-b.s0), (2+math.Abs(x-b.s0))*u, upper)
}

// dAt is d at x given e0, e^{x−s0} within relative error rho0 (e0
// between 2^−1000 and 2^1000 for the tables to be used; see expTables):
// every exponential of d is e0 times a table entry there, and math.Exp
// of its argument elsewhere (within 2u + u·|argument|, the argument
// rounded). Each of them, call it E, is within ρ·E of the exponential it
// stands for (rP for P = e^{x−s_i} and Q = e^{x−s_{i−1}}, rB for e^x·B,
// r0 for e^{x−s0}, rMin for e^{x−sMin}), and each bound takes its share of
// that error, |ΔE|·(the sum E multiplies), in its margin: rP·P·(suf0 +
// suf2) in (i), rP·Q·(pre0 + pre2) and rB·e^x·B in (ii), and upper bounds
// on the factors e^{x−s0} − 1 and e^{x−sMin} − 1 of the error terms.
// These margins are a few ulps of the sums (A ≈ 1 in (ii)), far below the
// FFT's e2 (2e-11 at σ 1, q 1e-4, T 1e5) that (i) carries.
func (b *bulk) dAt(x, e0, rho0 float64, upper bool) float64 {
	const u = 0x1p-53
	c := b.c
	m := len(c.c)
	// i: the first cell with loss > x.
	var i int
	switch {
	case x < b.s0:
		i = 0
	case !(x-b.s0 < float64(m)*b.h):
		i = m
	default:
		// (x − s0)/h may round up to m just below the window's top, where
		// every cell lies at or below x: i is m at most.
		i = min(int(math.Floor((x-b.s0)/b.h))+1, m)
	}
	for i < m && b.s0+float64(i)*b.h <= x {
		i++
	}
	for i > 0 && b.s0+float64(i-1)*b.h > x {
		i--
	}
	tab := b.eLo != nil && e0 >= 0x1p-1000 && e0 <= 0x1p1000
	// The relative errors of P and Q, e^x·B, e^{x−s0} and e^{x−sMin}.
	ax := 3 + math.Abs(x)
	rP := (ax + math.Abs(b.s0) + float64(m)*b.h) * u * 1.01
	rB := (ax + math.Abs(b.logB)) * u * 1.01
	r0 := (ax + math.Abs(b.s0)) * u * 1.01
	rMin := (ax + math.Abs(b.sMin)) * u * 1.01
	if tab {
		rP, rB, r0 = 1.01*rho0+b.tabP, 1.01*rho0+b.tabB, 1.01*rho0
		if b.eMin0 > 0 {
			rMin = 1.01*rho0 + b.tabMin
		}
	}
	// expAt returns e^{x − s_k}, s_k = s0 + k·h as rounded below.
	expAt := func(k int) float64 {
		if tab {
			return e0 * b.eHi[k>>expBits] * b.eLo[k&expMask]
		}
		return math.Exp(x - (b.s0 + float64(k)*b.h))
	}
	tails := c.tailTop + c.tailBot
	// The cells are split at x by their rounded losses s0 + k·h, each
	// within ds of the exact one: a cell within ds of x may lie on the
	// other side, and its term, c_k·(1 − e^{x−s_k})₊ in (i) or c_k·(e^{x−s_k}
	// − 1) in (ii), is then off by at most c_k·ds (its mass with the FFT's
	// error). At the top of a window of exactly placed cells the upper
	// bound was 0 where D is 4e-17 (TestTwoScaleBulkCellSplit).
	ds := b.ds0 + math.Abs(x)*(u*1.01)
	var split float64
	if (i > 0 && b.s0+float64(i-1)*b.h > x-ds) || (i < m && b.s0+float64(i)*b.h <= x+ds) {
		split = b.cellSplit(i, x, ds)
	}
	// (i)
	var v1, r1 float64
	if i < m {
		p := expAt(i)
		v1 = (1-p)*b.suf0[i] + p*b.suf2[i]
		r1 = (b.slack+4*u)*v1 + rP*p*(b.suf0[i]+b.suf2[i])
	}
	r1 += c.e2*math.Sqrt(float64(m-i)) + split
	// (ii)
	up2, lo2 := math.Inf(1), math.Inf(-1)
	if b.pre0 != nil || i == 0 {
		A := b.a
		var eB float64
		if tab {
			eB = e0 * b.eB0
		} else {
			eB = math.Exp(x + b.logB)
		}
		v2 := A - eB
		round := b.rhoA*A + (b.rhoB+rB)*eB + u*(A+eB)
		var corr, maxw float64 // maxw: e^{x−s} − 1 at the window's lowest loss, rounded up
		if i > 0 {
			w0 := e0
			if !tab {
				w0 = math.Exp(x - b.s0)
			}
			maxw = (w0 - 1) + (r0+u)*w0
			q := expAt(i - 1)
			corr = (q-1)*b.pre0[i] + q*b.pre2[i]
			round += (b.slack+4*u)*corr + rP*q*(b.pre0[i]+b.pre2[i])
		}
		round += split
		below := 0.0 // the true mass below the window, weighted
		if x > b.sMin && c.tailBot > 0 {
			var w float64
			if tab && b.eMin0 > 0 {
				w = e0 * b.eMin0
			} else {
				w = math.Exp(x - b.sMin)
			}
			below = c.tailBot * ((w - 1) + (rMin+u)*w)
		}
		if upper {
			up2 = v2 + corr + round + c.e2*math.Sqrt(float64(i))*maxw + below
		} else {
			lo2 = v2 + corr - round - (c.e2*math.Sqrt(float64(i))+tails)*maxw
		}
	}
	if !upper {
		return max(0, v1-r1-tails, lo2)
	}
	// (The built-in min and max keep math.Min's NaN, inlined.)
	up := min(v1+r1+tails, up2)
	if b.logChern != nil && i > 0 {
		up = min(up, b.chern[i-1])
	}
	return max(0, min(up, b.a*(1+b.rhoA)))
}

// cellSplit returns ds times the mass (with the FFT's error) of the
// cells whose rounded loss lies within ds of x, i the first above x (see
// dAt).
func (b *bulk) cellSplit(i int, x, ds float64) float64 {
	c := b.c
	var split float64
	for k := i - 1; k >= 0 && b.s0+float64(k)*b.h > x-ds; k-- {
		split += (c.c[k] + c.e2) * ds
	}
	for k := i; k < len(c.c) && b.s0+float64(k)*b.h <= x+ds; k++ {
		split += (c.c[k] + c.e2) * ds
	}
	return split
}

// jumpBelowWork is how many jump cells below the bulk window
// [bulk.jumpSum] sums in closed form for the work of one bulk.d
// evaluation (a few multiply-adds each, against about ten exponentials).
const jumpBelowWork = 16

// jumpSum returns an upper or lower bound on Σ_j g_j·D(eps − y_j), the
// jump cells of jp against the bulk, and its work in bulk.d evaluations.
// The cells fall in three runs, since x_j = eps − y_j decreases in j:
//
//   - above the bulk's window (x_j ≥ its top loss): D is decreasing in x,
//     so D(x_j) ≤ D(x*) for the smallest such x* and ≥ D(x^) for the
//     largest: the run's mass times d at x* (upper) or x^ (lower), one
//     evaluation (d is about the window's outside mass there);
//   - in the window: d at each cell;
//   - below it (x_j < s0, where d takes i = 0): each of d's bounds (i),
//     (ii) and the total is, cell by cell, a + b·e^{x_j} with a, b fixed,
//     so its sum over the run is a·G + b·e^{eps}·E with G = Σ g_j and
//     E = Σ g_j·e^{−y_j}: the smallest (upper) or largest (lower) of the
//     three sums, with the rounding of G, E and the products as relative
//     margins. (Up to 80% of the cells at σ 1, q 1e-4, δ 1e-15; they were
//     a third of the σ search's time there.)
//
// Where e^{eps − s0} or e^{eps + logB} is not finite, or an e^{−y_j}
// is not, or the rounding margin would not be small, every cell is
// evaluated as before.
func (b *bulk) jumpSum(jp *jumps, eps float64, upper bool) (h float64, calls int) {
	const u = 0x1p-53
	if jp.ey == nil {
		ey := make([]float64, len(jp.g))
		for j := range ey {
			ey[j] = math.Exp(-(jp.y0 + float64(j)*jp.h))
			if math.IsInf(ey[j], 0) || math.IsNaN(ey[j]) {
				ey = []float64{}
				break
			}
		}
		jp.ey = ey
	}
	eS0, eB := math.Exp(eps-b.s0), math.Exp(eps+b.logB)
	// Relative rounding of the sums of nonnegative terms G, E and the
	// tail sum (n terms each), of e^{x_j} as e^{eps}·e^{−y_j} against
	// e^{eps − y_j} (x_j itself rounded: a few ulps of |x_j|), and of the
	// products below.
	muOf := func(n int) float64 {
		return 1e-12 + 8*float64(n+8)*u + 16*u*(1+math.Abs(eps)+math.Abs(b.s0)+math.Abs(b.logB))
	}
	// x_j = eps − (y0 + j·h) rounded to nearest is within mx of the
	// exact x_j (u·j·h, u·|y_j| and u·|x_j|, j·h ≤ 2·max|y|, |x_j| ≤
	// |eps| + max|y|): a large share of a bulk cell where the losses are
	// large next to the cells (jumps near 720 on a bulk of cells of 1e-9:
	// the upper sum fell 1.5e-7 below the exact one, and the lower rose
	// above it; TestTwoScaleJumpSumRounding). D is decreasing, so each
	// cell is evaluated at x moved 2·mx the bound's way, down for the
	// upper bound and up for the lower (the move's own rounding is below
	// mx).
	yMax := math.Max(math.Abs(jp.y0), math.Abs(jp.y0+float64(len(jp.g))*jp.h))
	mx := (math.Abs(eps) + 4*yMax) * u * 1.01
	xr := 2 * mx
	if upper {
		xr = -xr
	}
	// e^{eps − s0}·e^{−y_j} against e^{x − s0} at the moved x: 2u each
	// and the product's u, the arguments' rounding u·|eps − s0| and
	// u·|y_j|, and the distance of the moved x from the exact x_j, 4·mx.
	rhoJ := (6+2*math.Abs(eps)+math.Abs(b.s0)+yMax)*u*1.01 + 4.04*mx
	closed := len(jp.ey) == len(jp.g) && !math.IsInf(eS0, 0) && !math.IsInf(eB, 0) && !math.IsNaN(eS0+eB) && muOf(len(jp.g)) < 1e-6
	m := len(b.c.c)
	top := b.s0 + float64(m)*b.h
	var gAbove, xMin, xMax float64 // the run above: its mass, smallest and largest x
	var nAbove int
	xMin, xMax = math.Inf(1), math.Inf(-1)
	var gBelow, eBelow, tailBelow float64 // the run below: Σ g, Σ g·e^{−y}, Σ g·(e^{x−sMin} − 1)₊
	var nBelow int
	// h sums terms ≥ 0 (each bound, times g, and the runs), each product
	// and sum rounded: within 2·(terms + 1)·u of itself, taken the
	// bound's way (the sums rounded down by 2e-16 of themselves before;
	// TestTwoScaleJumpSumAccumulation).
	var terms int
	acc := func(h float64) float64 {
		r := 2 * float64(terms+2) * u
		if upper {
			return h * (1 + r)
		}
		return h * (1 - r)
	}
	for j, g := range jp.g {
		if !(g > 0) {
			continue
		}
		xn := eps - (jp.y0 + float64(j)*jp.h)
		x := xn + xr
		switch {
		case closed && x < b.s0:
			gBelow += g
			eBelow += g * jp.ey[j]
			// (e^{x−sMin} − 1)₊ grows with x: at x_j + mx or above.
			if xu := xn + 2*mx; upper && xu > b.sMin && b.c.tailBot > 0 {
				tailBelow += g * math.Expm1(xu-b.sMin)
			}
			nBelow++
		case x >= top:
			gAbove += g
			nAbove++
			xMin, xMax = math.Min(xMin, x), math.Max(xMax, x)
		case len(jp.ey) == len(jp.g):
			// e^{x_j − s0} as e^{eps − s0}·e^{−y_j}: no exponential.
			h += g * b.dAt(x, eS0*jp.ey[j], rhoJ, upper)
			calls++
			terms++
		default:
			h += g * b.d(x, upper)
			calls++
			terms++
		}
	}
	if nAbove > 0 {
		terms++
		// The sum of nAbove nonnegative terms and the product: relative.
		r := 4 * float64(nAbove+4) * u
		if upper {
			h += gAbove * b.d(xMin, upper) * (1 + r)
		} else {
			h += gAbove * b.d(xMax, upper) * (1 - r)
		}
		calls++
	}
	if nBelow == 0 {
		return acc(h), calls
	}
	terms++
	calls += (nBelow + jumpBelowWork - 1) / jumpBelowWork
	mu := muOf(nBelow)
	gB, eW := gBelow, eS0*eBelow // Σ g, Σ g·e^{x−s0}
	suf0, suf2 := b.suf0[0], b.suf2[0]
	tails := b.c.tailTop + b.c.tailBot
	rest := b.c.e2*math.Sqrt(float64(m)) + tails
	A := b.a
	eBE := eB * eBelow // Σ g·e^{x}·B
	// (i): v1 = (1 − e^{x−s0})·suf0 + e^{x−s0}·suf2 ≥ 0 cell by cell.
	v1 := suf0*(gB-eW) + suf2*eW
	v1Err := mu * (suf0*(gB+eW) + suf2*eW)
	if upper {
		u1 := (v1+v1Err)*(1+b.slack+2*u) + rest*gB*(1+mu)
		// (ii): A − e^x·B + round, round = ρA·A + ρB·e^x·B + u(A + e^x·B),
		// and the true mass below the window, c.tailBot·(e^{x−sMin} − 1)₊.
		a2 := A * (1 + b.rhoA + u) * gB * (1 + mu)
		b2 := eBE * (1 - b.rhoB - u) * (1 - mu)
		u2 := a2 - b2 + u*(a2+b2) + b.c.tailBot*tailBelow*(1+mu)
		u3 := A * (1 + b.rhoA) * gB * (1 + mu)
		v := math.Min(u1, math.Min(u2, u3))
		if math.IsNaN(v) {
			v = u3
		}
		return acc(h + math.Max(0, v)), calls
	}
	l1 := (v1-v1Err)*(1-b.slack-2*u) - rest*gB*(1+mu)
	a2 := A * (1 - b.rhoA - u) * gB * (1 - mu)
	b2 := eBE * (1 + b.rhoB + u) * (1 + mu)
	l2 := a2 - b2 - u*(a2+b2)
	v := math.Max(l1, l2)
	if !(v > 0) {
		v = 0
	}
	return acc(h + v), calls
}

// twoScaleSet is the two-scale bounds of the remove direction for one
// per-step truncation, on bulk grids whose brackets are intersected (one,
// and a second where the bracket is wide: see withCoarse).
type twoScaleSet struct {
	ups, lows []*twoScaleBound
	// add bounds the add direction from above (newBulkUpper; nil
	// where it does not apply), made by addMake on first use (see
	// addBounds).
	add     []*twoScaleBound
	addMake func(ctx context.Context) ([]*twoScaleBound, error)
	// evals counts the twoScaleBound evaluations of epsilonBounds.
	evals int
	// noLows: the lower bounds were not made (DeltaUpperAgainst).
	noLows bool
	// coarse makes the bounds on the coarser bulk grid, and coarseSet is
	// the set with them (see withCoarse).
	coarse    func(ctx context.Context) (*twoScaleSet, error)
	coarseSet *twoScaleSet
}

// addBounds makes s.add where it is not made yet. A bracket needs it
// only where the grid's upper end for the add direction lies above the
// remove direction's (the bracket's upper end is the larger of the two),
// which it rarely does, the add direction's losses being the smaller:
// none of the σ search's five sets at σ 1, q 1e-4, T 1e5, δ 1e-15 needed
// it, where each made its bulk (an FFT of 43,200 points, a tenth of the
// set's cost).
func (s *twoScaleSet) addBounds(ctx context.Context) error {
	if s.addMake == nil {
		return nil
	}
	add, err := s.addMake(ctx)
	if err != nil {
		return err
	}
	s.add, s.addMake = add, nil
	return nil
}

// addDelta returns the upper bound on the add direction's δ(eps), 1
// where there is none (or none is made: see addBounds).
func (s *twoScaleSet) addDelta(eps float64) float64 {
	upper := 1.0
	for _, t := range s.add {
		upper = math.Min(upper, t.delta(eps))
	}
	return upper
}

// twoScaleCells and twoScaleCoarse are how many cells the bulk grids of
// the two-scale bounds have below the split: the first is always made,
// the second where the bracket is still wide (see withCoarse).
const (
	twoScaleCells  = 1024
	twoScaleCoarse = 512
)

// twoScaleJump is T·P(L > a) at the split point a: the expected number
// of steps whose loss falls on the jump grid.
const twoScaleJump = 1e-3

// twoScale returns the two-scale bounds of the remove direction, and the
// one-bulk upper bound of the add direction (newBulkUpper), for the
// truncation eta, or nil when the composition does not qualify: the
// default grid with the tails cut at a query's δ (setup.eta), one
// Poisson-sampled Gaussian step repeated, and a per-step loss whose range
// above the split exceeds the bulk's by 16 or more. restMax bounds the
// binomial remainder (a small share of the δ of interest).
func (a *Accountant) twoScale(ctx context.Context, eta, restMax float64) (*twoScaleSet, error) {
	if a.twoScales == nil {
		a.twoScales = map[float64]*twoScaleSet{}
	}
	if s, ok := a.twoScales[eta]; ok && (s == nil || !s.noLows || a.upperOnly) {
		return s, nil
	}
	s, err := a.newTwoScale(ctx, eta, restMax, !a.upperOnly)
	if err == errTooLarge {
		s, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	a.twoScales[eta] = s
	return s, nil
}

func (a *Accountant) newTwoScale(ctx context.Context, eta, restMax float64, lows bool) (*twoScaleSet, error) {
	keys := a.keys()
	if a.h != 0 || len(keys) != 1 || !(eta > etaFor(a.steps, 0)) {
		return nil, nil
	}
	k := keys[0]
	// Two directions of a loss with a density and no atoms (a
	// Poisson-sampled Gaussian): the split below needs both.
	if p := a.pld(k); p.Symmetric || p.Remove.Support().Atoms != nil || p.Remove.Support().Lattice {
		return nil, nil
	}
	if a.setup == nil {
		a.setup = newSetup(a.pldsOf(keys))
	}
	pair := &cutPair{a.setup.pairs[0][0]} // remove
	steps := a.counts[k]
	lLo, lHi := pair.Truncation(eta)
	if !(lLo < lHi) || math.IsInf(lLo, 0) || math.IsInf(lHi, 0) {
		return nil, nil
	}
	// The split: T·P(L > a) = twoScaleJump, by bisection.
	mid := func(lo, hi float64) (float64, bool) { return 0.5 * (lo + hi), true }
	o, _ := search.Solve(search.Problem[float64]{
		Holds: func(x float64) (bool, error) {
			return !(float64(steps)*math.Exp(pair.Tails(x).PAbove) > twoScaleJump), nil
		},
		Lo:             lLo,
		Hi:             lHi,
		LoKnown:        true,
		HiKnown:        true,
		Next:           mid,
		Done:           func(lo, hi float64) bool { return !(hi-lo > 1e-3*(hi-lLo)*1e-6) },
		MaxEvaluations: 200,
	})
	split := o.X
	if !(split > lLo && split < lHi) || lHi-split < 16*(split-lLo) {
		return nil, nil
	}
	hJ := (lHi - split) / 16384
	// The bulk grid of twoScaleCells cells below the split now; the one of
	// twoScaleCoarse cells when a bracket is still wide (see withCoarse).
	s := &twoScaleSet{noLows: !lows}
	var addPair mechanism.Pair
	var addLo, addHi float64
	build := func(ctx context.Context, t *twoScaleSet, cells float64) error {
		hB := (split - lLo) / cells
		up, err := newTwoScaleBound(ctx, pair, steps, eta, split, hB, hJ, restMax, true)
		if err != nil {
			return err
		}
		t.ups = append(t.ups, up)
		if lows {
			low, err := newTwoScaleBound(ctx, pair, steps, eta, split, hB, hJ, restMax, false)
			if err != nil {
				return err
			}
			t.lows = append(t.lows, low)
		}
		t.addMake = func(ctx context.Context) ([]*twoScaleBound, error) {
			if addPair == nil {
				return nil, nil
			}
			b, err := newBulkUpper(ctx, addPair, steps, eta, addLo, (addHi-addLo)/cells)
			if err == errTooLarge {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			return []*twoScaleBound{b}, nil
		}
		return nil
	}
	if len(a.setup.pairs) == 2 {
		// The add direction: its losses lie below −log(1 − q); the mass
		// of its long lower tail is moved up to the point below which
		// T·P(L ≤ a) = twoScaleJump.
		add := &cutPair{a.setup.pairs[1][0]}
		lLo, lHi := add.Truncation(eta)
		if lLo < lHi && !math.IsInf(lLo, 0) && !math.IsInf(lHi, 0) {
			o, _ := search.Solve(search.Problem[float64]{
				Holds:          func(x float64) (bool, error) { return float64(steps)*math.Exp(add.Tails(x).PBelow) > twoScaleJump, nil },
				Lo:             lLo,
				Hi:             lHi,
				LoKnown:        true,
				HiKnown:        true,
				Next:           mid,
				Done:           func(lo, hi float64) bool { return !(hi-lo > 1e-9*(hi-lLo)) },
				MaxEvaluations: 200,
			})
			addPair, addLo, addHi = add, o.Lo, lHi
		}
	}
	if err := build(ctx, s, twoScaleCells); err != nil {
		return nil, err
	}
	s.coarse = func(ctx context.Context) (*twoScaleSet, error) {
		t := &twoScaleSet{noLows: !lows}
		if err := build(ctx, t, twoScaleCoarse); err != nil {
			return nil, err
		}
		return t, nil
	}
	return s, nil
}

// withCoarse returns the set with the bounds on the coarser bulk grid
// (twoScaleCoarse cells) added before its own, made on first use, or s
// itself where they do not fit. The coarser grid gives the tighter bracket
// where the rounding slack of the bulk's cell masses, which grows with
// their number, sets it (σ 0.742, q 2.1e-9, T 7512, δ 2.6e-12: [3.47925e-6,
// 3.49421e-6] with it, [3.47842e-6, 3.49563e-6] without); elsewhere the
// finer one is the tighter (none of the width sweep's 180 brackets moved
// without the coarser one), and building both cost a third more.
func (s *twoScaleSet) withCoarse(ctx context.Context) (*twoScaleSet, error) {
	if s.coarse == nil {
		return s, nil
	}
	if s.coarseSet == nil {
		t, err := s.coarse(ctx)
		if err == errTooLarge {
			s.coarse = nil
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		s.coarseSet = &twoScaleSet{
			ups:    append(append([]*twoScaleBound{}, t.ups...), s.ups...),
			lows:   append(append([]*twoScaleBound{}, t.lows...), s.lows...),
			noLows: s.noLows,
			addMake: func(ctx context.Context) ([]*twoScaleBound, error) {
				if err := t.addBounds(ctx); err != nil {
					return nil, err
				}
				if err := s.addBounds(ctx); err != nil {
					return nil, err
				}
				return append(append([]*twoScaleBound{}, t.add...), s.add...), nil
			},
		}
	}
	return s.coarseSet, nil
}

// deltaBounds returns the intersected bracket on the remove direction's
// δ(eps).
func (s *twoScaleSet) deltaBounds(eps float64) (lower, upper float64) {
	return s.lowerDelta(eps), s.upperDelta(eps)
}

// upperDelta returns the smallest upper bound on the remove direction's
// δ(eps).
func (s *twoScaleSet) upperDelta(eps float64) float64 {
	upper := 1.0
	for _, t := range s.ups {
		upper = math.Min(upper, t.delta(eps))
	}
	return upper
}

// lowerDelta returns the largest lower bound on the remove direction's
// δ(eps).
func (s *twoScaleSet) lowerDelta(eps float64) float64 {
	lower := 0.0
	for _, t := range s.lows {
		lower = math.Max(lower, t.delta(eps))
	}
	return lower
}

// cells returns the work of the last delta call in bulk.d evaluations,
// the work it reports (one unit per checkEvery of them, at least one).
func (ts *twoScaleBound) cells() int {
	return max(ts.calls, 1)
}

// epsilonBounds returns a bracket on the remove direction's ε(delta)
// within [lo0, up0] (a bracket known already): the smallest ε found whose
// upper δ was evaluated at most delta, and the largest whose lower δ was
// evaluated above it (up0 and lo0 when no point qualifies). Each end is
// found to 1e-9 relative by secant steps on log δ (see logSecant), and
// evaluates only the bounds of its own side: δ(ε) is close to
// exponential in ε here. A side's bounds are evaluated finest bulk grid
// first (the tightest, as a rule), and the next only when the ones so far
// leave the point undecided: whether the smallest upper δ is at most
// delta, or the largest lower δ above it, is the same, and the secant
// steps from the value found.
//
// The upper end is searched in [lo0, up0]. The lower end lies below it by
// about the bracket's width (0.055% at σ 1, q 1e-4, T 1e5, δ 1e-15, where
// [lo0, up0] is 9% wide), so its search starts there: one Newton step on
// the lower log δ at the upper end, with the slope of the upper log δ
// that the upper end's search measured (both bound one δ(ε) within a
// fraction of a percent, so their slopes agree as closely), lands within
// about 1e-7 of the lower end, and the secant closes in from there
// (growing the bracket downwards from the upper end should that step
// fall short of the root). There 16–17 evaluations became 10; the ends
// moved by less than 1e-10 relative.
func (s *twoScaleSet) epsilonBounds(ctx context.Context, delta, lo0, up0 float64) (lower, upper float64, err error) {
	dUp := func(e float64) (float64, error) {
		v, n := 1.0, 0
		for i := len(s.ups) - 1; i >= 0 && v > delta; i-- {
			s.evals++
			v = math.Min(v, s.ups[i].delta(e))
			n += s.ups[i].cells()
		}
		return v, fftWork(ctx, max(n, checkEvery))
	}
	dLow := func(e float64) (float64, error) {
		v, n := 0.0, 0
		for i := len(s.lows) - 1; i >= 0 && !(v > delta); i-- {
			s.evals++
			v = math.Max(v, s.lows[i].delta(e))
			n += s.lows[i].cells()
		}
		return v, fftWork(ctx, max(n, checkEvery))
	}
	upper, lower = up0, lo0
	if !(up0 > lo0) || math.IsInf(up0, 1) {
		return lower, upper, nil
	}
	slope := math.NaN() // of the upper log δ near the upper end, when searched
	dLo, err := dUp(lo0)
	if err != nil {
		return 0, 0, err
	}
	if dLo <= delta {
		upper = lo0
	} else {
		dHi, err := dUp(up0)
		if err != nil {
			return 0, 0, err
		}
		if dHi <= delta {
			r := newLogSecant(dUp, delta)
			if _, upper, err = r.root(lo0, up0, dLo, dHi); err != nil {
				return 0, 0, err
			}
			slope = r.slope()
		}
	}
	dHi, err := dLow(upper)
	if err != nil {
		return 0, 0, err
	}
	if dHi > delta {
		return upper, upper, nil
	}
	r := newLogSecant(dLow, delta)
	if x := upper - r.g(dHi)/slope; slope < 0 && x > lo0 && x < upper {
		lower, _, err = r.rootBelow(lo0, upper, dHi, x)
		return lower, upper, err
	}
	dLo, err = dLow(lo0)
	if err != nil || !(dLo > delta) {
		return lower, upper, err
	}
	lower, _, err = r.root(lo0, upper, dLo, dHi)
	return lower, upper, err
}

// logSecant finds where a decreasing d crosses delta, to hi − lo ≤
// 1e-9·hi (or after 200 evaluations, or when no float lies inside), by
// secant steps on g(ε) = log d(ε) − log delta, close to linear here. The
// ends it returns are points where d was evaluated (or the given ends):
// d(lo) > delta and d(hi) ≤ delta, compared exactly, not through the logs.
//
// Each step is the secant root of the two latest points where it falls
// inside the bracket, and the Illinois variant of false position on the
// bracket's ends (kept 1e-3 of the width from them) where it does not or
// after three evaluations in a row on one side. A step within 0.45·tol of
// an end (tol = 1e-9·hi, the stopping width), where the root is next to
// that end, is moved 0.5·tol further from it: it then crosses the root
// unless the estimate is off by more than that, and the bracket is within
// tol at once (false position alone took two or three more evaluations
// there, each a step of 1e-3 of the width or one landing on the same
// side).
type logSecant struct {
	d           func(float64) (float64, error)
	delta, logD float64
	xs, gs      []float64 // the points evaluated, in order, and g there
	glo, ghi    float64   // g at the bracket's ends, Illinois-scaled
	side, same  int       // the latest evaluation's side (−1: d ≤ delta), how many in a row
}

func newLogSecant(d func(float64) (float64, error), delta float64) *logSecant {
	return &logSecant{d: d, delta: delta, logD: math.Log(delta)}
}

// g returns log v − log delta, clamped at −1e3: a zero δ (or one below
// the smallest float's log) is far below, and the secant stays finite.
func (r *logSecant) g(v float64) float64 {
	return math.Max(math.Log(v)-r.logD, -1e3)
}

// record notes d = v at x.
func (r *logSecant) record(x, v float64) {
	g := r.g(v)
	r.xs, r.gs = append(r.xs, x), append(r.gs, g)
	side := 1
	if v <= r.delta {
		side = -1
		r.ghi = math.Min(g, -1e-300) // d(hi) ≤ delta although the logs may agree
		if r.side == -1 {
			r.glo /= 2
		}
	} else {
		r.glo = math.Max(g, 1e-300)
		if r.side == 1 {
			r.ghi /= 2
		}
	}
	if side == r.side {
		r.same++
	} else {
		r.same = 1
	}
	r.side = side
}

// holds evaluates d at x: whether d(x) ≤ delta.
func (r *logSecant) holds(x float64) (bool, error) {
	v, err := r.d(x)
	if err != nil {
		return false, err
	}
	r.record(x, v)
	return v <= r.delta, nil
}

// next is the step inside [lo, hi] (see logSecant).
func (r *logSecant) next(lo, hi float64) (float64, bool) {
	w, tol := hi-lo, 1e-9*hi
	x := math.NaN()
	if n := len(r.xs); n >= 2 && r.same < 3 {
		x0, g0, x1, g1 := r.xs[n-2], r.gs[n-2], r.xs[n-1], r.gs[n-1]
		if g1 != g0 {
			x = x1 - g1*(x1-x0)/(g1-g0)
		}
	}
	if !(x > lo && x < hi) {
		x = hi - r.ghi*(hi-lo)/(r.ghi-r.glo)
		if !(x > lo && x < hi) {
			x = lo + w/2
		}
		x = math.Min(math.Max(x, lo+w*1e-3), hi-w*1e-3)
	}
	switch {
	case x-lo < 0.45*tol:
		x += 0.5 * tol
	case hi-x < 0.45*tol:
		x -= 0.5 * tol
	}
	return x, x > lo && x < hi
}

// done is the stopping rule: hi − lo ≤ 1e-9·hi.
func (r *logSecant) done(lo, hi float64) bool { return !(hi-lo > 1e-9*hi) }

// root narrows [lo, hi], with d(lo) = dLo > delta ≥ d(hi) = dHi, and
// returns the final bracket.
func (r *logSecant) root(lo, hi, dLo, dHi float64) (float64, float64, error) {
	r.record(lo, dLo)
	r.record(hi, dHi)
	r.same = 0
	o, err := search.Solve(search.Problem[float64]{
		Holds:          r.holds,
		Lo:             lo,
		Hi:             hi,
		LoKnown:        true,
		HiKnown:        true,
		Next:           r.next,
		Done:           r.done,
		MaxEvaluations: 200,
	})
	if err != nil {
		return 0, 0, err
	}
	return o.Lo, o.Hi, nil
}

// rootBelow is root for a bracket [lo0, hi] with d(hi) = dHi ≤ delta whose
// lower end is not evaluated: it evaluates x (lo0 < x < hi, an estimate
// of the root) first and, while d ≤ delta there, steps down past the
// secant root of the two latest points by half the step (twice the
// distance to hi where there is none), to lo0 at most; lo0 itself when d
// ≤ delta there too.
func (r *logSecant) rootBelow(lo0, hi, dHi, x float64) (float64, float64, error) {
	r.record(hi, dHi)
	o, err := search.Solve(search.Problem[float64]{
		Holds:   r.holds,
		Lo:      x,
		Hi:      hi,
		HiKnown: true,
		Down: func(x float64) (float64, bool) {
			if !(x > lo0) {
				return 0, false
			}
			n := len(r.xs)
			x0, g0, x1, g1 := r.xs[n-2], r.gs[n-2], r.xs[n-1], r.gs[n-1]
			next := x - 2*(hi-x)
			if p := x1 - g1*(x1-x0)/(g1-g0); p < x {
				next = p - math.Max(0.5*(x-p), 1e-9*hi)
			}
			return math.Max(next, lo0), true
		},
		Next:           r.next,
		Done:           r.done,
		MaxEvaluations: 200,
	})
	if err != nil {
		return 0, 0, err
	}
	return o.Lo, o.Hi, nil
}

// slope returns the slope of g between the latest point and the one
// farthest from it within 1e-4 relative (NaN without one): the local
// slope of log d, for a Newton step from the root.
func (r *logSecant) slope() float64 {
	n := len(r.xs)
	if n < 2 {
		return math.NaN()
	}
	x1, g1 := r.xs[n-1], r.gs[n-1]
	best, far := math.NaN(), 0.0
	for i := range n - 1 {
		if d := math.Abs(r.xs[i] - x1); d > far && d <= 1e-4*math.Abs(x1) && r.gs[i] != g1 {
			far, best = d, (r.gs[i]-g1)/(r.xs[i]-x1)
		}
	}
	return best
}

// dirUpper returns the smallest upper bound f(c, true) over the compositions
// of direction d cached on the levels of lv (untilted and tilted, every
// grid): each is a certified bound for that direction.
func dirUpper(lv *levels, d int, f func(c *composition, upper bool) float64) float64 {
	best := math.Inf(1)
	for _, r := range append([]*result{lv.res}, lv.finer...) {
		if r == nil || d >= len(r.dirs) {
			continue
		}
		dir := r.dirs[d]
		if dir.up != nil {
			best = math.Min(best, f(dir.up, true))
		}
		for key, c := range dir.tilt {
			if key.upper {
				best = math.Min(best, f(c, true))
			}
		}
	}
	return best
}

// twoScaleEpsilon tightens the bracket [lower, upper] on ε(delta) with the
// two-scale bounds of the remove direction (see twoScaleBound), where they
// apply: ε ≤ max(min(remove's bounds), add's bound), ε ≥ either lower.
func (a *Accountant) twoScaleEpsilon(ctx context.Context, lv *levels, delta, lower, upper float64, wide func(lo, up float64) bool) (float64, float64, error) {
	s, err := a.twoScale(ctx, lv.res.eta, 1e-6*delta)
	if err != nil || s == nil || len(lv.res.dirs) != 2 {
		return lower, upper, err
	}
	f := epsF(delta)
	bracket := func(s *twoScaleSet) (float64, float64, error) {
		remUp, addUp := dirUpper(lv, 0, f), dirUpper(lv, 1, f)
		lo2, up2, err := s.epsilonBounds(ctx, delta, lower, math.Min(remUp, upper))
		if err != nil {
			return 0, 0, err
		}
		// Only a larger addUp can set the upper end (see addBounds).
		if !(addUp <= math.Min(remUp, up2)) {
			if err := s.addBounds(ctx); err != nil {
				return 0, 0, err
			}
			if len(s.add) > 0 && s.addDelta(addUp) <= delta {
				// The smallest ε in [0, addUp] whose add-direction δ is at
				// most delta, by bisection (δ(ε) decreases).
				addUp = search.Bisect(func(e float64) bool { return s.addDelta(e) <= delta }, 0, addUp, 1e-9)
			}
		}
		return math.Max(lower, lo2), math.Min(upper, math.Max(math.Min(remUp, up2), addUp)), nil
	}
	return s.bracketWide(ctx, bracket, wide)
}

// twoScaleDelta is twoScaleEpsilon for δ(eps); dEst sizes the binomial
// remainder.
func (a *Accountant) twoScaleDelta(ctx context.Context, lv *levels, eps, dEst, lower, upper float64, wide func(lo, up float64) bool) (float64, float64, error) {
	s, err := a.twoScale(ctx, lv.res.eta, 1e-6*math.Max(dEst, 1e-300))
	if err != nil || s == nil || len(lv.res.dirs) != 2 {
		return lower, upper, err
	}
	f := deltaF(eps)
	bracket := func(s *twoScaleSet) (float64, float64, error) {
		remUp, addUp := dirUpper(lv, 0, f), dirUpper(lv, 1, f)
		lo2, up2 := s.deltaBounds(eps)
		// Only a larger addUp can set the upper end (see addBounds).
		if !(addUp <= math.Min(remUp, up2)) {
			if err := s.addBounds(ctx); err != nil {
				return 0, 0, err
			}
			addUp = math.Min(addUp, s.addDelta(eps))
		}
		return math.Max(lower, lo2), math.Min(upper, math.Max(math.Min(remUp, up2), addUp)), nil
	}
	return s.bracketWide(ctx, bracket, wide)
}

// bracketWide returns bracket(s), and where that is still wide, bracket
// of s with its coarser bulk grid added (withCoarse), from the same start.
func (s *twoScaleSet) bracketWide(ctx context.Context, bracket func(*twoScaleSet) (float64, float64, error), wide func(lo, up float64) bool) (float64, float64, error) {
	lo, up, err := bracket(s)
	if err != nil || !wide(lo, up) {
		return lo, up, err
	}
	if s, err = s.withCoarse(ctx); err != nil {
		return 0, 0, err
	}
	return bracket(s)
}
