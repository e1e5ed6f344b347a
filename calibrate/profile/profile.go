package profile

import (
	"context"
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/search"
)

// Options chooses what a [Profile] reports. The zero value gives the
// defaults.
type Options struct {
	// Deltas are the δ at which ε is reported, each in (0, 1); nil means
	// DefaultDeltas.
	Deltas []float64
	// Epsilons are the ε ≥ 0 (finite) at which δ is reported; nil means
	// 11 evenly spaced values from 0 to the largest ε of Deltas (at most
	// 40), or just 0 when that is 0.
	Epsilons []float64
	// FPRs are the false-positive rates, in (0, 1), at which the
	// attacker's best true-positive rate is reported; nil means
	// DefaultFPRs.
	FPRs []float64
	// GridPoints is the number of evenly spaced ε in [0, ε at δ = 1e-12]
	// (at most 40) whose δ(ε) make the trade-off bound, 2..100000; 0
	// means 257. Around the best grid ε of each α in FPRs, a
	// golden-section search adds more (see refine). Against the family
	// over all ε ≥ 0, the bound loses about e^ε·p(ε)·h²/8 on the grid
	// alone (h the spacing, p the density of the privacy loss under the
	// null where the line touches): up to 6e-5 for one Gaussian with
	// μ = 2, the loss of Curve; at the α of FPRs (Attacks), below 1e-9
	// (TestGaussianTradeoff).
	GridPoints int
}

// DefaultDeltas are the δ of a profile unless Options.Deltas is set.
var DefaultDeltas = []float64{1e-3, 1e-5, 1e-6, 1e-8, 1e-10}

// DefaultFPRs are the false-positive rates of a profile unless
// Options.FPRs is set.
var DefaultFPRs = []float64{0.001, 0.01, 0.05, 0.1}

// gridDelta is the δ whose ε ends the trade-off grid, and gridMaxEpsilon
// the largest ε on it: a line with ε = 40 bounds nothing at α above 4e-18.
const (
	gridDelta      = 1e-12
	gridMaxEpsilon = 40
	defaultGrid    = 257
	maxGrid        = 100000
	defaultCurve   = 11
)

// EpsilonAt is ε at one δ: Epsilon is the method's ε(δ) (an upper bound
// for an accountant), Lower a certified lower bound where the method gives
// one ([accounting.BoundsReporter]) and 0 otherwise.
type EpsilonAt struct {
	Delta   float64 `json:"delta"`
	Epsilon float64 `json:"epsilon"`
	Lower   float64 `json:"epsilon_lower"`
}

// DeltaAt is δ at one ε, with a lower bound as in [EpsilonAt].
type DeltaAt struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Lower   float64 `json:"delta_lower"`
}

// Point is one point of the trade-off bound: at false-positive rate FPR
// (α) every test has false-negative rate at least FNR (β), so its
// true-positive rate is at most TPR = 1 − β.
type Point struct {
	FPR float64 `json:"fpr"`
	FNR float64 `json:"fnr"`
	TPR float64 `json:"tpr"`
}

// Profile is the privacy profile of one composition under one method.
type Profile struct {
	Kind accounting.Kind `json:"accountant"`
	// Certified is true when the method is an [accounting.Accountant]:
	// every ε and δ is an upper bound and the trade-off bound is sound.
	// A procedure's Caveat says why its profile is not.
	Certified bool   `json:"certified"`
	Caveat    string `json:"caveat,omitempty"`
	// Bounded is true when the method also certifies lower bounds
	// ([accounting.BoundsReporter]); the Lower fields are 0 otherwise.
	Bounded bool `json:"bounded"`

	Epsilons []EpsilonAt `json:"epsilons"`
	Deltas   []DeltaAt   `json:"deltas"`
	// Attacks is the trade-off bound at Options.FPRs, each refined by a
	// search over ε (see Options.GridPoints).
	Attacks []Point `json:"attacks"`
	// Curve is the trade-off bound at α = 0, 10⁻⁶…10⁻² (five per decade)
	// and 0.01…1 in steps of 0.01, for plotting: the grid's bound, a little
	// looser than Attacks' (see Options.GridPoints).
	Curve []Point `json:"tradeoff"`
	// Advantage bounds TPR − FPR over all tests: δ(0), the total variation
	// distance between the neighbouring output distributions (the ε = 0
	// line of the trade-off bound).
	Advantage float64 `json:"advantage"`
	// Accuracy bounds the accuracy of any membership guess when members and
	// non-members are equally likely: ½(TPR + 1 − FPR) ≤ (1 + Advantage)/2,
	// the maximum over α of ½(1 − α + 1 − β) on the ε = 0 line (rounded up).
	Accuracy float64 `json:"accuracy"`
	// Tradeoff is the family of guarantees behind Attacks and Curve.
	Tradeoff Tradeoff `json:"-"`
}

// Compute returns the profile of e under a fresh method from newMethod
// (which must return an empty method). It validates opt before any work
// and returns a *accounting.ParamError naming the option (Deltas,
// Epsilons, FPRs or GridPoints) for bad values. It makes about
// GridPoints + len(Deltas) + len(Epsilons) + 12·len(FPRs) + 1 queries of
// the method, each distinct ε once; it checks ctx between queries.
//
// The trade-off bound is [Tradeoff.FNR] of the guarantees (ε, δ(ε)) for ε
// on the grid, ε = 0, the ε of Deltas and the ε of Options.Epsilons, each
// δ the method's Delta (an upper bound for an accountant), and the pairs
// (ε(δ), δ) for δ in Deltas.
func Compute(ctx context.Context, newMethod calibrate.Factory, e accounting.Event, opt Options) (*Profile, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	m, err := newMethod()
	if err != nil {
		return nil, err
	}
	if err := m.Compose(e, 1); err != nil {
		return nil, err
	}
	p := &Profile{Kind: m.Kind()}
	_, p.Certified = m.(accounting.Accountant)
	if pr, ok := m.(accounting.Procedure); ok {
		p.Certified, p.Caveat = false, pr.Caveat()
	}
	br, _ := m.(accounting.BoundsReporter)
	p.Bounded = br != nil

	deltas := opt.Deltas
	if deltas == nil {
		deltas = DefaultDeltas
	}
	fprs := opt.FPRs
	if fprs == nil {
		fprs = DefaultFPRs
	}
	var fam Tradeoff
	for _, d := range deltas {
		at := EpsilonAt{Delta: d}
		if br != nil {
			at.Lower, at.Epsilon, err = br.EpsilonBounds(ctx, d)
		} else {
			at.Epsilon, err = m.Epsilon(ctx, d)
		}
		if err != nil {
			return nil, err
		}
		p.Epsilons = append(p.Epsilons, at)
		fam = append(fam, Guarantee{Epsilon: at.Epsilon, Delta: d})
	}
	// delta answers δ(ε), each ε once: a query can be slow (pld's RDP
	// cross-check where δ is tiny, ac's own search).
	memo := map[float64]DeltaAt{}
	delta := func(eps float64) (DeltaAt, error) {
		if at, ok := memo[eps]; ok {
			return at, nil
		}
		at := DeltaAt{Epsilon: eps}
		var err error
		if br != nil {
			at.Lower, at.Delta, err = br.DeltaBounds(ctx, eps)
		} else {
			at.Delta, err = m.Delta(ctx, eps)
		}
		if err == nil && !(at.Delta >= 0 && at.Delta <= 1) {
			err = fmt.Errorf("profile: %s returned δ(%g) = %g, want in [0, 1]", m.Kind(), eps, at.Delta)
		}
		if err == nil {
			memo[eps] = at
		}
		return at, err
	}

	// The trade-off grid: 0 to ε(gridDelta), at most gridMaxEpsilon.
	top, err := m.Epsilon(ctx, gridDelta)
	if err != nil {
		return nil, err
	}
	for _, at := range p.Epsilons {
		top = math.Max(top, at.Epsilon)
	}
	if !(top <= gridMaxEpsilon) { // also +Inf
		top = gridMaxEpsilon
	}
	n := opt.GridPoints
	if n == 0 {
		n = defaultGrid
	}
	if top == 0 {
		n = 1 // δ(0) ≤ every δ asked: the ε = 0 line is the whole bound
	}
	grid := make([]float64, 0, n+len(p.Epsilons))
	grid = append(grid, 0)
	for i := 1; i < n; i++ {
		grid = append(grid, top*float64(i)/float64(n-1))
	}
	for _, at := range p.Epsilons {
		if !math.IsInf(at.Epsilon, 1) {
			grid = append(grid, at.Epsilon)
		}
	}
	curveEps := opt.Epsilons
	if curveEps == nil {
		hi := p.Epsilons[0].Epsilon
		for _, at := range p.Epsilons {
			hi = math.Max(hi, at.Epsilon)
		}
		if !(hi <= top) {
			hi = top
		}
		curveEps = []float64{0}
		for i := 1; hi > 0 && i < defaultCurve; i++ {
			curveEps = append(curveEps, hi*float64(i)/float64(defaultCurve-1))
		}
	}
	for _, eps := range curveEps {
		at, err := delta(eps)
		if err != nil {
			return nil, err
		}
		p.Deltas = append(p.Deltas, at)
		fam = append(fam, Guarantee{Epsilon: eps, Delta: at.Delta})
	}
	gridFam := make(Tradeoff, 0, len(grid))
	for _, eps := range grid {
		if err := accounting.Canceled(ctx); err != nil {
			return nil, err
		}
		at, err := delta(eps)
		if err != nil {
			return nil, err
		}
		gridFam = append(gridFam, Guarantee{Epsilon: eps, Delta: at.Delta})
		if eps == 0 {
			p.Advantage = at.Delta
		}
	}
	fam = append(fam, gridFam...)
	if top > 0 {
		more, err := refine(ctx, gridFam[:n], top/float64(n-1), top, fprs, func(eps float64) (float64, error) {
			at, err := delta(eps)
			return at.Delta, err
		})
		if err != nil {
			return nil, err
		}
		fam = append(fam, more...)
	}
	p.Tradeoff = fam.Sorted()
	p.Accuracy = math.Min(1, search.Up((1+p.Advantage)/2, 1))
	for _, a := range fprs {
		p.Attacks = append(p.Attacks, p.Tradeoff.point(a))
	}
	for _, a := range curveFPRs() {
		p.Curve = append(p.Curve, p.Tradeoff.point(a))
	}
	return p, nil
}

func (t Tradeoff) point(alpha float64) Point {
	return Point{FPR: alpha, FNR: t.FNR(alpha), TPR: t.TPR(alpha)}
}

// curveFPRs are the α of Profile.Curve, ascending.
func curveFPRs() []float64 {
	out := []float64{0}
	for k := -30; k < -10; k++ { // 10^(k/5): 1e-6 … 10^(-2.2)
		out = append(out, math.Pow(10, float64(k)/5))
	}
	for i := 1; i <= 100; i++ {
		out = append(out, float64(i)/100)
	}
	return out
}

func (o Options) check() error {
	for _, d := range o.Deltas {
		if !(d > 0 && d < 1) {
			return &accounting.ParamError{Name: "Deltas", Value: d, Want: "in (0, 1)"}
		}
	}
	if o.Deltas != nil && len(o.Deltas) == 0 {
		return &accounting.ParamError{Name: "Deltas", Value: 0, Want: "at least one δ (nil for the default)"}
	}
	for _, e := range o.Epsilons {
		if !(e >= 0) || math.IsInf(e, 1) {
			return &accounting.ParamError{Name: "Epsilons", Value: e, Want: ">= 0 and finite"}
		}
	}
	for _, a := range o.FPRs {
		if !(a > 0 && a < 1) {
			return &accounting.ParamError{Name: "FPRs", Value: a, Want: "in (0, 1)"}
		}
	}
	if o.GridPoints != 0 && (o.GridPoints < 2 || o.GridPoints > maxGrid) {
		return &accounting.ParamError{Name: "GridPoints", Value: float64(o.GridPoints), Want: "0 (default) or 2..100000"}
	}
	return nil
}

// refineSteps is the number of golden-section steps per α in refine: the
// bracket 2h shrinks to 2h·0.618¹⁰ ≈ 0.016h, and the loss, quadratic in the
// distance to the best ε, by a factor of about 4000.
const refineSteps = 10

// refine returns more guarantees for the trade-off bound at each α in
// alphas: around the grid point whose line is highest at α (grid spacing
// h, grid ε in [0, top]), a golden-section search over ε of that line's
// value with δ(ε) from deltaAt. The line's value 1 − δ(ε) − e^ε·α is
// unimodal in ε for an exact δ(ε) (its derivative is e^ε(Q(L > ε) − α),
// L the privacy loss); every evaluated point is a valid guarantee in any
// case, so the search can only tighten the bound.
func refine(ctx context.Context, grid Tradeoff, h, top float64, alphas []float64, deltaAt func(float64) (float64, error)) (Tradeoff, error) {
	var out Tradeoff
	cache := map[float64]float64{}
	at := func(eps float64) (Guarantee, error) {
		d, ok := cache[eps]
		if !ok {
			var err error
			if d, err = deltaAt(eps); err != nil {
				return Guarantee{}, err
			}
			cache[eps] = d
			out = append(out, Guarantee{Epsilon: eps, Delta: d})
		}
		return Guarantee{Epsilon: eps, Delta: d}, nil
	}
	for _, a := range alphas {
		if err := accounting.Canceled(ctx); err != nil {
			return nil, err
		}
		best, bv, refl := -1, 0.0, false
		for i, g := range grid {
			if v := g.line(a); v > bv {
				best, bv, refl = i, v, false
			}
			if v := g.reflected(a); v > bv {
				best, bv, refl = i, v, true
			}
		}
		if best < 0 {
			continue
		}
		val := func(eps float64) (float64, error) {
			g, err := at(eps)
			if refl {
				return g.reflected(a), err
			}
			return g.line(a), err
		}
		l, r := math.Max(0, grid[best].Epsilon-h), math.Min(top, grid[best].Epsilon+h)
		const gr = 0.6180339887498949 // (√5 − 1)/2
		x1, x2 := r-gr*(r-l), l+gr*(r-l)
		v1, err := val(x1)
		if err != nil {
			return nil, err
		}
		v2, err := val(x2)
		if err != nil {
			return nil, err
		}
		for k := 0; k < refineSteps; k++ {
			if v1 >= v2 {
				r, x2, v2 = x2, x1, v1
				x1 = r - gr*(r-l)
				if v1, err = val(x1); err != nil {
					return nil, err
				}
			} else {
				l, x1, v1 = x1, x2, v2
				x2 = l + gr*(r-l)
				if v2, err = val(x2); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}
