package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// operands is one Sgemm call's inputs, stored with padded strides; padding
// holds NaN (A, B) or a sentinel (C) so stray reads and writes show up.
type operands struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
}

const cPad = 12345 // value of C's padding, which Sgemm must not touch

// newOperands fills A and B with values in [-1, 1) and C with values in
// [-1, 1), or NaN when nanC is set. pad extra elements follow every stored row.
func newOperands(rng *rand.Rand, transA, transB bool, m, n, k, pad int, alpha, beta float32, nanC bool) *operands {
	o := &operands{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	fill := func(rows, cols, pad int, padVal float32, val func() float32) ([]float32, int) {
		ld := cols + pad
		s := make([]float32, rows*ld)
		for i := range s {
			if i%ld < cols {
				s[i] = val()
			} else {
				s[i] = padVal
			}
		}
		return s, ld
	}
	nan := float32(math.NaN())
	uniform := func() float32 { return rng.Float32()*2 - 1 }
	o.a, o.lda = fill(ar, ac, pad, nan, uniform)
	o.b, o.ldb = fill(br, bc, pad, nan, uniform)
	cval := uniform
	if nanC {
		cval = func() float32 { return nan }
	}
	o.c, o.ldc = fill(m, n, pad, cPad, cval)
	return o
}

func (o *operands) run(f gemmFunc, c []float32) {
	f(o.transA, o.transB, o.m, o.n, o.k, o.alpha, o.a, o.lda, o.b, o.ldb, o.beta, c, o.ldc)
}

// check runs Sgemm on a copy of C and compares it element by element with a
// float64 evaluation of the same formula. The tolerance is the classic
// forward-error bound for a length-k float32 dot product followed by the
// alpha and beta updates,
//
//	|got − want| ≤ (k+4)·2⁻²⁴·(|alpha|·Σ_p |a_ip·b_pj| + |beta·c_ij|) + 1e-30,
//
// which holds for any summation order, with or without FMA.
func (o *operands) check(t *testing.T) {
	t.Helper()
	o.checkFunc(t, Sgemm)
}

// checkFunc is check for another implementation of the contract.
func (o *operands) checkFunc(t *testing.T, f gemmFunc) {
	t.Helper()
	got := append([]float32(nil), o.c...)
	o.run(f, got)
	// op(A) by rows and op(B) by columns, in float64, so the reference
	// loop below runs over contiguous memory.
	opA := make([]float64, o.m*o.k)
	opBt := make([]float64, o.n*o.k)
	for p := 0; p < o.k; p++ {
		for i := 0; i < o.m; i++ {
			if o.transA {
				opA[i*o.k+p] = float64(o.a[p*o.lda+i])
			} else {
				opA[i*o.k+p] = float64(o.a[i*o.lda+p])
			}
		}
		for j := 0; j < o.n; j++ {
			if o.transB {
				opBt[j*o.k+p] = float64(o.b[j*o.ldb+p])
			} else {
				opBt[j*o.k+p] = float64(o.b[p*o.ldb+j])
			}
		}
	}
	unit := math.Ldexp(1, -24)
	for i := 0; i < o.m; i++ {
		for j := 0; j < o.ldc; j++ {
			g := got[i*o.ldc+j]
			if j >= o.n {
				if g != cPad {
					t.Fatalf("padding c[%d][%d] = %v, want it untouched (%v)", i, j, g, cPad)
				}
				continue
			}
			var s, abs float64
			if o.alpha != 0 {
				ar, bc := opA[i*o.k:(i+1)*o.k], opBt[j*o.k:(j+1)*o.k]
				for p, av := range ar {
					s += av * bc[p]
					abs += math.Abs(av * bc[p])
				}
			}
			want := float64(o.alpha) * s
			scale := math.Abs(float64(o.alpha)) * abs
			if o.beta != 0 {
				c := float64(o.c[i*o.ldc+j])
				want += float64(o.beta) * c
				scale += math.Abs(float64(o.beta) * c)
			}
			tol := float64(o.k+4)*unit*scale + 1e-30
			if d := math.Abs(float64(g) - want); !(d <= tol) {
				t.Fatalf("c[%d][%d] = %v, want %v (|diff| %.3g > tol %.3g)", i, j, g, want, d, tol)
			}
		}
	}
}

// withKernel runs f once per kernel this CPU has, with Sgemm forced to it.
func withKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	defer setKernel(kernels[0].name)
	for _, kern := range kernels {
		if !setKernel(kern.name) {
			t.Fatalf("setKernel(%q) failed", kern.name)
		}
		t.Run(kern.name, f)
	}
}

func TestKernelsAvailable(t *testing.T) {
	names := map[string]bool{}
	for _, k := range kernels {
		names[k.name] = true
	}
	if !names["generic-4x4"] {
		t.Errorf("generic kernel missing from %v", names)
	}
	if Kernel() != kernels[0].name {
		t.Errorf("Kernel() = %q, want the fastest, %q", Kernel(), kernels[0].name)
	}
	t.Logf("kernels: %v; active %s", names, Kernel())
}

func TestSgemm(t *testing.T) {
	shapes := []struct {
		name    string
		m, n, k int
	}{
		{"1x1x1", 1, 1, 1},
		{"7x13x5", 7, 13, 5},
		{"33x17x65", 33, 17, 65},
		{"one AVX-512 tile", 14, 32, 3},
		{"one AVX2 tile", 6, 16, 2},
		{"tile plus one", 15, 33, 7},
		{"tile minus one", 13, 31, 9},
		{"k=0", 5, 6, 0},
		{"m=0", 0, 6, 3},
		{"n=0", 5, 0, 3},
		{"long k, two k blocks", 9, 11, 300},
		{"narrow, k=16", 13, 10, 16},
		{"narrow, k=64", 50, 5, 64},
		{"narrow, k=47", 6, 16, 47},
		{"tall", 233, 3, 17},
		{"wide", 3, 200, 17},
	}
	coeffs := []struct {
		name        string
		alpha, beta float32
		nanC        bool
	}{
		{"alpha=1 beta=0 NaN C", 1, 0, true},
		{"alpha=-0.5 beta=0 NaN C", -0.5, 0, true},
		{"alpha=0.5 beta=2", 0.5, 2, false},
		{"alpha=-1.5 beta=1", -1.5, 1, false},
		{"alpha=2 beta=-0.25", 2, -0.25, false},
		{"alpha=0 beta=3", 0, 3, false},
		{"alpha=0 beta=0 NaN C", 0, 0, true},
	}
	defer func(b blockSizes, kc int) { blocks, narrowKC = b, kc }(blocks, narrowKC)
	withKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for bi, blk := range []blockSizes{blocks, {k: 5, n: 40, m: 9}} {
			blocks = blk
			narrowKC = []int{4096, 20}[bi]
			for _, sh := range shapes {
				for _, cf := range coeffs {
					for _, ta := range []bool{false, true} {
						for _, tb := range []bool{false, true} {
							for _, pad := range []int{0, 3} {
								name := fmt.Sprintf("blocks=%v/%s/%s/ta=%v,tb=%v,pad=%d", blk, sh.name, cf.name, ta, tb, pad)
								t.Run(name, func(t *testing.T) {
									newOperands(rng, ta, tb, sh.m, sh.n, sh.k, pad, cf.alpha, cf.beta, cf.nanC).check(t)
								})
							}
						}
					}
				}
			}
		}
	})
}

// TestSgemmNarrow covers the narrow-C paths (sgemmNarrow, sgemmAxpy and
// the transposed tiles) with every narrow width 1…16 on either side of C,
// long sides that are not a multiple of any kernel's width, all transpose
// combinations, padded strides, small and long k, and beta 0 (NaN C), 1
// and other.
func TestSgemmNarrow(t *testing.T) {
	coeffs := []struct {
		alpha, beta float32
		nanC        bool
	}{{1, 0, true}, {-1.5, 1, false}, {0.5, -2, false}}
	kc := narrowKC
	withKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 18))
		for narrow := 1; narrow <= narrowMax; narrow++ {
			for _, side := range []string{"n", "m"} {
				t.Run(fmt.Sprintf("%s=%d", side, narrow), func(t *testing.T) {
					for _, long := range []int{1, 37, 100} {
						for _, k := range []int{1, 2, 17, 300} {
							for _, ta := range []bool{false, true} {
								for _, tb := range []bool{false, true} {
									for ci, cf := range coeffs {
										m, n := long, narrow
										if side == "m" {
											m, n = narrow, long
										}
										pad := 3 * (ci % 2)
										t.Run(fmt.Sprintf("%dx%dx%d/ta=%v,tb=%v/beta=%g", m, n, k, ta, tb, cf.beta), func(t *testing.T) {
											o := newOperands(rng, ta, tb, m, n, k, pad, cf.alpha, cf.beta, cf.nanC)
											o.check(t)
											if k > 16 {
												narrowKC = 16 // several k blocks
												defer func() { narrowKC = kc }()
												o.check(t)
											}
										})
									}
								}
							}
						}
					}
				})
			}
		}
	})
}

// TestSgemmLarge crosses every cache-block boundary (m > blockM, n > blockN,
// k > blockK, none a multiple of a tile) and exercises the parallel split,
// including uneven splits over three goroutines.
func TestSgemmLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("slow float64 reference")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	withKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		cases := []struct {
			name    string
			m, n, k int
			procs   int
		}{
			{"split rows", 229, 1031, 517, 2},
			{"split columns, 3 procs", 45, 1100, 300, 3},
			{"split rows, 3 procs", 500, 40, 260, 3},
			{"serial", 229, 1031, 517, 1},
		}
		for _, cs := range cases {
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/ta=%v,tb=%v", cs.name, ta, tb), func(t *testing.T) {
						runtime.GOMAXPROCS(cs.procs)
						newOperands(rng, ta, tb, cs.m, cs.n, cs.k, 5, 0.75, 0.5, false).check(t)
					})
				}
			}
		}
	})
}

// TestSgemmConcurrent calls Sgemm from several goroutines at once (sharing
// A and B, each with its own C) and checks every result against a serial
// call with the same kernel, which must agree bit for bit.
func TestSgemmConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const goroutines = 6
	shapes := [][3]int{{7, 13, 5}, {120, 130, 140}, {300, 200, 64}}
	var ops []*operands
	var want [][]float32
	for g := range goroutines {
		sh := shapes[g%len(shapes)]
		o := newOperands(rng, g%2 == 0, g%3 == 0, sh[0], sh[1], sh[2], 1, 1.25, 0.5, false)
		ops = append(ops, o)
		w := append([]float32(nil), o.c...)
		o.run(Sgemm, w)
		want = append(want, w)
	}
	got := make([][]float32, goroutines)
	var wg sync.WaitGroup
	for g, o := range ops {
		wg.Go(func() {
			for range 20 {
				c := append([]float32(nil), o.c...)
				o.run(Sgemm, c)
				got[g] = c
			}
		})
	}
	wg.Wait()
	for g := range ops {
		for i := range want[g] {
			if got[g][i] != want[g][i] {
				t.Fatalf("goroutine %d: c[%d] = %v, want %v", g, i, got[g][i], want[g][i])
			}
		}
	}
	for _, o := range ops[:2] {
		o.check(t)
	}
}

func newRand() *rand.Rand { return rand.New(rand.NewPCG(11, 12)) }

func TestSgemmPanics(t *testing.T) {
	s := make([]float32, 12)
	cases := []struct {
		name string
		f    func()
		want string
	}{
		{"negative m", func() { Sgemm(false, false, -1, 2, 2, 1, s, 2, s, 2, 0, s, 2) }, "gemm: negative dimension m=-1 n=2 k=2"},
		{"short lda", func() { Sgemm(false, false, 2, 2, 3, 1, s, 2, s, 2, 0, s, 2) }, "gemm: a stride 2 < row length 3"},
		{"short c", func() { Sgemm(false, false, 4, 4, 2, 1, s, 2, s, 4, 0, s, 4) }, "gemm: c has 12 elements, need 16"},
		{"short b transposed", func() { Sgemm(false, true, 2, 7, 2, 1, s, 2, s, 2, 0, make([]float32, 14), 7) }, "gemm: b has 12 elements, need 14"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != tc.want {
					t.Errorf("panic %v, want %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

// TestPanels checks every kernel's packing routines against copyPanelGo and
// transPanelGo semantics, element by element, including zero padding, and
// that nothing past the panel is written.
func TestPanels(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, kern := range kernels {
		for _, w := range []int{kern.mr, kern.nr} {
			for _, tc := range []struct{ kc, n, ld int }{{1, 1, 1}, {3, w, w}, {7, w - 1, w + 5}, {40, 1, 3}, {17, 5, 40}} {
				n := min(tc.n, w)
				name := fmt.Sprintf("%s/w=%d/kc=%d,n=%d,ld=%d", kern.name, w, tc.kc, n, tc.ld)
				t.Run(name, func(t *testing.T) {
					src := make([]float32, (max(tc.kc, n)+1)*max(tc.ld, tc.kc))
					for i := range src {
						src[i] = rng.Float32() + 1
					}
					ld := max(tc.ld, n)
					dst := make([]float32, tc.kc*w+3)
					for i := range dst {
						dst[i] = -1
					}
					kern.copyPanel(dst, src, ld, tc.kc, n, w)
					for p := 0; p < tc.kc; p++ {
						for j := 0; j < w; j++ {
							want := float32(0)
							if j < n {
								want = src[p*ld+j]
							}
							if got := dst[p*w+j]; got != want {
								t.Fatalf("copyPanel: dst[%d*%d+%d] = %v, want %v", p, w, j, got, want)
							}
						}
					}
					ldT := max(tc.ld, tc.kc)
					for i := range dst {
						dst[i] = -1
					}
					kern.transPanel(dst, src, ldT, tc.kc, n, w)
					for p := 0; p < tc.kc; p++ {
						for r := 0; r < w; r++ {
							want := float32(0)
							if r < n {
								want = src[r*ldT+p]
							}
							if got := dst[p*w+r]; got != want {
								t.Fatalf("transPanel: dst[%d*%d+%d] = %v, want %v", p, w, r, got, want)
							}
						}
					}
					for i := tc.kc * w; i < len(dst); i++ {
						if dst[i] != -1 {
							t.Fatalf("dst[%d] = %v written past the panel", i, dst[i])
						}
					}
				})
			}
		}
	}
}

// TestSgemmNarrowGoStores runs the narrow paths with the Go loops that
// store their results, which kernels with an assembly dotStore or axpy fnT
// skip.
func TestSgemmNarrowGoStores(t *testing.T) {
	defer func(ks []microKernel) { kernels = ks }(kernels)
	kernels = append([]microKernel(nil), kernels...)
	tested := false
	for i := range kernels {
		if kernels[i].dot != nil {
			kernels[i].dotStore, tested = nil, true
		}
		if kernels[i].axpy != nil {
			ak := *kernels[i].axpy
			ak.fnT, kernels[i].axpy, tested = nil, &ak, true
		}
	}
	if !tested {
		t.Skip("no kernel has the narrow paths")
	}
	withKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(19, 20))
		for _, sh := range [][3]int{{37, 10, 40}, {10, 37, 40}, {5, 1, 17}, {1, 16, 33}, {70, 3, 5}} {
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					newOperands(rng, ta, tb, sh[0], sh[1], sh[2], 2, 1.5, 0.5, false).check(t)
					newOperands(rng, ta, tb, sh[0], sh[1], sh[2], 0, -1, 0, true).check(t)
				}
			}
		}
	})
}

// TestTransLong checks every transLong implementation (the Go one and the
// active kernel's, if any) element by element on odd shapes, and that
// nothing past each destination row is written.
func TestTransLong(t *testing.T) {
	impls := map[string]func([]float32, int, []float32, int, int, int){"go": transLongGo}
	for _, kern := range kernels {
		if kern.transLong != nil {
			impls[kern.name] = kern.transLong
		}
	}
	for name, f := range impls {
		for _, tc := range []struct{ rows, cols, lds, pad int }{{1, 1, 1, 0}, {7, 3, 5, 1}, {33, 10, 10, 3}, {100, 16, 19, 0}, {65, 1, 4, 2}} {
			t.Run(fmt.Sprintf("%s/%dx%d,lds=%d", name, tc.rows, tc.cols, tc.lds), func(t *testing.T) {
				src := make([]float32, tc.rows*tc.lds)
				for i := range src {
					src[i] = float32(i + 1)
				}
				ldd := tc.rows + tc.pad
				dst := make([]float32, tc.cols*ldd+3)
				for i := range dst {
					dst[i] = -1
				}
				f(dst, ldd, src, tc.lds, tc.rows, tc.cols)
				for i, got := range dst {
					j, p := i/ldd, i%ldd
					want := float32(-1)
					if j < tc.cols && p < tc.rows {
						want = src[p*tc.lds+j]
					}
					if got != want {
						t.Fatalf("dst[%d] (column %d, row %d) = %v, want %v", i, j, p, got, want)
					}
				}
			})
		}
	}
}

// TestSgemmParallel forces the shared-packing parallel path onto small
// shapes, with default and tiny cache blocks (many k, n and row blocks, so
// the double-buffered B packing and the chunk counters are exercised) and
// 2 to 4 goroutines.
func TestSgemmParallel(t *testing.T) {
	defer func(b blockSizes, w int) { blocks, parallelMinWork = b, w }(blocks, parallelMinWork)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	parallelMinWork = 0
	withKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		for _, blk := range []blockSizes{blocks, {k: 5, n: 40, m: 9}, {k: 16, n: 64, m: 30}} {
			for _, procs := range []int{2, 3, 4} {
				for _, sh := range [][3]int{{64, 70, 33}, {9, 200, 21}, {150, 10, 40}, {33, 33, 1}, {100, 100, 100}, {300, 16, 5}, {7, 333, 9}, {1000, 1, 2}} {
					for _, ta := range []bool{false, true} {
						for _, tb := range []bool{false, true} {
							name := fmt.Sprintf("blocks=%v/procs=%d/%v/ta=%v,tb=%v", blk, procs, sh, ta, tb)
							t.Run(name, func(t *testing.T) {
								blocks = blk
								runtime.GOMAXPROCS(procs)
								newOperands(rng, ta, tb, sh[0], sh[1], sh[2], 2, 1.5, -0.5, false).check(t)
								newOperands(rng, ta, tb, sh[0], sh[1], sh[2], 0, 0.5, 0, true).check(t)
							})
						}
					}
				}
			}
		}
	})
}

// TestReferences checks the benchmark and interim implementations kept
// beside Sgemm (the naive loop and gonum) against the same float64 oracle.
func TestReferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, ref := range []struct {
		name string
		f    gemmFunc
	}{{"naive", sgemmNaive}, {"gonum", sgemmGonum}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/ta=%v,tb=%v", ref.name, ta, tb), func(t *testing.T) {
					newOperands(rng, ta, tb, 7, 13, 5, 2, 0.5, 2, false).checkFunc(t, ref.f)
					newOperands(rng, ta, tb, 9, 4, 30, 0, -1, 0, true).checkFunc(t, ref.f)
				})
			}
		}
	}
}
