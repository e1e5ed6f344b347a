package pld

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"gonum.org/v1/gonum/dsp/fourier"
)

// EpsilonCurve implements [accounting.CurveReporter]: it returns a
// certified upper bound on ε(delta) after the current composition followed
// by steps[i] repetitions of step, for non-decreasing steps ≥ 1. The
// accountant's state is not changed.
//
// When the accountant is empty and step is one Poisson-subsampled Gaussian
// with q < 1 (possibly inside SelfComposed or Composed), the curve comes
// from one discretisation per direction, on the grid the pointwise
// computation chooses for the largest T, and each point costs one
// frequency-domain product, one inverse FFT and the hockey-stick
// evaluation. Every point carries its own certificate for its T, as in
// composeParts, and is then replaced by RDP's value when that is smaller.
// The fast path does not refine the grid, so a point can be above what
// Epsilon returns for the same composition (by the discretisation error
// that refinement removes, or where the largest T forced a coarser grid),
// never below a certified lower bound.
//
// In every other case (a non-empty accountant, several (σ, q), q = 1,
// NoOp, NonPrivate, or a composition too large for the grid) it composes a
// copy incrementally and returns Epsilon at each point.
func (a *Accountant) EpsilonCurve(ctx context.Context, step accounting.Event, steps []int, delta float64) ([]float64, error) {
	out, err := a.epsilonCurve(ctx, step, steps, delta)
	return out, a.public(err)
}

func (a *Accountant) epsilonCurve(ctx context.Context, step accounting.Event, steps []int, delta float64) ([]float64, error) {
	if err := accounting.CheckDelta(delta); err != nil {
		return nil, err
	}
	for i, s := range steps {
		if err := accounting.CheckSteps(s); err != nil {
			return nil, err
		}
		if i > 0 && s < steps[i-1] {
			return nil, &accounting.ParamError{Name: "steps", Value: float64(s), Want: fmt.Sprintf(">= %d (steps must be sorted ascending)", steps[i-1])}
		}
	}
	add, nonPrivate, err := a.stepsOf(step, 1)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(steps))
	if len(steps) == 0 {
		return out, nil
	}
	tMax := steps[len(steps)-1]
	total := a.steps
	for _, n := range add {
		if n > (maxSteps-total)/tMax {
			return nil, &accounting.ParamError{Name: "steps", Value: float64(tMax), Want: fmt.Sprintf("a total of at most %d (2^40) steps", maxSteps)}
		}
		total += n * tMax
	}
	if len(a.counts) == 0 && a.private && !nonPrivate && len(add) == 1 {
		for k, n := range add {
			if k.Rate() < 1 {
				ts := make([]int, len(steps))
				for i, s := range steps {
					ts[i] = n * s
				}
				out, noisy, err := a.fastCurve(ctx, k, ts, delta)
				if a.rdpOnly(err) {
					// Too large for the default grid: answer pointwise
					// (Epsilon falls back to RDP where it must).
					return a.incrementalCurve(ctx, step, steps, delta)
				}
				if err != nil {
					return nil, err
				}
				// Points whose FFT round-off matters at their δ (small δ,
				// see noisyAt) are answered pointwise, where Epsilon tilts.
				for i, s := range steps {
					if !noisy[i] {
						continue
					}
					b := a.empty()
					if err := b.Compose(step, s); err != nil {
						return nil, err
					}
					if out[i], err = b.Epsilon(ctx, delta); err != nil {
						return nil, err
					}
				}
				// As Epsilon: the smaller of the PLD and the RDP bound.
				rdp, err := a.newRDP()
				if err != nil {
					return nil, err
				}
				done := 0
				for i, s := range steps {
					if s > done {
						if err := rdp.Compose(step, s-done); err != nil {
							return nil, err
						}
						done = s
					}
					if out[i] > 0 {
						// The RDP value itself: never above moments.RDP's.
						if e, err := rdp.Epsilon(ctx, delta); err == nil && e < out[i] {
							out[i] = e
						} else if err := accounting.Canceled(ctx); err != nil {
							return nil, err
						}
					}
				}
				return out, nil
			}
		}
	}
	return a.incrementalCurve(ctx, step, steps, delta)
}

// incrementalCurve composes step into a copy of a and queries Epsilon at
// each point.
func (a *Accountant) incrementalCurve(ctx context.Context, step accounting.Event, steps []int, delta float64) ([]float64, error) {
	b := a.empty()
	b.private, b.steps = a.private, a.steps
	for k, n := range a.counts {
		b.counts[k] = n
	}
	out := make([]float64, len(steps))
	done := 0
	for i, s := range steps {
		if err := accounting.Canceled(ctx); err != nil {
			return nil, err
		}
		if s > done {
			if err := b.Compose(step, s-done); err != nil {
				return nil, err
			}
			done = s
		}
		var err error
		if out[i], err = b.Epsilon(ctx, delta); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fastCurve is the fast path of EpsilonCurve for ts[i] steps of the single
// mechanism key, sampled (rate < 1), on an empty accountant.
func (a *Accountant) fastCurve(ctx context.Context, key mechanism.Mechanism, ts []int, delta float64) (out []float64, noisy []bool, err error) {
	tMax := ts[len(ts)-1]
	// The grid width and per-step truncation the pointwise computation
	// would use for tMax steps.
	r, err := composeSteps(ctx, []*mechanism.PLD{a.pld(key)}, []int{tMax}, a.h, delta)
	if err != nil {
		return nil, nil, err
	}
	// The directions are independent: compute them concurrently (this
	// halves the wall time, not the CPU time) and combine in a fixed order.
	eps := make([][]float64, len(r.dirs))
	noise := make([][]bool, len(r.dirs))
	errs := make([]error, len(r.dirs))
	var wg sync.WaitGroup
	for d, dir := range r.dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			eps[d], noise[d], errs[d] = curveDirection(ctx, dir.pairs[0], r.h, r.eta, r.auto, ts, delta)
		}()
	}
	wg.Wait()
	out = make([]float64, len(ts))
	noisy = make([]bool, len(ts))
	for d := range r.dirs {
		if errs[d] != nil {
			return nil, nil, errs[d]
		}
		for i, e := range eps[d] {
			out[i] = math.Max(out[i], e) // the worse direction is the bound
			noisy[i] = noisy[i] || noise[d][i]
		}
	}
	return out, noisy, nil
}

// curveDirection returns the upper bounds on ε(delta) of one direction
// at each T in ts.
func curveDirection(ctx context.Context, pair mechanism.Pair, h, eta float64, auto bool, ts []int, delta float64) ([]float64, []bool, error) {
	cd, err := newCurveDir(ctx, pair, h, eta, auto, ts)
	if err != nil {
		return nil, nil, err
	}
	defer cd.release()
	out := make([]float64, len(ts))
	noisy := make([]bool, len(ts))
	for i, t := range ts {
		if err := accounting.Canceled(ctx); err != nil {
			return nil, nil, err
		}
		if out[i], noisy[i], err = cd.epsilon(ctx, i, t, delta); err != nil {
			return nil, nil, err
		}
	}
	return out, noisy, nil
}

// curveDir is one direction of a fast curve: the upper discretisation
// of one step, its spectrum at the current transform length n, and the
// running power of the spectrum.
type curveDir struct {
	h   float64
	pmf pmf
	n   int
	fft *fourier.FFT

	// Chernoff bookkeeping: lams[j] and the per-step log-MGFs of the
	// finite part at ±lams[j] (the composed cumulant at T is T times it).
	lams, kp, kn []float64
	kpT, knT     []float64 // scratch: composed cumulants at the current T

	z      []complex128 // spectrum of one step
	zt     []complex128 // z^t, t the steps composed so far
	t      int
	zd     []complex128 // z^dPow, cached for equally spaced points
	dPow   int
	powRel float64 // bound on the relative error of zt, in units of u

	buf  []float64
	spec []complex128 // the spectrum handed to the inverse transform
	divs []int        // divisors of n, ascending

	needs   []int // window length of each point
	maxNeed int
	c       composition
}

// curveLamStep is the ratio between consecutive Chernoff λ of a curve.
var curveLamStep = math.Pow(2, 0.25)

// newCurveDir discretises pair on the grid of width h (coarsened like
// result.get when a window does not fit and auto is set) and finds the
// Chernoff window of every T in ts.
func newCurveDir(ctx context.Context, pair mechanism.Pair, h, eta float64, auto bool, ts []int) (*curveDir, error) {
	tMin, tMax := ts[0], ts[len(ts)-1]
	for {
		if err := accounting.Canceled(ctx); err != nil {
			return nil, err
		}
		cd := &curveDir{h: h}
		g, err := newGrid(ctx, pair, h, eta)
		if err != nil {
			return nil, err
		}
		cd.pmf = g.upper()
		m := &cd.pmf
		// Per-step variance of the finite part, for the λ range only (no
		// bound depends on it), as in chernoffWindow.
		var s, s1, s2 float64
		for i, v := range m.p {
			x := float64(m.lo+i) * h
			s += v
			s1 += v * x
			s2 += v * x * x
		}
		vr := h * h
		if s > 0 {
			mu := s1 / s
			vr = math.Max(s2/s-mu*mu, h*h)
		}
		// chernoffWindow tries λ0·2^{i/2}, i = −16..8, λ0 = √(−2 log η)/√(T·v):
		// cover that range for every T in [tMin, tMax].
		l0 := math.Sqrt(-2*windowLogEta) / math.Sqrt(vr)
		lamLo := l0 / math.Sqrt(float64(tMax)) / 256
		lamHi := l0 / math.Sqrt(float64(tMin)) * 16
		if !(lamLo > 0 && lamHi < math.Inf(1)) {
			// The variance underflowed (a grid width far below the loss):
			// no window can be sized (and the λ loop would not end).
			return nil, errTooLarge
		}
		for l := lamLo; l <= lamHi*curveLamStep; l *= curveLamStep {
			cd.lams = append(cd.lams, l)
			cd.kp = append(cd.kp, logMGF(m, h, l))
			cd.kn = append(cd.kn, logMGF(m, h, -l))
		}
		cd.kpT = make([]float64, len(cd.lams))
		cd.knT = make([]float64, len(cd.lams))
		cd.needs = make([]int, len(ts))
		ok := len(m.p) > 0
		for i, t := range ts {
			if !ok {
				break
			}
			kBot, kTop, fits := cd.window(t)
			ok = fits
			cd.needs[i] = max(len(m.p), kTop-kBot+1)
			cd.maxNeed = max(cd.maxNeed, cd.needs[i])
		}
		if ok && cd.maxNeed <= maxFFT {
			cd.alloc(goodSize(cd.maxNeed))
			return cd, nil
		}
		if !auto || h > 1e3 {
			return nil, errTooLarge
		}
		// The window does not fit: coarsen this direction's grid.
		h *= 2
	}
}

// cumulants fills kpT, knT with the composed log-MGF of t steps at ±lams,
// rounded up (the composed finite part is the t-fold convolution of the
// step's finite part, so its log-MGF is exactly t times the step's).
func (cd *curveDir) cumulants(t int) {
	for j := range cd.lams {
		cd.kpT[j] = roundUp(float64(t) * cd.kp[j])
		cd.knT[j] = roundUp(float64(t) * cd.kn[j])
	}
}

// window returns the loss indices [kBot, kTop] that the Chernoff bounds at
// t steps ask for (mass outside at most e^{windowLogEta} per side, the top
// extended to keep losses ≥ 0), clipped to the support, as in composeParts,
// and whether it is representable.
func (cd *curveDir) window(t int) (kBot, kTop int, ok bool) {
	cd.cumulants(t)
	h, m := cd.h, &cd.pmf
	top, bot := math.Inf(1), math.Inf(-1)
	for j, l := range cd.lams {
		top = math.Min(top, (cd.kpT[j]-windowLogEta)/l)
		bot = math.Max(bot, (windowLogEta-cd.knT[j])/l)
	}
	if !(math.Abs(top/h) < maxFFT*4 && math.Abs(bot/h) < 1e15) || top-bot > maxFFT*h {
		return 0, 0, false
	}
	minK, maxK := t*m.lo, t*(m.lo+len(m.p)-1)
	kTop = min(maxK, int(math.Ceil(top/h)))
	kBot = max(minK, int(math.Floor(bot/h)))
	if k0 := int(math.Ceil(-float64(t) * m.off / h)); kTop < k0 {
		kTop = min(maxK, k0)
	}
	return kBot, kTop, true
}

// alloc sizes the buffers for transforms of length up to n.
func (cd *curveDir) alloc(n int) {
	cd.buf = make([]float64, n)
	cd.c.c = make([]float64, n)
	cd.z = make([]complex128, n/2+1)
	cd.zt = make([]complex128, n/2+1)
	cd.zd = make([]complex128, n/2+1)
	cd.spec = make([]complex128, n/2+1)
}

// setSize transforms the step at length n (at least the step's length)
// and restarts the power chain.
func (cd *curveDir) setSize(n int) {
	cd.release()
	cd.n = n
	cd.fft = getFFT(n)
	buf := cd.buf[:n]
	clear(buf)
	copy(buf, cd.pmf.p)
	cd.z = cd.fft.Coefficients(cd.z[:n/2+1], buf)
	cd.zt, cd.zd = cd.zt[:n/2+1], cd.zd[:n/2+1]
	for i := range cd.zt {
		cd.zt[i] = 1
	}
	cd.t, cd.dPow, cd.powRel = 0, 0, 0
	cd.divs = cd.divs[:0]
	for d := 1; d <= n; d++ {
		if n%d == 0 {
			cd.divs = append(cd.divs, d)
		}
	}
}

// curveSlack is the spare length of a transform size: a new size (one
// forward transform and a fresh power) is chosen when a point's window
// outgrows the current one, 25% above that window, so that each point's
// inverse transform is close to its own window and the number of forward
// transforms grows only like the logarithm of the range of windows.
const curveSlack = 1.25

// release returns the FFT plan to the pool.
func (cd *curveDir) release() {
	if cd.fft != nil {
		putFFT(cd.fft)
		cd.fft = nil
	}
}

// advance sets zt = z^t (t ≥ cd.t) by multiplying in z^{t − cd.t}, and
// accumulates the bound on its relative rounding error: that of the
// previous zt, that of z^{t − cd.t} (powRoundBound) and 3 for the product.
// (Underflow of |z|^t to subnormals adds absolute errors below 2^−1070
// per product, far inside the factor 1.01 on e2.)
func (cd *curveDir) advance(t int) {
	d := t - cd.t
	if d == 0 {
		return
	}
	if d != cd.dPow {
		for i, v := range cd.z {
			cd.zd[i] = cpow(v, d)
		}
		cd.dPow = d
	}
	for i, v := range cd.zd {
		cd.zt[i] *= v
	}
	cd.powRel += powRoundBound(d) + 3
	cd.t = t
}

// epsilon returns the certified upper bound on ε(delta) of t = ts[i]
// composed steps of this direction. Calls must come in order of i.
func (cd *curveDir) epsilon(ctx context.Context, i, t int, delta float64) (float64, bool, error) {
	if need := cd.needs[i]; need > cd.n {
		cd.setSize(goodSize(max(need, min(cd.maxNeed, int(curveSlack*float64(need))))))
	}
	cd.advance(t)
	if t == 1 {
		// composeParts places a single step exactly (no FFT error).
		c, err := composeParts(ctx, []part{{cd.pmf, 1}}, cd.h, true, 0)
		if err == nil {
			return c.epsilon(delta, true), false, nil
		}
		if cerr := accounting.Canceled(ctx); cerr != nil {
			return 0, false, cerr
		}
	}
	m, n, h := &cd.pmf, cd.n, cd.h
	kBot, kTop, ok := cd.window(t) // also fills kpT, knT for t
	if !ok {
		return 0, false, errTooLarge // newCurveDir checked every t
	}
	if kTop-kBot+1 > n {
		// Cannot happen (n holds every window); keep the top, where δ is
		// decided. The tail bounds below are those of the actual window,
		// so the result stays certified either way.
		kBot = kTop - n + 1
	}
	// The transform length for this t: the smallest divisor n' of n that
	// holds the window. The spectrum of the length-n' (circular) composition
	// is zt at every (n/n')-th frequency, since sampling a DFT of length n
	// there is the DFT of length n' of the sequence aliased modulo n'.
	nt := n
	for _, d := range cd.divs {
		if d >= kTop-kBot+1 {
			nt = d
			break
		}
	}
	stride := n / nt
	kTop = kBot + nt - 1
	minK, maxK := t*m.lo, t*(m.lo+len(m.p)-1)
	c := &cd.c
	*c = composition{h: h, shift: float64(t) * m.off, lo: kBot, c: c.c[:nt], sA: c.sA, sB: c.sB}
	// Mass above the window wraps to its bottom, so it is added to the
	// upper δ; mass below wraps to its top, where it only raises the upper
	// δ (see composeParts).
	c.tailTop = tailBound(cd.kpT, cd.lams, h, kTop+1, maxK)
	c.tailBot = tailBound(cd.knT, cd.lams, -h, kBot-1, -minK)
	c.inf = math.Min(1, -math.Expm1(float64(t)*math.Log1p(-math.Min(m.inf, 1)))*(1+1e-13))

	spec := cd.spec[:nt/2+1]
	// ‖c₋₁‖₂ by Parseval from |z^{t−1}|² = |z^t|²/|z|² (0 when both vanish),
	// as in composeParts; the half spectrum counts the inner frequencies twice.
	var ss float64
	for i := range spec {
		v, vt := cd.z[i*stride], cd.zt[i*stride]
		spec[i] = vt
		a2 := 1.0
		if t > 1 {
			a2 = 0
			if v2 := abs2(v); v2 > 0 {
				a2 = abs2(vt) / v2
			}
		}
		w := 2.0
		if i == 0 || (nt%2 == 0 && i == nt/2) {
			w = 1
		}
		ss += w * a2
	}
	fft := getFFT(nt)
	buf := fft.Sequence(cd.buf[:nt], spec)
	putFFT(fft)
	// composed index j ↔ loss index t·lo + j (mod nt)
	src := ((kBot-t*m.lo)%nt + nt) % nt
	var l2 float64
	for j := 0; j < nt; j++ {
		v := buf[src] / float64(nt)
		if v < 0 {
			v = 0 // moves the entry toward its exact value
		}
		c.c[j] = v
		l2 += v * v
		if src++; src == nt {
			src = 0
		}
	}
	l2 = math.Sqrt(l2)
	// The forward transform had length n ≥ nt: its error bound, with
	// log2 n, covers the inverse of length nt too.
	const u = 0x1p-53
	lg := float64(bits.Len(uint(n)))
	fwd := float64(t) * math.Sqrt(ss/float64(nt))
	c.e2 = u * (10*lg*fwd + (10*lg+cd.powRel+4)*l2) * 1.01
	c.buildSums()
	e := c.epsilon(delta, true)
	return e, c.noisyAt(e, delta), nil
}
