//go:build !amd64 || purego

package gemm

// availableKernels lists the kernels this platform can run: only the
// pure-Go one.
func availableKernels() []microKernel {
	return []microKernel{genericKernel}
}
