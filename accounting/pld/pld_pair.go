package pld

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
	"gonum.org/v1/gonum/integrate/quad"
)

// pldPair is one direction of the dominating pair of the Poisson-subsampled
// Gaussian mechanism with noise multiplier sigma and sampling rate q under
// add/remove adjacency (Zhu, Dong and Wang 2022, "Optimal Accounting of
// Differential Privacy via Characteristic Function", Proposition 30):
//
//	remove: P = (1−q)N(0,σ²) + qN(1,σ²),  Q = N(0,σ²);
//	add:    P = N(0,σ²),  Q = (1−q)N(0,σ²) + qN(1,σ²).
//
// The privacy loss L = log(dP/dQ) is monotone in the output x:
// L_remove(x) = log(1−q + q·e^{(2x−1)/(2σ²)}) and L_add = −L_remove.
type pldPair struct {
	sigma, q float64
	add      bool
	log1mq   float64 // log(1−q); −Inf when q = 1
	logq     float64
}

func newPLDPair(sigma, q float64, add bool) pldPair {
	return pldPair{sigma: sigma, q: q, add: add, log1mq: math.Log1p(-q), logq: logmath.Log(q)}
}

// lRemove returns L_remove(x) = log(1−q + q·e^{(2x−1)/(2σ²)}).
func (p *pldPair) lRemove(x float64) float64 {
	return logmath.Add(p.log1mq, p.logq+(2*x-1)/(2*p.sigma*p.sigma))
}

// xRemove returns the x with L_remove(x) = l, for l > log(1−q).
func (p *pldPair) xRemove(l float64) float64 {
	return p.sigma*p.sigma*(logmath.Sub(l, p.log1mq)-p.logq) + 0.5
}

// logMix returns log of (1−q)·e^{a} + q·e^{b}.
func (p *pldPair) logMix(a, b float64) float64 {
	return logmath.Add(p.log1mq+a, p.logq+b)
}

// pldTails holds log P(L > l), log Q(L > l), log P(L ≤ l), log Q(L ≤ l).
type pldTails struct {
	pT, qT, pH, qH float64
}

// tails returns the log tail and head masses of L under P and Q at l.
func (p *pldPair) tails(l float64) pldTails {
	ninf := math.Inf(-1)
	if !p.add {
		if l <= p.log1mq {
			return pldTails{0, 0, ninf, ninf}
		}
		x := p.xRemove(l)
		if math.IsInf(x, 1) {
			return pldTails{ninf, ninf, 0, 0}
		}
		c0, s0 := pldLogPhiBoth(x / p.sigma)
		c1, s1 := pldLogPhiBoth((x - 1) / p.sigma)
		return pldTails{pT: p.logMix(s0, s1), qT: s0, pH: p.logMix(c0, c1), qH: c0}
	}
	// add: L > l  ⇔  L_remove < −l  ⇔  x < xRemove(−l).
	if -l <= p.log1mq {
		return pldTails{ninf, ninf, 0, 0}
	}
	x := p.xRemove(-l)
	if math.IsInf(x, 1) {
		return pldTails{0, 0, ninf, ninf}
	}
	c0, s0 := pldLogPhiBoth(x / p.sigma)
	c1, s1 := pldLogPhiBoth((x - 1) / p.sigma)
	return pldTails{pT: c0, qT: p.logMix(c0, c1), pH: s0, qH: p.logMix(s0, s1)}
}

// pldLogPhiBoth returns log Φ(z) and log Φ̄(z): the smaller of the two
// directly (accurate deep in the tail), the other as log1p of minus it
// (accurate because that probability is at least 1/2).
func pldLogPhiBoth(z float64) (lc, ls float64) {
	if z < 0 {
		lc = logmath.NormCDF(z)
		return lc, math.Log1p(-math.Exp(lc))
	}
	ls = logmath.NormSF(z)
	return math.Log1p(-math.Exp(ls)), ls
}

// pldBinMass returns log of the mass of (a, b] given the log tails and heads at
// its ends, differencing whichever of the two is smaller so that the
// subtraction does not cancel, and logRef, the log of the larger operand of
// the difference (its rounding error is a few ulps of that operand).
func pldBinMass(tA, tB, hA, hB float64) (logMass, logRef float64) {
	if hB < -math.Ln2 {
		if hB <= hA {
			return math.Inf(-1), hB
		}
		return logmath.Sub(hB, hA), hB
	}
	if tA <= tB {
		return math.Inf(-1), tA
	}
	return logmath.Sub(tA, tB), tA
}

// truncation returns the loss values lLo < lHi outside which P has mass at
// most eta on each side, using x-quantiles of the two Gaussian components.
func (p *pldPair) truncation(eta float64) (lLo, lHi float64) {
	// Φ̄(z) ≤ e^{−z²/2} for z ≥ 1, so z = √(2 ln(1/η)) cuts ≤ η.
	z := math.Sqrt(2 * math.Log(1/eta))
	if z < 1 {
		z = 1
	}
	xLo, xHi := -p.sigma*z, 1+p.sigma*z
	if !p.add {
		// P(x > xHi) ≤ Φ̄(z) for both components; P(x < xLo) likewise.
		return p.lRemove(xLo), p.lRemove(xHi)
	}
	// P = N(0,σ²): L_add large ⇔ x small.
	return -p.lRemove(p.sigma * z), -p.lRemove(-p.sigma * z)
}

// hermite holds 40-point Gauss–Hermite nodes and weights, normalised so that
// Σ w_i f(√2·t_i) = E f(Z) for Z ~ N(0, 1).
var pldHermiteT, pldHermiteW = func() ([]float64, []float64) {
	const n = 40
	t, w := pldHermiteNodes(n)
	for i := range t {
		t[i] *= math.Sqrt2
		w[i] /= math.Sqrt(math.Pi)
	}
	return t, w
}()

// moments returns approximations of the mean and variance of L under P (by
// Gauss–Hermite quadrature). They only steer the choice of grid and window;
// no bound depends on their accuracy.
func (p *pldPair) moments() (mean, variance float64) {
	var m1, m2 float64
	loss := func(x float64) float64 {
		l := p.lRemove(x)
		if p.add {
			return -l
		}
		return l
	}
	comp := func(mu, weight float64) {
		for i, t := range pldHermiteT {
			l := loss(mu + p.sigma*t)
			m1 += weight * pldHermiteW[i] * l
			m2 += weight * pldHermiteW[i] * l * l
		}
	}
	if p.add {
		comp(0, 1)
	} else {
		comp(0, 1-p.q)
		comp(1, p.q)
	}
	v := m2 - m1*m1
	if v < 0 || math.IsNaN(v) {
		v = 0
	}
	return m1, v
}

// pldHermiteNodes returns the n-point Gauss–Hermite rule for ∫ e^{−t²} f(t) dt.
func pldHermiteNodes(n int) (t, w []float64) {
	t, w = make([]float64, n), make([]float64, n)
	quad.Hermite{}.FixedLocations(t, w, math.Inf(-1), math.Inf(1))
	return t, w
}

// pldDominating is one direction of a dominating pair (P, Q) whose privacy
// loss L = log dP/dQ the accountant discretises (pldDiscretise) and composes.
// pldPair, the Poisson-subsampled Gaussian, is the one implemented; another
// pair (e.g. a subsampled Laplace, or sampling without replacement) needs
// only these three methods.
type pldDominating interface {
	// tails returns log P(L > l), log Q(L > l), log P(L ≤ l), log Q(L ≤ l),
	// each to a relative error of at most pldRelSlack.
	tails(l float64) pldTails
	// truncation returns losses lLo < lHi outside which P has mass at most
	// eta on each side.
	truncation(eta float64) (lLo, lHi float64)
	// moments returns approximations of the mean and variance of L under P;
	// they only steer the grid and window, no bound depends on them.
	moments() (mean, variance float64)
}
