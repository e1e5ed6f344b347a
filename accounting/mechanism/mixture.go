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
	// binK and binQ are the event's BinomialCount and BinomialRate: when
	// binK > 0 the components listed are the run of Binomial(binK, binQ)
	// shifts they cover, and the rest is the tail (tail).
	binK int
	binQ float64
	sampling
}

// tail returns the binomial tail of the mixture, or nil when it has none.
func (m mixture) tail() *accounting.BinomialTail {
	if m.binK == 0 {
		return nil
	}
	c, _ := m.parse()
	return accounting.NewBinomialTail(m.binK, m.binQ, int(c[0]), int(c[len(c)-1]))
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
		logp[i] = logmath.Log(p[i]) // math.Log gives −709.09 for every subnormal
	}
	return c, logp
}

func (m mixture) Name() string { return "MixtureOfGaussians" }

func (m mixture) Event() accounting.Event {
	c, p := m.parse()
	return m.wrap(accounting.MixtureOfGaussians{StandardDeviation: m.sigma, Sensitivities: c, SamplingProbs: p,
		BinomialCount: m.binK, BinomialRate: m.binQ})
}

func (m mixture) order() []float64 {
	c, p := m.parse()
	key := []float64{float64(len(c))}
	key = append(append(key, c...), p...)
	return m.sampling.order(m.sigma, 7, append(key, float64(m.binK), m.binQ)...)
}

// PLD: the remove pair (the mixture, N(0, σ²)) and the add pair (N(0, σ²),
// the mixture), exactly the mechanism's output distributions; a mixture
// of one component c is the Gaussian pair of σ/c.
//
// With a binomial tail (the real mixture M = (1 − η)A + ηT, A the listed
// components, T the tail's), each pair is A's composed with the pair of
// an (0, η)-DP step, R_η = ((η, 1 − η, 0), (0, 1 − η, η)) on three points
// (loss +∞, 0, −∞): P(L > l) = η + (1 − η)·P_A(L_A > l), and so on (see
// mixturePair.Tails). It dominates M's pairs for every α ≥ 0 in the
// hockey-stick divergence H_α(P‖Q) = sup_S P(S) − α·Q(S), whose value
// for the composition is η + (1 − η)·H_α(A's pair):
//
//	remove: M(S) − αN(S) ≤ η + (1 − η)A(S) − αN(S) ≤ η + (1 − η)(A(S) − αN(S)),
//	add:    N(S) − αM(S) ≤ N(S) − α(1 − η)A(S) = ηN(S) + (1 − η)(N(S) − αA(S))
//	                     ≤ η + (1 − η)(N(S) − αA(S)).
//
// So T steps cost at most T·η more δ than A's. These pairs are not
// attained. The real user's δ over T steps is at least A's less
// T·η·(1 + e^ε) (M^T ≥ (1 − η)^T·A^T for the remove direction, M^T(S) ≤
// A^T(S) + T·η for the add direction), and the pairs' at most A's plus T·η,
// so the pairs' lower bound is one on the real user's less T·η·(2 + e^ε).
// For a user mixture (η < 5·e^−708, [accounting.UserMixture]) Attained
// stays set and Slack is η: the pld accountant subtracts that slack from
// its lower ends (pld.Accountant.EpsilonBracket). For a tail
// of mass above e^−700 (an event written by hand) Attained is false,
// with no witness, and a composition has no lower end.
func (m mixture) PLD() (*PLD, error) {
	if m.kind != accounting.SamplingNone || m.adj != accounting.AddRemove {
		return nil, errorf("no privacy-loss pair for a %s", m.describe("mixture of Gaussians"))
	}
	c, logp := m.components()
	lo, hi := core(c, logp)
	logEta := math.Inf(-1)
	if t := m.tail(); t != nil {
		logEta = t.LogMass()
	}
	hasTail := !math.IsInf(logEta, -1)
	rem := &mixturePair{sigma: m.sigma, c: c, logp: logp, coreLo: lo, coreHi: hi, tail: hasTail, logEta: logEta}
	add := &mixturePair{sigma: m.sigma, c: c, logp: logp, coreLo: lo, coreHi: hi, add: true, tail: hasTail, logEta: logEta}
	// Attained: a record whose contribution to a one-dimensional sum is
	// c_i with probability p_i (a user's sampled examples, all along one
	// direction) realises both pairs.
	out := &PLD{Remove: rem, Add: add, MaxLoss: math.Inf(1), Attained: !(logEta > tailAttainedMax)}
	if hasTail && out.Attained {
		out.Slack = math.Nextafter(math.Exp(logEta), math.Inf(1))
	}
	if len(c) == 1 && !hasTail {
		out.GaussianSigma = m.sigma / c[0]
		out.Symmetric = true
	}
	return out, nil
}

// RDP: both directions' Rényi divergences, certified bounds, each at most the
// Gaussian curve of the largest shift (see mixtureRDP); with a binomial
// tail, the listed components' curve plus the tail's (see mixtureRDP.at).
func (m mixture) RDP() (RDP, error) {
	if m.kind != accounting.SamplingNone || m.adj != accounting.AddRemove {
		return nil, errorf("no Rényi bound for a %s", m.describe("mixture of Gaussians"))
	}
	c, logp := m.components()
	r := newMixtureRDP(m.sigma, c, logp, gaussRho(c[len(c)-1]/m.sigma))
	if t := m.tail(); t != nil {
		r.tail = t
		r.tailGauss = zcdpRDP{rho: gaussRho(math.Max(c[len(c)-1], t.MaxShift()) / m.sigma)}
	}
	return r, nil
}

// ZCDP: c_max²/(2σ²), the largest component's Gaussian, rounded up: the
// mixture against N(0, σ²) in either order is a mixture of pairs N(c_i,
// σ²), N(0, σ²), and a Rényi divergence of mixtures is at most the
// largest of the components' (joint quasi-convexity, van Erven and
// Harremoës 2014). With a binomial tail the largest shift is that of the
// tail (the binomial count k), not the largest one listed.
func (m mixture) ZCDP() (rho, xi float64, err error) {
	c, _ := m.components()
	top := c[len(c)-1]
	if t := m.tail(); t != nil {
		top = math.Max(top, t.MaxShift())
	}
	return gaussRho(top / m.sigma), 0, nil
}

// tailAttainedMax is the largest log η of a tail whose mixture's pairs
// count as attained (see mixture.PLD): e^−700, above every user mixture's
// 5·e^−708 (and the bound accounting.BinomialTail gives on it: at most
// e^−708.09 measured).
const tailAttainedMax = -700

// gaussRho returns r²/2 rounded up (at least the smallest float64): the
// zCDP ρ of the Gaussian of sensitivity over noise r.
func gaussRho(r float64) float64 {
	return math.Max(math.Nextafter(r*r/2*(1+4*0x1p-52), math.Inf(1)), math.SmallestNonzeroFloat64)
}

// mixturePair is one direction of the mixture of Gaussians. Its remove
// loss L(x) = log Σ p_i exp(c_i(2x − c_i)/(2σ²)) is increasing in x (its
// derivative is a weighted mean of c_i/σ² ≥ 0) and tends to log p_0 (the
// probability of the shift 0, if any) as x → −∞; under add the loss is
// −L(x), with P = N(0, σ²).
type mixturePair struct {
	sigma   float64
	c, logp []float64 // shifts ascending, log probabilities
	coreLo  int       // the components' concave core, [coreLo, coreHi]
	coreHi  int       // (see core and peak)
	add     bool
	// tail reports a binomial tail of mass η, logEta = log η: the pair is
	// then the listed components' composed with R_η (see mixture.PLD).
	tail   bool
	logEta float64
	work   *mixtureWork // nil but in tests that count work
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

// lseCut is how far below the largest term a term of the mixture's
// log-sum-exps may lie and still be summed: the terms left out are each
// below e^−50 of the sum, at most MaxMixtureComponents·e^−50 ≈ 2e-19 of
// it together, far inside [TailsRelError].
const lseCut = 50

// lRemove returns L(x).
func (p *mixturePair) lRemove(x float64) float64 {
	l, _ := p.loss(x, true)
	return l
}

// loss returns L(x) (all components, zero shift included) or, with all
// false, L⁺(x) = log Σ_{c_i > 0} p_i exp(c_i(2x − c_i)/(2σ²)), and the
// derivative of that function: the weighted mean of c_i/σ² under the
// components' posterior weights at x. Only the terms within lseCut of the
// largest are summed (see peak).
func (p *mixturePair) loss(x float64, all bool) (l, dl float64) {
	s2 := 2 * p.sigma * p.sigma
	first := 0
	if !all && p.c[0] == 0 {
		first = 1
	}
	term := func(i int) float64 { c := p.c[i]; return p.logp[i] + c*(2*x-c)/s2 }
	var a lse
	var sumC float64 // Σ c_i e^{t_i − a.m}
	n := 0
	p.peak(first, len(p.c)-1, term, term, func(i int, t float64) {
		n++
		r, e := a.add(t)
		sumC = sumC*r + e*p.c[i]
	})
	p.count(true, n)
	if a.s == 0 || math.IsInf(a.m, 0) || math.IsNaN(a.m) {
		return a.log(), 0
	}
	return a.log(), sumC / a.s / (p.sigma * p.sigma)
}

// peak calls add(i, t) for the terms t = term(i), i in [lo, hi], that
// are within lseCut of the largest, each once, and perhaps for others:
// the terms left out are each below e^−lseCut of the largest. bound(i) ≥
// term(i) is a cheaper bound (log p_i for a tail, term itself when it is
// cheap). On the concave core of the components (see core) every sequence
// summed here is concave in i: log p_i plus a concave function of the
// shift (c(2x − c)/(2σ²), log Φ((x − c)/σ), log Φ̄((x − c)/σ)). Its peak is
// found by bisection on the sign of its differences and the walk goes
// outwards from it, stopping on each side at the first term lseCut below
// the largest (those beyond are smaller still): O(log n) terms plus those
// near the peak. Each component outside the core is added unless its
// bound is lseCut below the largest term so far.
func (p *mixturePair) peak(lo, hi int, term, bound func(i int) float64, add func(i int, t float64)) {
	m := math.Inf(-1)
	take := func(i int, t float64) bool {
		if t < m-lseCut || math.IsInf(t, -1) {
			return false
		}
		add(i, t)
		m = math.Max(m, t)
		return true
	}
	a, b := max(lo, p.coreLo), min(hi, p.coreHi)
	if a <= b {
		lo2, hi2 := a, b
		for lo2 < hi2 {
			if mid := lo2 + (hi2-lo2)/2; term(mid+1) > term(mid) {
				lo2 = mid + 1
			} else {
				hi2 = mid
			}
		}
		take(lo2, term(lo2))
		for i := lo2 - 1; i >= a && take(i, term(i)); i-- {
		}
		for i := lo2 + 1; i <= b && take(i, term(i)); i++ {
		}
	}
	for i := lo; i <= hi; i++ {
		if i == a && a <= b {
			i = b
			continue
		}
		if !(bound(i) < m-lseCut) {
			take(i, term(i))
		}
	}
}

// core returns the longest run [lo, hi] of components around the most
// probable one whose shifts are equally spaced and whose log
// probabilities, as computed, are concave: for the Binomial(k, q) weights
// of a user's examples (log-concave: the ratio of neighbours (k −
// c)q/((c + 1)(1 − q)) decreases in c) the run ends where the
// probabilities become subnormal and their logarithms lose bits (K 1000
// at q 0.0064: 250 of 260 components). Exact comparisons: a component
// that breaks either property, by rounding or not, ends the run.
func core(c, logp []float64) (lo, hi int) {
	j := 0
	for i := range logp {
		if logp[i] > logp[j] {
			j = i
		}
	}
	lo, hi = j, j
	var d float64
	for hi+1 < len(c) && (hi == lo || c[hi+1]-c[hi] == d && logp[hi+1]-logp[hi] <= logp[hi]-logp[hi-1]) {
		d = c[hi+1] - c[hi]
		hi++
	}
	for lo > 0 && (hi == lo || c[lo]-c[lo-1] == d && logp[lo]-logp[lo-1] >= logp[lo+1]-logp[lo]) {
		d = c[lo] - c[lo-1]
		lo--
	}
	return lo, hi
}

// lMin is the infimum of L: log p_0 when the smallest shift is 0, else −∞.
func (p *mixturePair) lMin() float64 {
	if p.c[0] == 0 {
		return p.logp[0]
	}
	return math.Inf(-1)
}

// xOf returns x with L(x) ≤ l < L(x') for the next float64 x' (l > lMin):
// {L > l} = {X > x}. Newton's method finds the root of L⁺(x) = l⁺, the
// loss of the shifted components alone against its target l⁺ =
// log(e^l − p_0) (l itself without a zero shift): L⁺ is a log-sum-exp of
// functions affine in x with positive slopes, so it is increasing and
// convex and nearly affine far out on either side, and Newton's iterates
// from the right of the root decrease to it quadratically. They start at
// the smallest x_i at which one component's term alone reaches l⁺ (L⁺
// is at least each term, so the root lies left of x_i, and L⁺(x_i) is at
// most l⁺ + log n). Then a bracket of L itself around the result, grown
// from a few ulps, is bisected to adjacent floats: the same answer as a
// bisection from scratch (xOfBisect, the fallback when Newton fails), in
// about a dozen evaluations of L instead of sixty to a thousand.
func (p *mixturePair) xOf(l float64) float64 {
	x, ok := p.newton(l)
	if !ok {
		return p.xOfBisect(l)
	}
	above := func(x float64) bool { return p.lRemove(x) > l }
	lo, hi := x, x
	d := math.Max(math.Abs(x), p.sigma) * 0x1p-50
	grow := func(ok func(x float64) bool, dir float64) (float64, bool) {
		for range 2100 {
			if y := x + dir*d; ok(y) {
				return y, true
			}
			d *= 2
		}
		return 0, false
	}
	if above(x) {
		lo, ok = grow(func(y float64) bool { return !above(y) }, -1)
	} else {
		hi, ok = grow(above, 1)
	}
	if !ok || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return p.xOfBisect(l)
	}
	return p.bisect(l, lo, hi)
}

// newton returns an approximate root of L⁺(x) = l⁺ (see xOf), or false
// when there is none to find in float64 (no shifted component, overflow,
// no convergence in 200 steps).
func (p *mixturePair) newton(l float64) (float64, bool) {
	target := l
	if p.c[0] == 0 {
		target = logmath.Sub(l, p.logp[0]) // l > lMin = log p_0
	}
	s2 := 2 * p.sigma * p.sigma
	x := math.Inf(1)
	for i, c := range p.c {
		if c > 0 {
			x = math.Min(x, (s2*(target-p.logp[i])/c+c)/2)
		}
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, false
	}
	f, d := p.loss(x, false)
	for range 200 {
		if !(f > target) {
			return x, true // at the root, or past it by rounding
		}
		if !(d > 0) || math.IsInf(d, 0) {
			return 0, false
		}
		nx := x - (f-target)/d
		if !(nx < x) {
			return x, true // no progress: at the root to rounding
		}
		x = nx
		f, d = p.loss(x, false)
	}
	return 0, false
}

// xOfBisect is xOf by bisection alone: each end grown on its own, from
// ∓σ by doubling (at most 2100 times, which reaches ∓∞), and keeping its
// place when it needs no growth; the bisection starts from [−σ, 2^k σ] or
// [−2^k σ, σ].
func (p *mixturePair) xOfBisect(l float64) float64 {
	above := func(x float64) (bool, error) { return p.lRemove(x) > l, nil }
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
	return p.bisect(l, lo, hi)
}

// bisect narrows lo < hi with L(lo) ≤ l < L(hi) to adjacent floats and
// returns the lower end.
func (p *mixturePair) bisect(l, lo, hi float64) float64 {
	o, _ := search.Solve(search.Problem[float64]{
		Holds: func(x float64) (bool, error) { return p.lRemove(x) > l, nil },
		Side:  search.Upper, Lo: lo, Hi: hi, LoKnown: true, HiKnown: true,
		Next: func(lo, hi float64) (float64, bool) {
			mid := lo/2 + hi/2 // no overflow at the ends of the float64 range
			return mid, mid > lo && mid < hi
		},
	})
	return o.Lo
}

// lse is a running log-sum-exp: the log of s·e^m (the zero value is
// the empty sum).
type lse struct{ m, s float64 }

// add adds e^t. It returns the factor r by which s was rescaled (1 unless
// t is a new largest term) and the term added to s, e^{t − m}.
func (a *lse) add(t float64) (r, e float64) {
	switch {
	case math.IsInf(t, -1):
		return 1, 0
	case a.s == 0:
		a.m, a.s = t, 1
		return 0, 1
	case t <= a.m:
		e = math.Exp(t - a.m)
		a.s += e
		return 1, e
	}
	r = math.Exp(a.m - t)
	a.s = a.s*r + 1
	a.m = t
	return r, 1
}

// log returns the sum's log (−Inf for the empty sum).
func (a *lse) log() float64 {
	if a.s == 0 {
		return math.Inf(-1)
	}
	return a.m + math.Log(a.s)
}

// mixTails returns log Σ p_i Φ((x − c_i)/σ) and log Σ p_i Φ̄((x − c_i)/σ),
// each the terms within lseCut of its largest (see peak).
func (p *mixturePair) mixTails(x float64) (below, above float64) {
	n := 0
	sum := func(sign float64) float64 {
		var a lse
		p.peak(0, len(p.c)-1, func(i int) float64 {
			n++
			return p.logp[i] + logmath.NormCDF(sign*(x-p.c[i])/p.sigma)
		}, func(i int) float64 { return p.logp[i] }, func(_ int, t float64) { a.add(t) })
		return a.log()
	}
	below, above = sum(1), sum(-1)
	p.count(false, n)
	return below, above
}

// Tails returns the log tail and head masses of the loss under P and Q at
// l. With a tail η (see mixture.PLD) they are the listed components'
// composed with R_η: P(L > l) = η + (1 − η)P_A(L_A > l), Q(L ≤ l) = η +
// (1 − η)Q_A(L_A ≤ l), the other two scaled by 1 − η (log1p(−η), which
// rounds to 0 for every η a user mixture has: well inside TailsRelError).
func (p *mixturePair) Tails(l float64) Tails {
	t := p.tailsListed(l)
	if !p.tail {
		return t
	}
	s := math.Log1p(-math.Exp(p.logEta))
	t.PAbove = logmath.Add(p.logEta, t.PAbove+s)
	t.QBelow = logmath.Add(p.logEta, t.QBelow+s)
	t.QAbove += s
	t.PBelow += s
	return t
}

// tailsListed is Tails of the listed components alone (A's pair).
func (p *mixturePair) tailsListed(l float64) Tails {
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

// Support: a density, no atoms; with a tail η, P's atom at +∞ of mass η
// (Q's atom at −∞, of mass η too, has no field: P has no mass there).
func (p *mixturePair) Support() Support {
	if !p.tail {
		return continuous
	}
	return Support{LogInf: p.logEta}
}

// TailsCost: about ten loss evaluations of a few dozen exponentials near
// the peak of the concave core, and as many normal tails, measured at 40
// Gaussian Tails for a user's 260 components (K = 1000, q = 0.0064),
// plus a loss term and two normal tails per component outside the core.
func (p *mixturePair) TailsCost() int { return 40 + 4*(len(p.c)-max(0, p.coreHi-p.coreLo+1)) }
