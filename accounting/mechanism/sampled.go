package mechanism

import (
	"math"
	"sync"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// poissonPair is one direction of the dominating pair of a mechanism
// Poisson-sampled at rate q under add-remove, made from any dominating pair
// base = (P_b, Q_b) of the unsampled mechanism's remove direction (P_b with
// the differing record, Q_b without it; Zhu, Dong and Wang 2022, "Optimal
// Accounting of Differential Privacy via Characteristic Function",
// Proposition 30, for the pair of each direction):
//
//	remove: P = (1−q)Q_b + qP_b,  Q = Q_b,  L = log(1−q + q·e^{L_b});
//	add:    P = Q_b,  Q = (1−q)Q_b + qP_b,  L = −log(1−q + q·e^{L_b}).
//
// L is monotone in the base loss L_b, so every tail is a mixture of the
// base's tails at one point: {L > l} = {L_b > g(l)} (remove) or
// {L_b < g(−l)} (add), g(l) = log((e^l − (1−q))/q). Any mechanism that
// states an unsampled pair gets its Poisson-sampled pairs from here; the
// Gaussian and the Laplace keep their closed forms in x.
type poissonPair struct {
	base         Pair
	q            float64
	add          bool
	log1mq, logq float64

	once     sync.Once
	mean, vr float64
}

func newPoissonPair(base Pair, q float64, add bool) *poissonPair {
	return &poissonPair{base: base, q: q, add: add, log1mq: math.Log1p(-q), logq: logmath.Log(q)}
}

// fromBase returns the remove loss log(1−q + q·e^{lb}) of a base loss lb.
func (p *poissonPair) fromBase(lb float64) float64 { return logmath.Add(p.log1mq, p.logq+lb) }

// Tails returns the log masses of the direction's loss on both sides of l.
func (p *poissonPair) Tails(l float64) Tails {
	ninf := math.Inf(-1)
	if !p.add {
		if l <= p.log1mq {
			return Tails{0, 0, ninf, ninf} // L > log(1−q) everywhere
		}
		b := p.base.Tails(logmath.Sub(l, p.log1mq) - p.logq)
		return Tails{
			PAbove: logmath.Add(p.log1mq+b.QAbove, p.logq+b.PAbove), QAbove: b.QAbove,
			PBelow: logmath.Add(p.log1mq+b.QBelow, p.logq+b.PBelow), QBelow: b.QBelow,
		}
	}
	// add: L > l ⇔ L_b < g(−l); {L_b ≤ t⁻}, t⁻ the float below g(−l),
	// stands for {L_b < g(−l)} (no loss of a pair here lies between).
	if -l <= p.log1mq {
		return Tails{ninf, ninf, 0, 0} // L < −log(1−q) everywhere
	}
	t := logmath.Sub(-l, p.log1mq) - p.logq
	b := p.base.Tails(math.Nextafter(t, math.Inf(-1)))
	return Tails{
		PAbove: b.QBelow, QAbove: logmath.Add(p.log1mq+b.QBelow, p.logq+b.PBelow),
		PBelow: b.QAbove, QBelow: logmath.Add(p.log1mq+b.QAbove, p.logq+b.PAbove),
	}
}

// Truncation starts from the base's truncation, mapped to L, and widens
// each end (by steps that double from 1e-9 of the range) until the
// direction's own tails beyond it are at most eta: the base's truncation
// bounds P_b's tails only, and the mixture and the add direction also
// carry Q_b's.
func (p *poissonPair) Truncation(eta float64) (lo, hi float64) {
	le := math.Log(eta)
	blo, bhi := p.base.Truncation(eta)
	blo, bhi = math.Min(blo, -bhi), math.Max(bhi, -blo)
	lo, hi = p.fromBase(blo), p.fromBase(bhi)
	if p.add {
		lo, hi = -hi, -lo
	}
	step := 1e-9 * math.Max(hi-lo, 1e-300)
	for i := 0; i < 80 && p.Tails(hi).PAbove > le; i++ {
		hi += step * math.Exp2(float64(i))
	}
	for i := 0; i < 80 && p.Tails(lo).PBelow > le; i++ {
		lo -= step * math.Exp2(float64(i))
	}
	return lo, hi
}

// Moments returns the mean and variance of L under P from its tails on
// 512 cells between the 1e-12 truncation points (steering only).
func (p *poissonPair) Moments() (mean, variance float64) {
	p.once.Do(func() {
		lo, hi := p.Truncation(1e-12)
		const n = 512
		w := (hi - lo) / n
		prev := math.Exp(p.Tails(lo).PBelow)
		m0, m1, m2 := prev, prev*lo, prev*lo*lo
		for i := 1; i <= n; i++ {
			x := lo + float64(i)*w
			c := math.Exp(p.Tails(x).PBelow)
			m, mid := math.Max(c-prev, 0), x-w/2
			m0, m1, m2 = m0+m, m1+m*mid, m2+m*mid*mid
			prev = c
		}
		top := math.Max(1-prev, 0)
		m0, m1, m2 = m0+top, m1+top*hi, m2+top*hi*hi
		p.mean = m1 / m0
		p.vr = math.Max(m2/m0-p.mean*p.mean, 0)
	})
	return p.mean, p.vr
}

// Support maps the base's finitely many atoms through L; a base with
// atoms and no density gives a loss with atoms and no density. Only the
// remove direction's P has mass at +∞ (q times P_b's).
func (p *poissonPair) Support() Support {
	b := p.base.Support()
	s := Support{Lattice: b.Lattice, LogInf: math.Inf(-1)}
	if !p.add {
		s.LogInf = p.logq + b.LogInf // P_b's mass where Q_b has none
	}
	for _, a := range b.Atoms {
		l := p.fromBase(a)
		if p.add {
			l = -l
		}
		s.Atoms = append(s.Atoms, l)
	}
	return s
}

// TailsCost is the base's: one base Tails per Tails.
func (p *poissonPair) TailsCost() int { return p.base.TailsCost() }
