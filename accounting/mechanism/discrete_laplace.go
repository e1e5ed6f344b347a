package mechanism

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// discreteLaplace is the discrete Laplace mechanism
// ([accounting.DiscreteLaplace]): noise DLap(a), P[x] = tanh(a/2)·e^{−a|x|}
// on the integers, on an integer query of sensitivity Δ (L1), unsampled or
// Poisson-sampled under add-remove.
type discreteLaplace struct {
	a    float64
	sens int
	sampling
}

func (l discreteLaplace) Name() string { return "DiscreteLaplace" }

func (l discreteLaplace) Event() accounting.Event {
	return l.wrap(accounting.DiscreteLaplace{NoiseParameter: l.a, Sensitivity: l.sens})
}

func (l discreteLaplace) order() []float64 {
	return l.sampling.order(1/(l.a*float64(l.sens)), 5, l.a, float64(l.sens))
}

// epsilon returns a·Δ rounded up: the mechanism is (a·Δ, 0)-DP.
func (l discreteLaplace) epsilon() float64 {
	d := float64(l.sens)
	e := l.a * d
	if math.FMA(l.a, d, -e) > 0 {
		e = math.Nextafter(e, math.Inf(1))
	}
	return e
}

// PLD: the shift pair DLap(a) against DLap(a) + Δ ([newDLapPair]), whose
// loss a(|x−Δ| − |x|) has the Δ+1 values aΔ, aΔ − 2a, ..., −aΔ (the three
// regions x ≤ 0, 0 < x < Δ, x ≥ Δ); Poisson-sampled under add-remove, the
// pairs [poissonPair] makes of it. As in dp_accounting, it is the pair of
// a shift by exactly Δ.
func (l discreteLaplace) PLD() (*PLD, error) {
	if !l.classic() {
		return nil, errorf("no privacy-loss pair for a %s", l.describe("DiscreteLaplace"))
	}
	// Attained: an integer query to which the differing record
	// contributes Δ and every other record 0.
	base := newDLapPair(l.a, float64(l.sens))
	if l.rate == 1 {
		return &PLD{Remove: base, Add: base, Symmetric: true, MaxLoss: l.epsilon(), Attained: true}, nil
	}
	rem := newPoissonPair(base, l.rate, false)
	e := l.epsilon()
	top := math.Max(rem.fromBase(e), -rem.fromBase(-e))
	return &PLD{Remove: rem, Add: newPoissonPair(base, l.rate, true), MaxLoss: search.Up(top, 4), Attained: true}, nil
}

// RDP: unsampled or Poisson-sampled under add-remove, the log moment
// summed over the loss's atoms ([dlapRDP]).
func (l discreteLaplace) RDP() (RDP, error) {
	if !l.classic() {
		return nil, errorf("no Rényi bound for a %s", l.describe("DiscreteLaplace"))
	}
	return dlapRDP{noise: newDLapNoise(l.a), delta: float64(l.sens), q: l.rate}, nil
}

// ZCDP: (aΔ, 0)-DP implies ((aΔ)²/2)-zCDP (Bun and Steinke 2016,
// Proposition 1.4).
func (l discreteLaplace) ZCDP() (rho, xi float64, err error) { return pureRho(l.epsilon()), 0, nil }

// dlapNoise is DLap(a): P(X ≥ k) = e^{−ak}/(1 + e^{−a}) for k ≥ 1.
type dlapNoise struct{ a, log1pe, logTanh float64 }

func newDLapNoise(a float64) *dlapNoise {
	n := &dlapNoise{a: a, log1pe: math.Log1p(math.Exp(-a))}
	n.logTanh = logmath.Log1mExp(-a) - n.log1pe // log tanh(a/2) = log((1−e^{−a})/(1+e^{−a}))
	return n
}

func (n *dlapNoise) logUpper(k float64) float64 { return -n.a*k - n.log1pe }
func (n *dlapNoise) logPMF(x float64) float64   { return n.logTanh - n.a*math.Abs(x) }
func (n *dlapNoise) cost() int                  { return 1 }

// dlapAtomsListed is the largest sensitivity whose loss atoms Support
// lists (pld lays a grid through each listed atom).
const dlapAtomsListed = 7

// newDLapPair returns the shift pair of DLap(a) against DLap(a) + Δ.
func newDLapPair(a, delta float64) *shiftPair {
	loss := func(x float64) float64 { return a * (math.Abs(x-delta) - math.Abs(x)) }
	lMax, lMin := loss(0), loss(delta)
	p := &shiftPair{noise: newDLapNoise(a), delta: delta, loss: loss, lMin: lMin, lMax: lMax,
		threshold: func(l float64) float64 {
			switch {
			case !(l < lMax):
				return math.Inf(-1)
			case l < lMin:
				return math.Inf(1)
			}
			return settle(math.Ceil((delta-l/a)/2)-1, l, 0, delta-1, loss)
		},
		support: Support{Lattice: true, LogInf: math.Inf(-1)}}
	if delta <= dlapAtomsListed {
		for j := 0.0; j <= delta; j++ {
			p.support.Atoms = append(p.support.Atoms, loss(j))
		}
	}
	return p
}

// dlapRDP is the discrete Laplace mechanism's Rényi curve, Poisson-sampled
// at q (q = 1: unsampled).
type dlapRDP struct {
	noise    *dlapNoise
	delta, q float64
}

func (r dlapRDP) AbadiMoments() bool { return false }

func (r dlapRDP) LogMoments(ctx context.Context, c *Cache, count float64, orders []float64) ([]float64, error) {
	out := make([]float64, len(orders))
	for i, l := range orders {
		out[i] = count * r.alpha(l)
	}
	return out, nil
}

func (r dlapRDP) LogMomentAt(ctx context.Context, c *Cache, count, lambda float64) (float64, error) {
	return count * r.alpha(lambda), nil
}

// alpha returns the larger of the two directions' log moments at order
// λ: remove log E_{Q_b}[(1−q+q·r)^{λ+1}], add log E_{Q_b}[(1−q+q·r)^{−λ}]
// (as for laplaceAlpha), with Q_b = DLap(a) and r = P_b/Q_b for
// P_b = DLap(a) + Δ; at q = 1 both are log E[e^{λL}], exact.
func (r dlapRDP) alpha(l float64) float64 {
	if !(l > 0) {
		return 0
	}
	a := math.Max(r.moment(l+1), r.moment(-l))
	if r.q < 1 {
		a = math.Min(a, dlapRDP{noise: r.noise, delta: r.delta, q: 1}.alpha(l))
	}
	return math.Max(a, 0)
}

// dlapChunks is the most groups moment splits the middle atoms into.
const dlapChunks = 4096

// moment returns an upper bound on log E_{Q_b}[(1−q+q·r)^p], summed over
// the three regions of r: x ≤ 0 (mass 1/(1+e^{−a}), r = e^{−aΔ}), x ≥ Δ
// (mass e^{−aΔ}/(1+e^{−a}), r = e^{aΔ}) and each 0 < x < Δ (mass
// tanh(a/2)e^{−ax}, r = e^{a(2x−Δ)}). Past dlapChunks middle atoms they
// are taken in groups, each at the end where (1−q+q·r)^p is largest (r
// rises with x), with the group's mass in closed form: still an upper
// bound. The result is raised by its rounding error.
func (r dlapRDP) moment(p float64) float64 {
	n, d := r.noise, r.delta
	a := n.a
	log1mq, logq := math.Log1p(-r.q), logmath.Log(r.q)
	phi := func(logr float64) float64 { return p * logmath.Add(log1mq, logq+logr) }
	terms := []float64{-n.log1pe + phi(-a*d), -a*d - n.log1pe + phi(a*d)}
	if mid := d - 1; mid >= 1 {
		w := math.Max(1, math.Ceil(mid/dlapChunks))
		for u := 1.0; u <= mid; u += w {
			v := math.Min(u+w-1, mid)
			// log Σ_{x=u}^{v} e^{−ax} = −au + log(1 − e^{−a(v−u+1)}) − log(1 − e^{−a})
			mass := n.logTanh - a*u + logmath.Log1mExp(-a*(v-u+1)) - logmath.Log1mExp(-a)
			x := v
			if p < 0 {
				x = u
			}
			terms = append(terms, mass+phi(a*(2*x-d)))
		}
	}
	var big float64
	for _, t := range terms {
		big = math.Max(big, math.Abs(t))
	}
	m := logmath.SumExp(terms)
	return search.Up(m+1e-15+8e-16*big+1e-15*math.Abs(m), 4)
}
