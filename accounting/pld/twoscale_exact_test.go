package pld

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/dpcalc/dpcalc/internal/testenv"
)

// exactPrec is the precision of the exact references of the two-scale
// bounds' pieces (bulk.d, bulk.jumpSum, twoScaleBound.delta).
const exactPrec = 320

func bigF(x float64) *big.Float { return new(big.Float).SetPrec(exactPrec).SetFloat64(x) }

// bigExpF returns e^x to about exactPrec bits: a Taylor series at x/2^k,
// squared k times.
func bigExpF(x *big.Float) *big.Float {
	xf, _ := x.Float64()
	k := 0
	if a := math.Abs(xf); a > 0.5 {
		k = int(math.Ceil(math.Log2(a))) + 2
	}
	y := new(big.Float).SetPrec(exactPrec).SetMantExp(x, -k)
	sum, term := bigF(1), bigF(1)
	for n := 1; n < 80; n++ {
		term.Mul(term, y)
		term.Quo(term, bigF(float64(n)))
		sum.Add(sum, term)
	}
	for range k {
		sum.Mul(sum, sum)
	}
	return sum
}

// exactD returns Σ_i c_i·(1 − e^{x − s0 − (i+first)·h})₊ (x, s0, h
// exact, the sum in big arithmetic): D(x) of the masses c at the losses
// s0 + (i+first)·h.
func exactD(c []*big.Float, first int, s0, h float64, x *big.Float) *big.Float {
	sum := bigF(0)
	for i, m := range c {
		if m.Sign() == 0 {
			continue
		}
		s := new(big.Float).SetPrec(exactPrec).Mul(bigF(float64(i+first)), bigF(h))
		s.Add(s, bigF(s0))
		if s.Cmp(x) <= 0 {
			continue
		}
		w := new(big.Float).SetPrec(exactPrec).Sub(x, s)
		w.Sub(bigF(1), bigExpF(w))
		sum.Add(sum, w.Mul(w, m))
	}
	return sum
}

// exactJumpSum returns Σ_j g_j·D(eps − (y0 + j·h)) exactly (see exactD).
func exactJumpSum(c []*big.Float, first int, s0, h float64, jp *jumps, eps float64) *big.Float {
	sum := bigF(0)
	for j, g := range jp.g {
		y := new(big.Float).SetPrec(exactPrec).Mul(bigF(float64(j)), bigF(jp.h))
		y.Add(y, bigF(jp.y0))
		v := exactD(c, first, s0, h, y.Sub(bigF(eps), y))
		sum.Add(sum, v.Mul(v, bigF(g)))
	}
	return sum
}

// TestTwoScaleJumpSumRounding: bulk.jumpSum bounds Σ_j g_j·D(ε − y_j)
// at the exact x_j = ε − y_j, y_j = y0 + j·h, which it computes in
// floating point: y_j and x_j rounded to nearest are off by up to
// u·(|ε| + a few |y|), a large share of a bulk cell where the losses
// are large next to the cells (jumps near 720, a bulk of cells of 1e-9
// here). D is decreasing, so each bound must take x moved by that much
// its own way; rounded to nearest, the upper bound fell below the exact
// sum by 3.5e-4 of it and the lower rose above it.
func TestTwoScaleJumpSumRounding(t *testing.T) {
	const h = 1e-9
	beta := pmf{lo: -1, off: 0, p: []float64{0.25, 0.5, 0.25}}
	c := []*big.Float{bigF(0.25), bigF(0.5), bigF(0.25)}
	for _, upper := range []bool{true, false} {
		b, err := newBulk(t.Context(), beta, h, 1, upper)
		if err != nil {
			t.Fatal(err)
		}
		if b.s0 != -h || b.c.e2 != 0 || len(b.c.c) != 3 {
			t.Fatalf("bulk at %g, e2 %g, %d cells: want β placed exactly", b.s0, b.c.e2, len(b.c.c))
		}
		for _, hj := range []float64{1.37e-11, 2.9e-11, 0.77e-11, 1.1e-13} {
			jp := &jumps{y0: 720, h: hj, g: make([]float64, 100)}
			for j := range jp.g {
				jp.g[j] = 0.01
			}
			for _, eps := range []float64{720 - 0.3e-9, 720, 720 + 0.4e-9, 720 + 1.2e-9, 720 + 1.9e-9} {
				got, _ := b.jumpSum(jp, eps, upper)
				ex := exactJumpSum(c, 0, b.s0, h, jp, eps)
				exf, _ := ex.Float64()
				if c := bigF(got).Cmp(ex); (upper && c < 0) || (!upper && c > 0) {
					t.Errorf("upper %v, jump grid %g, ε %.17g: jumpSum %.17g, exact %.17g (%.3g relative)", upper, hj, eps, got, exf, (got-exf)/exf)
				}
			}
		}
	}
}

// bigConv returns the convolution of a and b in big arithmetic.
func bigConv(a, b []*big.Float) []*big.Float {
	out := make([]*big.Float, len(a)+len(b)-1)
	for i := range out {
		out[i] = bigF(0)
	}
	t := new(big.Float).SetPrec(exactPrec)
	for i, x := range a {
		if x.Sign() == 0 {
			continue
		}
		for j, y := range b {
			if y.Sign() != 0 {
				out[i+j].Add(out[i+j], t.Mul(x, y))
			}
		}
	}
	return out
}

// TestTwoScaleBulkExact checks bulk.d and bulk.jumpSum, each of both
// sides, against D computed exactly (β^{*n} by convolution in big
// arithmetic, e^{x−s} to 320 bits, at the bulk's losses s0 + i·h and
// the jumps' y0 + j·h) for random small β (n ≤ 4, so that the window
// holds all of β^{*n}) over cell widths 1e-9 to 1.3, losses up to ±40
// per step, arguments across and up to 600 beyond the window and jumps up
// to 743 (where e^{−y} is subnormal): 10 random bulks (100 in the long
// test step; 600, about 2.5 min of CPU, with DPCALC_TWOSCALE_EXACT=full),
// no bound on the wrong side.
func TestTwoScaleBulkExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var checks int
	for trial := range exactTrials(10, 100, 600) {
		h := []float64{1e-9, 1e-6, 3e-4, 0.01, 0.2, 1.3}[rng.IntN(6)]
		off := []float64{0, 0.37 * h, -3, 2.5}[rng.IntN(4)]
		nb := 1 + rng.IntN(40)
		// Losses within ±40 per step (beyond, Σβe^{−s} underflows next to
		// 1 in logPowSum and d is NaN, which delta takes as 1 or 0).
		span := min(50, int(25/h))
		lo := rng.IntN(2*span+1) - span
		beta := pmf{lo: lo, off: off, p: make([]float64, nb)}
		mass := []float64{1, 0.999, 0.5, 1e-3}[rng.IntN(4)]
		var s float64
		for i := range beta.p {
			if rng.IntN(5) > 0 {
				beta.p[i] = rng.Float64()
			}
			s += beta.p[i]
		}
		if s == 0 {
			continue
		}
		bp := make([]*big.Float, nb)
		for i := range beta.p {
			beta.p[i] *= mass / s
			bp[i] = bigF(beta.p[i])
		}
		n := rng.IntN(5)
		cn := []*big.Float{bigF(1)}
		for range n {
			cn = bigConv(cn, bp)
		}
		hj := h * float64(1+rng.IntN(7))
		jp := &jumps{g: make([]float64, 1+rng.IntN(30)), y0: []float64{0.01, 2, 300, 720, 743, -5}[rng.IntN(6)], h: hj}
		for j := range jp.g {
			jp.g[j] = rng.Float64() / float64(len(jp.g))
		}
		width := float64(len(cn)) * h
		var xs []float64
		for range 12 {
			xs = append(xs, (rng.Float64()*1.4-0.2)*width)
		}
		xs = append(xs, 0, h, -h, width, -30, 5, math.Nextafter(3*h, 0))
		for _, upper := range []bool{true, false} {
			b, err := newBulk(t.Context(), beta, h, n, upper)
			if err != nil {
				t.Fatal(err)
			}
			// The exact composition's cell i is the bulk's cell i − first
			// (the window may leave out a negligible tail, which d bounds).
			first := 0
			if n > 0 {
				first = n*lo - b.c.lo
			}
			check := func(what string, got float64, ex *big.Float) {
				t.Helper()
				checks++
				exf, _ := ex.Float64()
				if math.IsNaN(got) {
					t.Errorf("trial %d (n %d, h %g, off %g), upper %v: %s is NaN (exact %g) (s0 %g, %d cells)", trial, n, h, off, upper, what, exf, b.s0, len(b.c.c))
					return
				}
				if c := bigF(got).Cmp(ex); (upper && c < 0) || (!upper && c > 0) {
					t.Errorf("trial %d (n %d, h %g, off %g), upper %v: %s = %.17g, exact %.17g", trial, n, h, off, upper, what, got, exf)
				}
			}
			for _, dx := range xs {
				x := b.s0 + dx
				check(fmt.Sprintf("d(%.17g)", x), b.d(x, upper), exactD(cn, first, b.s0, h, bigF(x)))
			}
			for _, eps := range []float64{jp.y0 + b.s0, jp.y0 + b.s0 + width/2, jp.y0 + b.s0 - 3, jp.y0 + b.s0 + width + 1, b.s0 + 600, 0} {
				got, _ := b.jumpSum(jp, eps, upper)
				check(fmt.Sprintf("jumpSum(%.17g) (y0 %g)", eps, jp.y0), got, exactJumpSum(cn, first, b.s0, h, jp, eps))
			}
		}
	}
	t.Logf("%d comparisons", checks)
}

// TestTwoScaleExact checks twoScaleBound.delta, both sides, against the
// exact δ(ε) of (β + γ)^{*T} (and, for the upper bound, the paths
// through γ's +∞ atom): β and γ small and random on grids whose losses
// share one lattice (γ's grid 4, 5 or 8 times β's, the same offset), so
// that the exact composition is a convolution in big arithmetic. T runs
// from 3 to 40 and γ̄ from 1e-6 to 0.9, with the binomial remainder cut
// at 1e-30 to 1e-3: every part of the sum is in play, the bulks of 4 or
// more jumps shifted from the one of 3 (bulkAt), the jumps of 4 or more
// on the coarser grid (coarsen), β's mass heaped at the split, the
// remainder and the +∞ atom. 3 random settings (80 in the long test
// step; 400 with DPCALC_TWOSCALE_EXACT=full, about 2.5 min of CPU: 7,523
// comparisons, none on the wrong side, the least slack the weights' 1e-10
// on both sides).
func TestTwoScaleExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var checks int
	for trial := range exactTrials(3, 80, 400) {
		hB := []float64{0.01, 0.003, 0.05, 1e-4}[trial%4]
		r := []int{4, 8, 5}[trial%3]
		hJ := float64(r) * hB
		off := []float64{0, 0.3 * hB, -0.7 * hB}[trial%3]
		nb := 10 + rng.IntN(30)
		loB := -nb/2 - rng.IntN(5)
		ng := 5 + rng.IntN(15)
		topB := loB + nb - 1
		loG := int(math.Ceil(float64(topB+1)/float64(r))) + rng.IntN(3)
		gBar := []float64{0.3, 0.05, 1e-3, 0.6, 0.9, 1e-6}[rng.IntN(6)]
		inf := []float64{0, 1e-3, 0}[trial%3]
		beta := pmf{lo: loB, off: off, p: make([]float64, nb)}
		gamma := pmf{lo: loG, off: off, p: make([]float64, ng), inf: inf}
		var sb, sg float64
		for i := range beta.p {
			beta.p[i] = rng.Float64()
			if i == nb-1 && trial%2 == 0 {
				beta.p[i] *= 10 // mass heaped at the split
			}
			sb += beta.p[i]
		}
		for i := range gamma.p {
			gamma.p[i] = rng.Float64() * rng.Float64()
			sg += gamma.p[i]
		}
		for i := range beta.p {
			beta.p[i] *= (1 - gBar - inf) / sb
		}
		for i := range gamma.p {
			gamma.p[i] *= gBar / sg
		}
		steps := []int{5, 8, 11, 20, 40, 6, 4, 13, 3}[rng.IntN(9)]
		restMax := []float64{1e-30, 1e-8, 1e-3}[rng.IntN(3)]
		// β + γ on the lattice hB, composed T times.
		muLo, muHi := loB, (loG+ng-1)*r
		mu := make([]*big.Float, muHi-muLo+1)
		for i := range mu {
			mu[i] = bigF(0)
		}
		for i, v := range beta.p {
			mu[loB+i-muLo].Add(mu[loB+i-muLo], bigF(v))
		}
		for i, v := range gamma.p {
			k := (loG+i)*r - muLo
			mu[k].Add(mu[k], bigF(v))
		}
		muT := []*big.Float{bigF(1)}
		for range steps {
			muT = bigConv(muT, mu)
		}
		s0 := float64(steps*muLo)*hB + float64(steps)*off
		// (M + inf)^T − M^T, M = Σμ.
		M := bigF(0)
		for _, m := range mu {
			M.Add(M, m)
		}
		pow := func(x *big.Float) *big.Float {
			o := bigF(1)
			for range steps {
				o.Mul(o, x)
			}
			return o
		}
		infMass := new(big.Float).SetPrec(exactPrec).Sub(pow(new(big.Float).SetPrec(exactPrec).Add(M, bigF(inf))), pow(M))
		for _, upper := range []bool{true, false} {
			ts, err := composeTwoScale(t.Context(), beta, gamma, hB, hJ, steps, restMax, upper)
			if err == errTooLarge {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			w := float64(len(muT)) * hB
			for _, e := range []float64{s0 - 1, s0 + 0.1*w, s0 + 0.3*w, s0 + 0.5*w, s0 + 0.7*w, s0 + 0.85*w, s0 + 0.95*w, s0 + w - hB, 0, 0.5 * hJ * float64(r)} {
				got := ts.delta(e)
				if upper && got == 1 {
					continue
				}
				// (s0 and the loss of each cell as the model has them: the
				// sum and products rounded, against which both bounds
				// were made.)
				ex := exactD(muT, 0, s0, hB, bigF(e))
				if upper {
					ex.Add(ex, infMass)
				}
				checks++
				if c := bigF(got).Cmp(ex); (upper && c < 0) || (!upper && c > 0) {
					exf, _ := ex.Float64()
					t.Errorf("trial %d (T %d, hB %g, r %d, γ̄ %g, inf %g, rest %g), upper %v: δ(%g) = %.17g, exact %.17g", trial, steps, hB, r, gBar, inf, restMax, upper, e, got, exf)
				}
			}
		}
	}
	t.Logf("%d comparisons", checks)
}

// TestTwoScaleBulkTopOfWindow: bulk.d at the float just below the top of
// its window, s0 + m·h, where (x − s0)/h rounds up to m: the first cell
// above x was taken as m + 1 and the prefix sums indexed out of range
// (a panic; found by TestTwoScaleBulkExact's long step). Both bounds
// must hold there: D(x) = 0, every cell lies at or below x.
func TestTwoScaleBulkTopOfWindow(t *testing.T) {
	const h = 1e-6
	beta := pmf{lo: 16, p: make([]float64, 24)}
	for i := range beta.p {
		beta.p[i] = 1.0 / 24
	}
	x := 3.9999999999999996e-05
	for _, upper := range []bool{true, false} {
		b, err := newBulk(t.Context(), beta, h, 1, upper)
		if err != nil {
			t.Fatal(err)
		}
		if b.s0 != 1.6e-05 || len(b.c.c) != 24 || !(x-b.s0 < 24*h) || math.Floor((x-b.s0)/h) != 24 {
			t.Fatalf("s0 %g, %d cells, (x − s0)/h = %.17g: not the case this test pins", b.s0, len(b.c.c), (x-b.s0)/h)
		}
		var d float64
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Errorf("upper %v: d(%.17g) panicked: %v", upper, x, e)
				}
			}()
			d = b.d(x, upper)
		}()
		if (upper && !(d >= 0 && d < 1e-12)) || (!upper && d != 0) {
			t.Errorf("upper %v: d(%.17g) = %g, want 0 (%s)", upper, x, d, map[bool]string{true: "or just above", false: "exactly"}[upper])
		}
	}
}

// TestTwoScaleBulkCellSplit: bulk.d splits the cells at x by their
// rounded losses s0 + k·h; where x lies within rounding of a cell's
// loss, the cell may lie on the other side, and its term must be in
// the margins. Exactly placed cells (n = 1, no FFT error to cover it)
// of width 0.2 at offset 0.074, x at each cell's rounded loss and a few
// ulps around it: the upper bound was 0 at the window's top where D is
// 4e-17 (found by TestTwoScaleBulkExact's long step).
func TestTwoScaleBulkCellSplit(t *testing.T) {
	const h, off = 0.2, 0.074
	var checks int
	for lo := -50; lo <= 50; lo += 3 {
		for _, nb := range []int{1, 3, 7} {
			beta := pmf{lo: lo, off: off, p: make([]float64, nb)}
			c := make([]*big.Float, nb)
			for i := range beta.p {
				beta.p[i] = 1 / float64(nb)
				c[i] = bigF(beta.p[i])
			}
			for _, upper := range []bool{true, false} {
				b, err := newBulk(t.Context(), beta, h, 1, upper)
				if err != nil {
					t.Fatal(err)
				}
				for k := 0; k <= nb; k++ {
					x0 := b.s0 + float64(k)*h
					for _, x := range []float64{math.Nextafter(math.Nextafter(x0, 0), 0), math.Nextafter(x0, math.Inf(-1)), x0, math.Nextafter(x0, math.Inf(1))} {
						got := b.d(x, upper)
						ex := exactD(c, 0, b.s0, h, bigF(x))
						checks++
						if cmp := bigF(got).Cmp(ex); (upper && cmp < 0) || (!upper && cmp > 0) {
							exf, _ := ex.Float64()
							t.Errorf("lo %d, %d cells, upper %v: d(%.17g) = %.17g, exact %.17g", lo, nb, upper, x, got, exf)
						}
					}
				}
			}
		}
	}
	t.Logf("%d points", checks)
}

// TestTwoScaleJumpSumAccumulation: bulk.jumpSum adds the jump cells'
// terms g_j·D(x_j) one by one, each product and sum rounded, a relative
// error of up to (n+1)·u of the total, which its bounds must take
// (twoScaleBound.delta's weights carry 1e-10 more, but jumpSum's own
// contract is a bound on the sum). One exactly known bulk, D(x) = (1 −
// e^x)₊ (a single cell at 0, 1.3 wide), jumps near 743 (e^{ε−s0}
// overflows, so each cell is evaluated) 9.1 apart, most of them far
// below the bulk where d's margin is a few ulps: 300 random sets of 25
// cells. Found by TestTwoScaleBulkExact's long step (a sum of 0.53 that
// rounded 1.1e-16 below the exact one).
func TestTwoScaleJumpSumAccumulation(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	c := []*big.Float{bigF(1)}
	var checks int
	for _, upper := range []bool{true, false} {
		b, err := newBulk(t.Context(), pmf{p: []float64{1}}, 1.3, 0, upper)
		if err != nil {
			t.Fatal(err)
		}
		for set := range 300 {
			jp := &jumps{g: make([]float64, 25), y0: 743, h: 9.1}
			for j := range jp.g {
				jp.g[j] = rng.Float64() / 25
			}
			for _, eps := range []float64{743.65, 745.3} {
				got, _ := b.jumpSum(jp, eps, upper)
				ex := exactJumpSum(c, 0, b.s0, b.h, jp, eps)
				checks++
				if cmp := bigF(got).Cmp(ex); (upper && cmp < 0) || (!upper && cmp > 0) {
					exf, _ := ex.Float64()
					t.Errorf("set %d, upper %v: jumpSum(%g) = %.17g, exact %.17g", set, upper, eps, got, exf)
				}
			}
		}
	}
	t.Logf("%d sums", checks)
}

// exactTrials is testenv.Size with a third size, full, for
// DPCALC_TWOSCALE_EXACT=full: the exact-reference sweeps at full size take
// minutes each, too long for the long test step's share of CI.
func exactTrials(def, long, full int) int {
	if os.Getenv("DPCALC_TWOSCALE_EXACT") == "full" {
		return full
	}
	return testenv.Size(def, long)
}
