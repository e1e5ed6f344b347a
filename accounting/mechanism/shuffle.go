package mechanism

import (
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
)

// ShuffledEpoch returns the parameters of the lower-bound construction of
// Chua et al. (ICML 2024, "How Private are DP-SGD Implementations?") for
// one epoch of the shuffled step s under replace-one: the noise multiplier
// sigma relative to the replace-one sensitivity, the number of batches
// ⌊n/m⌋ and the share of records the epoch leaves out, (n − batches·m)/n.
// ok is false for a step that is not a shuffled Gaussian (the only
// mechanism the construction is known for). See [ShuffledMaxPairs].
func ShuffledEpoch(s accounting.Step) (sigma float64, batches int, unused float64, ok bool) {
	g, ok := s.Leaf.(accounting.Gaussian)
	if s.Sampling != accounting.SamplingShuffle || !ok {
		return 0, 0, 0, false
	}
	b := s.DatasetSize / s.SampleSize
	return g.NoiseMultiplier, b, float64(s.DatasetSize-b*s.SampleSize) / float64(s.DatasetSize), true
}

// ShuffledMaxPairs returns the pair (P, Q) of the maximum coordinate of one
// epoch in Chua et al.'s construction for DP-SGD over shuffled batches,
// and its reverse (Q, P): with μ = 1/σ, b batches and a share r of records
// left out of the epoch, F_Q(t) = Φ(t)^b and F_P(t) = ((1−r)Φ(t−μ) +
// rΦ(t))·Φ(t)^{b−1}. The maximum is a post-processing of the epoch's
// releases, so any lower bound on the privacy of its composition is one on
// the epochs'. Only lower discretisations of these pairs are sound (see
// the pair's Tails).
func ShuffledMaxPairs(mu float64, batches int, unused float64) (forward, reverse Pair) {
	return newShuffledMaxPair(mu, batches, unused, false), newShuffledMaxPair(mu, batches, unused, true)
}

// shuffledMaxPair is the one-epoch pair of the maximum coordinate in
// pld.ShuffledLowerEpsilon, or its reverse (rev: P and Q swapped, loss −L).
// Only its lower discretisation is used: tails(l) evaluates both
// distributions at one point t with L(t) ≥ l (the right end of a
// bracket), so every cell of the grid is an exact post-processing of the
// pair whose outcomes all have loss above the cell's lower grid point.
type shuffledMaxPair struct {
	mu, logR, logW, logBm1 float64 // μ; log r; log((1−r)/b); log(b−1)
	b                      float64
	rev                    bool
	ts, ls                 []float64 // table of t and L(t), ascending
}

func newShuffledMaxPair(mu float64, batches int, unused float64, rev bool) *shuffledMaxPair {
	b := float64(batches)
	p := &shuffledMaxPair{mu: mu, b: b, rev: rev, logR: logmath.Log(unused), logW: math.Log1p(-unused) - math.Log(b), logBm1: logmath.Log(b - 1)}
	// t from where both CDFs are below 1e-300 to where both tails are.
	zHi := math.Sqrt(2*(690+math.Log(b))) + 1
	tLo, tHi := -40.0, mu+zHi
	const n = 1 << 12
	for i := 0; i <= n; i++ {
		t := tLo + (tHi-tLo)*float64(i)/n
		p.ts = append(p.ts, t)
		p.ls = append(p.ls, p.loss(t))
	}
	return p
}

// loss returns L(t) of the forward pair.
func (p *shuffledMaxPair) loss(t float64) float64 {
	// log R(t) = log Φ(t−μ) − log Φ(t).
	logR := logmath.NormCDF(t-p.mu) - logmath.NormCDF(t)
	return logmath.Add(p.logR, p.logW+logmath.Add(p.mu*t-p.mu*p.mu/2, p.logBm1+logR))
}

// logCDFs returns log F_P(t), log F_Q(t), log(1−F_P(t)), log(1−F_Q(t)) of
// the forward pair.
func (p *shuffledMaxPair) logCDFs(t float64) (fp, fq, sp, sq float64) {
	lc, ls := logPhiBoth(t)
	lcm, lsm := logPhiBoth(t - p.mu)
	fq = p.b * lc
	// log((1−r)Φ(t−μ) + rΦ(t)): from the CDFs while they are small,
	// else as log1p of minus the tails (no rounding above 0).
	var mix float64
	if t-p.mu < 0 {
		mix = logmath.Add(math.Log1p(-math.Exp(p.logR))+lcm, p.logR+lc)
	} else {
		mix = math.Log1p(-math.Exp(logmath.Add(math.Log1p(-math.Exp(p.logR))+lsm, p.logR+ls)))
	}
	fp = math.Min((p.b-1)*lc+mix, 0)
	fq = math.Min(fq, 0)
	return fp, fq, logmath.Log1mExp(fp), logmath.Log1mExp(fq)
}

// tAbove returns a t with L(t) ≥ l, within a few ulps of L⁻¹(l), or ±Inf
// beyond the table.
func (p *shuffledMaxPair) tAbove(l float64) float64 {
	n := len(p.ls)
	if l <= p.ls[0] {
		return p.ts[0]
	}
	if l > p.ls[n-1] {
		return math.Inf(1)
	}
	i := sort.SearchFloat64s(p.ls, l) // ls[i−1] < l ≤ ls[i]
	o, _ := search.Solve(search.Problem[float64]{
		Holds:          func(t float64) (bool, error) { return p.loss(t) >= l, nil },
		Lo:             p.ts[i-1],
		Hi:             p.ts[i],
		LoKnown:        true,
		HiKnown:        true,
		Done:           func(lo, hi float64) bool { return !(hi > lo) },
		MaxEvaluations: 80,
	})
	return o.X
}

// TailsCost: each Tails runs root searches on the loss (tAbove, tBelow),
// a few hundred times the Gaussian pair's closed form (measured: 100–160 µs
// against 0.3 µs); it counts as 256 (see TailsCost).
func (p *shuffledMaxPair) TailsCost() int { return 256 }

func (p *shuffledMaxPair) Tails(l float64) Tails {
	ninf := math.Inf(-1)
	if !p.rev {
		t := p.tAbove(l)
		if math.IsInf(t, 1) {
			return Tails{ninf, ninf, 0, 0}
		}
		fp, fq, sp, sq := p.logCDFs(t)
		return Tails{PAbove: sp, QAbove: sq, PBelow: fp, QBelow: fq}
	}
	// Reverse: P′ = Q, Q′ = P, loss −L: −L(t) > l ⇔ t < L⁻¹(−l). The
	// bracket's right end makes the computed tails at most the exact ones.
	t := p.tBelow(-l)
	if math.IsInf(t, -1) {
		return Tails{ninf, ninf, 0, 0}
	}
	fp, fq, sp, sq := p.logCDFs(t)
	return Tails{PAbove: fq, QAbove: fp, PBelow: sq, QBelow: sp}
}

// tBelow returns a t with L(t) ≤ l, within a few ulps of L⁻¹(l).
func (p *shuffledMaxPair) tBelow(l float64) float64 {
	n := len(p.ls)
	if l < p.ls[0] {
		return math.Inf(-1)
	}
	if l >= p.ls[n-1] {
		return p.ts[n-1]
	}
	i := sort.SearchFloat64s(p.ls, l)
	if p.ls[i] == l {
		return p.ts[i]
	}
	o, _ := search.Solve(search.Problem[float64]{
		Holds:          func(t float64) (bool, error) { return p.loss(t) <= l, nil },
		Side:           search.Lower,
		Lo:             p.ts[i-1],
		Hi:             p.ts[i],
		LoKnown:        true,
		HiKnown:        true,
		Done:           func(lo, hi float64) bool { return !(hi > lo) },
		MaxEvaluations: 80,
	})
	return o.X
}

// truncation returns the losses at the ends of the table (P has mass
// below 1e-300 beyond them, far below any eta used).
func (p *shuffledMaxPair) Truncation(eta float64) (lLo, lHi float64) {
	lLo, lHi = p.ls[0], p.ls[len(p.ls)-1]
	// Trim where P's head and tail are below eta, by the table.
	for i := range p.ts {
		fp, fq, _, _ := p.logCDFs(p.ts[i])
		if p.rev {
			fp = fq
		}
		if fp > math.Log(eta) {
			if i > 0 {
				lLo = p.ls[i-1]
			}
			break
		}
	}
	for i := len(p.ts) - 1; i >= 0; i-- {
		_, _, sp, sq := p.logCDFs(p.ts[i])
		if p.rev {
			sp = sq
		}
		if sp > math.Log(eta) {
			if i < len(p.ts)-1 {
				lHi = p.ls[i+1]
			}
			break
		}
	}
	if p.rev {
		lLo, lHi = -lHi, -lLo
	}
	if !(lLo < lHi) {
		lHi = lLo + 1
	}
	return lLo, lHi
}

// moments returns the mean and variance of the loss under P from the
// table (steering only).
func (p *shuffledMaxPair) Moments() (mean, variance float64) {
	var m0, m1, m2 float64
	prev := math.Inf(-1)
	for i := range p.ts {
		fp, fq, _, _ := p.logCDFs(p.ts[i])
		if p.rev {
			fp = fq
		}
		w := math.Exp(fp) - math.Exp(prev)
		prev = fp
		if i == 0 || !(w > 0) {
			continue
		}
		l := (p.ls[i] + p.ls[i-1]) / 2
		if p.rev {
			l = -l
		}
		m0 += w
		m1 += w * l
		m2 += w * l * l
	}
	if m0 == 0 {
		return 0, 0
	}
	mean = m1 / m0
	variance = math.Max(m2/m0-mean*mean, 0)
	return mean, variance
}

// Support: a density, no atoms.
func (p *shuffledMaxPair) Support() Support { return continuous }
