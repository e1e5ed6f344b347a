package mechanism

import (
	"math"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// mixture is the mixture-of-Gaussians mechanism
// ([accounting.MixtureOfGaussians]): N(0, σ²) without the record, the
// mixture Σ p_i N(c_i, σ²) with it, c_i ≥ 0, unsampled, under add-remove.
// spec holds the components of the canonical event Normalize makes
// (mixtureSpec), so that the value stays comparable.
type mixture struct {
	sigma float64
	spec  string
	sampling
}

// mixtureSpec encodes a mixture's components as "c1/p1,c2/p2,...", each
// float64 in its shortest exact form.
func mixtureSpec(e accounting.MixtureOfGaussians) string {
	var b strings.Builder
	for i, x := range e.Sensitivities {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		b.WriteByte('/')
		b.WriteString(strconv.FormatFloat(e.SamplingProbs[i], 'g', -1, 64))
	}
	return b.String()
}

// parse decodes spec (made by mixtureSpec: valid) into the sensitivities
// and probabilities.
func (m mixture) parse() (c, p []float64) {
	for _, part := range strings.Split(m.spec, ",") {
		a, b, _ := strings.Cut(part, "/")
		x, _ := strconv.ParseFloat(a, 64)
		y, _ := strconv.ParseFloat(b, 64)
		c, p = append(c, x), append(p, y)
	}
	return c, p
}

func (m mixture) components() (c, logp []float64) {
	c, p := m.parse()
	logp = make([]float64, len(p))
	for i := range p {
		logp[i] = math.Log(p[i])
	}
	return c, logp
}

func (m mixture) Name() string { return "MixtureOfGaussians" }

func (m mixture) Event() accounting.Event {
	c, p := m.parse()
	return m.wrap(accounting.MixtureOfGaussians{StandardDeviation: m.sigma, Sensitivities: c, SamplingProbs: p})
}

func (m mixture) order() []float64 {
	c, p := m.parse()
	key := []float64{float64(len(c))}
	key = append(append(key, c...), p...)
	return m.sampling.order(m.sigma, 7, key...)
}

// PLD: the remove pair (the mixture, N(0, σ²)) and the add pair (N(0, σ²),
// the mixture), exactly the mechanism's output distributions; a mixture
// of one component c is the Gaussian pair of σ/c.
func (m mixture) PLD() (*PLD, error) {
	if m.kind != accounting.SamplingNone || m.adj != accounting.AddRemove {
		return nil, errorf("no privacy-loss pair for a %s", m.describe("mixture of Gaussians"))
	}
	c, logp := m.components()
	rem := &mixturePair{sigma: m.sigma, c: c, logp: logp}
	add := &mixturePair{sigma: m.sigma, c: c, logp: logp, add: true}
	// Attained: a record whose contribution to a one-dimensional sum is
	// c_i with probability p_i (a user's sampled examples, all along one
	// direction) realises both pairs.
	out := &PLD{Remove: rem, Add: add, MaxLoss: math.Inf(1), Attained: true}
	if len(c) == 1 {
		out.GaussianSigma = m.sigma / c[0]
		out.Symmetric = true
	}
	return out, nil
}

// RDP: the Gaussian curve of the largest shift, α·c_max²/(2σ²): the mixture
// against N(0, σ²) in either order is a mixture of pairs N(c_i, σ²),
// N(0, σ²), and a Rényi divergence of mixtures is at most the largest of
// the components' (joint quasi-convexity, van Erven and Harremoës 2014).
// Sound, and loose when most of the mass is on small shifts; pld is exact.
func (m mixture) RDP() (RDP, error) {
	if m.kind != accounting.SamplingNone || m.adj != accounting.AddRemove {
		return nil, errorf("no Rényi bound for a %s", m.describe("mixture of Gaussians"))
	}
	rho, _, _ := m.ZCDP()
	return zcdpRDP{rho: rho}, nil
}

// ZCDP: c_max²/(2σ²), the largest component's Gaussian (see RDP), rounded
// up.
func (m mixture) ZCDP() (rho, xi float64, err error) {
	c, _ := m.components()
	r := c[len(c)-1] / m.sigma
	return math.Max(math.Nextafter(r*r/2*(1+4*0x1p-52), math.Inf(1)), math.SmallestNonzeroFloat64), 0, nil
}

// mixturePair is one direction of the mixture of Gaussians. Its remove
// loss L(x) = log Σ p_i exp(c_i(2x − c_i)/(2σ²)) is increasing in x (its
// derivative is a weighted mean of c_i/σ² ≥ 0) and tends to log p_0 (the
// probability of the shift 0, if any) as x → −∞; under add the loss is
// −L(x), with P = N(0, σ²).
type mixturePair struct {
	sigma   float64
	c, logp []float64 // shifts ascending, log probabilities
	add     bool
	work    *mixtureWork // nil but in tests that count work
}

// mixtureWork counts a mixture pair's work: evaluations of the loss, and
// component terms evaluated with an exponential or a normal tail (the
// cost of a Tails). Not safe for concurrent use: only tests set it.
type mixtureWork struct{ losses, terms int }

// count adds one loss evaluation (loss true) or none, and terms terms.
func (p *mixturePair) count(loss bool, terms int) {
	if p.work == nil {
		return
	}
	if loss {
		p.work.losses++
	}
	p.work.terms += terms
}

// lRemove returns L(x).
func (p *mixturePair) lRemove(x float64) float64 {
	s2 := 2 * p.sigma * p.sigma
	l := math.Inf(-1)
	p.count(true, len(p.c))
	for i, c := range p.c {
		l = logmath.Add(l, p.logp[i]+c*(2*x-c)/s2)
	}
	return l
}

// lMin is the infimum of L: log p_0 when the smallest shift is 0, else −∞.
func (p *mixturePair) lMin() float64 {
	if p.c[0] == 0 {
		return p.logp[0]
	}
	return math.Inf(-1)
}

// xOf returns x with L(x) ≤ l < L(x') for the next float64 x' (l > lMin),
// by bracketing and bisection to adjacent floats: {L > l} = {X > x}.
func (p *mixturePair) xOf(l float64) float64 {
	above := func(x float64) (bool, error) { return p.lRemove(x) > l, nil }
	// Each end is grown on its own, from ∓σ by doubling (at most 2100
	// times, which reaches ∓∞), and keeps its place when it needs no
	// growth: the bisection starts from [−σ, 2^k σ] or [−2^k σ, σ].
	grow := func(x0 float64, up bool) float64 {
		n := 0
		double := func(x float64) (float64, bool) { n++; return 2 * x, n <= 2100 }
		pr := search.Problem[float64]{Holds: above, Side: search.Upper, Lo: x0, Hi: x0,
			Done: func(lo, hi float64) bool { return true }}
		if up {
			pr.Up = double
		} else {
			pr.Down = double
		}
		o, _ := search.Solve(pr)
		if up {
			return o.Hi
		}
		return o.Lo
	}
	lo, hi := grow(-p.sigma, false), grow(p.sigma, true)
	if math.IsInf(hi, 1) {
		return hi
	}
	if math.IsInf(lo, -1) {
		return lo
	}
	o, _ := search.Solve(search.Problem[float64]{
		Holds: above, Side: search.Upper, Lo: lo, Hi: hi, LoKnown: true, HiKnown: true,
		Next: func(lo, hi float64) (float64, bool) {
			mid := lo/2 + hi/2 // no overflow at the ends of the float64 range
			return mid, mid > lo && mid < hi
		},
	})
	return o.Lo
}

// mixTails returns log Σ p_i Φ((x − c_i)/σ) and log Σ p_i Φ̄((x − c_i)/σ).
func (p *mixturePair) mixTails(x float64) (below, above float64) {
	below, above = math.Inf(-1), math.Inf(-1)
	p.count(false, len(p.c))
	for i, c := range p.c {
		lc, ls := logPhiBoth((x - c) / p.sigma)
		below = logmath.Add(below, p.logp[i]+lc)
		above = logmath.Add(above, p.logp[i]+ls)
	}
	return below, above
}

// Tails returns the log tail and head masses of the loss under P and Q at l.
func (p *mixturePair) Tails(l float64) Tails {
	ninf := math.Inf(-1)
	lr := l
	if p.add {
		lr = -l
	}
	if lr <= p.lMin() {
		if p.add { // L_add > l ⇔ L < −l: never
			return Tails{ninf, ninf, 0, 0}
		}
		return Tails{0, 0, ninf, ninf}
	}
	x := p.xOf(lr)
	if math.IsInf(x, 1) {
		if p.add {
			return Tails{0, 0, ninf, ninf}
		}
		return Tails{ninf, ninf, 0, 0}
	}
	mb, ma := p.mixTails(x)
	c0, s0 := logPhiBoth(x / p.sigma)
	if !p.add {
		// L > l ⇔ X > x; P the mixture, Q = N(0, σ²).
		return Tails{PAbove: ma, QAbove: s0, PBelow: mb, QBelow: c0}
	}
	// L_add > l ⇔ L < −l ⇔ X ≤ x; P = N(0, σ²), Q the mixture.
	return Tails{PAbove: c0, QAbove: mb, PBelow: s0, QBelow: ma}
}

// Truncation returns losses outside which P has mass at most eta on each
// side, from x-quantiles of the components.
func (p *mixturePair) Truncation(eta float64) (lLo, lHi float64) {
	z := math.Max(math.Sqrt(2*math.Log(1/eta)), 1)
	if !p.add {
		return p.lRemove(p.c[0] - p.sigma*z), p.lRemove(p.c[len(p.c)-1] + p.sigma*z)
	}
	return -p.lRemove(p.sigma * z), -p.lRemove(-p.sigma * z)
}

// Moments returns the mean and variance of the loss under P by
// Gauss–Hermite quadrature (steering only).
func (p *mixturePair) Moments() (mean, variance float64) {
	var m1, m2 float64
	comp := func(mu, w float64) {
		for i, t := range hermiteT {
			l := p.lRemove(mu + p.sigma*t)
			if p.add {
				l = -l
			}
			m1 += w * hermiteW[i] * l
			m2 += w * hermiteW[i] * l * l
		}
	}
	if p.add {
		comp(0, 1)
	} else {
		for i, c := range p.c {
			comp(c, math.Exp(p.logp[i]))
		}
	}
	v := m2 - m1*m1
	if v < 0 || math.IsNaN(v) {
		v = 0
	}
	return m1, v
}

// Support: a density, no atoms.
func (p *mixturePair) Support() Support { return continuous }

// TailsCost: a bisection of about a hundred loss evaluations of one
// exponential per component, and the component tails.
func (p *mixturePair) TailsCost() int { return 40 * len(p.c) }
