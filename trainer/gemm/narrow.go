package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// narrowMax is the widest C (in columns, or rows) that sgemmNarrow handles.
const narrowMax = 16

// narrowKC is the longest k block of sgemmNarrow, which bounds the packed
// narrow operand's block at 256 KiB, well inside L2. Shorter blocks (256
// or 512, to keep the trainer's 10×1000 block in L1) measured slower on
// fwd_600x1000x10: the wide operand's rows are then read in short runs
// that the hardware prefetchers follow less well. Tests lower it.
var narrowKC = 4096

// dotKernel adds Σ_{p<k} a_r[p]·bt[c*ldbt+p] to out[r*5+c] for four rows
// a0…a3 (k values each) and five rows of bt.
type dotKernel func(k int, a0, a1, a2, a3, bt []float32, ldbt int, out []float32)

// btPool holds the packed narrow operand of sgemmNarrow.
var btPool = sync.Pool{New: func() any { return new([]float32) }}

// sgemmNarrow handles a C with at most narrowMax columns whose op(A) rows
// are contiguous (or, transposed, at most narrowMax rows with op(B)ᵀ rows
// contiguous) with kern's dot kernel, vectorised along k: the wide operand
// is streamed once, unpacked, and only the narrow one (≤ 16×k) is packed.
// It reports false, doing nothing, when the shape or kernel does not fit.
func sgemmNarrow(kern microKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	if kern.dot == nil || k < 16 {
		return false
	}
	// Rows of the wide operand are w[i*ldw : i*ldw+k], i < rows; the narrow
	// operand's rows (columns of C, or rows when transposed) are
	// nw(j)[p] for j < cols. C element (i, j) is c[i*csi + j*csj].
	var (
		w          []float32
		ldw        int
		rows, cols int
		narrow     []float32
		ldn        int
		narrowT    bool // narrow operand is stored k×cols (needs a transpose)
		csi, csj   int
		transC     bool // csi == 1, csj == ldc
	)
	switch {
	case !transA && n <= narrowMax:
		w, ldw, rows, cols = a, lda, m, n
		narrow, ldn, narrowT = b, ldb, !transB
		csi, csj = ldc, 1
	case transB && m <= narrowMax:
		// Cᵀ = op(B)ᵀ·op(A)ᵀ; the rows of op(B)ᵀ are B's stored rows.
		w, ldw, rows, cols = b, ldb, n, m
		narrow, ldn, narrowT = a, lda, transA
		csi, csj, transC = 1, ldc, true
	default:
		return false
	}
	groups := (cols + 4) / 5
	btp := btPool.Get().(*[]float32)
	defer btPool.Put(btp)
	if cap(*btp) < groups*5*k {
		*btp = make([]float32, groups*5*k)
	}
	bt := (*btp)[:groups*5*k]
	if narrowT {
		transLong := transLongGo
		if kern.transLong != nil {
			transLong = kern.transLong
		}
		transLong(bt, k, narrow, ldn, k, cols)
	} else {
		for j := 0; j < cols; j++ {
			copy(bt[j*k:(j+1)*k], narrow[j*ldn:j*ldn+k])
		}
	}
	clear(bt[cols*k:])

	// The k dimension is cut into balanced blocks of at most narrowKC, so
	// that a block of the packed narrow operand stays in L1 while a
	// chunk's rows pass; the kernel accumulates the blocks' sums in sums.
	kblocks := (k + narrowKC - 1) / narrowKC
	kc := (k + kblocks - 1) / kblocks
	const chunkRows = 32 // rows per task: a multiple of 4
	tasks := (rows + chunkRows - 1) / chunkRows
	var next atomic.Int64
	work := func() {
		// sums[(i/4*groups+g)*20 + r*5+cc] is C element (i+r, g*5+cc)
		// of the chunk, before alpha and beta.
		var sums [chunkRows / 4 * (narrowMax + 4) / 5 * 20]float32
		for {
			t := int(next.Add(1) - 1)
			if t >= tasks {
				return
			}
			i0, i1 := t*chunkRows, min((t+1)*chunkRows, rows)
			clear(sums[:])
			for p0 := 0; p0 < k; p0 += kc {
				kb := min(kc, k-p0)
				for g := 0; g < groups; g++ {
					for i := i0; i < i1; i += 4 {
						valid := min(4, i1-i)
						var ar [4][]float32
						for r := range ar {
							ir := i + min(r, valid-1) // repeat the last row past the end
							ar[r] = w[ir*ldw+p0 : ir*ldw+p0+kb]
						}
						out := sums[((i-i0)/4*groups+g)*20:][:20]
						kern.dot(kb, ar[0], ar[1], ar[2], ar[3], bt[g*5*k+p0:], k, out)
					}
				}
			}
			for i := i0; i < i1; i += 4 {
				for g := 0; g < groups; g++ {
					out := sums[((i-i0)/4*groups+g)*20:][:20]
					vr, vc := min(4, i1-i), min(5, cols-g*5)
					if kern.dotStore != nil {
						kern.dotStore(out, c[i*csi+g*5*csj:], ldc, vr, vc, transC, alpha, beta)
						continue
					}
					for r := 0; r < vr; r++ {
						for cc := 0; cc < vc; cc++ {
							idx := (i+r)*csi + (g*5+cc)*csj
							v := alpha * out[r*5+cc]
							if beta != 0 {
								v += beta * c[idx]
							}
							c[idx] = v
						}
					}
				}
			}
		}
	}
	runWorkers(rows*cols*k, tasks, work)
	return true
}

// axpyKernel multiplies a narrow operand by a block of a wide one that is
// contiguous along C's long side: for r < rows (1 ≤ rows ≤ narrowMax), i <
// cols (1 ≤ cols ≤ width[rows-1]) and k ≥ 1,
//
//	acc[r][i] = Σ_{p<k} s[p·rows+r] · a[p·lda+i]
//	c[r·ldc+i] = alpha·acc + beta·c[r·ldc+i]  (c not read if beta == 0)
//
// Each k step is rows broadcasts of s times a few vectors of a's row p, so
// every lane does useful work whatever rows is, and a is read once, in
// place.
//
// fnT, if not nil, stores the result transposed, c[i·ldc+r]; idx must hold
// i·ldc for i < 16. It reports false, doing nothing, if it cannot (the
// caller then uses fn on a scratch tile).
type axpyKernel struct {
	width [narrowMax]int
	fn    func(rows, k int, s, a []float32, lda int, c []float32, ldc, cols int, alpha, beta float32)
	fnT   func(rows, k int, s, a []float32, lda int, c []float32, ldc, cols int, alpha, beta float32, idx *[16]int32) bool
}

// sgemmAxpy handles a C with at most narrowMax columns when op(A)ᵀ = A is
// stored k×m, contiguous along m (the weight gradient Aᵀ·G of a narrow
// layer), and symmetrically a C with at most narrowMax rows when op(B) = B
// is stored k×n. The narrow operand is packed k×rows; the wide one is
// streamed once, unpacked, in blocks of the kernel's width, which are
// shared among GOMAXPROCS goroutines. In the first case the kernel computes
// a block of Cᵀ into a scratch tile that is then stored transposed. It
// reports false, doing nothing, when the shape or kernel does not fit.
func sgemmAxpy(kern microKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	if kern.axpy == nil {
		return false
	}
	// The result has rows×cols elements, row r at column i being C
	// element (i, r) when transC is set, and (r, i) otherwise.
	var (
		w          []float32
		ldw        int
		rows, cols int
		transC     bool
	)
	switch {
	case transA && n <= narrowMax:
		w, ldw, rows, cols, transC = a, lda, n, m, true
	case !transB && m <= narrowMax:
		w, ldw, rows, cols = b, ldb, m, n
	default:
		return false
	}
	sp := btPool.Get().(*[]float32)
	defer btPool.Put(sp)
	if cap(*sp) < k*rows {
		*sp = make([]float32, k*rows)
	}
	s := (*sp)[:k*rows]
	// s[p*rows+r] is op(B)[p][r] when transC, op(A)[r][p] otherwise.
	narrow, ldn, contiguous := b, ldb, !transB
	if !transC {
		narrow, ldn, contiguous = a, lda, transA
	}
	if contiguous {
		kern.copyPanel(s, narrow, ldn, k, rows, rows)
	} else {
		kern.transPanel(s, narrow, ldn, k, rows, rows)
	}

	width := kern.axpy.width[rows-1]
	nblocks := (cols + width - 1) / width
	// Blocks per task: enough work (≥ 2¹⁴ multiply-adds) to amortise
	// taking it.
	per := max(1, (1<<14)/(k*rows*width))
	tasks := (nblocks + per - 1) / per
	var next atomic.Int64
	var idx [16]int32 // C row offsets for fnT
	for i := range idx {
		idx[i] = int32(i * ldc)
	}
	work := func() {
		var tile [narrowMax * 64]float32
		for {
			t := int(next.Add(1) - 1)
			if t >= tasks {
				return
			}
			for blk := t * per; blk < min((t+1)*per, nblocks); blk++ {
				i0 := blk * width
				cw := min(width, cols-i0)
				if !transC {
					kern.axpy.fn(rows, k, s, w[i0:], ldw, c[i0:], ldc, cw, alpha, beta)
					continue
				}
				if kern.axpy.fnT != nil && kern.axpy.fnT(rows, k, s, w[i0:], ldw, c[i0*ldc:], ldc, cw, alpha, beta, &idx) {
					continue
				}
				kern.axpy.fn(rows, k, s, w[i0:], ldw, tile[:], width, cw, alpha, 0)
				for i := 0; i < cw; i++ {
					crow := c[(i0+i)*ldc : (i0+i)*ldc+rows]
					if beta == 0 {
						for r := range crow {
							crow[r] = tile[r*width+i]
						}
					} else {
						for r := range crow {
							crow[r] = tile[r*width+i] + beta*crow[r]
						}
					}
				}
			}
		}
	}
	runWorkers(rows*cols*k, tasks, work)
	return true
}

// transLongGo sets dst[j*ldd+p] = src[p*lds+j] for p < rows and j < cols:
// it transposes a long, narrow matrix (cols ≤ narrowMax) into cols long
// rows. Eight source rows at a time, so that each write is a short
// contiguous run.
func transLongGo(dst []float32, ldd int, src []float32, lds, rows, cols int) {
	p := 0
	for ; p+8 <= rows; p += 8 {
		s := src[p*lds : (p+7)*lds+cols]
		for j := 0; j < cols; j++ {
			d := dst[j*ldd+p : j*ldd+p+8 : j*ldd+p+8]
			d[0], d[1], d[2], d[3] = s[j], s[lds+j], s[2*lds+j], s[3*lds+j]
			d[4], d[5], d[6], d[7] = s[4*lds+j], s[5*lds+j], s[6*lds+j], s[7*lds+j]
		}
	}
	for ; p < rows; p++ {
		for j, v := range src[p*lds : p*lds+cols] {
			dst[j*ldd+p] = v
		}
	}
}

// runWorkers runs work on up to GOMAXPROCS goroutines (the caller's
// included), at most one per task, or on the caller alone when the product
// has fewer than parallelMinWork multiply-adds; work takes tasks until none
// are left.
func runWorkers(madds, tasks int, work func()) {
	workers := runtime.GOMAXPROCS(0)
	if madds < parallelMinWork {
		workers = 1
	}
	workers = min(workers, tasks)
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}
