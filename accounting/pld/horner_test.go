package pld

import (
	"math"
	"testing"
)

// TestHornerChains: horner's four chains give the one-chain Horner sum
// within the rounding bound of a sum of n nonnegative terms (n ulps
// relative each way), in both directions and for every length mod 4.
func TestHornerChains(t *testing.T) {
	for _, n := range []int{1, 5, 63, 64, 65, 66, 67, 1000, 4097} {
		p := make([]float64, n)
		for i := range p {
			p[i] = math.Exp(-math.Pow(float64(i)-float64(n)/3, 2) / float64(n+1))
		}
		for _, r := range []float64{1, 0.999, 0.5, 1e-3} {
			for _, up := range []bool{true, false} {
				var want float64
				if up {
					for _, v := range p {
						want = want*r + v
					}
				} else {
					for i := n - 1; i >= 0; i-- {
						want = want*r + p[i]
					}
				}
				got := horner(p, r, up)
				if math.Abs(got-want) > 2*float64(n)*0x1p-53*want {
					t.Errorf("n %d r %g up %v: %v, one chain %v", n, r, up, got, want)
				}
			}
		}
	}
}
