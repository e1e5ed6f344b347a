package mechanism

import (
	"math"
	"slices"

	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// mixtureCertMaxEval caps the loss evaluations of one certified moment
// (one direction at one order): past it the bound found so far stands,
// still proven but perhaps looser than the target.
const mixtureCertMaxEval = 1 << 16

// certNode is the loss at a breakpoint: L(x) and L'(x) as computed, each
// with a bound on its error (rounding; terms the log-sum-exp leaves out).
type certNode struct{ x, l, dl, el, edl float64 }

// certPiece is one piece [u, v] of the certified bound (u = −Inf or v =
// +Inf for a tail): its log upper bound and its estimated gap.
type certPiece struct {
	u, v   certNode
	up     float64 // log of the piece's upper bound
	logGap float64 // log of its estimated excess over the true integral
}

// node evaluates the loss at x with its error bounds (maxLogp the largest
// |log p_i|): L within 8 ulps of the largest term's magnitude, 4 of its value and one per component,
// plus n·e^−lseCut for the terms left out (which only lower it); L', a
// weighted mean of c_i/σ², within c_max/σ² times the same relative
// amount and twice the weight the left-out terms may carry.
func (p *mixturePair) node(x, maxLogp float64) certNode {
	l, dl := p.loss(x, true)
	n := float64(len(p.c))
	cm := p.c[len(p.c)-1]
	s2 := 2 * p.sigma * p.sigma
	mag := maxLogp + cm*(2*math.Abs(x)+cm)/s2
	rel := 0x1p-52 * (8*mag + 4*math.Abs(l) + n)
	drop := n * math.Exp(-lseCut)
	return certNode{x: x, l: l, dl: dl, el: rel + drop, edl: cm / (p.sigma * p.sigma) * (2*rel + 2*drop + 16*n*0x1p-52)}
}

// logGaussLine returns an upper bound on log ∫_u^v φ_σ(x) e^{g0 + β(x −
// x0)} dx: completing the square, g0 − βx0 + β²σ²/2 + log(Φ(z_v) −
// Φ(z_u)) with z = (x − βσ²)/σ, moved up by 16 ulps of the magnitude of
// its terms and by the error of the difference of the logs of Φ (each
// within 1e-15 relative of its magnitude plus one: libm's erfc is
// accurate to a few ulps), which cancellation amplifies by 1/(1 − e^d).
func logGaussLine(sigma, g0, beta, x0, u, v float64) float64 {
	fin := func(x float64) float64 {
		if math.IsInf(x, 0) {
			return 0
		}
		return math.Abs(x)
	}
	mu := beta * sigma * sigma
	zu, zv := (u-mu)/sigma, (v-mu)/sigma
	var a, b float64 // log of the larger and smaller tail
	var d float64
	switch {
	case zv <= 0:
		a, b = logmath.NormCDF(zv), logmath.NormCDF(zu)
		d = logmath.Sub(a, b)
	case zu >= 0:
		a, b = logmath.NormSF(zu), logmath.NormSF(zv)
		d = logmath.Sub(a, b)
	default:
		a, b = 0, logmath.Add(logmath.NormCDF(zu), logmath.NormSF(zv))
		d = logmath.Log1mExp(b)
	}
	if math.IsInf(d, -1) || math.IsNaN(d) {
		if !(u < v) {
			return math.Inf(-1)
		}
		// The difference is lost to cancellation: a bound by the widest
		// value of the density times the width. Where u < v but z_u and z_v
		// round to the same value (|μ| far above |u|), the width in z is
		// (v − u)/σ, rounded up, over [z_u, z_u + w].
		w := zv - zu
		if !(w > 0) {
			w = (v - u) / sigma * (1 + 0x1p-50)
		}
		zw := zu + w
		zm := math.Min(math.Abs(zu), math.Abs(zw))
		if zu < 0 && zw > 0 {
			zm = 0
		}
		d = -zm*zm/2 - 0.5*math.Log(2*math.Pi) + math.Log(w)
		d += 0x1p-52 * 16 * (zm*zm + 4)
	} else {
		e := 1e-15 * (fin(a) + fin(b) + 2)
		d += e + 2*e/(-math.Expm1(math.Min(b-a, -1e-300)))
	}
	// z_u and z_v as computed are within dz of the true ones: the
	// difference moves by at most dz times the density near each end.
	dz := 8 * 0x1p-52 * (fin(u) + fin(v) + math.Abs(mu)) / sigma
	dens := func(z float64) float64 {
		if math.IsInf(z, 0) {
			return 0
		}
		z = math.Max(0, math.Abs(z)-dz)
		return math.Exp(-z*z/2 - 0.5*math.Log(2*math.Pi) - d)
	}
	d += math.Log1p(2 * dz * (dens(zu) + dens(zv)))
	c := g0 - beta*x0 + beta*mu/2
	mag := math.Abs(g0) + math.Abs(beta*x0) + math.Abs(beta*mu)/2 + math.Abs(d)
	return c + d + 16*0x1p-52*mag
}

// certMoment returns a proven upper bound on log ∫ φ_σ(x) e^{b·L(x)} dx
// (b = λ + 1 > 0 the remove direction, b = −λ < 0 the add direction), a
// sum over pieces of Gaussian integrals of exponentials of lines above
// b·L, each integrated in closed form (logGaussLine). For b > 0, b·L is
// convex: on [u, v] its chord is above it, and beyond the last breakpoint
// U, L(x) ≤ L(U) + (x − U)c_max/σ² (L' ≤ c_max/σ²), below the first L(x)
// ≤ L(first) (L increases). For b < 0, b·L is concave: each tangent is
// above it everywhere, so a piece takes the tangent at u on its left half
// and at v on its right, the tails the tangents at the ends. The
// breakpoints start at 0, at the peaks b·c_i of the integrand's
// components (b > 0) and evenly over the range where its mass lies;
// pieces whose estimated excess (their bound times |b|·h·ΔL'/4, the
// largest gap of a chord or of two tangents over a convex function) is
// largest are halved until the estimated excess of the whole is within
// rtol of its log (K, at least 1e-13), or the bound is at most floor, or
// the estimated value is above ceil, or the work cap is hit. It also
// returns the number of loss evaluations and whether it stopped before
// the cap.
func (p *mixturePair) certMoment(b, rtol, floor, ceil float64) (up float64, evals int, met bool) {
	sigma := p.sigma
	maxLogp := 0.0
	for _, lp := range p.logp {
		maxLogp = math.Max(maxLogp, math.Abs(lp))
	}
	cm := p.c[len(p.c)-1]
	ab := math.Abs(b)
	var lo, hi float64
	pts := []float64{0}
	if b > 0 {
		lo, hi = -40*sigma, b*cm+40*sigma
		for _, c := range p.c {
			pts = append(pts, b*c)
		}
	} else {
		lo, hi = -ab*cm-40*sigma, 40*sigma
	}
	for i := 1; i < 32; i++ {
		pts = append(pts, lo+(hi-lo)*float64(i)/32)
	}
	pts = append(pts, lo, hi)
	slices.Sort(pts)
	pts = slices.Compact(pts)
	nodes := make([]certNode, len(pts))
	for i, x := range pts {
		nodes[i] = p.node(x, maxLogp)
	}
	evals = len(nodes)
	// upper bounds of b·L at a node: L's error in the safe direction.
	gUp := func(n certNode) float64 {
		if b > 0 {
			return b * (n.l + n.el)
		}
		return b*n.l + ab*n.el
	}
	piece := func(u, v certNode) certPiece {
		h := v.x - u.x
		var upv float64
		if b > 0 {
			gu, gv := gUp(u), gUp(v)
			beta := (gv - gu) / h
			g0 := gu + 4*0x1p-52*(math.Abs(gu)+math.Abs(gv))
			upv = logGaussLine(sigma, g0, beta, u.x, u.x, v.x)
		} else {
			// tangent at u (slope rounded up, for x ≥ u) and at v (slope
			// rounded down, for x ≤ v), meeting near their crossing.
			su := b*u.dl + ab*u.edl
			sv := b*v.dl - ab*v.edl
			gu, gv := gUp(u), gUp(v)
			m := u.x + h/2
			if su > sv {
				if xs := (gv - gu + su*u.x - sv*v.x) / (su - sv); xs > u.x && xs < v.x {
					m = xs
				}
			}
			upv = logmath.Add(logGaussLine(sigma, gu, su, u.x, u.x, m), logGaussLine(sigma, gv, sv, v.x, m, v.x))
		}
		gap := ab * h * math.Abs(v.dl-u.dl) / 4
		return certPiece{u: u, v: v, up: upv, logGap: upv + math.Log(math.Max(gap, 1e-300))}
	}
	// tails
	first, last := nodes[0], nodes[len(nodes)-1]
	var tails float64
	if b > 0 {
		beta := b * cm / (sigma * sigma) * (1 + 4*0x1p-52)
		tails = logmath.Add(logGaussLine(sigma, gUp(first), 0, first.x, math.Inf(-1), first.x),
			logGaussLine(sigma, gUp(last), beta, last.x, last.x, math.Inf(1)))
	} else {
		tails = logmath.Add(logGaussLine(sigma, gUp(first), b*first.dl-ab*first.edl, first.x, math.Inf(-1), first.x),
			logGaussLine(sigma, gUp(last), b*last.dl+ab*last.edl, last.x, last.x, math.Inf(1)))
	}
	pieces := make([]certPiece, 0, 2*len(nodes))
	for i := 1; i < len(nodes); i++ {
		pieces = append(pieces, piece(nodes[i-1], nodes[i]))
	}
	total := func() (float64, float64) {
		ups := make([]float64, 0, len(pieces)+1)
		var g lse
		ups = append(ups, tails)
		for _, pc := range pieces {
			ups = append(ups, pc.up)
			g.add(pc.logGap)
		}
		return logSumUp(ups), g.log()
	}
	for {
		t, g := total()
		// the excess's share of the integral: log(1 + e^{g−t}) ≤ e^{g−t}.
		target := math.Max(rtol*t, 1e-13)
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return t, evals, false
		}
		// Done: the target met, or the bound below floor (a bound the
		// caller takes the larger of this with), or the estimated value
		// above ceil (a bound the caller takes the smaller of this with).
		if g-t <= math.Log(target) || t <= floor || g < t && logmath.Sub(t, g) > ceil {
			return t, evals, true
		}
		if evals >= mixtureCertMaxEval {
			return t, evals, false
		}
		// halve the pieces whose estimated excess is above the target's
		// share of one piece.
		cut := t + math.Log(target) - math.Log(float64(2*len(pieces)))
		next := pieces[:0:0]
		for _, pc := range pieces {
			if pc.logGap > cut && evals < mixtureCertMaxEval && pc.v.x-pc.u.x > 1e-12*(math.Abs(pc.u.x)+sigma) {
				mid := p.node(pc.u.x+(pc.v.x-pc.u.x)/2, maxLogp)
				evals++
				next = append(next, piece(pc.u, mid), piece(mid, pc.v))
			} else {
				next = append(next, pc)
			}
		}
		pieces = next
	}
}

// logSumUp returns an upper bound on log Σ e^{t_i}: the largest m, then
// Σ e^{t_i − m} in order (each exponential within an ulp and its argument
// within 2 ulps of |t_i| + |m|, each addition within half an ulp of the
// partial sum), rounded up by those errors summed and 4 ulps of the log.
func logSumUp(ts []float64) float64 {
	m := math.Inf(-1)
	for _, t := range ts {
		m = math.Max(m, t)
	}
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return m
	}
	var s, err float64
	for _, t := range ts {
		e := math.Exp(t - m)
		if e == 0 {
			err += 0x1p-1074 // an underflow, at most the smallest subnormal
			continue
		}
		s += e
		err += e*0x1p-52*(2*(math.Abs(t)+math.Abs(m))+1) + s*0x1p-53
	}
	out := m + math.Log(s+err)
	return search.RoundUp(out + 0x1p-52*(4*math.Abs(out)+4))
}
