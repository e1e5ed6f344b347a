package gemm

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, where
// op(X) is X or Xᵀ as transA/transB say, op(A) is m×k, op(B) is k×n and C is
// m×n. lda, ldb, ldc are row strides (elements between consecutive rows of
// the stored matrix). When beta == 0, C is overwritten without being read,
// so it may hold NaN. When alpha == 0 or k == 0, A and B are not read.
//
// The product is cache-blocked: panels of op(A) and op(B) are packed into
// contiguous buffers (reused through a sync.Pool) and multiplied by a
// register-tiled micro-kernel, the fastest one this CPU supports (see
// [Kernel] and the package documentation). Products with at least 2²⁰
// multiply-adds are shared among GOMAXPROCS goroutines. The summation order
// differs from the naive triple loop, so results agree with it to rounding
// only (relative error of order k·2⁻²⁴), and may differ between kernels; a
// given kernel and GOMAXPROCS give bit-identical results on every call.
//
// Sgemm is safe for concurrent use when the calls' C regions do not overlap
// each other or any A or B being read.
//
// Sgemm panics if a dimension is negative, a stride is smaller than the
// stored row length, or a slice is too short: those are programming errors.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	sgemmTiled(activeKernel(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmGonum calls gonum's pure-Go Sgemm; the interim implementation and the
// benchmark reference.
func sgemmGonum(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	ar, ac, br, bc := m, k, k, n
	if transA {
		ta, ar, ac = blas.Trans, k, m
	}
	if transB {
		tb, br, bc = blas.Trans, n, k
	}
	if k == 0 {
		ar, ac, br, bc = max(ar, 1), max(ac, 1), max(br, 1), max(bc, 1)
	}
	blas32.Gemm(ta, tb, alpha,
		blas32.General{Rows: ar, Cols: ac, Stride: max(lda, ac), Data: a},
		blas32.General{Rows: br, Cols: bc, Stride: max(ldb, bc), Data: b},
		beta, blas32.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

func checkArgs(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	check := func(name string, s []float32, rows, cols, ld int) {
		if rows == 0 || cols == 0 {
			return
		}
		if ld < cols {
			panic(fmt.Sprintf("gemm: %s stride %d < row length %d", name, ld, cols))
		}
		if len(s) < (rows-1)*ld+cols {
			panic(fmt.Sprintf("gemm: %s has %d elements, need %d", name, len(s), (rows-1)*ld+cols))
		}
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	check("a", a, ar, ac, lda)
	check("b", b, br, bc, ldb)
	check("c", c, m, n, ldc)
}

// sgemmNaive is the reference triple loop.
func sgemmNaive(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float32
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}
