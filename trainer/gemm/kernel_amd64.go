//go:build amd64 && !purego

package gemm

import (
	"math"

	"golang.org/x/sys/cpu"
)

//go:generate go run gen_kernels.go

// kernel14x32AVX512 is the AVX-512 micro-kernel (kernel_amd64.s): a 14×32
// C tile in 28 zmm accumulators. See gen_kernels.go for the contract.
//
//go:noescape
func kernel14x32AVX512(k int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

// kernel6x16AVX2 is the AVX2+FMA micro-kernel (kernel_amd64.s): a 6×16 C
// tile in 12 ymm accumulators.
//
//go:noescape
func kernel6x16AVX2(k int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

var avx512Kernel = microKernel{
	name: "avx512-14x32", mr: 14, nr: 32,
	fn: func(k int, a, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
		_, _, _ = a[k*14-1], b[(k-1)*ldb+31], c[13*ldc+31] // bounds: the asm trusts these
		kernel14x32AVX512(k, &a[0], &b[0], ldb, &c[0], ldc, alpha, beta)
	},
	copyPanel: copyPanelAVX512Checked, transPanel: transPanelAVX512Checked,
}

// dotAVX512 wraps dot4x5AVX512 with the bounds checks it relies on.
func dotAVX512(k int, a0, a1, a2, a3, bt []float32, ldbt int, out []float32) {
	_, _, _, _ = a0[k-1], a1[k-1], a2[k-1], a3[k-1]
	_, _ = bt[4*ldbt+k-1], out[19]
	dot4x5AVX512(k, &a0[0], &a1[0], &a2[0], &a3[0], &bt[0], ldbt, &out[0])
}

// axpyAsm is one generated axpy kernel (axpy_amd64.go) and the number of
// columns it covers.
type axpyAsm struct {
	w  int
	fn func(k int, s, a *float32, lda int, c *float32, ldc int, alpha, beta float32, mask uint64, idx *int32)
}

// axpyKernelAVX512 serves sgemmAxpy with the generated kernels.
var axpyKernelAVX512 = func() *axpyKernel {
	ak := &axpyKernel{fn: axpyAVX512Checked, fnT: axpyTransAVX512Checked}
	for r, kk := range axpyAVX512 {
		ak.width[r] = kk.w
	}
	return ak
}()

// axpyAVX512Checked calls the axpy kernel for rows after the bounds checks
// it relies on; the mask covers the first cols lanes.
func axpyAVX512Checked(rows, k int, s, a []float32, lda int, c []float32, ldc, cols int, alpha, beta float32) {
	kk := axpyAVX512[rows-1]
	if cols < 1 || cols > kk.w || k < 1 {
		panic("gemm: bad axpy block")
	}
	_, _, _ = s[k*rows-1], a[(k-1)*lda+cols-1], c[(rows-1)*ldc+cols-1] // bounds: the asm trusts these
	kk.fn(k, &s[0], &a[0], lda, &c[0], ldc, alpha, beta, uint64(1)<<cols-1, nil)
}

// axpyTransAVX512Checked is axpyAVX512Checked storing the result
// transposed, c[i*ldc+r], with AVX-512 scatters (gathers for beta); idx
// must hold i*ldc for i < 16. It reports false, doing nothing, when those
// offsets would overflow the int32 indices.
func axpyTransAVX512Checked(rows, k int, s, a []float32, lda int, c []float32, ldc, cols int, alpha, beta float32, idx *[16]int32) bool {
	kk := axpyAVX512[rows-1]
	if cols < 1 || cols > kk.w || k < 1 {
		panic("gemm: bad axpy block")
	}
	if 15*ldc > math.MaxInt32 || idx[1] != int32(ldc) {
		return false
	}
	_, _, _ = s[k*rows-1], a[(k-1)*lda+cols-1], c[(cols-1)*ldc+rows-1] // bounds: the asm trusts these
	kk.fn(k, &s[0], &a[0], lda, &c[0], ldc, alpha, beta, uint64(1)<<cols-1, &idx[0])
	return true
}

var avx2Kernel = microKernel{
	name: "avx2-6x16", mr: 6, nr: 16,
	fn: func(k int, a, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
		_, _, _ = a[k*6-1], b[(k-1)*ldb+15], c[5*ldc+15]
		kernel6x16AVX2(k, &a[0], &b[0], ldb, &c[0], ldc, alpha, beta)
	},
	copyPanel: copyPanelAVX2Checked, transPanel: transPanelAVX2Checked,
}

// availableKernels lists the kernels this CPU can run, fastest first.
func availableKernels() []microKernel {
	var ks []microKernel
	if cpu.X86.HasAVX512F {
		kern := avx512Kernel
		kern.dot, kern.transLong, kern.dotStore = dotAVX512, transLongAVX512, dotStoreAVX512
		kern.axpy = axpyKernelAVX512
		ks = append(ks, kern)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel)
	}
	return append(ks, genericKernel)
}

// copyPanelAVX512 is copyPanelGo for w ≤ 32 with masked AVX-512 moves
// (pack_amd64.s): lanes outside loadMask are neither read nor stored as
// anything but 0; storeMask covers the first w lanes.
//
//go:noescape
func copyPanelAVX512(dst, src *float32, ld, kc, w int, loadMask, storeMask uint32)

// transPanelAVX512 is transPanelGo for w ≤ 32 with AVX-512 gathers
// (pack_amd64.s); idx holds the row offsets r*ld as int32.
//
//go:noescape
func transPanelAVX512(dst, src *float32, idx *int32, kc, w int, rowMask, storeMask uint32)

func lowBits(n int) uint32 { return uint32(uint64(1)<<n - 1) }

func copyPanelAVX512Checked(dst, src []float32, ld, kc, cols, w int) {
	if kc == 0 {
		return
	}
	_, _ = dst[kc*w-1], src[(kc-1)*ld+cols-1] // bounds: the asm trusts these
	if w > 32 {
		panic("gemm: panel wider than 32")
	}
	copyPanelAVX512(&dst[0], &src[0], ld, kc, w, lowBits(cols), lowBits(w))
}

func transPanelAVX512Checked(dst, src []float32, ld, kc, rows, w int) {
	if kc == 0 {
		return
	}
	_, _ = dst[kc*w-1], src[(rows-1)*ld+kc-1]
	if w > 32 {
		panic("gemm: panel wider than 32")
	}
	if (w-1)*ld > math.MaxInt32 {
		transPanelGo(dst, src, ld, kc, rows, w) // offsets overflow the gather's int32 indices
		return
	}
	var idx [32]int32
	for r := range rows {
		idx[r] = int32(r * ld)
	}
	transPanelAVX512(&dst[0], &src[0], &idx[0], kc, w, lowBits(rows), lowBits(w))
}

// storeDotAVX512 writes a dot-kernel result into C (kernel_amd64.s; see
// storeDotAsm in gen_kernels.go).
//
//go:noescape
func storeDotAVX512(out, c *float32, ldc, n int, mask uint32, perm *int32, alpha, beta float32)

// dotPerm holds storeDotAVX512's permutations of the 20 sums r*5+j: for
// each row r < 4 (C rows) the lanes r*5…r*5+4, then for each column j < 5
// (C columns, when C is transposed) the lanes j, 5+j, 10+j, 15+j. Unused
// lanes are 0; they are never stored.
var dotPerm = func() (p [9][16]int32) {
	for r := range 4 {
		for j := range 5 {
			p[r][j] = int32(r*5 + j)
			p[4+j][r] = int32(r*5 + j)
		}
	}
	return p
}()

// dotStoreAVX512 sets C = alpha·out + beta·C (C not read if beta == 0) for
// the rows×cols block of a dot-kernel result out, whose element (r, j) is
// c[r*ldc+j], or c[j*ldc+r] when trans is set.
func dotStoreAVX512(out, c []float32, ldc, rows, cols int, trans bool, alpha, beta float32) {
	_ = out[19]
	if trans {
		_ = c[(cols-1)*ldc+rows-1] // bounds: the asm trusts these
		storeDotAVX512(&out[0], &c[0], ldc, cols, lowBits(rows), &dotPerm[4][0], alpha, beta)
		return
	}
	_ = c[(rows-1)*ldc+cols-1]
	storeDotAVX512(&out[0], &c[0], ldc, rows, lowBits(cols), &dotPerm[0][0], alpha, beta)
}

// transLongAVX512 is transLongGo with AVX-512 gathers: transPanelAVX512
// on blocks of 32 source rows, each column j of the block gathered into
// dst[j*ldd+p0 : j*ldd+p0+32].
func transLongAVX512(dst []float32, ldd int, src []float32, lds, rows, cols int) {
	if rows == 0 || cols == 0 {
		return
	}
	_, _ = dst[(cols-1)*ldd+rows-1], src[(rows-1)*lds+cols-1] // bounds: the asm trusts these
	if 31*lds > math.MaxInt32 {
		transLongGo(dst, ldd, src, lds, rows, cols) // offsets overflow the gather's int32 indices
		return
	}
	var idx [32]int32
	for r := range idx {
		idx[r] = int32(r * lds)
	}
	for p0 := 0; p0 < rows; p0 += 32 {
		mask := lowBits(min(32, rows-p0))
		transPanelAVX512(&dst[p0], &src[p0*lds], &idx[0], cols, ldd, mask, mask)
	}
}

// copyPanelAVX2 is copyPanelGo for w ≤ 16 with AVX masked moves
// (pack_amd64.s); masks holds the load masks (low and high 8 lanes) and the
// store masks, each lane -1 (on) or 0.
//
//go:noescape
func copyPanelAVX2(dst, src *float32, ld, kc, w int, masks *int32)

// transPanelAVX2 is transPanelGo for w ≤ 16 with AVX2 gathers
// (pack_amd64.s); idx holds the row offsets r*ld, masks the row masks and
// store masks as for copyPanelAVX2.
//
//go:noescape
func transPanelAVX2(dst, src *float32, idx *int32, kc, w int, masks *int32)

// laneMasks returns 16-lane masks for the first n and the first w lanes.
func laneMasks(n, w int) (m [32]int32) {
	for i := range 16 {
		if i < n {
			m[i] = -1
		}
		if i < w {
			m[16+i] = -1
		}
	}
	return m
}

func copyPanelAVX2Checked(dst, src []float32, ld, kc, cols, w int) {
	if kc == 0 {
		return
	}
	_, _ = dst[kc*w-1], src[(kc-1)*ld+cols-1] // bounds: the asm trusts these
	if w > 16 {
		panic("gemm: panel wider than 16")
	}
	masks := laneMasks(cols, w)
	copyPanelAVX2(&dst[0], &src[0], ld, kc, w, &masks[0])
}

func transPanelAVX2Checked(dst, src []float32, ld, kc, rows, w int) {
	if kc == 0 {
		return
	}
	_, _ = dst[kc*w-1], src[(rows-1)*ld+kc-1]
	if w > 16 {
		panic("gemm: panel wider than 16")
	}
	if (w-1)*ld > math.MaxInt32 {
		transPanelGo(dst, src, ld, kc, rows, w) // offsets overflow the gather's int32 indices
		return
	}
	var idx [16]int32
	for r := range rows {
		idx[r] = int32(r * ld)
	}
	masks := laneMasks(rows, w)
	transPanelAVX2(&dst[0], &src[0], &idx[0], kc, w, &masks[0])
}

// dot4x5AVX512 is the narrow-C kernel (kernel_amd64.s): out[r*5+c] +=
// Σ_{p<k} a_r[p]·bt[c*ldbt+p] for r < 4, c < 5. Needs AVX-512F.
//
//go:noescape
func dot4x5AVX512(k int, a0, a1, a2, a3, bt *float32, ldbt int, out *float32)
