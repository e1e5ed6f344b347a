//go:build cblas

// Package openblas links OpenBLAS's cblas_sgemm through cgo (Debian:
// libopenblas-dev) so that gemm's benchmarks can compare against it. It is
// only built with the cblas tag; the default build has no cgo. It lives in
// its own package because Go does not allow cgo and Go assembly together.
package openblas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
void openblas_set_num_threads(int);
*/
import "C"

// Sgemm calls OpenBLAS's cblas_sgemm with the same contract as
// gemm.Sgemm (row-major). Arguments must already be checked and m, n, k > 0.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := uint32(C.CblasNoTrans), uint32(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(&a[0]), C.blasint(lda), (*C.float)(&b[0]), C.blasint(ldb),
		C.float(beta), (*C.float)(&c[0]), C.blasint(ldc))
}

// SetThreads sets OpenBLAS's thread count.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }
