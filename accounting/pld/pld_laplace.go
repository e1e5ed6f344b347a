package pld

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// pldLaplacePair is one direction of the dominating pair of the
// Poisson-subsampled Laplace mechanism with scale b (sensitivity 1) and
// sampling rate q under add/remove adjacency (Zhu, Dong, Wang 2022,
// Proposition 30, as for pldPair; Koskela et al. 2021 for the Laplace
// PLD):
//
//	remove: P = (1−q)Lap(0,b) + qLap(1,b),  Q = Lap(0,b);
//	add:    P = Lap(0,b),  Q = (1−q)Lap(0,b) + qLap(1,b).
//
// With r(x) = e^{(|x|−|x−1|)/b} the density ratio of Lap(1,b) to Lap(0,b)
// (e^{−1/b} for x ≤ 0, e^{(2x−1)/b} on [0, 1], e^{1/b} for x ≥ 1), the
// remove loss L(x) = log(1−q + q·r(x)) is non-decreasing: it has atoms at
// its two ends, L(0) and L(1), and is continuous between. L_add = −L.
type pldLaplacePair struct {
	b, q   float64
	add    bool
	log1mq float64 // log(1−q); −Inf when q = 1
	logq   float64
	lMin   float64 // L(0) = log(1−q + q·e^{−1/b})
	lMax   float64 // L(1) = log(1−q + q·e^{1/b})
}

func newPLDLaplacePair(b, q float64, add bool) *pldLaplacePair {
	p := &pldLaplacePair{b: b, q: q, add: add, log1mq: math.Log1p(-q), logq: logmath.Log(q)}
	p.lMin = logmath.Add(p.log1mq, p.logq-1/b)
	p.lMax = logmath.Add(p.log1mq, p.logq+1/b)
	return p
}

// xOf returns the x in [0, 1] with L(x) = l, for lMin ≤ l ≤ lMax:
// (2x−1)/b = log((e^l − (1−q))/q).
func (p *pldLaplacePair) xOf(l float64) float64 {
	x := (p.b*(logmath.Sub(l, p.log1mq)-p.logq) + 1) / 2
	return math.Min(math.Max(x, 0), 1)
}

// logSF returns log P(X > x) and log P(X ≤ x) for X ~ Lap(mu, b), x in
// [0, 1] and mu ∈ {0, 1}, each without cancellation.
func (p *pldLaplacePair) logSF(x, mu float64) (sf, cdf float64) {
	z := (x - mu) / p.b
	if z >= 0 {
		sf = z*-1 - math.Ln2
		return sf, math.Log1p(-math.Exp(sf))
	}
	cdf = z - math.Ln2
	return math.Log1p(-math.Exp(cdf)), cdf
}

// tails returns the log tail and head masses of the direction's loss at l.
func (p *pldLaplacePair) tails(l float64) pldTails {
	ninf := math.Inf(-1)
	lr := l // the remove loss whose upper set is the event
	if p.add {
		lr = -l
	}
	// Remove-loss events {L > lr} (or, for add, {L < lr}) are {X > x}
	// (or {X < x}) with x = xOf(lr), clamped at the atoms.
	var x float64
	switch {
	case !p.add && lr < p.lMin, p.add && lr > p.lMax:
		return pldTails{0, 0, ninf, ninf} // everything is above l
	case !p.add && lr >= p.lMax, p.add && lr <= p.lMin:
		return pldTails{ninf, ninf, 0, 0} // nothing is above l
	default:
		x = p.xOf(lr)
	}
	s0, c0 := p.logSF(x, 0)
	s1, c1 := p.logSF(x, 1)
	mixS := logmath.Add(p.log1mq+s0, p.logq+s1)
	mixC := logmath.Add(p.log1mq+c0, p.logq+c1)
	if !p.add {
		return pldTails{pT: mixS, qT: s0, pH: mixC, qH: c0}
	}
	// add: P = Lap(0,b), Q = the mixture; L_add > l ⇔ X < x. At the atom
	// L(0) the event {L < lr} excludes X ≤ 0 only when lr = lMin exactly,
	// which the switch above sent to "nothing above".
	return pldTails{pT: c0, qT: mixC, pH: s0, qH: mixS}
}

// atoms returns the losses that carry mass on their own (the ends).
func (p *pldLaplacePair) atoms() []float64 {
	if p.add {
		return []float64{-p.lMax, -p.lMin}
	}
	return []float64{p.lMax, p.lMin}
}

// truncation returns the ends of the bounded loss, widened a little so
// that the atoms lie inside the grid.
func (p *pldLaplacePair) truncation(eta float64) (lLo, lHi float64) {
	lo, hi := p.lMin, p.lMax
	if p.add {
		lo, hi = -p.lMax, -p.lMin
	}
	pad := 1e-9 * math.Max(hi-lo, 1e-300)
	return lo - pad, hi + pad
}

// moments returns the mean and variance of the loss under P by Simpson's
// rule on [0, 1] plus the atoms (steering only).
func (p *pldLaplacePair) moments() (mean, variance float64) {
	loss := func(x float64) float64 {
		var r float64
		switch {
		case x <= 0:
			r = -1 / p.b
		case x >= 1:
			r = 1 / p.b
		default:
			r = (2*x - 1) / p.b
		}
		l := logmath.Add(p.log1mq, p.logq+r)
		if p.add {
			return -l
		}
		return l
	}
	dens := func(x, mu float64) float64 { return math.Exp(-math.Abs(x-mu)/p.b) / (2 * p.b) }
	pdf := func(x float64) float64 {
		if p.add {
			return dens(x, 0)
		}
		return (1-p.q)*dens(x, 0) + p.q*dens(x, 1)
	}
	cdfAt := func(x, mu float64) float64 { // P(Lap(mu,b) ≤ x)
		z := (x - mu) / p.b
		if z < 0 {
			return math.Exp(z) / 2
		}
		return 1 - math.Exp(-z)/2
	}
	pLow, pHigh := cdfAt(0, 0), 1-cdfAt(1, 0)
	if !p.add {
		pLow = (1-p.q)*cdfAt(0, 0) + p.q*cdfAt(0, 1)
		pHigh = (1-p.q)*(1-cdfAt(1, 0)) + p.q*(1-cdfAt(1, 1))
	}
	m0 := pLow + pHigh
	m1 := pLow*loss(0) + pHigh*loss(1)
	m2 := pLow*loss(0)*loss(0) + pHigh*loss(1)*loss(1)
	const n = 200
	for i := 0; i <= n; i++ {
		x := float64(i) / n
		w := 2.0
		if i == 0 || i == n {
			w = 1
		} else if i%2 == 1 {
			w = 4
		}
		w *= pdf(x) / (3 * n)
		l := loss(x)
		m0 += w
		m1 += w * l
		m2 += w * l * l
	}
	mean = m1 / m0
	return mean, math.Max(m2/m0-mean*mean, 0)
}
