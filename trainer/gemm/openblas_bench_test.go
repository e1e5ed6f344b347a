//go:build cblas

package gemm

import (
	"runtime"
	"testing"

	"github.com/dpcalc/dpcalc/trainer/gemm/internal/openblas"
)

// BenchmarkSgemmOpenBLAS measures OpenBLAS (cgo, -tags cblas) on the same
// shapes as BenchmarkSgemm, with GOMAXPROCS threads, next to Sgemm.
func BenchmarkSgemmOpenBLAS(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name+"/ours", func(b *testing.B) { benchGemm(b, s, Sgemm) })
		b.Run(s.name+"/openblas", func(b *testing.B) {
			openblas.SetThreads(runtime.GOMAXPROCS(0))
			benchGemm(b, s, openblas.Sgemm)
		})
	}
}

func TestOpenBLASAgrees(t *testing.T) {
	o := newOperands(newRand(), false, true, 37, 45, 61, 2, 0.5, 0.25, false)
	want := append([]float32(nil), o.c...)
	o.run(openblas.Sgemm, want)
	got := append([]float32(nil), o.c...)
	o.run(Sgemm, got)
	for i := range got {
		if d := got[i] - want[i]; d > 1e-4 || d < -1e-4 {
			t.Fatalf("c[%d] = %v, OpenBLAS %v", i, got[i], want[i])
		}
	}
}
