package gemm

import "testing"

// BenchmarkPack measures each kernel's panel packing of a 600×1000 operand
// (A_N, B_T: gathers; A_T, B_N: contiguous copies), in elements per second.
func BenchmarkPack(b *testing.B) {
	const m, k = 600, 1000
	src := make([]float32, m*k)
	for _, kern := range kernels {
		for _, tr := range []bool{false, true} {
			b.Run(kern.name+map[bool]string{false: "/A_N", true: "/A_T"}[tr], func(b *testing.B) {
				dst := make([]float32, (m+kern.mr)*256)
				for b.Loop() {
					for pc := 0; pc < k; pc += 250 {
						for ic := 0; ic < m; ic += 224 / kern.mr * kern.mr {
							mc := min(224/kern.mr*kern.mr, m-ic)
							if tr {
								kern.packA(dst, tr, src, m, ic, mc, pc, 250)
							} else {
								kern.packA(dst, tr, src, k, ic, mc, pc, 250)
							}
						}
					}
				}
				b.ReportMetric(float64(m*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
			})
			b.Run(kern.name+map[bool]string{false: "/B_N", true: "/B_T"}[tr], func(b *testing.B) {
				dst := make([]float32, (m+kern.nr)*256)
				for b.Loop() {
					for pc := 0; pc < k; pc += 250 {
						if tr {
							kern.packB(dst, tr, src, k, pc, 250, 0, m)
						} else {
							kern.packB(dst, tr, src, m, pc, 250, 0, m)
						}
					}
				}
				b.ReportMetric(float64(m*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
			})
		}
	}
}
