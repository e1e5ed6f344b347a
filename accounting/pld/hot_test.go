package pld

import (
	"math"
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
