package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// narrowMax is the widest C (in columns, or rows) that sgemmNarrow handles.
const narrowMax = 16

// dotKernel computes out[r*5+c] = Σ_{p<k} a_r[p]·bt[c*ldbt+p] for four
// rows a0…a3 (k values each) and five rows of bt.
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
		csi, csj = 1, ldc
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
	for j := 0; j < cols; j++ {
		row := bt[j*k : (j+1)*k]
		if narrowT {
			for p := range row {
				row[p] = narrow[p*ldn+j]
			}
		} else {
			copy(row, narrow[j*ldn:j*ldn+k])
		}
	}
	clear(bt[cols*k:])

	const chunkRows = 32 // rows per task: a multiple of 4
	tasks := (rows + chunkRows - 1) / chunkRows
	var next atomic.Int64
	work := func() {
		var out [20]float32
		for {
			t := int(next.Add(1) - 1)
			if t >= tasks {
				return
			}
			for i := t * chunkRows; i < min((t+1)*chunkRows, rows); i += 4 {
				valid := min(4, rows-i)
				var ar [4][]float32
				for r := range ar {
					ir := i + min(r, valid-1) // repeat the last row past the end
					ar[r] = w[ir*ldw : ir*ldw+k]
				}
				for g := 0; g < groups; g++ {
					kern.dot(k, ar[0], ar[1], ar[2], ar[3], bt[g*5*k:], k, out[:])
					for r := 0; r < valid; r++ {
						for cc := 0; cc < 5 && g*5+cc < cols; cc++ {
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
	workers := runtime.GOMAXPROCS(0)
	if rows*cols*k < parallelMinWork {
		workers = 1
	}
	workers = min(workers, tasks)
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return true
}
