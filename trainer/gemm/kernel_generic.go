package gemm

// genericKernel is the portable micro-kernel: a 4×4 C tile in 16 scalar
// accumulators. It is the only kernel off amd64 and is tested on amd64 too.
var genericKernel = microKernel{
	name: "generic-4x4", mr: 4, nr: 4, fn: kernel4x4Generic,
	copyPanel: copyPanelGo, transPanel: transPanelGo,
}

// kernel4x4Generic follows the micro-kernel contract: a holds k steps of 4
// packed A values, b k rows of 4 B values (ldb apart), and the 4×4 tile at c
// (row stride ldc) becomes alpha·(a·b) + beta·c, with c not read if beta == 0.
func kernel4x4Generic(k int, a, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
	var c00, c01, c02, c03 float32
	var c10, c11, c12, c13 float32
	var c20, c21, c22, c23 float32
	var c30, c31, c32, c33 float32
	a = a[:4*k]
	for p, q := 0, 0; p+4 <= len(a); p, q = p+4, q+ldb {
		aa, bb := a[p:p+4:p+4], b[q:q+4:q+4]
		a0, a1, a2, a3 := aa[0], aa[1], aa[2], aa[3]
		b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	store := func(row []float32, v0, v1, v2, v3 float32) {
		row = row[:4:4]
		if beta == 0 {
			row[0], row[1], row[2], row[3] = alpha*v0, alpha*v1, alpha*v2, alpha*v3
			return
		}
		row[0] = alpha*v0 + beta*row[0]
		row[1] = alpha*v1 + beta*row[1]
		row[2] = alpha*v2 + beta*row[2]
		row[3] = alpha*v3 + beta*row[3]
	}
	store(c[0:], c00, c01, c02, c03)
	store(c[ldc:], c10, c11, c12, c13)
	store(c[2*ldc:], c20, c21, c22, c23)
	store(c[3*ldc:], c30, c31, c32, c33)
}
