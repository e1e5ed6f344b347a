package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSgemmMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sh := range [][3]int{{1, 1, 1}, {7, 13, 5}, {33, 17, 65}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				a := make([]float32, m*k)
				b := make([]float32, k*n)
				for i := range a {
					a[i] = rng.Float32()*2 - 1
				}
				for i := range b {
					b[i] = rng.Float32()*2 - 1
				}
				lda, ldb := k, n
				if ta {
					lda = m
				}
				if tb {
					ldb = k
				}
				c1 := make([]float32, m*n)
				c2 := make([]float32, m*n)
				for i := range c1 {
					c1[i] = 1
					c2[i] = 1
				}
				Sgemm(ta, tb, m, n, k, 0.5, a, lda, b, ldb, 2, c1, n)
				sgemmNaive(ta, tb, m, n, k, 0.5, a, lda, b, ldb, 2, c2, n)
				for i := range c1 {
					if math.Abs(float64(c1[i]-c2[i])) > 1e-4 {
						t.Fatalf("%v ta=%v tb=%v: c[%d] = %v, want %v", sh, ta, tb, i, c1[i], c2[i])
					}
				}
			}
		}
	}
}
