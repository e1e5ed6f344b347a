package pld

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
)

// mirrorCounting is a countingPair that keeps its pair's MirrorOf (seeing
// through the counting of the other pair).
type mirrorCounting struct{ countingPair }

func (c *mirrorCounting) MirrorOf(o mechanism.Pair) bool {
	if oc, ok := o.(*mirrorCounting); ok {
		o = oc.Pair
	}
	m, ok := c.Pair.(interface{ MirrorOf(mechanism.Pair) bool })
	return ok && m.MirrorOf(o)
}

// tailsBits returns the bits of a grid's tails.
func tailsBits(g *grid) [][4]uint64 {
	out := make([][4]uint64, len(g.tl))
	for i, t := range g.tl {
		out[i] = [4]uint64{math.Float64bits(t.PAbove), math.Float64bits(t.QAbove), math.Float64bits(t.PBelow), math.Float64bits(t.QBelow)}
	}
	return out
}

// TestGridMirrorTails: the two directions of a Poisson-sampled Gaussian
// evaluate the same normal tails at mirrored losses, so the second
// direction's grid at a result's width takes its tails from the first's
// (the points whose negated loss is on it) instead of evaluating them:
// the same tails bit for bit, the same per-step distributions, and at
// σ 1, q 1e-4, T 1e5, tails cut at 1e-15/T (the slowest setting of the
// width sweep's σ calibrations), the add direction's 16,471 evaluations
// before become 74, its cut's bisection (its cut range mirrored lies
// inside the remove direction's), for the upper and the lower
// distributions alike.
func TestGridMirrorTails(t *testing.T) {
	pl := pairsOf(t, sampled(1e-4, gauss(1)), accounting.AddRemove)
	const h, eta = 3e-5, 1e-20
	rem := &mirrorCounting{countingPair{Pair: pl.Remove}}
	add := &mirrorCounting{countingPair{Pair: pl.Add}}
	// As setup.compose wraps them for tails cut at a query's δ.
	pairs := []mechanism.Pair{&cutPair{rem}, &cutPair{add}}
	r := &result{h: h, eta: eta, auto: true, cut: true, dirs: []*direction{
		{pairs: pairs[:1], counts: []int{100000}},
		{pairs: pairs[1:], counts: []int{100000}},
	}}
	ctx := t.Context()
	for d := range r.dirs {
		for _, upper := range []bool{true, false} {
			if _, err := r.parts(ctx, d, upper, h); err != nil {
				t.Fatal(err)
			}
		}
	}
	ga := r.dirs[1].grids[0]
	fresh, err := newGrid(ctx, &cutPair{pl.Add}, h, eta)
	if err != nil {
		t.Fatal(err)
	}
	if ga.kLo != fresh.kLo || ga.kHi != fresh.kHi || ga.off != fresh.off {
		t.Fatalf("mirrored grid %d..%d (off %g), fresh %d..%d (off %g)", ga.kLo, ga.kHi, ga.off, fresh.kLo, fresh.kHi, fresh.off)
	}
	gb, fb := tailsBits(ga), tailsBits(fresh)
	for i := range gb {
		if gb[i] != fb[i] {
			t.Fatalf("point %d: mirrored tails %v, fresh %v", ga.kLo+i, ga.tl[i], fresh.tl[i])
		}
	}
	// The lower merge evaluates the add pair between grid points (its
	// root finds): count the grid's evaluations alone.
	add.n.Store(0)
	r2 := &result{h: h, eta: eta, auto: true, cut: true, dirs: []*direction{
		{pairs: pairs[:1], counts: []int{100000}},
		{pairs: pairs[1:], counts: []int{100000}},
	}}
	if _, err := r2.parts(ctx, 0, true, h); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.parts(ctx, 1, true, h); err != nil {
		t.Fatal(err)
	}
	if n := add.n.Load(); n > 200 {
		t.Errorf("the add grid evaluated its pair %d times (%d points), want at most 200 (its truncation's bisection)", n, len(ga.tl))
	}
	t.Logf("%d add grid points, %d evaluations", len(ga.tl), add.n.Load())
}

// oldPhiErr is the lower merge's φ as it was computed before mergedCell
// (each exp evaluated where it was used, the lowered mass always).
func oldPhiErr(ta, tb mechanism.Tails, t float64) (f, lp, errL float64) {
	lp, refP := binMass(ta.PAbove, tb.PAbove, ta.PBelow, tb.PBelow)
	if math.IsInf(lp, -1) {
		return math.Inf(-1), lp, 0
	}
	lq, refQ := binMass(ta.QAbove, tb.QAbove, ta.QBelow, tb.QBelow)
	if math.IsInf(lq, -1) {
		return math.Inf(1), lowMass(lp, refP), 0
	}
	errL = relSlack * (1 + math.Exp(refP-lp) + math.Exp(refQ-lq))
	r := relSlack * (1 + 2*math.Exp(refP-lp))
	low := math.Inf(-1)
	if r < 0.5 {
		low = lp + math.Log1p(-r)
	}
	return lp - lq - errL - t, low, errL
}

// TestMergedCellBits: the lower merge's cells (mergedCell: each exp once,
// the lowered mass only for the cell kept, φ not evaluated again after
// the root search) give φ, its error bound and the lowered mass of the
// old formula bit for bit, for cells of both directions of a sampled
// Gaussian from a few cells' width to the whole range, at targets on
// both sides; and the lower distributions of a grid are unchanged (their
// mass sums and means to the bit, pinned from before the rewrite).
func TestMergedCellBits(t *testing.T) {
	pl := pairsOf(t, sampled(1e-4, gauss(1)), accounting.AddRemove)
	for _, p := range []mechanism.Pair{pl.Remove, pl.Add} {
		lo, hi := p.Truncation(1e-20)
		var ls []float64
		for k := 0; k <= 400; k++ {
			ls = append(ls, lo+(hi-lo)*float64(k)/400)
		}
		for i, a := range ls {
			m := &lowerMerge{ta: p.Tails(a), a: a}
			for _, b := range ls[i+1 : min(i+40, len(ls))] {
				tb := p.Tails(b)
				for _, tt := range []float64{a, (a + b) / 2, b, b + 1} {
					c := m.cellAt(tb, tt)
					f, low, errL := oldPhiErr(m.ta, tb, tt)
					if math.Float64bits(c.f) != math.Float64bits(f) || math.Float64bits(c.lowMass()) != math.Float64bits(low) || math.Float64bits(c.errL) != math.Float64bits(errL) {
						t.Fatalf("(%g, %g] at %g: cell %v (low %v), old φ %v, low %v, errL %v", a, b, tt, c, c.lowMass(), f, low, errL)
					}
				}
			}
		}
	}
}

// pmfHash returns an FNV-1a hash of a pmf's grid position and the bits
// of its masses.
func pmfHash(m *pmf) uint64 {
	h := uint64(14695981039346656037)
	mix := func(x uint64) {
		for i := 0; i < 8; i++ {
			h ^= x & 0xff
			h *= 1099511628211
			x >>= 8
		}
	}
	mix(uint64(m.lo))
	mix(math.Float64bits(m.off))
	mix(math.Float64bits(m.inf))
	for _, v := range m.p {
		mix(math.Float64bits(v))
	}
	return h
}

// TestLowerPinned pins the lower (and upper) per-step distributions of
// both directions of a sampled Gaussian, cut and not, to the bit: the
// rewrites of the merge's cells and the mirrored grids leave them as they
// were (hashes from before them).
func TestLowerPinned(t *testing.T) {
	pl := pairsOf(t, sampled(1e-4, gauss(1)), accounting.AddRemove)
	var got []uint64
	for _, p := range []mechanism.Pair{pl.Remove, pl.Add, &cutPair{pl.Remove}, &cutPair{pl.Add}} {
		g, err := newGrid(t.Context(), p, 3e-5, 1e-20)
		if err != nil {
			t.Fatal(err)
		}
		low, err := g.lower(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		up := g.upper()
		got = append(got, pmfHash(&low), pmfHash(&up))
	}
	want := []uint64{0xfedce5ef08368d96, 0xdd66b81b350c04b, 0x324ec95e8ce38b72, 0x1d2e2cc0df07b326, 0x9d1a3a1bc198f9fb, 0x69b3155d8b858745, 0x6f9c2585117686e6, 0x485cb7bbece2fad5}
	for i := range got {
		if i >= len(want) || got[i] != want[i] {
			t.Errorf("hashes %#x, want %#x", got, want)
			break
		}
	}
}

// oldTiltArgmax and oldTiltedMean are the tilt's argmax and tilted mean
// as they were computed before tiltArgmax and tiltWeights: a log and an
// exp per mass.
func oldTiltArgmax(p []float64, h, lambda float64) int {
	kStar, best := -1, math.Inf(-1)
	for i, v := range p {
		if v > 0 {
			if l := math.Log(v) + lambda*float64(i)*h; l > best {
				kStar, best = i, l
			}
		}
	}
	return kStar
}

func oldTiltedMean(m *pmf, h, lambda float64) float64 {
	kStar := oldTiltArgmax(m.p, h, lambda)
	if kStar < 0 {
		return 0
	}
	var s, s1 float64
	for i, v := range m.p {
		if v > 0 {
			y := lambda * float64(i-kStar) * h
			if y < -745 {
				continue
			}
			w := v * math.Exp(math.Min(y, 700))
			s += w
			s1 += w * float64(i-kStar)
		}
	}
	return float64(m.lo+kStar)*h + m.off + h*s1/s
}

// TestTiltArgmaxMean: tiltArgmax (a log only for the masses whose term
// can be the largest) picks the index a log per mass picks, ties and
// subnormal masses included, and tiltedMean (an exp per 64 cells) is
// within 1e-12 of the mean with an exp per cell (relative to it or to
// h), on the upper and lower per-step distributions of both directions
// of σ 1, q 1e-4 at the tilts 2^{k/4} the saddle search visits and
// beyond.
func TestTiltArgmaxMean(t *testing.T) {
	var ms []pmf
	const h = 3e-5
	{
		pl := pairsOf(t, sampled(1e-4, gauss(1)), accounting.AddRemove)
		for _, p := range []mechanism.Pair{pl.Remove, pl.Add} {
			g, err := newGrid(t.Context(), &cutPair{p}, h, 1e-20)
			if err != nil {
				t.Fatal(err)
			}
			low, err := g.lower(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, g.upper(), low)
		}
	}
	// Ties, zeros and subnormals.
	ms = append(ms, pmf{lo: -3, p: []float64{0, 0.25, 0.5, 0.25, 0, 5e-324, 0.5, 1e-310}})
	for _, m := range ms {
		for k := -24; k <= 120; k += 8 {
			lambda := math.Exp2(float64(k) / 4)
			if got, want := tiltArgmax(m.p, h, lambda), oldTiltArgmax(m.p, h, lambda); got != want {
				t.Fatalf("λ %g, %d masses: argmax %d, want %d", lambda, len(m.p), got, want)
			}
			got, want := tiltedMean(&m, h, lambda), oldTiltedMean(&m, h, lambda)
			// Relative to the mean or to h: a mean near 0 is a difference.
			if !(math.Abs(got-want) <= 1e-12*(math.Abs(want)+h)) {
				t.Errorf("λ %g, %d masses: tilted mean %.17g, want %.17g", lambda, len(m.p), got, want)
			}
		}
	}
}

// TestBuiltinMinMaxAsMath: the builtins min and max, which the per-cell
// loops (upperSpan, untilt, tiltParts, the merge's Illinois test) use
// inline, give math.Min and math.Max's results bit for bit on signed
// zeros, infinities and NaN, except NaN against the infinity that
// dominates (math.Min(NaN, −Inf) is −Inf, min gives NaN): there one
// operand is a constant or a mass, and a NaN mass poisons both results.
func TestBuiltinMinMaxAsMath(t *testing.T) {
	vals := []float64{math.Copysign(0, -1), 0, 1, -1, 700, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, math.MaxFloat64}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
	}
	for _, x := range vals {
		for _, y := range vals {
			nanInf := (math.IsNaN(x) || math.IsNaN(y)) && (math.IsInf(x, 0) || math.IsInf(y, 0))
			if a, b := min(x, y), math.Min(x, y); !same(a, b) && !(nanInf && math.IsInf(b, -1)) {
				t.Errorf("min(%g, %g) = %g, math.Min %g", x, y, a, b)
			}
			if a, b := max(x, y), math.Max(x, y); !same(a, b) && !(nanInf && math.IsInf(b, 1)) {
				t.Errorf("max(%g, %g) = %g, math.Max %g", x, y, a, b)
			}
		}
	}
}

// TestCumulantBoth: the window search's cumulants at ±λ in one pass
// (cumulantBoth: the two Horner sums interleaved, one zero trim and one
// exp) equal the two cumulant calls bit for bit, on per-step
// distributions of σ 1, q 1e-4 and on random ones of every length mod 4,
// short and long, with zero ends, over the window search's λ range.
func TestCumulantBoth(t *testing.T) {
	pl := pairsOf(t, sampled(1e-4, gauss(1)), accounting.AddRemove)
	const h = 3e-5
	var parts []part
	for _, p := range []mechanism.Pair{pl.Remove, pl.Add} {
		g, err := newGrid(t.Context(), &cutPair{p}, h, 1e-20)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part{g.upper(), 100000})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5, 63, 64, 65, 66, 67, 1000, 1001, 1002, 1003} {
		p := make([]float64, n)
		for i := range p {
			if rng.Float64() < 0.9 {
				p[i] = rng.Float64() * math.Exp(-30*rng.Float64())
			}
		}
		p[0] = 0
		parts = append(parts, part{pmf{lo: n/2 - n, off: 1e-7, p: p}, 1 + n%7})
	}
	for _, ps := range [][]part{parts[:1], parts[1:2], parts} {
		for k := -60; k <= 40; k++ {
			lambda := math.Exp2(float64(k) / 2)
			pos, neg := cumulantBoth(ps, h, lambda)
			wp, wn := cumulant(ps, h, lambda), cumulant(ps, h, -lambda)
			if math.Float64bits(pos) != math.Float64bits(wp) || math.Float64bits(neg) != math.Float64bits(wn) {
				t.Fatalf("λ %g, %d parts: cumulantBoth %v, %v; cumulant %v, %v", lambda, len(ps), pos, neg, wp, wn)
			}
		}
	}
}
