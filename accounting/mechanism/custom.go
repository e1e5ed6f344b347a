package mechanism

import (
	"context"
	"hash/fnv"
	"math"
	"sort"
	"sync"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
)

// Custom mechanisms ([accounting.RdpCurve], [accounting.PldPmf],
// [accounting.PrivacyProfile]): what the accountants may use of a
// description a user supplies, and no more.
//
//	           rdp (ma refuses)             pld                          zcdp, ac
//	RdpCurve   the curve, bounded between   the pair of the profile the  refused
//	           orders (below)               curve implies (CKS Prop. 12)
//	PldPmf     Σ p·e^(λℓ) of each direction the PMFs                     ε-DP at the largest loss
//	           (no mass at infinite loss)                                (no mass at infinite loss)
//	Profile    that of the profile's pair   the profile's pair           ε-DP at the smallest ε
//	           (finite only if δ = 0 at                                  with δ = 0
//	           the largest ε)
//
// A PMF not stated pessimistic is refused by all.
//
// The pair of a profile. A direction's hockey-stick curve
// h(x) = H_x(P‖Q) = sup_S P(S) − x·Q(S), x = e^ε ≥ 0, is convex and
// nonincreasing with h(0) = 1, and H_x(P‖Q) = 1 − x + x·H_{1/x}(Q‖P).
// Points (ε_i, δ_i) of a profile that holds in both directions bound h at
// x = e^{ε_i} by δ_i and at x = e^{−ε_i} by 1 − x + x·δ_i; h being convex
// and below those points, it is below their lower convex envelope ĥ
// (nonincreasing: each point also bounds h to its right). ĥ is piecewise
// linear, and a piecewise-linear convex ĥ is the hockey-stick curve of a
// pair with finitely many atoms: writing ĥ(x) = P(L > log x) − x·Q(L > log x),
// the slope of ĥ after a vertex x_j is −Q(L > log x_j), so Q has mass
// s_j − s_{j−1} (the rise in slope) at loss log x_j, P has x_j times that,
// P has ĥ(∞) at loss +∞ and Q the rest at −∞. That pair dominates every
// mechanism with the profile (Zhu, Dong and Wang 2022, "Optimal accounting
// of differential privacy via characteristic function", AISTATS,
// Definition 7, and their construction of a pair from a profile, Lemma 20
// in arXiv:2106.08567v3; for one point (ε, δ) it is dp_accounting's
// from_privacy_parameters pair; for (ε, 0) randomized response R_ε), and
// by Blackwell's theorem (Dong, Roth and Su 2019, Theorem 2.10) the
// mechanism's pair is a post-processing of it, so its Rényi divergences
// bound the mechanism's too.

// customEntry is a custom event's description, derived once.
type customEntry struct {
	event accounting.Event
	curve *curveRDP // RdpCurve
	pld   *PLD      // PldPmf (pessimistic), PrivacyProfile; RdpCurve's once pldOnce has run
	atoms *atomRDP  // PldPmf, PrivacyProfile
	why   string    // why pld refuses, when pld is nil
	// pldOnce derives an RdpCurve's pair (4097 profile points, each over
	// all orders) when pld first asks for it.
	pldOnce sync.Once
	size    int // the numbers it holds, for the cache's cap
}

// customCache holds derived custom events by their JSON text, so that the
// mechanisms stay comparable (they hold the text). It is cleared when it
// would hold more than customCacheSize entries or customCacheNumbers
// numbers (a PMF may have a million probabilities); an entry is derived
// again when needed.
var (
	customMu      sync.Mutex
	customCache   = map[string]*customEntry{}
	customNumbers int
)

const (
	customCacheSize    = 64
	customCacheNumbers = 1 << 23
)

// custom is a custom mechanism: spec is its event's JSON, unsampled.
type custom struct {
	name string
	spec string
	sampling
}

func newCustom(name string, e accounting.Event, smp sampling) (custom, error) {
	b, err := accounting.MarshalEvent(e)
	if err != nil {
		return custom{}, err
	}
	return custom{name: name, spec: string(b), sampling: smp}, nil
}

// entry returns the derived description of c's event.
func (c custom) entry() *customEntry {
	customMu.Lock()
	defer customMu.Unlock()
	if e, ok := customCache[c.spec]; ok {
		return e
	}
	ev, err := accounting.UnmarshalEvent([]byte(c.spec))
	if err != nil { // written by MarshalEvent: cannot happen
		panic("mechanism: custom event does not read back: " + err.Error())
	}
	e := deriveCustom(ev)
	if len(customCache) >= customCacheSize || customNumbers+e.size > customCacheNumbers {
		customCache, customNumbers = map[string]*customEntry{}, 0
	}
	customCache[c.spec] = e
	customNumbers += e.size
	return e
}

func deriveCustom(ev accounting.Event) *customEntry {
	e := &customEntry{event: ev}
	switch v := ev.(type) {
	case accounting.RdpCurve:
		e.curve = newCurveRDP(v.Orders, v.RDP)
		e.size = 8*len(v.Orders) + 16*(2*profileSteps+3)
	case accounting.PrivacyProfile:
		pair, a := profilePair(v.Epsilons, v.Deltas)
		e.pld = &PLD{Remove: pair, Add: pair, Symmetric: true, MaxLoss: math.Inf(1)}
		e.atoms = &atomRDP{dirs: []atomSet{a}}
		e.size = 16 * len(a.loss)
	case accounting.PldPmf:
		rem := pmfAtoms(v.Remove, v.DiscretizationInterval)
		add := rem
		if !v.Symmetric {
			add = pmfAtoms(v.Add, v.DiscretizationInterval)
		}
		e.size = 16 * (len(rem.loss) + len(add.loss))
		e.atoms = &atomRDP{dirs: []atomSet{rem, add}}
		if !v.Pessimistic {
			e.why = "pessimistic_estimate is false: pld composes a supplied PMF only when it is stated to dominate the mechanism (pessimistic_estimate: true)"
			break
		}
		r, a := rem.pair(), add.pair()
		e.pld = &PLD{Remove: r, Add: a, Symmetric: v.Symmetric, MaxLoss: math.Inf(1)}
	}
	return e
}

func (c custom) Name() string { return c.name }

func (c custom) Event() accounting.Event { return c.wrap(c.entry().event) }

func (c custom) order() []float64 {
	rank := map[string]int{"RdpCurve": 20, "PldPmf": 21, "PrivacyProfile": 22}[c.name]
	// A hash of the spec orders custom events of one kind.
	h := fnv.New64a()
	h.Write([]byte(c.spec))
	v := h.Sum64()
	return c.sampling.order(0, rank, float64(v>>32), float64(v&0xffffffff), float64(len(c.spec)))
}

// PLD: the pairs described above; a PMF not stated pessimistic is refused.
func (c custom) PLD() (*PLD, error) {
	if c.kind != accounting.SamplingNone {
		return nil, errorf("no privacy-loss pair for a %s", c.describe(c.name))
	}
	e := c.entry()
	if e.curve != nil {
		e.pldOnce.Do(func() {
			eps, delta := e.curve.profile()
			pair, _ := profilePair(eps, delta)
			e.pld = &PLD{Remove: pair, Add: pair, Symmetric: true, MaxLoss: math.Inf(1)}
		})
	}
	if e.pld == nil {
		return nil, errorf("%s", e.why)
	}
	return e.pld, nil
}

// RDP: the curve, or the Rényi curve of the pairs.
func (c custom) RDP() (RDP, error) {
	if c.kind != accounting.SamplingNone {
		return nil, errorf("no Rényi bound for a %s", c.describe(c.name))
	}
	e := c.entry()
	if e.curve != nil {
		return e.curve, nil
	}
	if p, ok := e.event.(accounting.PldPmf); ok && !p.Pessimistic {
		return nil, errorf("pessimistic_estimate is false: rdp bounds a supplied PMF only when it is stated to dominate the mechanism (pessimistic_estimate: true)")
	}
	for _, d := range e.atoms.dirs {
		if !math.IsInf(d.logPInf, -1) {
			if c.name == "PrivacyProfile" {
				return nil, errorf("no finite Rényi bound for a privacy profile whose δ is positive at its largest ε (the worst mechanism with it has mass at infinite loss); use pld")
			}
			return nil, errorf("no finite Rényi bound for a PMF with mass at infinite loss (an infinity_mass, or probabilities summing to less than 1); use pld")
		}
	}
	return e.atoms, nil
}

// ZCDP: a profile with δ = 0 at some ε, or a pessimistic PMF with bounded
// loss, is ε-DP, hence (ε²/2)-zCDP (Bun and Steinke 2016, Proposition
// 1.4); otherwise none (a Rényi curve need not be of the form ξ + ρα, and
// nothing bounds it above its largest order).
func (c custom) ZCDP() (rho, xi float64, err error) {
	if e, ok := (accounting.Step{Leaf: c.entry().event}).PureEpsilon(); ok {
		return pureRho(e), 0, nil
	}
	if p, ok := c.entry().event.(accounting.PldPmf); ok && !p.Pessimistic {
		return 0, 0, errorf("pessimistic_estimate is false: zcdp bounds a supplied PMF only when it is stated to dominate the mechanism (pessimistic_estimate: true)")
	}
	if c.name == "RdpCurve" {
		return 0, 0, errorf("no zCDP bound for the custom event RdpCurve (its Rényi curve need not be of the form ξ + ρα, and nothing bounds it above its largest order)")
	}
	return 0, 0, errorf("no zCDP bound for the custom event %s: it is not ε-DP for any finite ε (some δ or mass at infinite loss is positive)", c.name)
}

// curveRDP is the Rényi curve of an [accounting.RdpCurve] in log moments
// K(λ) = λ·D_{λ+1}, bounded from the given points only:
//
//   - ε'_i = min_{j ≥ i} ε_j (D_α is nondecreasing in α);
//   - K is convex in λ with K(0) ≤ 0, so below the lower convex envelope
//     of (0, 0) and the points (λ_i, λ_i·ε'_i);
//   - K(λ) ≤ λ·ε'_i for the first given λ_i ≥ λ (monotonicity again);
//   - above the largest order, +Inf: no bound follows.
//
// The value is the smaller of the two bounds, rounded up.
type curveRDP struct {
	lam, eps   []float64 // given moment orders, repaired values ε'
	hullL      []float64 // the envelope's vertices, from (0, 0)
	hullK      []float64
	alpha, raw []float64 // given orders and values (for the profile)
}

func newCurveRDP(orders, values []float64) *curveRDP {
	n := len(orders)
	c := &curveRDP{lam: make([]float64, n), eps: make([]float64, n), alpha: orders, raw: values}
	m := math.Inf(1)
	for i := n - 1; i >= 0; i-- {
		m = math.Min(m, values[i])
		c.lam[i], c.eps[i] = orders[i]-1, m
	}
	xs := append([]float64{0}, c.lam...)
	ys := []float64{0}
	for i := range c.lam {
		ys = append(ys, c.lam[i]*c.eps[i])
	}
	c.hullL, c.hullK = lowerHull(xs, ys)
	return c
}

// lowerHull returns the vertices of the lower convex envelope of the
// points (xs increasing), keeping only strictly increasing slopes: a point
// dropped by rounding leaves the envelope above it (the safe side).
func lowerHull(xs, ys []float64) (hx, hy []float64) {
	for i := range xs {
		for len(hx) >= 2 {
			a, b := len(hx)-2, len(hx)-1
			s1 := (hy[b] - hy[a]) / (hx[b] - hx[a])
			s2 := (ys[i] - hy[b]) / (xs[i] - hx[b])
			if s1 < s2 {
				break
			}
			hx, hy = hx[:b], hy[:b]
		}
		hx, hy = append(hx, xs[i]), append(hy, ys[i])
	}
	return hx, hy
}

func (c *curveRDP) AbadiMoments() bool { return false }

func (c *curveRDP) at(l float64) float64 {
	n := len(c.lam)
	if l > c.lam[n-1] || math.IsNaN(l) {
		return math.Inf(1)
	}
	v := math.Inf(1)
	if j := sort.SearchFloat64s(c.hullL, l); j < len(c.hullL) {
		if c.hullL[j] == l || j == 0 {
			v = c.hullK[j]
		} else {
			x0, x1, y0, y1 := c.hullL[j-1], c.hullL[j], c.hullK[j-1], c.hullK[j]
			v = y0 + (y1-y0)*((l-x0)/(x1-x0))
		}
	}
	i := sort.SearchFloat64s(c.lam, l)
	v = math.Min(v, l*c.eps[i])
	v = math.Max(v, 0)
	return math.Nextafter(v*(1+8*0x1p-52), math.Inf(1))
}

func (c *curveRDP) LogMoments(ctx context.Context, _ *Cache, count float64, orders []float64) ([]float64, error) {
	out := make([]float64, len(orders))
	for i, l := range orders {
		out[i] = roundUpMul(count, c.at(l))
	}
	return out, nil
}

func (c *curveRDP) LogMomentAt(ctx context.Context, _ *Cache, count, lambda float64) (float64, error) {
	return roundUpMul(count, c.at(lambda)), nil
}

// roundUpMul returns count·v rounded up.
func roundUpMul(count, v float64) float64 {
	if math.IsInf(v, 1) {
		return v
	}
	return math.Nextafter(count*v*(1+2*0x1p-52), math.Inf(1))
}

// profileSteps is the number of ε points at which an RdpCurve's profile is
// sampled for its pair, and profileTail the δ below which the profile is
// not followed further (the rest goes to loss +∞).
const (
	profileSteps = 4096
	profileTail  = 1e-40
)

// logDelta returns log of the smallest δ at ε over the given orders by the
// conversion of Canonne, Kamath and Steinke 2020 (arXiv:2004.00010v3,
// Proposition 12): an (α, τ)-RDP pair has
// δ = exp((α−1)(τ − ε + log(1 − 1/α)) − log α), capped at 0 (δ ≤ 1).
func (c *curveRDP) logDelta(eps float64) float64 {
	best := 0.0
	for i, a := range c.alpha {
		l := a - 1
		v := l*(c.eps[i]-eps+math.Log(l/a)) - math.Log(a)
		best = math.Min(best, v)
	}
	return best
}

// profile returns points (ε, δ) of the profile the curve implies: ε from 0
// in profileSteps equal steps up to where δ falls below profileTail (at
// most accounting.MaxProfileEpsilon), each δ rounded up.
func (c *curveRDP) profile() (eps, delta []float64) {
	hi := float64(accounting.MaxProfileEpsilon)
	for i, a := range c.alpha {
		l := a - 1
		e := c.eps[i] + math.Log(l/a) + (-math.Log(a)-math.Log(profileTail))/l
		hi = math.Min(hi, math.Max(e, 1e-3))
	}
	for k := 0; k <= profileSteps; k++ {
		e := hi * float64(k) / profileSteps
		d := math.Exp(c.logDelta(e))
		d = math.Min(1, math.Nextafter(d*(1+16*0x1p-52), 2))
		eps, delta = append(eps, e), append(delta, d)
	}
	return eps, delta
}

// profileInflate is the factor by which a profile pair's P-masses are
// raised above the envelope's, covering the rounding of its slopes: every
// term of the pair's δ(x) = Σ_{x_j > x} (x_j − x)·q_j + P(∞) is a
// nonnegative product, so its relative error is a few ulps per term.
const profileInflate = 1 + 1e-10

// profilePair returns the pair of the profile (eps[i], delta[i]) (valid:
// increasing ε ≥ 0, nonincreasing δ ∈ [0, 1]) that holds in both
// directions, and its atoms, as described at the top of this file.
func profilePair(eps, delta []float64) (*discretePair, atomSet) {
	type pt struct{ x, y float64 }
	pts := []pt{{0, 1}}
	for i, e := range eps {
		x := math.Exp(e)
		pts = append(pts, pt{x, delta[i]})
		y := math.Exp(-e)
		pts = append(pts, pt{y, math.Min(1, (1-y)+y*delta[i])})
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].x < pts[j].x || pts[i].x == pts[j].x && pts[i].y < pts[j].y })
	// Each point bounds h on its right too (h nonincreasing): running
	// minimum; then drop repeated x (the smallest y comes first).
	var xs, ys []float64
	m := math.Inf(1)
	for _, p := range pts {
		m = math.Min(m, p.y)
		if len(xs) > 0 && xs[len(xs)-1] == p.x {
			continue
		}
		xs, ys = append(xs, p.x), append(ys, m)
	}
	hx, hy := lowerHull(xs, ys)
	// Slopes s_j after each vertex j (the last is 0: flat at ĥ(∞)).
	n := len(hx)
	s := make([]float64, n)
	for j := 0; j+1 < n; j++ {
		s[j] = (hy[j+1] - hy[j]) / (hx[j+1] - hx[j])
	}
	pInf := hy[n-1]
	var a atomSet
	qsum := -s[0]
	for j := 1; j < n; j++ {
		q := s[j] - s[j-1]
		if !(q > 0) {
			continue
		}
		lp, lq := math.Log(hx[j]*q*profileInflate), math.Log(q)
		// The loss is the atom's own log P/Q, rounded up: a pair's tails
		// must order its atoms by their true loss.
		a.loss = append(a.loss, math.Nextafter(lp-lq, math.Inf(1)))
		a.lp, a.lq = append(a.lp, lp), append(a.lq, lq)
	}
	a.logPInf = math.Log(pInf * profileInflate)
	a.logQNeg = math.Log(math.Max(0, 1-qsum))
	return a.pair(), a
}

// atomSet is one direction of a pair with finitely many atoms: P-mass
// e^{lp[i]} and Q-mass e^{lq[i]} at loss[i] (ascending), P-mass e^{logPInf}
// at +∞ and Q-mass e^{logQNeg} at −∞.
type atomSet struct {
	loss, lp, lq     []float64
	logPInf, logQNeg float64
}

func (a atomSet) pair() *discretePair {
	return newDiscretePair(a.loss, a.lp, a.lq, a.logPInf, a.logQNeg)
}

// pmfAtoms returns the atoms of one direction of a PMF (valid, as
// accounting.Normalize checks it): loss (LowerLoss + i)·h with P-mass
// Probs[i] and Q-mass Probs[i]·e^(−loss), divided by their sum when it
// exceeds 1 (a smaller Q only raises every hockey-stick divergence); the
// rest of Q at −∞. Missing P-mass up to the rounding slack of 1e-9 goes to
// the largest loss with mass, more to +∞.
func pmfAtoms(s accounting.PmfSide, h float64) atomSet {
	var a atomSet
	total := s.InfinityMass
	for i, p := range s.Probs {
		if p > 0 {
			a.loss = append(a.loss, float64(s.LowerLoss+i)*h)
			a.lp = append(a.lp, math.Log(p))
			total += p
		}
	}
	pInf := s.InfinityMass
	if miss := 1 - total; miss > 1e-9 || len(a.loss) == 0 {
		pInf += math.Max(miss, 0)
	} else if miss > 0 {
		k := len(a.lp) - 1
		a.lp[k] = logmath.Add(a.lp[k], math.Log(miss))
	}
	a.lq = make([]float64, len(a.lp))
	qsum := math.Inf(-1)
	for i := range a.lp {
		a.lq[i] = a.lp[i] - a.loss[i]
		qsum = logmath.Add(qsum, a.lq[i])
	}
	if qsum > 0 {
		// Q divided by its mass raises each loss by log qsum; the losses
		// follow (a pair's tails order atoms by their true loss).
		for i := range a.lq {
			a.lq[i] -= qsum
			a.loss[i] = math.Nextafter(a.lp[i]-a.lq[i], math.Inf(1))
		}
		qsum = 0
	}
	a.logPInf = math.Log(pInf)
	a.logQNeg = logmath.Log1mExp(qsum)
	return a
}

// atomRDP is the Rényi curve of pairs with finitely many atoms (no P-mass
// at +∞): at moment order λ, the largest over the directions of
// log E_P[e^{λL}] = log Σ P_i·Q_i^{−λ}·P_i^{λ}, that is
// log Σ e^{(1+λ)·lp_i − λ·lq_i}, rounded up.
type atomRDP struct{ dirs []atomSet }

func (r *atomRDP) AbadiMoments() bool { return false }

func (r *atomRDP) at(l float64) float64 {
	best := 0.0
	for _, d := range r.dirs {
		terms := make([]float64, len(d.lp))
		for i := range d.lp {
			terms[i] = (1+l)*d.lp[i] - l*d.lq[i]
		}
		v := logmath.SumExp(terms)
		best = math.Max(best, v)
	}
	return math.Nextafter(best*(1+8*0x1p-52)+float64(len(r.dirs[0].lp))*0x1p-52, math.Inf(1))
}

func (r *atomRDP) LogMoments(ctx context.Context, _ *Cache, count float64, orders []float64) ([]float64, error) {
	out := make([]float64, len(orders))
	for i, l := range orders {
		out[i] = roundUpMul(count, r.at(l))
	}
	return out, nil
}

func (r *atomRDP) LogMomentAt(ctx context.Context, _ *Cache, count, lambda float64) (float64, error) {
	return roundUpMul(count, r.at(lambda)), nil
}
