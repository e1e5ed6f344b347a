package statement

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/accounting/pld"
)

// GDP is the Gaussian differential privacy of a run, read from its
// certified privacy profile δ(ε) (the smallest δ at which the run is
// (ε, δ)-DP).
//
// A run is μ-GDP exactly when it is (ε, δ_μ(ε))-DP for every ε ≥ 0, with
//
//	δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)
//
// (Dong, Roth and Su, "Gaussian differential privacy", JRSS B 2022,
// arXiv:1905.02383, Corollary 2.13): μ-GDP is a statement about the whole
// profile, and the trade-off curve of a μ-GDP run lies above
// G_μ(α) = Φ(Φ⁻¹(1−α) − μ). The fields:
//
//   - Mu is the smallest μ found whose profile lies above the run's
//     certified upper profile at every ε in [0, EpsilonMax]: the run is
//     (ε, δ_Mu(ε))-DP for every such ε, and (ε, TailDelta)-DP for every
//     ε ≥ EpsilonMax. Between two queried ε the run's profile is bounded
//     by the chord of the upper bounds in t = e^ε, since every privacy
//     profile is convex in e^ε (a hockey-stick divergence is a supremum
//     of functions affine in e^ε); so Mu is an upper bound on the whole
//     range, not only at the grid, and it is within the grid's second-
//     order chord error of the best one. dp_accounting's
//     get_gdp_parameter_estimate (the largest Φ⁻¹(TPR) − Φ⁻¹(FPR) over a
//     grid of false-positive rates) is, by its own documentation, neither
//     an upper nor a lower bound; Mu is an upper bound.
//   - MuLower is a certified lower bound: at some ε the run's certified
//     lower profile exceeds δ_μ(ε) for every μ < MuLower, so the run is
//     not μ-GDP for any μ < MuLower. The smallest μ for which the run is
//     μ-GDP on the range lies in [MuLower, Mu].
//   - How far the run is from μ-GDP: DeltaGap is the largest, over the
//     queried ε, of δ_Mu(ε) minus the run's certified upper δ(ε), at
//     DeltaGapEpsilon; quoting the run as Mu-GDP overstates its δ by at
//     least DeltaGap there (0 for a run that is exactly Gaussian, up to
//     the accountant's discretisation). EpsilonAtDelta is ε of the Mu-GDP
//     curve at the statement's δ (an upper bound), to set beside the run's
//     own certified ε at that δ.
//
// Mu is +Inf when no μ ≤ MaxMu covers the upper profile (a run with
// little privacy, or a δ(0) of 1).
type GDP struct {
	Mu, MuLower               float64
	EpsilonMax, TailDelta     float64
	DeltaGap, DeltaGapEpsilon float64
	EpsilonAtDelta            float64
	// Queries is the number of δ(ε) queries of the accountant made.
	Queries int
}

// MaxMu is the largest μ a GDP bound reports; a run needing more has
// Mu = +Inf.
const MaxMu = 1e4

// relSlack is the relative error allowed for δ_μ(ε) as computed
// (gaussian.LogDelta is accurate to about 1e-11 relative): every
// comparison of δ_μ with a bound is made with this much margin, the safe
// way.
const relSlack = 1e-9

// GaussianDelta returns δ_μ(ε), the privacy profile of μ-GDP (the Gaussian
// mechanism of sensitivity μ and unit noise; Dong, Roth and Su 2022,
// Corollary 2.13), for μ ≥ 0 and ε ≥ 0; 0 for μ = 0.
func GaussianDelta(mu, eps float64) float64 {
	if !(mu > 0) {
		return 0
	}
	if math.IsInf(mu, 1) {
		return 1
	}
	return math.Exp(gaussian.LogDelta(1, mu, eps))
}

// muCovering returns the smallest μ (to relative 1e-12, rounded up) for
// which δ_μ lies above the chord, in t = e^ε, from (a, ua) to (b, ub) on
// [a, b] (a ≤ b), with relSlack to spare; +Inf when μ > MaxMu would be
// needed. The chord bounds the run's profile there (see [GDP]).
func muCovering(a, b, ua, ub float64) float64 {
	chord := func(eps float64) float64 {
		if b == a {
			return math.Max(ua, ub)
		}
		lam := math.Expm1(eps-a) / math.Expm1(b-a) // (e^ε − e^a)/(e^b − e^a)
		return ua + (ub-ua)*math.Min(1, math.Max(0, lam))
	}
	// The slope of the chord in t: δ_μ − chord is convex in t, with
	// derivative −Φ(−ε/μ − μ/2) − s, zero at ε*.
	s := 0.0
	if b > a {
		s = (ub - ua) / (math.Exp(a) * math.Expm1(b-a))
	}
	covers := func(mu float64) bool {
		pts := []float64{a, b}
		if -s > 0 && -s < 1 && b > a {
			z := -math.Sqrt2 * math.Erfcinv(-2*s) // Φ⁻¹(−s)
			e := -mu * (z + mu/2)
			if e > a && e < b {
				pts = append(pts, e)
			}
		}
		for _, e := range pts {
			if GaussianDelta(mu, e)*(1-relSlack) < chord(e) {
				return false
			}
		}
		return true
	}
	return smallestMu(covers)
}

// smallestMu returns the smallest μ in (0, MaxMu] with ok(μ) (ok monotone:
// false then true), to relative 1e-12, at a point where ok was checked
// true; +Inf if ok(MaxMu) is false.
func smallestMu(ok func(mu float64) bool) float64 {
	if !ok(MaxMu) {
		return math.Inf(1)
	}
	_, hi := bisectMu(ok)
	return hi
}

// largestMuBelow returns the largest μ found (to relative 1e-12, rounded
// down) with δ_μ(eps)·(1 + relSlack) ≤ lower: for every smaller μ,
// δ_μ(eps) < lower. 0 when lower is 0.
func largestMuBelow(eps, lower float64) float64 {
	above := func(mu float64) bool { return !(GaussianDelta(mu, eps)*(1+relSlack) <= lower) }
	if !(lower > 0) {
		return 0
	}
	if !above(MaxMu) {
		return MaxMu
	}
	lo, _ := bisectMu(above)
	return lo
}

// bisectMu bisects (0, MaxMu] for the switch of ok (monotone: false then
// true, true at MaxMu) to relative 1e-12: ok(hi) was checked true, and
// ok(lo) false unless lo is 0.
func bisectMu(ok func(mu float64) bool) (lo, hi float64) {
	lo, hi = 0.0, MaxMu
	for hi-lo > 1e-12*hi && hi > 1e-300 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, hi
}

// epsilonOfGDP returns an upper bound on the smallest ε ≥ 0 with
// δ_μ(ε) ≤ delta (to relative 1e-12): ε of μ-GDP at delta.
func epsilonOfGDP(mu, delta float64) float64 {
	if math.IsInf(mu, 1) {
		return math.Inf(1)
	}
	ok := func(e float64) bool {
		return GaussianDelta(mu, e)*(1-relSlack) <= delta && GaussianDelta(mu, e) <= delta
	}
	if ok(0) {
		return 0
	}
	hi := 1.0
	for !ok(hi) {
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	lo := 0.0
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// deltaBracketer is an accountant that certifies both ends of δ(ε) (pld).
type deltaBracketer interface {
	DeltaBracket(ctx context.Context, eps float64) (pld.Bracket, error)
}

// gdpDefaults.
const (
	// DefaultTailDelta is the δ whose ε ends the GDP range unless
	// Options.TailDelta says otherwise.
	DefaultTailDelta = 1e-12
	// maxEpsilonMax caps EpsilonMax: a δ_μ(ε) at ε = 60 is below e^-60.
	maxEpsilonMax = 60
	defaultGrid   = 33
	defaultRefine = 96
	// stopRelGap ends the refinement once μ is within this relative
	// distance of the μ the queried points alone need.
	stopRelGap = 1e-4
)

// computeGDP fills a GDP from acc, which holds the run, querying its δ
// bracket at grid evenly spaced ε in [0, EpsilonMax] and then at the
// midpoint of the interval with the largest μ, at most refine times (each
// split can only lower the interval's μ: both halves' chords lie below the
// whole's upper ends), stopping once μ is within stopRelGap of the μ the
// queried points need by themselves, which no further query can go below.
// delta is the statement's δ.
func computeGDP(ctx context.Context, acc accounting.Method, delta, tail float64, grid, refine int) (GDP, error) {
	var g GDP
	db, ok := acc.(deltaBracketer)
	if !ok {
		return g, &accounting.ParamError{Name: "accountant", Value: 0, Want: "one that certifies δ(ε) brackets (pld)"}
	}
	top, err := acc.Epsilon(ctx, tail)
	if err != nil {
		return g, err
	}
	if !(top <= maxEpsilonMax) {
		top = maxEpsilonMax
	}
	type point struct{ eps, up, lo float64 }
	query := func(eps float64) (point, error) {
		if err := accounting.Canceled(ctx); err != nil {
			return point{}, err
		}
		g.Queries++
		b, err := db.DeltaBracket(ctx, eps)
		return point{eps, b.Upper, b.Lower}, err
	}
	last, err := query(top)
	if err != nil {
		return g, err
	}
	g.EpsilonMax, g.TailDelta = top, last.up
	pts := []point{}
	if top == 0 {
		pts = append(pts, last)
	} else {
		for i := 0; i < grid-1; i++ {
			p, err := query(top * float64(i) / float64(grid-1))
			if err != nil {
				return g, err
			}
			pts = append(pts, p)
		}
		pts = append(pts, last)
	}
	type interval struct {
		l, r point
		mu   float64
	}
	ivs := make([]interval, 0, len(pts)+refine)
	if len(pts) == 1 {
		ivs = append(ivs, interval{pts[0], pts[0], muCovering(0, 0, pts[0].up, pts[0].up)})
	}
	for i := 0; i+1 < len(pts); i++ {
		l, r := pts[i], pts[i+1]
		ivs = append(ivs, interval{l, r, muCovering(l.eps, r.eps, l.up, r.up)})
	}
	// floor is the largest μ any certificate from these queries can have:
	// the μ that δ_μ(ε) = the upper δ(ε) needs at a queried ε itself.
	floor := 0.0
	atPoint := func(p point) {
		floor = math.Max(floor, muCovering(p.eps, p.eps, p.up, p.up))
	}
	for _, p := range pts {
		atPoint(p)
	}
	for k := 0; k < refine && len(pts) > 1; k++ {
		w := 0
		for i, iv := range ivs {
			if iv.mu > ivs[w].mu {
				w = i
			}
		}
		iv := ivs[w]
		if iv.mu <= floor*(1+stopRelGap) {
			break // no refinement can lower μ by more than stopRelGap
		}
		m := iv.l.eps + (iv.r.eps-iv.l.eps)/2
		if !(m > iv.l.eps && m < iv.r.eps) || math.IsInf(iv.mu, 1) {
			break
		}
		p, err := query(m)
		if err != nil {
			return g, err
		}
		pts = append(pts, p)
		atPoint(p)
		ivs[w] = interval{iv.l, p, muCovering(iv.l.eps, p.eps, iv.l.up, p.up)}
		ivs = append(ivs, interval{p, iv.r, muCovering(p.eps, iv.r.eps, p.up, iv.r.up)})
	}
	for _, iv := range ivs {
		g.Mu = math.Max(g.Mu, iv.mu)
	}
	for _, p := range pts {
		g.MuLower = math.Max(g.MuLower, largestMuBelow(p.eps, p.lo))
		if !math.IsInf(g.Mu, 1) {
			// δ_Mu computed, rounded down by relSlack: a gap never
			// overstated.
			if gap := GaussianDelta(g.Mu, p.eps)*(1-relSlack) - p.up; gap > g.DeltaGap {
				g.DeltaGap, g.DeltaGapEpsilon = gap, p.eps
			}
		}
	}
	g.MuLower = math.Min(g.MuLower, g.Mu)
	g.EpsilonAtDelta = epsilonOfGDP(g.Mu, delta)
	return g, nil
}
