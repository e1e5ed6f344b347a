package pld

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// pldWORPair is the dominating pair of a Gaussian step on a batch of m
// records drawn without replacement from n, under replace-one adjacency,
// with noise multiplier σ relative to the replace-one sensitivity and
// γ = m/n < 1.
//
// For replace-one, sampling without replacement turns an f-DP mechanism
// into a C_γ(f)-DP one, C_γ(f) = min{f_γ, f_γ⁻¹}** with f_γ = γf + (1−γ)Id
// (Dong, Roth, Su 2022, "Gaussian Differential Privacy", JRSS B, §4.1;
// Zhu, Dong, Wang 2022, §5). With f = T(N(0,σ²), N(1,σ²)), f_γ⁻¹ is the
// trade-off function of the remove pair R = (γN(1,σ²) + (1−γ)N(0,σ²),
// N(0,σ²)) and f_γ that of the add pair A, its reverse (see pldPair). The
// privacy profile of C_γ(f) is the conjugate of the hull, the pointwise
// maximum δ(ε) = max{δ_R(ε), δ_A(ε)} for every real ε. Both orders of
// the pair occur (the differing record may be the one whose gradient
// matches the others' or not), and they may alternate between the steps
// of one run, so composing each direction on its own, as for Poisson
// sampling under add-remove, could under-report (Lebeda, Regehr, Kamath,
// Steinke 2024, "Avoiding Pitfalls for Privacy Accounting of Subsampled
// Mechanisms under Composition"): the symmetric pair is composed instead.
//
// Its privacy loss L has P(L > l) = δ(l) − δ′(l) and Q(L > l) = −e^{−l}δ′(l),
// so at each l its tails are those of the direction whose δ is larger at
// l; where the two cross (at l = 0, since the total variation is the same
// both ways) L has an atom.
type pldWORPair struct {
	rem, add pldPair
}

func newPLDWORPair(sigma, gamma float64) *pldWORPair {
	return &pldWORPair{rem: newPLDPair(sigma, gamma, false), add: newPLDPair(sigma, gamma, true)}
}

// logHockey returns log δ(l) = log(P(L > l) − e^l·Q(L > l)) from t's tails
// (−Inf when it is not positive).
func pldLogHockey(t pldTails, l float64) float64 {
	if t.pT <= t.qT+l {
		return math.Inf(-1)
	}
	return logmath.Sub(t.pT, t.qT+l)
}

// tails returns the tails of the direction whose δ(l) is the larger (the
// remove direction on a tie).
func (p *pldWORPair) tails(l float64) pldTails {
	r, a := p.rem.tails(l), p.add.tails(l)
	if pldLogHockey(a, l) > pldLogHockey(r, l) {
		return a
	}
	return r
}

// truncation returns the widest of the two directions' cuts: each tail of
// the symmetric loss is that of one direction.
func (p *pldWORPair) truncation(eta float64) (lLo, lHi float64) {
	rLo, rHi := p.rem.truncation(eta)
	aLo, aHi := p.add.truncation(eta)
	return math.Min(rLo, aLo), math.Max(rHi, aHi)
}

// moments returns the remove direction's moments (they only steer the grid).
func (p *pldWORPair) moments() (mean, variance float64) {
	m1, v1 := p.rem.moments()
	m2, v2 := p.add.moments()
	return math.Max(m1, m2), math.Max(v1, v2)
}
