package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// benchSink keeps benchmark results live.
var benchSink float32

// benchShape is one product from the trainer: C (m×n) = op(A)·op(B) with
// inner dimension k. The name says where backprop uses it.
type benchShape struct {
	name           string
	m, n, k        int
	transA, transB bool
}

// benchShapes are the MLP trainer's products for a batch of 600 (layers
// 784→1000→10, and the PCA variant 784→60→1000→10 that trainer/mlp.go
// runs: projection, two dense layers, input gradients G·Wᵀ, weight
// gradients Aᵀ·G) and 1024³. Names give m×k×n of C(m×n) = op(A)(m×k)·op(B)(k×n).
var benchShapes = []benchShape{
	{name: "fwd_600x784x1000", m: 600, n: 1000, k: 784},
	{name: "proj_600x784x60", m: 600, n: 60, k: 784},
	{name: "fwd_600x1000x10", m: 600, n: 10, k: 1000},
	{name: "fwd_600x60x1000", m: 600, n: 1000, k: 60},
	{name: "wgrad_AtB_784x600x1000", m: 784, n: 1000, k: 600, transA: true},
	{name: "wgrad_AtB_60x600x1000", m: 60, n: 1000, k: 600, transA: true},
	{name: "wgrad_AtB_1000x600x10", m: 1000, n: 10, k: 600, transA: true},
	{name: "igrad_ABt_600x1000x784", m: 600, n: 784, k: 1000, transB: true},
	{name: "igrad_ABt_600x10x1000", m: 600, n: 1000, k: 10, transB: true},
	{name: "sq_1024", m: 1024, n: 1024, k: 1024},
	{name: "sq_AtBt_1024", m: 1024, n: 1024, k: 1024, transA: true, transB: true},
}

// benchOperands returns random stored A and B and a zeroed C for s, with
// tight strides.
func benchOperands(s benchShape) (a []float32, lda int, b []float32, ldb int, c []float32) {
	rng := rand.New(rand.NewPCG(3, 4))
	a = make([]float32, s.m*s.k)
	b = make([]float32, s.k*s.n)
	for i := range a {
		a[i] = rng.Float32() - 0.5
	}
	for i := range b {
		b[i] = rng.Float32() - 0.5
	}
	lda, ldb = s.k, s.n
	if s.transA {
		lda = s.m
	}
	if s.transB {
		ldb = s.k
	}
	return a, lda, b, ldb, make([]float32, s.m*s.n)
}

type gemmFunc func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

func benchGemm(b *testing.B, s benchShape, f gemmFunc) {
	a, lda, bm, ldb, c := benchOperands(s)
	var cpu0 time.Duration
	for b.Loop() {
		if cpu0 == 0 {
			cpu0 = processCPUTime()
		}
		f(s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n)
	}
	flops := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N)
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	// On a shared machine wall time depends on how often we were scheduled;
	// FLOPs per CPU-second of this process is steadier (and, with several
	// goroutines, a per-core rate rather than a throughput).
	if cpu := processCPUTime() - cpu0; cpu0 != 0 && cpu > 0 {
		b.ReportMetric(flops/cpu.Seconds()/1e9, "GFLOP/cpu-s")
	}
	benchSink = c[0]
}

// BenchmarkSgemm compares Sgemm ("ours", with the kernel Kernel names) with
// gonum's pure-Go blas32.Gemm on the same operands. Run with -cpu 1,2 for
// single- and dual-core figures.
func BenchmarkSgemm(b *testing.B) {
	b.Logf("kernel %s", Kernel())
	for _, s := range benchShapes {
		b.Run(s.name+"/ours", func(b *testing.B) { benchGemm(b, s, Sgemm) })
		b.Run(s.name+"/gonum", func(b *testing.B) { benchGemm(b, s, sgemmGonum) })
	}
}

// BenchmarkSgemmKernels runs every kernel this CPU has on the 1024³ and
// first-layer shapes.
func BenchmarkSgemmKernels(b *testing.B) {
	defer setKernel(kernels[0].name)
	for _, kern := range kernels {
		for _, s := range []benchShape{benchShapes[0], benchShapes[9]} {
			b.Run(fmt.Sprintf("%s/%s", s.name, kern.name), func(b *testing.B) {
				setKernel(kern.name)
				benchGemm(b, s, Sgemm)
			})
		}
	}
}

// BenchmarkBlocking varies the cache-blocking depth kc and block height mc
// for the active kernel on the first-layer forward shape and 1024³.
func BenchmarkBlocking(b *testing.B) {
	defer func(old blockSizes) { blocks = old }(blocks)
	for _, s := range []benchShape{benchShapes[0], benchShapes[9]} {
		for _, kc := range []int{128, 256, 384} {
			for _, mc := range []int{112, 224, 448} {
				b.Run(fmt.Sprintf("%s/kc=%d/mc=%d", s.name, kc, mc), func(b *testing.B) {
					blocks = blockSizes{k: kc, n: 1024, m: mc}
					benchGemm(b, s, Sgemm)
				})
			}
		}
	}
}
