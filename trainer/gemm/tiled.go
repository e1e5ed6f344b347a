package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// microKernel is a register-tiled kernel together with its tile shape and
// the packing routines that fill its panels.
//
// fn multiplies a packed A micro-panel (k steps of mr values) by a B
// micro-panel (k rows of nr values, ldb apart: nr when packed, the stored
// row stride when read in place) into the mr×nr tile of C at c (row stride
// ldc): C = alpha·A·B + beta·C, with C not read when beta == 0.
type microKernel struct {
	name   string
	mr, nr int
	fn     func(k int, a, b []float32, ldb int, c []float32, ldc int, alpha, beta float32)

	// copyPanel and transPanel pack one micro-panel; see copyPanelGo and
	// transPanelGo for the contract.
	copyPanel  func(dst, src []float32, ld, kc, cols, w int)
	transPanel func(dst, src []float32, ld, kc, rows, w int)

	// dot, if not nil, serves narrow products (see sgemmNarrow); there
	// transLong and dotStore, if not nil, replace transLongGo and the Go
	// loop that stores the dot kernel's results.
	dot       dotKernel
	transLong func(dst []float32, ldd int, src []float32, lds, rows, cols int)
	dotStore  func(out, c []float32, ldc, rows, cols int, trans bool, alpha, beta float32)
	// axpy, if not nil, serves narrow products whose wide operand is
	// contiguous along C's long side (see sgemmAxpy).
	axpy *axpyKernel
}

// blockSizes are the cache-blocking parameters. A packed kc×nc block of
// op(B) (kc·nc·4 bytes, 1 MiB by default) stays in the per-core L2 cache
// (2 MiB on the development machine); a packed kc×mr micro-panel of op(A)
// (at most 14 KiB) stays in L1 (48 KiB) while the kernel streams the B
// micro-panels past it. The A block (mc×kc) is re-packed for every B block;
// mc bounds its buffer and is rounded down to a multiple of mr.
type blockSizes struct{ k, n, m int }

// blocks is read once per Sgemm call; benchmarks vary it to tune.
var blocks = blockSizes{k: 256, n: 1024, m: 224}

// parallelMinWork is the number of multiply-adds (m·n·k) below which Sgemm
// stays on the calling goroutine: goroutine start-up and synchronisation
// cost more than they save on smaller products. Tests lower it.
var parallelMinWork = 1 << 20

var (
	kernels = availableKernels()
	// active is the index into kernels of the kernel Sgemm uses: 0, the
	// fastest, unless a test forced another one.
	active atomic.Int32
)

func activeKernel() microKernel { return kernels[active.Load()] }

// Kernel names the micro-kernel Sgemm uses on this machine, one of
// "avx512-14x32" (AVX-512F), "avx2-6x16" (AVX2 and FMA) or "generic-4x4"
// (pure Go; the only one off amd64 or with the purego build tag).
func Kernel() string { return activeKernel().name }

// setKernel makes Sgemm use the named kernel and reports whether this CPU
// has it. For tests and benchmarks; not safe while Sgemm runs concurrently.
func setKernel(name string) bool {
	for i, k := range kernels {
		if k.name == name {
			active.Store(int32(i))
			return true
		}
	}
	return false
}

// packBuf holds one worker's packing buffers.
type packBuf struct {
	a, b, tile []float32
}

var bufPool = sync.Pool{New: func() any { return new(packBuf) }}

// getBuf returns a pooled buffer with room for a kc×nc packed B block, a
// kc×mc packed A block (each rounded up to whole micro-panels; 0 means none
// needed) and one scratch tile.
func getBuf(kern microKernel, kc, nc, mc int) *packBuf {
	pb := bufPool.Get().(*packBuf)
	nb := kc * ((nc + kern.nr - 1) / kern.nr * kern.nr)
	na := kc * ((mc + kern.mr - 1) / kern.mr * kern.mr)
	if cap(pb.b) < nb {
		pb.b = make([]float32, nb)
	}
	if cap(pb.a) < na {
		pb.a = make([]float32, na)
	}
	if cap(pb.tile) < kern.mr*kern.nr {
		pb.tile = make([]float32, kern.mr*kern.nr)
	}
	pb.a, pb.b, pb.tile = pb.a[:na], pb.b[:nb], pb.tile[:kern.mr*kern.nr]
	return pb
}

// scaleC sets C = beta·C, or C = 0 without reading it if beta == 0.
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 1:
		case 0:
			clear(row)
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// sgemmTiled runs the blocked product with kernel kern, splitting C over
// goroutines when the problem is large enough. Arguments are checked and
// m, n, k > 0.
func sgemmTiled(kern microKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if sgemmNarrow(kern, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ||
		sgemmAxpy(kern, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
		return
	}
	p := &problem{kern: kern, blk: blocks, transA: transA, transB: transB, k: k, alpha: alpha, beta: beta,
		a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
	if tileUse(kern, n, m) > 1.25*tileUse(kern, m, n) {
		// A narrow C (say n = 10 with nr = 32) wastes most of each tile;
		// computing Cᵀ = op(B)ᵀ·op(A)ᵀ puts the long side along nr.
		p.transA, p.transB = !transB, !transA
		p.a, p.lda, p.b, p.ldb = b, ldb, a, lda
		p.cT = true
		m, n = n, m
	}
	// With at most two A micro-panels each B row is used at most twice, so
	// packing op(B) = B would cost more than reading it in place.
	p.directB = !p.transB && m <= 2*kern.mr
	workers := runtime.GOMAXPROCS(0)
	if m*n*k < parallelMinWork {
		workers = 1
	}
	// Enough tiles for every worker to get a few.
	workers = min(workers, (m+kern.mr-1)/kern.mr*((n+kern.nr-1)/kern.nr)/4)
	if workers <= 1 {
		p.run(0, m, 0, n)
		return
	}
	p.runParallel(m, n, workers)
}

// tileUse is the fraction of the kernel's tiles that an m×n C fills.
func tileUse(kern microKernel, m, n int) float64 {
	tm := (m + kern.mr - 1) / kern.mr * kern.mr
	tn := (n + kern.nr - 1) / kern.nr * kern.nr
	return float64(m) / float64(tm) * float64(n) / float64(tn)
}

// problem is one checked Sgemm call, possibly transposed: with cT set it
// computes Cᵀ, so element (i, j) of its result lives at c[j*ldc+i].
type problem struct {
	blk            blockSizes
	cT             bool
	directB        bool // read whole B micro-panels in place (see macro)
	kern           microKernel
	transA, transB bool
	k              int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
}

// run computes rows [m0, m1) × columns [n0, n1) of C.
func (p *problem) run(m0, m1, n0, n1 int) {
	kern := p.kern
	mr, nr := kern.mr, kern.nr
	// Balance the k blocks so that the last one is not a sliver.
	blk := p.blk
	kblocks := (p.k + blk.k - 1) / blk.k
	kcMax := (p.k + kblocks - 1) / kblocks
	ncMax := min(blk.n, n1-n0)
	mcMax := min(max(blk.m/mr, 1)*mr, m1-m0)
	buf := getBuf(kern, kcMax, ncMax, mcMax)
	defer bufPool.Put(buf)

	for jc := n0; jc < n1; jc += ncMax {
		nc := min(ncMax, n1-jc)
		for pc := 0; pc < p.k; pc += kcMax {
			kc := min(kcMax, p.k-pc)
			beta := p.beta
			if pc > 0 {
				beta = 1 // later k blocks accumulate onto the first
			}
			if j0 := p.firstPackedPanel(nc) * nr; j0 < nc {
				kern.packB(buf.b[j0*kc:], p.transB, p.b, p.ldb, pc, kc, jc+j0, nc-j0)
			}
			for ic := m0; ic < m1; ic += mcMax {
				mc := min(mcMax, m1-ic)
				kern.packA(buf.a, p.transA, p.a, p.lda, ic, mc, pc, kc)
				p.macro(buf.a[:mc*kc], buf.b[:nc*kc], buf.tile, kc, pc, ic, jc, beta)
			}
		}
	}
}

// macro multiplies a packed A block (whole mr-row micro-panels, depth kc)
// by a packed B block (whole nr-column micro-panels) into the C block whose
// top-left element is (i0, j0) of the problem's result. a and b are cut to
// the valid rows·kc and columns·kc; tile is mr·nr scratch.
//
// With p.directB set, whole B micro-panels are read in place from op(B) =
// B, rows pc… (only a partial last panel is packed).
func (p *problem) macro(a, b, tile []float32, kc, pc, i0, j0 int, beta float32) {
	kern := p.kern
	mr, nr := kern.mr, kern.nr
	mc, nc := len(a)/kc, len(b)/kc
	for ir := 0; ir < mc; ir += mr {
		ap := a[ir*kc : ir*kc+mr*kc : ir*kc+mr*kc]
		rows := min(mr, mc-ir)
		for jr := 0; jr < nc; jr += nr {
			cols := min(nr, nc-jr)
			bp, ldb := b[jr*kc:jr*kc+nr*kc:jr*kc+nr*kc], nr
			if p.directB && cols == nr {
				bp, ldb = p.b[pc*p.ldb+j0+jr:], p.ldb
			}
			if !p.cT && rows == mr && cols == nr {
				kern.fn(kc, ap, bp, ldb, p.c[(i0+ir)*p.ldc+j0+jr:], p.ldc, p.alpha, beta)
				continue
			}
			// Edge or transposed tile: compute the full tile into the
			// scratch buffer and copy the valid part.
			kern.fn(kc, ap, bp, ldb, tile, nr, 1, 0)
			p.storeTile(tile[:rows*nr], nr, cols, i0+ir, j0+jr, beta)
		}
	}
}

// runParallel computes all m×n of C with workers goroutines (the caller is
// one of them). The k and n dimensions are blocked as in run, but each kc×nc
// block of op(B) is packed once, cooperatively, into a buffer all workers
// share; the workers then take chunks of C rows (and, when there are few
// rows, of columns) from a shared counter, packing their own A panels. Chunks
// taken on demand keep both cores busy on a machine where one of them is
// also running something else. Two B buffers alternate, so one barrier per
// block suffices: a worker that passed the barrier of block t has finished
// computing block t−1, whose buffer block t+1 then reuses.
func (p *problem) runParallel(m, n, workers int) {
	kern := p.kern
	mr, nr := kern.mr, kern.nr
	blk := p.blk
	kblocks := (p.k + blk.k - 1) / blk.k
	kcMax := (p.k + kblocks - 1) / kblocks
	ncMax := min(max(blk.n/nr, 1)*nr, n)
	// Row chunks of at most mc rows, and at least 3 per worker if possible.
	mcChunk := min(max(blk.m/mr, 1)*mr, max(1, (m+3*workers-1)/(3*workers)+mr-1)/mr*mr)
	mcChunk = max(mcChunk, mr)
	mChunks := (m + mcChunk - 1) / mcChunk

	bufs := make([]*packBuf, workers)
	for w := range bufs {
		bufs[w] = getBuf(kern, kcMax, 0, mcChunk)
	}
	shared := [2]*packBuf{getBuf(kern, kcMax, ncMax, 0), getBuf(kern, kcMax, ncMax, 0)}
	defer func() {
		for _, b := range bufs {
			bufPool.Put(b)
		}
		bufPool.Put(shared[0])
		bufPool.Put(shared[1])
	}()

	type block struct {
		jc, nc, pc, kc int
		colChunks      int          // column chunks per row chunk
		panelsPer      int          // B micro-panels per column chunk
		packNext       atomic.Int64 // next group of B panels to pack
		workNext       atomic.Int64 // next chunk of C to compute
	}
	var blocksList []*block
	for jc := 0; jc < n; jc += ncMax {
		nc := min(ncMax, n-jc)
		panels := (nc + nr - 1) / nr
		colChunks := 1
		if mChunks < 2*workers {
			colChunks = min(panels, (2*workers+mChunks-1)/mChunks)
		}
		panelsPer := (panels + colChunks - 1) / colChunks
		colChunks = (panels + panelsPer - 1) / panelsPer
		for pc := 0; pc < p.k; pc += kcMax {
			blocksList = append(blocksList, &block{jc: jc, nc: nc, pc: pc, kc: min(kcMax, p.k-pc),
				colChunks: colChunks, panelsPer: panelsPer})
		}
	}
	const packGroup = 4 // B micro-panels per packing task
	bar := newBarrier(workers)

	work := func(w int) {
		buf := bufs[w]
		for t, bl := range blocksList {
			bbuf := shared[t%2].b
			kc := bl.kc
			panels := (bl.nc + nr - 1) / nr
			first := p.firstPackedPanel(bl.nc)
			for {
				g := int(bl.packNext.Add(1) - 1)
				if first+g*packGroup >= panels {
					break
				}
				j0 := (first + g*packGroup) * nr
				cols := min(packGroup*nr, bl.nc-j0)
				kern.packB(bbuf[j0*kc:], p.transB, p.b, p.ldb, bl.pc, kc, bl.jc+j0, cols)
			}
			bar.wait()
			beta := p.beta
			if bl.pc > 0 {
				beta = 1
			}
			lastIC := -1
			for {
				ch := int(bl.workNext.Add(1) - 1)
				if ch >= mChunks*bl.colChunks {
					break
				}
				ic := ch / bl.colChunks * mcChunk
				mc := min(mcChunk, m-ic)
				if ic != lastIC {
					kern.packA(buf.a, p.transA, p.a, p.lda, ic, mc, bl.pc, kc)
					lastIC = ic
				}
				j0 := ch % bl.colChunks * bl.panelsPer * nr
				cols := min(bl.panelsPer*nr, bl.nc-j0)
				p.macro(buf.a[:mc*kc], bbuf[j0*kc:(j0+cols)*kc], buf.tile, kc, bl.pc, ic, bl.jc+j0, beta)
			}
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { work(w) })
	}
	work(0)
	wg.Wait()
}

// barrier blocks each of n goroutines in wait until all n have arrived; it
// can be reused.
type barrier struct {
	mu         sync.Mutex
	cond       sync.Cond
	n, arrived int
	generation int
}

func newBarrier(n int) *barrier {
	b := &barrier{n: n}
	b.cond.L = &b.mu
	return b
}

func (b *barrier) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	gen := b.generation
	b.arrived++
	if b.arrived == b.n {
		b.arrived = 0
		b.generation++
		b.cond.Broadcast()
		return
	}
	for gen == b.generation {
		b.cond.Wait()
	}
}

// firstPackedPanel is the first of a block's B micro-panels that must be
// packed: 0, or with directB only a partial last one.
func (p *problem) firstPackedPanel(nc int) int {
	if p.directB {
		return nc / p.kern.nr
	}
	return 0
}

// storeTile applies C = alpha·tile + beta·C (C not read if beta == 0) for a
// rows×cols tile (row stride nr) whose top-left element is (i0, j0) of the
// problem's result.
func (p *problem) storeTile(tile []float32, nr, cols, i0, j0 int, beta float32) {
	alpha, c, ldc := p.alpha, p.c, p.ldc
	for i := 0; i*nr < len(tile); i++ {
		t := tile[i*nr : i*nr+cols]
		if p.cT {
			off := j0*ldc + i0 + i
			for j, v := range t {
				k := off + j*ldc
				if beta == 0 {
					c[k] = alpha * v
				} else {
					c[k] = alpha*v + beta*c[k]
				}
			}
			continue
		}
		crow := c[(i0+i)*ldc+j0:][:cols]
		if beta == 0 {
			for j, v := range t {
				crow[j] = alpha * v
			}
		} else {
			for j, v := range t {
				crow[j] = alpha*v + beta*crow[j]
			}
		}
	}
}

// packA copies rows [i0, i0+mc) and columns [p0, p0+kc) of op(A) into dst as
// ⌈mc/mr⌉ micro-panels of kc×mr values (for each k step, mr consecutive
// rows), padding the last panel with zero rows.
func (kern *microKernel) packA(dst []float32, trans bool, a []float32, lda, i0, mc, p0, kc int) {
	mr := kern.mr
	for ip := 0; ip < mc; ip += mr {
		d := dst[ip*kc : (ip+mr)*kc]
		rows := min(mr, mc-ip)
		if trans {
			// op(A)[i][p] = a[p*lda+i]: each k step is a contiguous run.
			kern.copyPanel(d, a[p0*lda+i0+ip:], lda, kc, rows, mr)
		} else {
			kern.transPanel(d, a[(i0+ip)*lda+p0:], lda, kc, rows, mr)
		}
	}
}

// packB copies rows [p0, p0+kc) and columns [j0, j0+nc) of op(B) into dst as
// ⌈nc/nr⌉ micro-panels of kc×nr values (for each k step, nr consecutive
// columns), padding the last panel with zero columns.
func (kern *microKernel) packB(dst []float32, trans bool, b []float32, ldb, p0, kc, j0, nc int) {
	nr := kern.nr
	for jp := 0; jp < nc; jp += nr {
		d := dst[jp*kc : (jp+nr)*kc]
		cols := min(nr, nc-jp)
		if trans {
			// op(B)[p][j] = b[j*ldb+p]: gather along each stored row.
			kern.transPanel(d, b[(j0+jp)*ldb+p0:], ldb, kc, cols, nr)
		} else {
			kern.copyPanel(d, b[p0*ldb+j0+jp:], ldb, kc, cols, nr)
		}
	}
}

// copyPanelGo sets dst[p*w+j] = src[p*ld+j] for p < kc and j < cols, and
// dst[p*w+j] = 0 for cols ≤ j < w.
func copyPanelGo(dst, src []float32, ld, kc, cols, w int) {
	// Element loops rather than copy/clear: the runs are short (w ≤ 32) and
	// memmove's call overhead would dominate.
	for p := 0; p < kc; p++ {
		d := dst[p*w : p*w+w]
		s := src[p*ld : p*ld+cols]
		for j, v := range s {
			d[j] = v
		}
		for j := cols; j < w; j++ {
			d[j] = 0
		}
	}
}

// transPanelGo sets dst[p*w+r] = src[r*ld+p] for p < kc and r < rows, and
// dst[p*w+r] = 0 for rows ≤ r < w.
func transPanelGo(dst, src []float32, ld, kc, rows, w int) {
	dst = dst[:kc*w]
	for r := 0; r < rows; r++ {
		s := src[r*ld : r*ld+kc]
		for p, v := range s {
			dst[p*w+r] = v
		}
	}
	if rows < w {
		for p := 0; p < kc; p++ {
			clear(dst[p*w+rows : p*w+w])
		}
	}
}
