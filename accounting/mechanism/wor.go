package mechanism

import (
	"context"
	"math"
	"sync"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// fixedSizePair is the dominating pair of a Gaussian step on a batch of m
// records drawn without replacement from n, under replace-one adjacency,
// with noise multiplier σ relative to the replace-one sensitivity and
// γ = m/n < 1.
//
// For replace-one, sampling without replacement turns an f-DP mechanism
// into a C_γ(f)-DP one, C_γ(f) = min{f_γ, f_γ⁻¹}** with f_γ = γf + (1−γ)Id
// (Dong, Roth, Su 2022, "Gaussian Differential Privacy", JRSS B, §4.1;
// Zhu, Dong, Wang 2022, §5). With f = T(N(0,σ²), N(1,σ²)), f_γ⁻¹ is the
// trade-off function of the remove pair R = (γN(1,σ²) + (1−γ)N(0,σ²),
// N(0,σ²)) and f_γ that of the add pair A, its reverse (see gaussianPair).
// The privacy profile of C_γ(f) is the conjugate of the hull, the
// pointwise maximum δ(ε) = max{δ_R(ε), δ_A(ε)} for every real ε. Both
// orders of the pair occur (the differing record may be the one whose
// gradient matches the others' or not), and they may alternate between
// the steps of one run, so composing each direction on its own, as for
// Poisson sampling under add-remove, could under-report (Lebeda, Regehr,
// Kamath, Steinke 2024, "Avoiding Pitfalls for Privacy Accounting of
// Subsampled Mechanisms under Composition"): the symmetric pair is
// composed instead.
//
// Its privacy loss L has P(L > l) = δ(l) − δ′(l) and Q(L > l) = −e^{−l}δ′(l),
// so at each l its tails are those of the direction whose δ is larger at
// l; where the two cross (at l = 0, since the total variation is the same
// both ways) L has an atom.
type fixedSizePair struct {
	rem, add gaussianPair
}

func newFixedSizePair(sigma, gamma float64) *fixedSizePair {
	return &fixedSizePair{rem: newGaussianPair(sigma, gamma, false), add: newGaussianPair(sigma, gamma, true)}
}

// logHockey returns log δ(l) = log(P(L > l) − e^l·Q(L > l)) from t's tails
// (−Inf when it is not positive).
func logHockey(t Tails, l float64) float64 {
	if t.PAbove <= t.QAbove+l {
		return math.Inf(-1)
	}
	return logmath.Sub(t.PAbove, t.QAbove+l)
}

// Tails returns the tails of the direction whose δ(l) is the larger (the
// remove direction on a tie).
func (p *fixedSizePair) Tails(l float64) Tails {
	r, a := p.rem.Tails(l), p.add.Tails(l)
	if logHockey(a, l) > logHockey(r, l) {
		return a
	}
	return r
}

// Truncation returns the widest of the two directions' cuts: each tail of
// the symmetric loss is that of one direction.
func (p *fixedSizePair) Truncation(eta float64) (lLo, lHi float64) {
	rLo, rHi := p.rem.Truncation(eta)
	aLo, aHi := p.add.Truncation(eta)
	return math.Min(rLo, aLo), math.Max(rHi, aHi)
}

// Moments returns the larger of the two directions' moments (they only
// steer the grid).
func (p *fixedSizePair) Moments() (mean, variance float64) {
	m1, v1 := p.rem.Moments()
	m2, v2 := p.add.Moments()
	return math.Max(m1, m2), math.Max(v1, v2)
}

// Support: a density, and the atom at l = 0 where the directions cross
// (not used to align grids).
func (p *fixedSizePair) Support() Support { return continuous }

// TailsCost is 1 (two Gaussian pairs' tails, counted as one).
func (p *fixedSizePair) TailsCost() int { return 1 }

// fixedSizeRDP is the Rényi curve of a Gaussian step sampled without
// replacement, γ = m/n, under replace-one (see worAlpha).
type fixedSizeRDP struct{ sigma, gamma float64 }

func (r fixedSizeRDP) AbadiMoments() bool { return true }

func (r fixedSizeRDP) LogMoments(ctx context.Context, c *Cache, count float64, orders []float64) ([]float64, error) {
	out := make([]float64, len(orders))
	for i, l := range orders {
		out[i] = count * worAlpha(r.sigma, r.gamma, l)
	}
	return out, nil
}

func (r fixedSizeRDP) LogMomentAt(ctx context.Context, c *Cache, count, lambda float64) (float64, error) {
	return count * worAlpha(r.sigma, r.gamma, lambda), nil
}

// worMaxOrder is the largest Rényi order at which worLogA sums its series
// (O(α) terms); above it the bound is +Inf, which no search picks.
const worMaxOrder = 1 << 16

// worLogA returns log A_α, an upper bound on the cumulant (α−1)·ε(α) at
// integer Rényi order α ≥ 1 of the Gaussian mechanism (noise multiplier σ
// relative to the replace-one sensitivity) run on m of n records sampled
// without replacement, γ = m/n, under replace-one adjacency: the general
// bound of Wang, Balle and Kasiviswanathan (2019), Theorem 9, with the
// Gaussian's ε(j) = j/(2σ²) and ε(∞) = ∞,
//
//	A_α = 1 + γ²·C(α,2)·min(4(e^{ε(2)} − 1), 2e^{ε(2)})
//	        + Σ_{j=3..α} γ^j·C(α,j)·t_j,   t_j = 2e^{(j−1)ε(j)},
//
// and, up to order worDiffMaxOrder, the smaller term their strengthened
// bound for the Gaussian gives (arXiv 1808.00087, Theorem 27, as
// dp_accounting's _compute_rdp_sample_wor_gaussian_int applies it):
// t_j = min(2e^{(j−1)ε(j)}, 4·√(Δ^{2⌊j/2⌋}·Δ^{2⌈j/2⌉})), Δ^k the k-th
// forward difference at 0 of h(x) = e^{x(x−1)/(2σ²)} (see
// worForwardDiffs).
//
// The sum is taken in log space; the result carries a relative margin of
// 1e-12 plus 1e-300 for the rounding of the ~α terms (each within a few ulp).
func worLogA(sigma, gamma float64, alpha int) float64 {
	if alpha <= 1 || gamma == 0 {
		return 0
	}
	if alpha > worMaxOrder {
		return math.Inf(1)
	}
	s2 := 2 * sigma * sigma
	e2 := 2 / s2
	lg := math.Log(gamma)
	a := float64(alpha)
	// min(4(e^{ε2} − 1), 2e^{ε2}) in log space: log 4 + ε2 + log(1 − e^{−ε2}) vs log 2 + ε2.
	t2 := math.Min(math.Log(4)+e2+logmath.Log1mExp(-e2), math.Log(2)+e2)
	terms := []float64{0, 2*lg + logmath.Comb(a, 2) + t2}
	var fd []float64
	if alpha <= worDiffMaxOrder {
		fd = worForwardDiffs(sigma)
	}
	for j := 3; j <= alpha; j++ {
		fj := float64(j)
		t := math.Log(2) + (fj-1)*fj/s2
		if fd != nil {
			// The Gaussian's tighter term (see worForwardDiffs).
			lo, hi := 2*(j/2), 2*((j+1)/2)
			t = math.Min(t, math.Log(4)+(fd[lo]+fd[hi])/2)
		}
		terms = append(terms, fj*lg+logmath.Comb(a, fj)+t)
	}
	v := logmath.SumExp(terms)
	return v + math.Abs(v)*1e-12 + 1e-300
}

// worAlpha returns an upper bound on the log moment α(λ) = λ·D_{λ+1} of one
// such step at any real λ > 0: log A interpolated linearly between the
// integer orders ⌊λ+1⌋ and ⌈λ+1⌉, an upper bound because the cumulant is
// convex in the order (Wang, Balle and Kasiviswanathan 2019, Corollary 10).
func worAlpha(sigma, gamma, lambda float64) float64 {
	if math.IsInf(lambda, 1) {
		return math.Inf(1)
	}
	order := lambda + 1
	if order > worMaxOrder {
		return math.Inf(1)
	}
	lo := math.Floor(order)
	t := order - lo
	v := worLogA(sigma, gamma, int(lo))
	if t > 0 {
		v = (1-t)*v + t*worLogA(sigma, gamma, int(lo)+1)
	}
	return v + math.Abs(v)*1e-12
}

// worDiffMaxOrder is the largest Rényi order at which worLogA uses the
// forward differences (dp_accounting's max_alpha; O(α²) work above it).
const worDiffMaxOrder = 256

// worDiffs caches worForwardDiffs per σ (a few σ per run; cleared when
// full).
var worDiffs struct {
	sync.Mutex
	m map[float64][]float64
}

// worForwardDiffs returns, for even k ≤ worDiffMaxOrder + 1, an upper bound
// on log Δ^k, the k-th forward difference at 0 of h(x) = e^{x(x−1)/(2σ²)}:
// Δ^k = Σ_i (−1)^{k−i} C(k,i) h(i) (+Inf where float64 cannot bound it;
// odd k are not used). For even k it is E[(e^W − 1)^k] ≥ 0 with
// W ~ N(−c, 2c), c = 1/(2σ²) (h(i) = E[e^{iW}]), and the alternating sum
// cancels: the positive and negative parts P and N are summed in logs, each
// within a relative η = 4u·(8k + 16 + k(k−1)c) (u = 2⁻⁵³: the binomials by
// their recurrence, the exponents, the log-sum), and the bound is
// P(1+η) − N(1−η). Where cancellation eats the value that bound is loose
// and the term min in worLogA keeps Theorem 9's.
func worForwardDiffs(sigma float64) []float64 {
	worDiffs.Lock()
	defer worDiffs.Unlock()
	if d, ok := worDiffs.m[sigma]; ok {
		return d
	}
	c := 1 / (2 * sigma * sigma)
	const u = 0x1p-53
	n := worDiffMaxOrder + 2
	out := make([]float64, n+1)
	for k := range out {
		out[k] = math.Inf(1)
	}
	out[0] = 0 // Δ^0 = h(0) = 1
	var pos, neg []float64
	for k := 2; k <= n; k += 2 {
		pos, neg = pos[:0], neg[:0]
		logC := 0.0 // log C(k, 0)
		for i := 0; i <= k; i++ {
			if i > 0 {
				logC += math.Log(float64(k-i+1)) - math.Log(float64(i))
			}
			t := logC + float64(i)*float64(i-1)*c
			if (k-i)%2 == 0 {
				pos = append(pos, t)
			} else {
				neg = append(neg, t)
			}
		}
		fk := float64(k)
		eta := 4 * u * (8*fk + 16 + fk*(fk-1)*c)
		p, q := logmath.SumExp(pos)+math.Log1p(eta), logmath.SumExp(neg)+math.Log1p(-eta)
		if p > q {
			out[k] = logmath.Sub(p, q)
		}
	}
	if worDiffs.m == nil || len(worDiffs.m) >= 64 {
		worDiffs.m = map[float64][]float64{}
	}
	worDiffs.m[sigma] = out
	return out
}
