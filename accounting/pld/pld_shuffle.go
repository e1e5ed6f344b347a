package pld

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
)

// ShuffledLowerEpsilon returns a certified lower bound on the ε(δ) of
// epochs passes of DP-SGD over a shuffled data set (each epoch a random
// permutation cut into batches batches, every record in at most one), under
// replace-one adjacency, with noise multiplier sigma relative to the
// replace-one sensitivity (dpcalc's convention: the CLI's σ/2), and a share
// unused of the records left out of every epoch (the dropped partial
// batch, (N − bB)/N). No accountant that bounds shuffled DP-SGD in general
// may report less.
//
// The construction follows Chua et al., "How Private are DP-SGD
// Implementations?" (ICML 2024): a linear loss under which every other
// record's clipped gradient is −C while the differing one's is +C in D and
// −C in D′. Scaled by the noise, an epoch's releases are then
// P = (1−r)·(1/b)Σ_i N(μe_i, I) + r·N(0, I) against Q = N(0, I) in b
// dimensions, μ = 1/sigma, r = unused: the record lands in one batch, at
// random. The epochs are independent, so the true ε is at least that of
// E copies of (P, Q), which by post-processing is at least that of the
// maximum coordinate M of each epoch: F_Q(t) = Φ(t)^b and
// F_P(t) = ((1−r)Φ(t−μ) + rΦ(t))·Φ(t)^{b−1}, whose privacy loss
// L(t) = log(r + (1−r)/b·(e^{μt−μ²/2} + (b−1)Φ(t−μ)/Φ(t))) is increasing.
// Both orders of that one-dimensional pair are composed with the certified
// lower discretisation of [Accountant], and the larger lower bound is
// returned. It is 0 when no ε > 0 is certified.
func ShuffledLowerEpsilon(ctx context.Context, sigma float64, batches, epochs int, unused, delta float64) (float64, error) {
	switch {
	case !(sigma > 0) || math.IsInf(sigma, 1):
		return 0, &accounting.ParamError{Name: "sigma", Value: sigma, Want: "finite and > 0"}
	case batches < 1:
		return 0, &accounting.ParamError{Name: "batches", Value: float64(batches), Want: ">= 1"}
	case epochs < 1 || epochs > maxPLDSteps:
		return 0, &accounting.ParamError{Name: "epochs", Value: float64(epochs), Want: fmt.Sprintf("in [1, %d]", maxPLDSteps)}
	case !(unused >= 0 && unused < 1):
		return 0, &accounting.ParamError{Name: "unused", Value: unused, Want: "in [0, 1)"}
	}
	if err := accounting.CheckDeltaQuery(delta); err != nil {
		return 0, err
	}
	if delta == 0 {
		return 0, nil // the trivial lower bound (a Gaussian is not pure DP, but ε(0) needs no certificate here)
	}
	mu := 1 / sigma
	if !(mu > 1e-150) || mu > 1e150 {
		// Beyond these the loss over- or underflows float64; 0 is a
		// valid lower bound.
		return 0, nil
	}
	pairs := [][]pldDominating{
		{newPLDShufflePair(mu, batches, unused, false)},
		{newPLDShufflePair(mu, batches, unused, true)},
	}
	key := pldKey{sigma: sigma, rate: 1}
	st := &pldSetup{keys: []pldKey{key}, counts: map[pldKey]int{key: epochs}, steps: epochs, dirs: []bool{false, true}, pairs: pairs}
	for _, ps := range pairs {
		_, v := ps[0].moments()
		st.vTot = math.Max(st.vTot, float64(epochs)*v)
	}
	r, err := st.compose(ctx, 0, pldEta(epochs, 0))
	if err != nil {
		if err == errPLDTooLarge {
			return 0, nil
		}
		return 0, err
	}
	lv := &pldLevels{res: r}
	var best float64
	for k := 0; k <= pldMaxRefine; k++ {
		rk := lv.res
		if k > 0 {
			if rk, err = lv.level(k); err == errPLDTooLarge {
				break
			} else if err != nil {
				return 0, err
			}
		}
		lo, err := rk.lowerOnly(ctx, delta)
		if err == errPLDTooLarge {
			break
		}
		if err != nil {
			return 0, err
		}
		if !(lo > best*(1+pldTargetGap)) {
			best = math.Max(best, lo)
			break // refining no longer helps
		}
		best = lo
	}
	if !(best >= 0) || math.IsInf(best, 0) {
		return 0, nil
	}
	return best, nil
}

// ShuffledLowerEpsilonOf returns the largest [ShuffledLowerEpsilon] over
// the shuffled Gaussian steps of e normalised under replace-one adjacency
// (their noise multipliers relative to the replace-one sensitivity, as
// the events carry them): the true ε of a composition is at least that of
// any part of it. ok is false when e has no shuffled Gaussian step.
func ShuffledLowerEpsilonOf(ctx context.Context, e accounting.Event, delta float64) (eps float64, ok bool, err error) {
	p, err := accounting.NormalizeUnder(accounting.ReplaceOne, e, 1)
	if err != nil {
		return 0, false, err
	}
	for _, s := range p.Steps {
		if s.Sampling != accounting.SamplingShuffle || s.Mechanism != accounting.MechGaussian {
			continue
		}
		b := s.DatasetSize / s.SampleSize
		unused := float64(s.DatasetSize-b*s.SampleSize) / float64(s.DatasetSize)
		// Fewer epochs release less: a lower bound for them is one for all.
		lo, err := ShuffledLowerEpsilon(ctx, s.Sigma, b, min(s.Count, maxPLDSteps), unused, delta)
		if err != nil {
			return 0, false, err
		}
		eps, ok = math.Max(eps, lo), true
	}
	return eps, ok, nil
}

// lowerOnly returns the largest lower bound on ε(delta) over r's
// directions, from their untilted lower compositions.
func (r *pldResult) lowerOnly(ctx context.Context, delta float64) (float64, error) {
	var lo float64
	for d := range r.dirs {
		c, err := r.get(ctx, d, false, 0)
		if err == errPLDTooLarge {
			continue
		}
		if err != nil {
			return 0, err
		}
		lo = math.Max(lo, c.epsilon(delta, false))
	}
	return lo, nil
}

// pldShufflePair is the one-epoch pair of the maximum coordinate in
// [ShuffledLowerEpsilon], or its reverse (rev: P and Q swapped, loss −L).
// Only its lower discretisation is used: tails(l) evaluates both
// distributions at one point t with L(t) ≥ l (the right end of a
// bracket), so every cell of the grid is an exact post-processing of the
// pair whose outcomes all have loss above the cell's lower grid point.
type pldShufflePair struct {
	mu, logR, logW, logBm1 float64 // μ; log r; log((1−r)/b); log(b−1)
	b                      float64
	rev                    bool
	ts, ls                 []float64 // table of t and L(t), ascending
}

func newPLDShufflePair(mu float64, batches int, unused float64, rev bool) *pldShufflePair {
	b := float64(batches)
	p := &pldShufflePair{mu: mu, b: b, rev: rev, logR: logmath.Log(unused), logW: math.Log1p(-unused) - math.Log(b), logBm1: logmath.Log(b - 1)}
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
func (p *pldShufflePair) loss(t float64) float64 {
	// log R(t) = log Φ(t−μ) − log Φ(t).
	logR := logmath.NormCDF(t-p.mu) - logmath.NormCDF(t)
	return logmath.Add(p.logR, p.logW+logmath.Add(p.mu*t-p.mu*p.mu/2, p.logBm1+logR))
}

// logCDFs returns log F_P(t), log F_Q(t), log(1−F_P(t)), log(1−F_Q(t)) of
// the forward pair.
func (p *pldShufflePair) logCDFs(t float64) (fp, fq, sp, sq float64) {
	lc, ls := pldLogPhiBoth(t)
	lcm, lsm := pldLogPhiBoth(t - p.mu)
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
func (p *pldShufflePair) tAbove(l float64) float64 {
	n := len(p.ls)
	if l <= p.ls[0] {
		return p.ts[0]
	}
	if l > p.ls[n-1] {
		return math.Inf(1)
	}
	i := sort.SearchFloat64s(p.ls, l) // ls[i−1] < l ≤ ls[i]
	lo, hi := p.ts[i-1], p.ts[i]
	for it := 0; it < 80 && hi > lo; it++ {
		m := lo + (hi-lo)/2
		if m <= lo || m >= hi {
			break
		}
		if p.loss(m) >= l {
			hi = m
		} else {
			lo = m
		}
	}
	return hi
}

// tails returns the log tails and heads of the loss at l (see
// pldDominating).
// tailsCost: each tails runs root searches on the loss (tAbove, tBelow),
// a few hundred times the Gaussian pair's closed form (measured: 100–160 µs
// against 0.3 µs); it counts as 256 (see pldTailsCost).
func (p *pldShufflePair) tailsCost() int { return 256 }

func (p *pldShufflePair) tails(l float64) pldTails {
	ninf := math.Inf(-1)
	if !p.rev {
		t := p.tAbove(l)
		if math.IsInf(t, 1) {
			return pldTails{ninf, ninf, 0, 0}
		}
		fp, fq, sp, sq := p.logCDFs(t)
		return pldTails{pT: sp, qT: sq, pH: fp, qH: fq}
	}
	// Reverse: P′ = Q, Q′ = P, loss −L: −L(t) > l ⇔ t < L⁻¹(−l). The
	// bracket's right end makes the computed tails at most the exact ones.
	t := p.tBelow(-l)
	if math.IsInf(t, -1) {
		return pldTails{ninf, ninf, 0, 0}
	}
	fp, fq, sp, sq := p.logCDFs(t)
	return pldTails{pT: fq, qT: fp, pH: sq, qH: sp}
}

// tBelow returns a t with L(t) ≤ l, within a few ulps of L⁻¹(l).
func (p *pldShufflePair) tBelow(l float64) float64 {
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
	lo, hi := p.ts[i-1], p.ts[i]
	for it := 0; it < 80 && hi > lo; it++ {
		m := lo + (hi-lo)/2
		if m <= lo || m >= hi {
			break
		}
		if p.loss(m) <= l {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// truncation returns the losses at the ends of the table (P has mass
// below 1e-300 beyond them, far below any eta used).
func (p *pldShufflePair) truncation(eta float64) (lLo, lHi float64) {
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
func (p *pldShufflePair) moments() (mean, variance float64) {
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
