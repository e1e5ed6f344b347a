package mechanism

import (
	"context"
	"math"
	"strconv"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// discreteGaussian is the discrete Gaussian mechanism
// ([accounting.DiscreteGaussian]): noise N_Z(0, σ²) on an integer query of
// sensitivity Δ (L2) in dim coordinates (0: unknown), unsampled or
// Poisson-sampled under add-remove.
type discreteGaussian struct {
	sigma, sens float64
	dim         int
	sampling
}

func (g discreteGaussian) Name() string { return "DiscreteGaussian" }

func (g discreteGaussian) Event() accounting.Event {
	return g.wrap(accounting.DiscreteGaussian{Sigma: g.sigma, Sensitivity: g.sens, Dimension: g.dim})
}

func (g discreteGaussian) order() []float64 {
	return g.sampling.order(g.sigma/g.sens, 4, g.sigma, g.sens, float64(g.dim))
}

// dgMaxSigma is the largest σ whose pair pld is given: the integers that
// carry the noise's mass (up to about 40σ) stay exact in float64.
const dgMaxSigma = 0x1p36

// PLD: for one coordinate (dimension 1) and an integer sensitivity, the
// shift pair N_Z(0, σ²) against N_Z(Δ, σ²), whose loss
// L(x) = Δ(Δ/2 − x)/σ² takes the values of a lattice of spacing Δ/σ²
// ([newDGPair]); Poisson-sampled under add-remove, the pairs
// [poissonPair] makes of it. Like dp_accounting's pair, it is the pair of
// a shift by exactly Δ. In more coordinates the loss depends on the
// direction of the shift, not only on its norm, and no pair is stated.
func (g discreteGaussian) PLD() (*PLD, error) {
	switch {
	case !g.classic():
		return nil, errorf("no privacy-loss pair for a %s", g.describe("DiscreteGaussian"))
	case g.dim != 1:
		return nil, errorf("no privacy-loss pair for a discrete Gaussian of %s: its pair is stated for one coordinate (dimension 1); rdp and zcdp bound every dimension", dimName(g.dim))
	case g.sens != math.Trunc(g.sens) || g.sens > 1<<40:
		return nil, errorf("no privacy-loss pair for a discrete Gaussian of sensitivity %g: its pair is stated for an integer sensitivity of at most 2^40", g.sens)
	case g.sigma > dgMaxSigma:
		return nil, errorf("no privacy-loss pair for a discrete Gaussian with σ = %g > 2^36: use rdp", g.sigma)
	}
	// Attained: an integer query to which the differing record
	// contributes Δ and every other record 0.
	base := newDGPair(g.sigma, g.sens)
	if g.rate == 1 {
		return &PLD{Remove: base, Add: base, Symmetric: true, MaxLoss: math.Inf(1), Attained: true}, nil
	}
	return &PLD{Remove: newPoissonPair(base, g.rate, false), Add: newPoissonPair(base, g.rate, true), MaxLoss: math.Inf(1), Attained: true}, nil
}

func dimName(d int) string {
	if d == 0 {
		return "unknown dimension"
	}
	return "dimension " + strconv.Itoa(d)
}

// RDP: the bound λ(λ+1)Δ²/(2σ²) on the log moment (Canonne, Kamath and
// Steinke 2020, Proposition 5: D_α ≤ αΔ²/(2σ²) in every dimension, exact
// at integer orders; Poisson sampling never raises a Rényi divergence),
// unsampled or Poisson-sampled under add-remove; for one coordinate and an
// integer sensitivity, the smaller of that and the moment summed over the
// integers ([dgNoise.sampledMoment]).
func (g discreteGaussian) RDP() (RDP, error) {
	if !g.classic() {
		return nil, errorf("no Rényi bound for a %s", g.describe("DiscreteGaussian"))
	}
	r := dgRDP{sigma: g.sigma, sens: g.sens, q: g.rate}
	if g.dim == 1 && g.sens == math.Trunc(g.sens) && g.sens <= 1<<40 && g.sigma <= dgMaxSigma {
		r.noise = newDGNoise(g.sigma)
	}
	return r, nil
}

// ZCDP is ρ = Δ²/(2σ²) rounded up (Canonne, Kamath and Steinke 2020,
// Proposition 5), in every dimension.
func (g discreteGaussian) ZCDP() (rho, xi float64, err error) {
	r := g.sens / g.sigma
	return search.Up(r*r/2, 2), 0, nil
}

// dgRDP is the discrete Gaussian's Rényi curve, Poisson-sampled at q (q =
// 1: unsampled); noise is set when the sum over the integers applies.
type dgRDP struct {
	sigma, sens, q float64
	noise          *dgNoise
}

func (r dgRDP) AbadiMoments() bool { return false }

func (r dgRDP) LogMoments(ctx context.Context, c *Cache, count float64, orders []float64) ([]float64, error) {
	var grid []float64 // the Gaussian's α at σ/Δ over orders, made when needed
	out := make([]float64, len(orders))
	for i, l := range orders {
		if err := accounting.Canceled(ctx); err != nil {
			return nil, err
		}
		a, err := r.alpha(l, func() (float64, error) {
			if grid == nil {
				g, err := c.gaussianAlphas(ctx, r.sigma/r.sens, r.q, orders)
				if err != nil {
					return 0, err
				}
				grid = g
			}
			return grid[i], nil
		})
		if err != nil {
			return nil, err
		}
		out[i] = count * a
	}
	return out, nil
}

func (r dgRDP) LogMomentAt(ctx context.Context, c *Cache, count, lambda float64) (float64, error) {
	a, err := r.alpha(lambda, func() (float64, error) { return c.gaussianAlpha(ctx, r.sigma/r.sens, r.q, lambda) })
	return count * a, err
}

// dgSumDirect is the window up to which alpha sums the integers before it
// tries the continuous Gaussian's curve (see alpha).
const dgSumDirect = 4096

// alpha returns the bound on the log moment at order λ: the smallest of
// λ(λ+1)Δ²/(2σ²), the sum over the integers (when its window holds at most
// dgSumMax of them; first choice up to dgSumDirect) and, when sampled,
// the Poisson-summation bound below with gaussian, the continuous
// Gaussian's rounded-up α at noise multiplier σ/Δ.
//
// Poisson summation: the moment of either direction is Σ_x f(x) with
// f(x) = Q_b(x)·(1−q+q·r(x))^p, which is analytic in the strip
// |Im x| < πσ²/Δ (log r is linear in x, and 1−q+q·e^t has no zero or
// branch point for |Im t| < π). Moving the contour of f̂(k) to
// Im x = ±c, c = πσ²/(2Δ), where |Q_b| grows by e^{c²/(2σ²)} and
// |1−q+q·r| ≥ (1−q+q·|r|)/√2, gives Σ_x f = ∫f·(1 + ε) with
// ε ≤ 2^{1+|p|/2}·e^{c²/(2σ²) − 2πc}/(1 − e^{−2πc}) ≤
// 2^{1+|p|/2}·e^{−(7/8)π²σ²/Δ}/(1 − e^{−π²σ²/Δ}) (Δ ≥ 1), and ∫f is at
// most the continuous Gaussian's moment at σ/Δ (its normaliser
// σ√(2π) is at most Z). So α ≤ α_Gaussian(σ/Δ) + log(1 + ε).
func (r dgRDP) alpha(l float64, gaussian func() (float64, error)) (float64, error) {
	if !(l > 0) {
		return 0, nil
	}
	d := r.sens / r.sigma
	a := search.Up(l*(l+1)*d*d/2, 4)
	if r.noise == nil {
		return a, nil
	}
	summed := func() {
		rem, ok1 := r.noise.sampledMoment(r.sens, r.q, l+1)
		add, ok2 := rem, ok1 // unsampled, the two directions are one (x ↦ Δ − x)
		if r.q < 1 {
			add, ok2 = r.noise.sampledMoment(r.sens, r.q, -l)
		}
		if ok1 && ok2 {
			a = math.Min(a, math.Max(math.Max(rem, add), 0))
		}
	}
	if r.q == 1 || r.noise.window(r.sens, r.q, l) <= dgSumDirect {
		summed()
		return a, nil
	}
	u := math.Pi * math.Pi * r.sigma * (r.sigma / r.sens)
	logEps := (1+(l+1)/2)*math.Ln2 - 0.875*u - logmath.Log1mExp(-u)
	if logEps < math.Log(1e-15) {
		g, err := gaussian()
		if err != nil {
			return 0, err
		}
		return math.Min(a, search.Up(g+math.Exp(logEps), 2)), nil
	}
	summed()
	return a, nil
}

// newDGPair returns the shift pair of the discrete Gaussian N_Z(0, σ²) against
// N_Z(Δ, σ²): L(x) = Δ(Δ/2 − x)/σ², every value an atom.
func newDGPair(sigma, delta float64) *shiftPair {
	n := newDGNoise(sigma)
	loss := func(x float64) float64 { return (delta / sigma) * ((delta/2 - x) / sigma) }
	const lim = 1 << 52
	return &shiftPair{noise: n, delta: delta, loss: loss,
		threshold: func(l float64) float64 {
			c := delta/2 - l*sigma*(sigma/delta)
			switch {
			case !(c > -lim):
				return math.Inf(-1)
			case c > lim:
				return math.Inf(1)
			}
			return settle(math.Ceil(c)-1, l, -lim, lim, loss)
		},
		lMin: math.Inf(-1), lMax: math.Inf(1),
		support: Support{Lattice: true, LogInf: math.Inf(-1)}}
}

// dgNoise is the discrete Gaussian N_Z(0, σ²): P[x] = e^{−x²/(2σ²)}/Z.
type dgNoise struct {
	sigma, logZ float64
	c           int
}

// dgDirectMax is the most terms a tail sums directly; beyond, the
// Euler–Maclaurin formula (see logS).
const dgDirectMax = 2048

func newDGNoise(sigma float64) *dgNoise {
	n := &dgNoise{sigma: sigma}
	if sigma >= 1 {
		// Poisson summation: Z = σ√(2π)·Σ_k e^{−2π²σ²k²}; for σ ≥ 1 the
		// terms past k = 3 are below e^{−300}.
		var s float64
		for k := 1.0; k <= 3; k++ {
			s += math.Exp(-2 * math.Pi * math.Pi * sigma * sigma * k * k)
		}
		n.logZ = math.Log(sigma) + 0.5*math.Log(2*math.Pi) + math.Log1p(2*s)
	} else {
		n.logZ = math.Log1p(2 * math.Exp(n.logS(1))) // Z = 1 + 2·S(1)
	}
	n.c = 1 + min(n.terms(0), dgDirectMax)/32
	return n
}

// terms returns how many terms e^{−(aj + bj²)}, j ≥ 0, of S(k) exceed
// e^{−45} (a = k/σ², b = 1/(2σ²)).
func (n *dgNoise) terms(k float64) int {
	a, b := k/n.sigma/n.sigma, 0.5/n.sigma/n.sigma
	j := 90 / (a + math.Sqrt(a*a+180*b)) // the root of bj² + aj = 45
	if !(j < 1<<30) {
		return 1 << 30
	}
	return int(j) + 1
}

// logS returns log S(k), S(k) = Σ_{y ≥ k} e^{−y²/(2σ²)} for an integer
// k ≥ 0: by direct summation of S(k)·e^{k²/(2σ²)} = Σ_{j≥0} e^{−(aj + bj²)}
// (compensated, down to terms of e^{−45} relative; the sum is ≥ 1) when
// that takes at most dgDirectMax terms, else by the Euler–Maclaurin
// formula to order 4,
//
//	S(k) = σ√(2π)·Φ̄(z) + e^{−z²/2}·(1/2 + He₁(z)/(12σ) − He₃(z)/(720σ³)
//	       + He₅(z)/(30240σ⁵) − He₇(z)/(1209600σ⁷)) + R,  z = k/σ,
//
// from f^{(n)}(y) = (−1/σ)^n He_n(y/σ) f(y). Its remainder is at most
// 2ζ(8)/(2π)^8 ∫_k^∞ |f^{(8)}|, about 8e-7·((z + 6)/σ)^8 of S(k); the
// direct sum is used unless a = z/σ < 0.022 and σ > 215, where that is
// below 1e-16.
func (n *dgNoise) logS(k float64) float64 {
	z := k / n.sigma
	if n.terms(k) <= dgDirectMax {
		a, b := z/n.sigma, 0.5/n.sigma/n.sigma
		var s, c float64
		for j := 0.0; ; j++ {
			e := j * (a + b*j)
			if e > 45 {
				break
			}
			s, c = search.Neumaier(s, c, math.Exp(-e))
		}
		return -z*z/2 + math.Log(s+c)
	}
	is := 1 / n.sigma
	is2 := is * is
	z2 := z * z
	he1 := z
	he3 := z * (z2 - 3)
	he5 := z * (z2*(z2-10) + 15)
	he7 := z * (z2*(z2*(z2-21)+105) - 105)
	br := 0.5 + is*(he1/12+is2*(-he3/720+is2*(he5/30240-is2*he7/1209600)))
	integral := math.Log(n.sigma) + 0.5*math.Log(2*math.Pi) + logmath.NormSF(z)
	return logmath.Add(integral, -z2/2+math.Log(br))
}

func (n *dgNoise) logUpper(k float64) float64 { return n.logS(k) - n.logZ }

func (n *dgNoise) logPMF(x float64) float64 {
	z := x / n.sigma
	return -z*z/2 - n.logZ
}

func (n *dgNoise) cost() int { return n.c }

// span returns the window [lo, hi] of sampledMoment (see there).
func (n *dgNoise) span(delta, q, p float64) (lo, hi float64) {
	w0 := math.Ceil(10*n.sigma) + 1
	lo, hi = -w0, math.Ceil(delta)+w0
	if p > 0 {
		hi = math.Ceil(p*delta) + w0
	} else {
		lo = -math.Ceil(n.sigma*math.Sqrt(2*(50+p*math.Log1p(-q)))) - 1
	}
	return lo, hi
}

// window returns how many integers sampledMoment sums at order λ, both
// directions together.
func (n *dgNoise) window(delta, q, l float64) float64 {
	lo, hi := n.span(delta, q, l+1)
	lo2, hi2 := n.span(delta, q, -l)
	return hi - lo + hi2 - lo2
}

// dgSumMax is the most integers sampledMoment sums over one order.
const dgSumMax = 1 << 17

// sampledMoment returns an upper bound on log E_{Q_b}[(1 − q + q·r(X))^p],
// Q_b = N_Z(0, σ²) and r = P_b/Q_b with P_b = N_Z(Δ, σ²),
// log r(x) = Δ(2x − Δ)/(2σ²): the log moment of the Poisson-sampled pair's
// remove direction at p = λ+1 and of its add direction at p = −λ (Mironov,
// Talwar and Zhang 2019, §3, for any pair). It sums the integers of a
// window and bounds the rest: with G(w) = e^{−w²/(2σ²)}(1 + σ²/w) ≥
// Σ_{j≥0} e^{−(w+j)²/(2σ²)},
//
//	p ≥ 1: (1−q+qr)^p ≤ 1 left of Δ/2 (r ≤ 1); right of the window,
//	       (1−q+qr)^p ≤ (qr)^p·c^p, c = 1 + (1−q)/(q·r) at its edge, and
//	       Q_b·r^p is a Gaussian centred at pΔ times e^{(p²−p)Δ²/(2σ²)};
//	p < 0: (1−q+qr)^p ≤ (1−q)^p, and ≤ 1 right of Δ/2.
//
// The window reaches 10σ beyond the peaks (e^{−50} of a moment that is at
// least 1 by Jensen's inequality), and further left for p < 0 by the
// growth of (1−q)^p. ok is false when it would hold more than dgSumMax
// integers.
func (n *dgNoise) sampledMoment(delta, q, p float64) (m float64, ok bool) {
	s := n.sigma
	log1mq, logq := math.Log1p(-q), logmath.Log(q)
	lo, hi := n.span(delta, q, p)
	if !(hi-lo < dgSumMax) {
		return 0, false
	}
	d := delta / s
	terms := make([]float64, 0, int(hi-lo)+1)
	var big float64
	for x := lo; x <= hi; x++ {
		z := x / s
		t := -z*z/2 - n.logZ + p*logmath.Add(log1mq, logq+d*((2*x-delta)/(2*s)))
		terms = append(terms, t)
		big = math.Max(big, math.Abs(t))
	}
	m = logmath.SumExp(terms)
	logG := func(w float64) float64 { return -(w/s)*(w/s)/2 + math.Log1p(s*s/w) - n.logZ }
	// Beyond the window: the noise's mass on both sides (weighted by
	// (1−q)^p on the left for p < 0), and for p ≥ 1 q times the shifted
	// Gaussian beyond hi.
	left := logG(-lo + 1)
	if p < 0 {
		left += p * log1mq
	}
	m = logmath.Add(m, logmath.Add(left, logG(hi+1)))
	if p > 0 {
		// Right of hi, 1−q+qr ≤ qr·c with c = 1 + (1−q)/(q·r(hi+1)).
		logc := math.Log1p(math.Exp(log1mq - logq - d*((2*(hi+1)-delta)/(2*s))))
		m = logmath.Add(m, p*(logq+logc)+(p*p-p)*d*d/2+logG(hi+1-p*delta))
	}
	// Rounding: each term's exponent is within a few ulps of its size, and
	// the compensated sum is within a few ulps.
	return search.Up(m+1e-15+8e-16*big+1e-15*math.Abs(m), 4), true
}
