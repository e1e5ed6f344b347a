package mechanism

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
)

// poissonReplaceOne reports whether the sampling is Poisson at a rate
// below 1 under replace-one.
func (s sampling) poissonReplaceOne() bool {
	return s.kind == accounting.SamplingPoisson && s.adj == accounting.ReplaceOne && s.rate < 1
}

// replacePair is the pair of the Poisson-subsampled Gaussian mechanism
// under replace-one, with noise multiplier sigma relative to the
// replace-one sensitivity Δ and sampling rate q < 1: in units of Δ,
//
//	P = (1−q)N(0,σ²) + qN(−1/2,σ²),  Q = (1−q)N(0,σ²) + qN(+1/2,σ²),
//
// the replaced record contributing −Δ/2 in one data set and +Δ/2 in the
// other, every other record 0. It is a worst-case pair, dominating and
// attained (Lebeda, Regehr, Kamath and Steinke 2025, "Avoiding Pitfalls
// for Privacy Accounting of Subsampled Mechanisms under Composition",
// Proposition 13; dp_accounting's REPLACE_ONE pair, whose noise multiplier
// is relative to Δ/2). Reflecting x → −x swaps P and Q, so one pair serves
// both orders.
//
// Its privacy loss, with μ = 1/2 and c = q·e^{−μ²/(2σ²)},
//
//	L(x) = log(1−q + c·e^{−μx/σ²}) − log(1−q + c·e^{μx/σ²}),
//
// decreases strictly from +∞ to −∞, so L > l ⇔ x < x(l), and u = e^{μx/σ²}
// solves e^l·c·u² + (1−q)(e^l − 1)·u − c = 0 (see xAt).
type replacePair struct {
	sigma, q      float64
	log1mq, logq  float64 // log(1−q), log q
	logc          float64 // log c
	scale, mu, s2 float64 // σ²/μ, μ, σ²
}

func newReplacePair(sigma, q float64) *replacePair {
	const mu = 0.5
	s2 := sigma * sigma
	return &replacePair{sigma: sigma, q: q, log1mq: math.Log1p(-q), logq: math.Log(q),
		logc: math.Log(q) - mu*mu/(2*s2), scale: s2 / mu, mu: mu, s2: s2}
}

// loss returns L(x).
func (p *replacePair) loss(x float64) float64 {
	t := p.mu * x / p.s2
	return logmath.Add(p.log1mq, p.logc-t) - logmath.Add(p.log1mq, p.logc+t)
}

// xAt returns the x with L(x) = l, from the positive root u of
// e^l·c·u² + a(e^l − 1)·u − c = 0 (a = 1−q), in the form without
// cancellation on each side of l = 0 and without overflow:
//
//	l > 0:  log u = log 2c − l − log(a(1 − e^{−l}) + √(a²(1 − e^{−l})² + 4c²e^{−l}))
//	l ≤ 0:  log u = log(a(1 − e^l) + √(a²(1 − e^l)² + 4c²e^l)) − l − log 2c
func (p *replacePair) xAt(l float64) float64 {
	var logU float64
	if l > 0 {
		b := -math.Expm1(-l) // 1 − e^{−l}
		// √(a²b² + 4c²e^{−l}) in logs: ½·log(e^{2(log a + log b)} + e^{log 4 + 2 log c − l}).
		la := p.log1mq + math.Log(b)
		r := 0.5 * logmath.Add(2*la, math.Log(4)+2*p.logc-l)
		logU = math.Log(2) + p.logc - l - logmath.Add(la, r)
	} else {
		b := -math.Expm1(l) // 1 − e^{l}
		la := p.log1mq + logmath.Log(b)
		r := 0.5 * logmath.Add(2*la, math.Log(4)+2*p.logc+l)
		logU = logmath.Add(la, r) - l - math.Log(2) - p.logc
	}
	return p.scale * logU
}

// Tails returns the log masses of L on both sides of l under P and Q.
func (p *replacePair) Tails(l float64) Tails {
	ninf := math.Inf(-1)
	if math.IsInf(l, 1) {
		return Tails{ninf, ninf, 0, 0}
	}
	if math.IsInf(l, -1) {
		return Tails{0, 0, ninf, ninf}
	}
	x := p.xAt(l)
	if math.IsInf(x, 1) {
		return Tails{0, 0, ninf, ninf}
	}
	if math.IsInf(x, -1) {
		return Tails{ninf, ninf, 0, 0}
	}
	// L > l ⇔ X < x: P's components at 0 and −μ, Q's at 0 and +μ.
	c0, s0 := logPhiBoth(x / p.sigma)
	cp, sp := logPhiBoth((x + p.mu) / p.sigma)
	cq, sq := logPhiBoth((x - p.mu) / p.sigma)
	mix := func(a, b float64) float64 { return logmath.Add(p.log1mq+a, p.logq+b) }
	return Tails{PAbove: mix(c0, cp), QAbove: mix(c0, cq), PBelow: mix(s0, sp), QBelow: mix(s0, sq)}
}

// Truncation returns the losses at x = −μ − σz and x = μ + σz, z with
// Φ̄(z) ≤ eta: P (and Q) has mass at most eta beyond each.
func (p *replacePair) Truncation(eta float64) (lLo, lHi float64) {
	z := math.Sqrt(2 * math.Log(1/eta))
	if z < 1 {
		z = 1
	}
	return p.loss(p.mu + p.sigma*z), p.loss(-p.mu - p.sigma*z)
}

// Moments returns approximations of the mean and variance of L under P by
// Gauss–Hermite quadrature (steering only).
func (p *replacePair) Moments() (mean, variance float64) {
	var m1, m2 float64
	comp := func(c, w float64) {
		for i, t := range hermiteT {
			l := p.loss(c + p.sigma*t)
			m1 += w * hermiteW[i] * l
			m2 += w * hermiteW[i] * l * l
		}
	}
	comp(0, 1-p.q)
	comp(-p.mu, p.q)
	v := m2 - m1*m1
	if v < 0 || math.IsNaN(v) {
		v = 0
	}
	return m1, v
}

// Support: a density, no atoms.
func (p *replacePair) Support() Support { return continuous }

// TailsCost is 1: closed forms, as the Gaussian pair's.
func (p *replacePair) TailsCost() int { return 1 }

// replaceRDP is a Rényi curve of the Poisson-subsampled Gaussian under
// replace-one (noise multiplier sigma relative to the replace-one
// sensitivity Δ, rate q), through R = N(0,σ²) between the two mixtures of
// replacePair. By the weak triangle inequality of Rényi divergence
// (Mironov 2017, "Rényi Differential Privacy", Proposition 11, with
// p = 2), D_α(P‖Q) ≤ (α − ½)/(α − 1)·D_{2α}(P‖R) + D_{2α−1}(R‖Q), and
// (P, R), (R, Q) are the remove and add pairs of the Poisson-subsampled
// Gaussian under add-remove with the shift Δ/2, that is noise multiplier
// 2σ relative to the shift. With a(λ) that curve's log moment (both
// orders of the pair, see gaussianRDP), the log moment at λ = α − 1 is
//
//	λ·D_{λ+1}(P‖Q) ≤ (λ + ½)·D_{2λ+2} + λ·D_{2λ+1} = (a(2λ+1) + a(2λ))/2.
//
// It is sound and looser than the pair's own curve; pld composes the pair.
type replaceRDP struct{ sigma, q float64 }

func (r replaceRDP) AbadiMoments() bool { return false }

func (r replaceRDP) LogMoments(ctx context.Context, c *Cache, count float64, orders []float64) ([]float64, error) {
	return momentsAt(ctx, c, count, orders, r.LogMomentAt)
}

func (r replaceRDP) LogMomentAt(ctx context.Context, c *Cache, count, lambda float64) (float64, error) {
	if math.IsInf(lambda, 1) {
		return math.Inf(1), nil
	}
	hi, err := c.gaussianAlpha(ctx, 2*r.sigma, r.q, 2*lambda+1)
	if err != nil {
		return 0, err
	}
	lo, err := c.gaussianAlpha(ctx, 2*r.sigma, r.q, 2*lambda)
	if err != nil {
		return 0, err
	}
	v := count * (hi + lo) / 2
	return v + math.Abs(v)*1e-15, nil // the halving and sum, rounded up
}
