//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

//go:generate go run gen_kernels.go

// kernel14x32AVX512 is the AVX-512 micro-kernel (kernel_amd64.s): a 14×32
// C tile in 28 zmm accumulators. See gen_kernels.go for the contract.
//
//go:noescape
func kernel14x32AVX512(k int, a, b, c *float32, ldc int, alpha, beta float32)

// kernel6x16AVX2 is the AVX2+FMA micro-kernel (kernel_amd64.s): a 6×16 C
// tile in 12 ymm accumulators.
//
//go:noescape
func kernel6x16AVX2(k int, a, b, c *float32, ldc int, alpha, beta float32)

var avx512Kernel = microKernel{
	name: "avx512-14x32", mr: 14, nr: 32,
	fn: func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
		_, _, _ = a[k*14-1], b[k*32-1], c[13*ldc+31] // bounds: the asm trusts these
		kernel14x32AVX512(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
	},
}

var avx2Kernel = microKernel{
	name: "avx2-6x16", mr: 6, nr: 16,
	fn: func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
		_, _, _ = a[k*6-1], b[k*16-1], c[5*ldc+15]
		kernel6x16AVX2(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
	},
}

// availableKernels lists the kernels this CPU can run, fastest first.
func availableKernels() []microKernel {
	var ks []microKernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, avx512Kernel)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel)
	}
	return append(ks, genericKernel)
}
