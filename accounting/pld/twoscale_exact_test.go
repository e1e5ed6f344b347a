package pld

import (
	"math"
	"math/big"
	"testing"
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

// exactD returns Σ_i c_i·(1 − e^{x − s0 − i·h})₊ (x, s0, h exact, the
// sum in big arithmetic): D(x) of the masses c at the losses s0 + i·h.
func exactD(c []*big.Float, s0, h float64, x *big.Float) *big.Float {
	sum := bigF(0)
	for i, m := range c {
		if m.Sign() == 0 {
			continue
		}
		s := new(big.Float).SetPrec(exactPrec).Mul(bigF(float64(i)), bigF(h))
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
func exactJumpSum(c []*big.Float, s0, h float64, jp *jumps, eps float64) *big.Float {
	sum := bigF(0)
	for j, g := range jp.g {
		y := new(big.Float).SetPrec(exactPrec).Mul(bigF(float64(j)), bigF(jp.h))
		y.Add(y, bigF(jp.y0))
		v := exactD(c, s0, h, y.Sub(bigF(eps), y))
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
				ex := exactJumpSum(c, b.s0, h, jp, eps)
				exf, _ := ex.Float64()
				if c := bigF(got).Cmp(ex); (upper && c < 0) || (!upper && c > 0) {
					t.Errorf("upper %v, jump grid %g, ε %.17g: jumpSum %.17g, exact %.17g (%.3g relative)", upper, hj, eps, got, exf, (got-exf)/exf)
				}
			}
		}
	}
}
