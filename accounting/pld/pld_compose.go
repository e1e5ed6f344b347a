package pld

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/search"
	"github.com/dpcalc/dpcalc/internal/sysmem"
	"github.com/dpcalc/dpcalc/internal/work"
	"gonum.org/v1/gonum/dsp/fourier"
)

// pldPart is count adaptive repetitions of one discretised step.
type pldPart struct {
	pmf   pldPMF
	count int
}

// pldComposed is a composed privacy loss distribution with the bookkeeping
// needed for certified bounds on δ(ε):
//
//	c[i]     computed mass at loss (lo+i)·h, negatives clamped to 0;
//	inf      mass at +∞;
//	tailTop  bound on the mass above the window (aliased into it);
//	tailBot  bound on the mass below the window (aliased into it);
//	e2       bound on the ℓ2 norm of the FFT error in c.
type pldComposed struct {
	h                float64
	shift            float64 // loss of index i is (lo+i)·h + shift
	lo               int
	c                []float64
	inf              float64
	tailTop, tailBot float64
	e2               float64

	// Suffix sums over i ≥ i0 (losses > 0): sA[i] = Σ_{k≥i} c[k],
	// sB[i] = Σ_{k≥i} c[k]·e^{bScale−loss_k}; index i−i0. bScale is 0
	// unless the losses exceed 700 (see buildSums); capTop is the highest
	// index whose e^{bScale−loss} was capped at e^700 (−1: none).
	i0     int
	sA, sB []float64
	bScale float64
	capTop int

	// Exponential tilt (see pldCompose): c[i] = c̃[i]·W(loss_i), W(l) =
	// e^{logW − lambda·l}, where c̃ is what the FFT computed; tailTop,
	// tailBot and e2 are bounds in the tilted measure c̃, and rho bounds the
	// relative error of the tilt and of W. lambda = 0: W = 1, rho = 0.
	lambda, logW, rho float64
	lost              float64 // tilted mass dropped by pldTilt's underflow floor
}

// pldLogEta is log of the mass allowed outside the FFT window on each side
// (the exact Chernoff bound for the chosen window is then added to the
// upper and subtracted from the lower δ).
var pldLogEta = math.Log(1e-15)

// pldMaxFFT caps the FFT length.
const pldMaxFFT = 1 << 23

var errPLDTooLarge = errors.New("accounting: pld: the composition does not fit a grid of this width")

// pldLogMGF returns log Σ p_k e^{λ·k·h} over the finite part of m, by Horner's
// rule in r = e^{−|λ|h} from the end with the largest exponent (so nothing
// overflows).
func pldLogMGF(m *pldPMF, h, lambda float64) float64 {
	// Trim zero masses at both ends so that the anchor term is positive
	// and the Horner sum cannot underflow to 0.
	lo, hi := 0, len(m.p)-1
	for lo <= hi && !(m.p[lo] > 0) {
		lo++
	}
	for hi >= lo && !(m.p[hi] > 0) {
		hi--
	}
	if lo > hi {
		return math.Inf(-1)
	}
	r := math.Exp(-math.Abs(lambda) * h)
	var s float64
	ref := m.lo + lo
	if lambda > 0 {
		ref = m.lo + hi
		for i := lo; i <= hi; i++ {
			s = s*r + m.p[i]
		}
	} else {
		for i := hi; i >= lo; i-- {
			s = s*r + m.p[i]
		}
	}
	return lambda*float64(ref)*h + logmath.Log(s)
}

// pldCumulant returns Σ count·log M(λ), the log-MGF of the composed finite part.
func pldCumulant(parts []pldPart, h, lambda float64) float64 {
	var k float64
	for _, pt := range parts {
		k += float64(pt.count) * pldLogMGF(&pt.pmf, h, lambda)
	}
	return pldRoundUp(k) // logs of sums: allow rounding, upward (also for k < 0)
}

// pldGoodSize returns the smallest n' ≥ n of the form 2^a·3^b·5^c that
// gonum's FFT can factor: its fftpack factorisation (4s first, then a 2,
// 3s, 5s) must have at most pldFFTMaxFactors factors. A power of two up to
// 2^26 always qualifies.
func pldGoodSize(n int) int {
	best := 1 << bits.Len(uint(n-1))
	for p3, b := 1, 0; p3 < best; p3, b = p3*3, b+1 {
		for p35, c := p3, 0; p35 < best; p35, c = p35*5, c+1 {
			m, a := p35, 0
			for m < n {
				m *= 2
				a++
			}
			if m < best && a/2+a%2+b+c <= pldFFTMaxFactors {
				best = m
			}
		}
	}
	return best
}

// pldFFTMaxFactors is the most factors gonum's fftpack can store (its ifac
// array has 15 entries, two of them a header); more panic with an index out
// of range in rffti1, e.g. at n = 2^3·3^12 = 4251528 (the long soundness
// sweep at σ = 0.6345, q = 0.0329, T = 42945767).
const pldFFTMaxFactors = 13

// pldCompose convolves the parts with one real FFT per part plus one inverse
// (powers by binary exponentiation in the frequency domain).
//
// The window of losses it keeps is chosen with Chernoff bounds from the
// composed moment generating function K(λ) = Σ count·log M(λ): the mass
// above top or below bottom is at most e^{K(±λ) ∓ λ·edge} ≤ 1e-15, and the
// exact bound for the final window edges is recorded in tailTop/tailBot.
// That mass wraps around (circular convolution) into the window, where it
// can only raise the computed masses, so it is added for an upper bound
// and subtracted for a lower bound (see linear).
//
// FFT round-off: each coefficient of a forward transform of a
// sub-probability vector x is taken to be in error by at most
// c·log2(N)·u·‖x‖₁ (u = 2^−53, c = 10). This is the componentwise form of
// the butterfly-by-butterfly analysis behind Higham (2002, "Accuracy and
// Stability of Numerical Algorithms", Theorem 24.2): every output is
// reached from every input through log2 N butterflies with unit-modulus
// weights, each adding a few ulps (a radix-2 analysis gives c ≈ 5; FFTPACK's
// mixed radices are covered by the factor 2). A power z^n amplifies an error
// e by n·|z|^{n−1}, and the inverse transform is an isometry up to √N.
// Summed over frequencies this gives ‖Δc‖₂ ≤ u·c·log2(N)·Σ_s count_s·
// ‖c₋₁,s‖₂ plus the rounding of the powers and of the inverse, where c₋₁,s
// is the composition less one step of part s, whose ℓ2 norm is computed
// from the spectra (Parseval). The rounding of the powers is relative and
// grows linearly in the exponent (see pldPowRound). Negative masses are clamped to 0, which
// moves each entry toward its exact value. The upper δ adds and the lower
// δ subtracts e2·‖f‖₂, a Cauchy–Schwarz bound on the resulting error of δ
// (f = (1 − e^{ε−loss})₊, ‖f‖₂ ≤ √(number of terms)); see linear. This
// a-priori bound is the one place where the certificate rests on an error
// model rather than on exact inequalities.
//
// Exponential tilt (lambda > 0): every step's masses p_k are replaced by
// p_k·e^{lambda·l_k}/Z (Z normalises them to total mass at most 1), and the
// composition of the tilted steps is the tilt of the composition, c̃_l =
// c_l·e^{lambda·l}/Π Z. The FFT's absolute error e2 is then relative to the
// tilted measure, which puts mass of order one near the loss where a small
// δ is decided, instead of relative to the total mass 1: back in the
// original measure each error is multiplied by W(l) = Π Z·e^{−lambda·l},
// tiny exactly where the small δ lives. Without the tilt, δ below about
// e2 ≈ 1e-12·T^{1/2} (and the 1e-15 window tails) cannot be certified at
// all. The rounding of the tilt and of W is a relative error rho, applied
// to the whole bound (see linear); the window is chosen for the tilted
// measure, and its tails, in the tilted measure, enter δ multiplied by W.
func pldCompose(ctx context.Context, parts []pldPart, h float64, wantTop bool, lambda float64) (*pldComposed, error) {
	if len(parts) == 1 && parts[0].count == 1 {
		lambda = 0 // placed exactly below: nothing to gain
	}
	if lambda > 0 {
		tp, logW, rho, lost, ok := pldTilt(parts, h, lambda)
		if !ok {
			return nil, errPLDTooLarge
		}
		out, err := pldCompose(ctx, tp, h, wantTop, 0)
		if err != nil {
			return nil, err
		}
		out.lost = lost
		out.untilt(lambda, logW, rho)
		return out, nil
	}
	out := &pldComposed{h: h}
	// Infinite mass: 1 − Π (1 − inf_s)^{n_s}.
	var logFin float64
	var minK, maxK, steps int
	for _, pt := range parts {
		logFin += float64(pt.count) * math.Log1p(-math.Min(pt.pmf.inf, 1))
		out.shift += float64(pt.count) * pt.pmf.off
		minK += pt.count * pt.pmf.lo
		maxK += pt.count * (pt.pmf.lo + len(pt.pmf.p) - 1)
		steps += pt.count
	}
	out.inf = math.Min(1, -math.Expm1(logFin)*(1+1e-13))
	if len(parts) == 0 {
		out.c = []float64{1}
		out.buildSums()
		return out, nil
	}

	lams, kPos, kNeg, top, bot := pldChernoffWindow(parts, h)
	if !(math.Abs(top/h) < pldMaxFFT*4 && math.Abs(bot/h) < 1e15) || top-bot > pldMaxFFT*h {
		return nil, errPLDTooLarge
	}
	kTop := min(maxK, int(math.Ceil(top/h)))
	kBot := max(minK, int(math.Floor(bot/h)))
	if k0 := int(math.Ceil(-out.shift / h)); wantTop && kTop < k0 {
		kTop = min(maxK, k0) // keep losses ≥ 0 in the window
	}
	need := kTop - kBot + 1
	for _, pt := range parts {
		need = max(need, len(pt.pmf.p))
	}
	if need > pldMaxFFT {
		return nil, errPLDTooLarge
	}
	n := pldGoodSize(need)
	// Spare room goes to the top, where δ is decided.
	kTop = kBot + n - 1
	out.lo = kBot
	out.tailTop = pldTailBound(kPos, lams, h, kTop+1, maxK)
	out.tailBot = pldTailBound(kNeg, lams, -h, kBot-1, -minK)

	if err := pldMemCheck(n, len(parts)); err != nil {
		return nil, err
	}
	out.c = make([]float64, n)
	if len(parts) == 1 && parts[0].count == 1 {
		pm := &parts[0].pmf
		for i, v := range pm.p {
			// Mass below the window is moved up to its bottom (raises the
			// upper bound; the lower bound subtracts tailBot ≥ it); mass
			// above is dropped (tailTop is added to the upper bound).
			j := max(pm.lo+i-kBot, 0)
			if j < n {
				out.c[j] += v
			}
		}
		out.buildSums()
		return out, nil
	}
	fft := pldGetFFT(n)
	defer pldPutFFT(fft)
	buf := make([]float64, n)
	var z []complex128
	coef := make([]complex128, n/2+1)
	offset := 0 // Σ count·lo: composed index j ↔ loss index offset + j (mod n)
	var powRound float64
	// amp[s][f] = |z_s,f|^{n_s−1}·Π_{r≠s}|z_r,f|^{n_r}: how an error in
	// z_s,f reaches Z_f (first order). With more than pldExactAmpParts
	// parts the factors of the later parts (each ≤ 1) are left out, which
	// only enlarges the bound and keeps the cost linear in the parts; each
	// part's amp is then final once computed, and is reduced to its
	// weighted sum of squares (ss[s], see below) at once, so that the
	// memory does not grow with the number of parts.
	exact := len(parts) <= pldExactAmpParts
	amp := make([][]float64, len(parts))
	ss := make([]float64, len(parts))
	var ampBuf []float64
	var skipped float64 // how many powers were set to 0 (see pldSkipLog)
	for si, pt := range parts {
		if err := pldFFTWork(ctx, n); err != nil {
			return nil, err
		}
		for i := range buf {
			buf[i] = 0
		}
		copy(buf, pt.pmf.p)
		offset += pt.count * pt.pmf.lo
		fft.Coefficients(coef, buf)
		if z == nil {
			z = make([]complex128, len(coef))
			for i := range z {
				z[i] = 1
			}
		}
		if exact {
			amp[si] = make([]float64, len(coef))
		} else {
			if ampBuf == nil {
				ampBuf = make([]float64, len(coef))
			}
			clear(ampBuf)
			amp[si] = ampBuf
		}
		// |v|² ≤ skip2 means |v^count| ≤ e^{−pldSkipLog} (and, for count ≥
		// 2, |v|^{2(count−1)} ≤ e^{−pldSkipLog}): the power is set to 0.
		skip2 := 0.0
		if pt.count >= 2 {
			skip2 = math.Exp(-2*pldSkipLog/float64(pt.count)) * (1 - 1e-12)
		}
		for i, v := range coef {
			if z[i] == 0 {
				continue // amp[si][i] = 0: nothing reaches this frequency
			}
			if v2 := pldAbs2(v); v2 <= skip2 {
				amp[si][i] = pldSkipAmp * pldAbs2(z[i])
				if exact {
					for r := 0; r < si; r++ {
						amp[r][i] *= pldSkipAmp
					}
				}
				z[i] = 0
				skipped++
				continue
			}
			pw := pldCpow(v, pt.count)
			// Squared amplitudes: |z|^{2(n−1)} = |z^n|²/|z|², or exactly 0
			// when both vanish.
			pw2 := pldAbs2(pw)
			a2 := 1.0
			if pt.count > 1 {
				a2 = 0
				if v2 := pldAbs2(v); v2 > 0 {
					a2 = pw2 / v2
				}
			}
			amp[si][i] = a2 * pldAbs2(z[i]) // × the parts before s
			if exact {
				for r := 0; r < si; r++ {
					amp[r][i] *= pw2 // × this part, for the earlier ones
				}
			}
			z[i] *= pw
		}
		// z^n by binary exponentiation, then one product into z.
		powRound += pldPowRound(pt.count) + 3
		if !exact {
			ss[si] = pldAmpSum(amp[si], n)
			amp[si] = nil
		}
	}
	if err := pldFFTWork(ctx, n); err != nil {
		return nil, err
	}
	twRound := pldInverse(fft, buf, z)
	var l2 float64
	for j := 0; j < n; j++ {
		k := kBot + j // loss index
		src := ((k-offset)%n + n) % n
		v := buf[src] / float64(n)
		if v < 0 {
			v = 0
		}
		out.c[j] = v
		l2 += v * v
	}
	l2 = math.Sqrt(l2)
	const u = 0x1p-53
	lg := float64(bits.Len(uint(n)))
	// ‖c₋₁,s‖₂ = ‖amp_s‖₂/√n by Parseval (the real FFT stores half the
	// spectrum: the inner frequencies count twice).
	var fwd float64
	for si, pt := range parts {
		if exact {
			ss[si] = pldAmpSum(amp[si], n)
		}
		fwd += float64(pt.count) * math.Sqrt(ss[si]/float64(n))
	}
	// A power set to 0 was at most e^{−pldSkipLog} in modulus: at most
	// √2·e^{−pldSkipLog}/√n per frequency in ‖c‖₂ (Parseval).
	out.e2 = u*(10*lg*fwd+(10*lg+powRound+4+twRound)*l2)*1.01 + math.Sqrt(2*skipped/float64(n))*pldSkipAmp
	out.buildSums()
	return out, nil
}

// pldMemCheck refuses a composition of length n whose arrays would not
// fit in the memory available (see sysmem.Check): the masses, the FFT
// buffer, plan, spectrum and running product, the suffix sums, and the
// error amplification of up to pldExactAmpParts parts (one reused array
// beyond), about 8·n·(8 + parts/2) bytes.
func pldMemCheck(n, parts int) error {
	if parts > pldExactAmpParts {
		parts = 1
	}
	need := 8 * float64(n) * (8 + float64(parts)/2)
	return sysmem.Check(need, fmt.Sprintf("pld: a composition on %d grid points", n),
		"the number of steps or distinct phases (or set a coarser --pld-grid), or use --accountant rdp")
}

// pldAmpSum returns Σ w_i·amp_i over a half spectrum of an n-point real
// FFT: the inner frequencies count twice (w = 2), the zero frequency and,
// for even n, the last once.
func pldAmpSum(amp []float64, n int) float64 {
	var ss float64
	for i, a := range amp {
		w := 2.0
		if i == 0 || (n%2 == 0 && i == len(amp)-1) {
			w = 1
		}
		ss += w * a
	}
	return ss
}

// pldTilt returns the parts with their finite masses tilted by e^{lambda·l}
// and normalised to total mass at most 1, logW = Σ count·log(per-step
// normaliser), so that c = c̃·e^{logW − lambda·l} for the composed
// distributions, and a bound rho on the relative error that the rounding
// of the tilted masses and of the back-conversion puts on c (first order,
// doubled). ok is false when rho would exceed 1e-6 (too many steps for the
// tilt to pay), or the tilt is not finite.
//
// Each tilted mass is p_k·e^{y_k}/Z with y_k = lambda·(k − k*)·h, k* the
// index of the largest tilted mass: the relative rounding error of e^{y}
// is below (|y|+1)·u, of the product and the quotient 2u. Masses whose
// tilted value is below 2^−1000 of the total are set to 0; lost bounds the
// tilted mass of the composed paths through them (each such mass is below
// 2^−1000, the other factors sum to at most 1). Relative errors compound
// over the count steps of the part: (1+r)^count, first order count·r.
func pldTilt(parts []pldPart, h, lambda float64) (out []pldPart, logW, rho, lost float64, ok bool) {
	const u = 0x1p-53
	out = make([]pldPart, len(parts))
	var relErr, logWErr float64
	for si, pt := range parts {
		m := &pt.pmf
		kStar, best := -1, math.Inf(-1)
		for i, v := range m.p {
			if v > 0 {
				if l := math.Log(v) + lambda*float64(i)*h; l > best {
					kStar, best = i, l
				}
			}
		}
		tp := pldPMF{lo: m.lo, off: m.off, inf: m.inf, p: make([]float64, len(m.p))}
		if kStar < 0 {
			out[si] = pldPart{tp, pt.count}
			continue
		}
		var sum, comp, yMax float64
		for i, v := range m.p {
			if !(v > 0) {
				continue
			}
			y := lambda * float64(i-kStar) * h
			ay := math.Abs(y)
			var x float64
			if y < 700 {
				x = v * math.Exp(y)
			} else {
				// e^y alone would overflow; x ≤ p[k*] ≤ 1 by the choice of k*.
				lv := math.Log(v)
				x = math.Exp(lv + y)
				ay += math.Abs(lv)
			}
			tp.p[i] = x
			yMax = math.Max(yMax, ay)
			sum, comp = search.Neumaier(sum, comp, x)
		}
		z := (sum + comp) * (1 + 0x1p-48) // Σ tp.p/z ≤ 1 despite rounding
		floor := z * 0x1p-1000
		for i, x := range tp.p {
			if x < floor {
				tp.p[i] = 0
				if x > 0 || m.p[i] > 0 {
					lost += float64(pt.count) * 0x1p-1000
				}
			} else {
				tp.p[i] = x / z
			}
		}
		lz := math.Log(z) + lambda*(float64(m.lo+kStar)*h+m.off)
		if math.IsInf(lz, 0) || math.IsNaN(lz) {
			return nil, 0, 0, 0, false
		}
		logW += float64(pt.count) * lz
		logWErr += float64(pt.count) * (math.Abs(lz) + 1)
		relErr += float64(pt.count) * (yMax + 4) * u
		out[si] = pldPart{tp, pt.count}
	}
	// W(l) = e^{logW − lambda·l}: the exponent's rounding (the sum above,
	// the log, the product lambda·l for |l| up to the composed range) is a
	// relative error of W below 4u·(Σ count(|lz|+1) + |logW|) + that of the
	// product, added in untilt.
	rho = 2 * (relErr + 4*u*(logWErr+math.Abs(logW)))
	if !(rho <= 1e-6) {
		return nil, 0, 0, 0, false
	}
	return out, logW, rho, lost, true
}

// untilt turns the tilted composition in c (masses c̃) into the original
// one: c[i] = c̃[i]·W(loss_i), with the exponent capped at 700 (c̃ ≤ 1 at
// such a loss, where the true mass is at most 1, so capping only moves
// the entry toward its true value), and rebuilds the sums.
func (c *pldComposed) untilt(lambda, logW, rho float64) {
	c.lambda, c.logW = lambda, logW
	var lMax float64
	for i := range c.c {
		lMax = math.Max(lMax, math.Abs(c.loss(i)))
	}
	c.rho = rho + 8*0x1p-53*(lambda*lMax+1)
	for i, v := range c.c {
		if v > 0 {
			c.c[i] = v * math.Exp(math.Min(c.logWAt(i), 700))
		}
	}
	c.buildSums()
}

// logWAt returns log W at the loss of index i (see pldComposed).
func (c *pldComposed) logWAt(i int) float64 {
	if c.lambda == 0 {
		return 0
	}
	return c.logW - c.lambda*c.loss(i)
}

// pldExactAmpParts is the most parts for which the FFT error amplification
// is computed with all factors (quadratic in the number of parts).
const pldExactAmpParts = 8

// pldFFTWork checks ctx before an FFT of n points and reports its work: one
// unit per pldCheckEvery points (see internal/work), as grid loops do.
func pldFFTWork(ctx context.Context, n int) error {
	if err := accounting.Canceled(ctx); err != nil {
		return err
	}
	if err := work.Add(ctx, int64(n/pldCheckEvery)); err != nil {
		return fmt.Errorf("accounting: stopped: %w", err)
	}
	return nil
}

// pldFFTPlans caches FFT plans (their twiddle factors cost as much as a
// transform) per length; a plan is used by one goroutine at a time.
var pldFFTPlans sync.Map // int → *sync.Pool

func pldGetFFT(n int) *fourier.FFT {
	p, _ := pldFFTPlans.LoadOrStore(n, &sync.Pool{New: func() any { return fourier.NewFFT(n) }})
	return p.(*sync.Pool).Get().(*fourier.FFT)
}

func pldPutFFT(f *fourier.FFT) {
	if p, ok := pldFFTPlans.Load(f.Len()); ok {
		p.(*sync.Pool).Put(f)
	}
}

// pldChernoffWindow returns the λ values tried, the composed cumulants K(±λ)
// there, and the loss range [bot, top] outside which the composed finite
// part has mass at most e^{pldLogEta} on each side (Chernoff).
func pldChernoffWindow(parts []pldPart, h float64) (lams, kPos, kNeg []float64, top, bot float64) {
	// Moments of the composition, for the λ search.
	var vr float64
	for _, pt := range parts {
		var s, s1, s2 float64
		for i, v := range pt.pmf.p {
			x := float64(pt.pmf.lo+i) * h
			s += v
			s1 += v * x
			s2 += v * x * x
		}
		if s > 0 {
			m := s1 / s
			vr += float64(pt.count) * math.Max(s2/s-m*m, h*h)
		}
	}
	lam0 := math.Sqrt(-2*pldLogEta) / math.Sqrt(vr)
	lams = make([]float64, 0, 25)
	for i := -16; i <= 8; i++ {
		lams = append(lams, lam0*math.Pow(2, float64(i)/2))
	}
	kPos = make([]float64, len(lams))
	kNeg = make([]float64, len(lams))
	top, bot = math.Inf(1), math.Inf(-1)
	for i, l := range lams {
		kPos[i] = pldCumulant(parts, h, l)
		kNeg[i] = pldCumulant(parts, h, -l)
		top = math.Min(top, (kPos[i]-pldLogEta)/l)
		bot = math.Max(bot, (pldLogEta-kNeg[i])/l)
	}
	return lams, kPos, kNeg, top, bot
}

// pldTailBound returns min over λ of exp(K(λ) − λ·edge·h), the Chernoff bound
// on the composed mass at or beyond index edge (signed h selects the side),
// or 0 when edge is beyond the support end lim (in the same orientation).
func pldTailBound(ks, lams []float64, h float64, edge, lim int) float64 {
	e := edge
	if h < 0 {
		e = -edge
	}
	if e > lim {
		return 0
	}
	best := math.Inf(1)
	for i, l := range lams {
		best = math.Min(best, ks[i]-l*float64(edge)*h)
	}
	return math.Min(1, math.Exp(best)*(1+1e-12))
}

// pldSkipLog: a frequency whose composed power is at most e^{−pldSkipLog}
// in modulus is set to 0 instead of being raised to its power (for a
// composition of many steps nearly all are, the spectrum of a smooth
// loss distribution being concentrated at low frequencies); the error
// this makes is charged to e2. pldSkipAmp is e^{−pldSkipLog}.
const pldSkipLog = 700

var pldSkipAmp = math.Exp(-pldSkipLog) * (1 + 1e-12)

// pldInverse sets buf to the unnormalised inverse real DFT of the
// half spectrum z (buf[j] = Σ_f Z_f e^{2πi·fj/n} over the Hermitian
// spectrum, as fft.Sequence). When z vanishes above a frequency F far
// below n/2, the output is computed as r = n/m inverse transforms of a
// length m dividing n with m/2 > F: buf[j·r+s] is the m-point inverse
// of Z_f·e^{2πi·fs/n} (f ≤ F), a decimation in time of the band-limited
// sequence. Each output passes through log2(m) < log2(n) butterflies, and
// Σ_s‖y_s‖₂² = n·‖Z‖₂², so the ℓ2 round-off bound of pldCompose holds as
// for one n-point transform, plus the twiddles' relative error (returned,
// in units of u; 0 when no twiddles were used): each table root has its
// angle 2π·k/n ≤ 2π rounded three times (6π·u) and its sincos (2u), and
// the two products add 3u each, below 50u in all; a relative error ρ in
// every coefficient moves c by at most ρ·‖c‖₂ (Parseval).
func pldInverse(fft *fourier.FFT, buf []float64, z []complex128) (twRound float64) {
	n := len(buf)
	top := len(z) - 1
	for top > 0 && z[top] == 0 {
		top--
	}
	m := pldBandLength(n, top)
	if m == 0 {
		fft.Sequence(buf, z)
		return 0
	}
	r := n / m
	sub := pldGetFFT(m)
	defer pldPutFFT(sub)
	tw := newPLDRoots(n)
	y := make([]complex128, m/2+1)
	seq := make([]float64, m)
	for s := 0; s < r; s++ {
		k := 0 // f·s mod n
		for f := 0; f <= top; f++ {
			y[f] = z[f] * tw.at(k)
			if k += s; k >= n {
				k -= n
			}
		}
		for f := top + 1; f < len(y); f++ {
			y[f] = 0
		}
		sub.Sequence(seq, y)
		for j, v := range seq {
			buf[j*r+s] = v
		}
	}
	return 50
}

// pldBandLength returns the smallest even divisor m of n with m/2 > top
// when it is at most n/4 (a saving worth the twiddles), else 0.
func pldBandLength(n, top int) int {
	for m := 2 * (top + 1); m <= n/4; m++ {
		if n%m == 0 && m%2 == 0 {
			return m
		}
	}
	return 0
}

// pldRoots gives the n-th roots of unity e^{2πi·k/n} as the product of
// two short tables (k = 64a + b), accurate to a few ulps.
type pldRoots struct {
	n      int
	hi, lo []complex128
}

func newPLDRoots(n int) pldRoots {
	t := pldRoots{n: n, hi: make([]complex128, n/64+1), lo: make([]complex128, 64)}
	for a := range t.hi {
		sn, cs := math.Sincos(2 * math.Pi * float64(64*a) / float64(n))
		t.hi[a] = complex(cs, sn)
	}
	for b := range t.lo {
		sn, cs := math.Sincos(2 * math.Pi * float64(b) / float64(n))
		t.lo[b] = complex(cs, sn)
	}
	return t
}

func (t pldRoots) at(k int) complex128 { return t.hi[k>>6] * t.lo[k&63] }

// pldAbs2 returns |z|².
func pldAbs2(z complex128) float64 { return real(z)*real(z) + imag(z)*imag(z) }

// pldCpow returns z^n by binary exponentiation.
func pldCpow(z complex128, n int) complex128 {
	r := complex(1, 0)
	for n > 0 {
		if n&1 == 1 {
			r *= z
		}
		z *= z
		n >>= 1
	}
	return r
}

// buildSums precomputes the suffix sums used by δ(ε) queries.
func (c *pldComposed) buildSums() {
	c.i0 = max(0, int(math.Floor(-c.shift/c.h))-c.lo) // first index with loss > 0
	for c.i0 > 0 && c.i0-1 < len(c.c) && c.loss(c.i0-1) > 0 {
		c.i0--
	}
	for c.i0 < len(c.c) && c.loss(c.i0) <= 0 {
		c.i0++
	}
	if c.i0 > len(c.c) {
		c.i0 = len(c.c)
	}
	m := len(c.c) - c.i0
	c.sA = pldResize(c.sA, m+1)
	c.sB = pldResize(c.sB, m+1)
	var a, ca, b, cb float64 // Neumaier sums
	// e^{−loss} by recurrence (×e^h per step down), re-anchored with an
	// exact exp every 64 entries: relative error < 100 ulps, far inside
	// pldRelSlack. When the top loss L exceeds 700, e^{−loss} would be
	// subnormal or 0 near the top, where its relative error is unbounded
	// (and a b rounded up under-reports the upper δ): the terms are scaled
	// by e^{bScale}, bScale = L − 700, which at(·) and epsilon undo. Terms
	// more than 1400 below L would overflow: their factor is capped at
	// e^700, which lowers b (safe for the upper δ); cells that contain
	// them get the trivial lower bound 0 (see linear).
	c.bScale, c.capTop = 0, -1
	if m > 0 {
		if top := c.loss(len(c.c) - 1); top > 700 {
			c.bScale = top - 700
		}
	}
	const capV = 0x1p1009 // ≈ e^699.4 < e^700
	eh := math.Exp(c.h)
	var ex float64
	for i := len(c.c) - 1; i >= c.i0; i-- {
		if (len(c.c)-1-i)%64 == 0 {
			ex = math.Exp(math.Min(c.bScale-c.loss(i), 700))
		} else {
			ex *= eh
		}
		if ex > capV {
			ex = capV
			c.capTop = max(c.capTop, i)
		}
		v := c.c[i]
		w := v * ex
		a, ca = search.Neumaier(a, ca, v)
		b, cb = search.Neumaier(b, cb, w)
		c.sA[i-c.i0] = a + ca
		c.sB[i-c.i0] = b + cb
	}
}

// pldResize returns a zeroed slice of length n, reusing s when it is large
// enough.
func pldResize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// loss returns the loss at index i.
func (c *pldComposed) loss(i int) float64 { return float64(c.lo+i)*c.h + c.shift }

// sums returns A = Σ c[k], B = Σ c[k]e^{bScale−loss_k} over k ≥ i (i ≥ i0)
// and the number of terms.
func (c *pldComposed) sums(i int) (a, b float64, cnt int) {
	if i < c.i0 {
		i = c.i0
	}
	if i >= len(c.c) {
		return 0, 0, 0
	}
	return c.sA[i-c.i0], c.sB[i-c.i0], len(c.c) - i
}

// linear returns k and b such that, for ε in the cell where the terms with
// index ≥ i are those with loss > ε, the upper (or lower) bound on δ(ε)
// before clamping to [0, 1] is k − e^{ε−bScale}·b.
//
// With A = Σ_{k≥i} c_k, W_i = W(loss_i) (1 without tilt) and G_i =
// (Σ_{k≥i} (W_k/W_i)²)^{1/2} (√cnt without tilt; a geometric sum with it),
// the FFT error contributes at most e2·W_i·G_i (Cauchy–Schwarz, f ≤ 1),
// aliasing and dropped tilted mass at most their tilted mass times W_i,
// and mass above the window at most tailTop·W(top).
//
// Upper: (1+rho)·(Σ c(1 − e^{ε−loss}) + e2·W_i·G_i + lost·W_i + tailTop·W_top)
// + pldRelSlack·A (summation round-off) + inf + cnt·1e-300 (entries whose
// W underflowed). Lower: (1−rho)·Σ c(1 − e^{ε−loss}) − pldRelSlack·A −
// e2·W_i·G_i − (tailTop + tailBot)·W_i. Multiplying only the k-part by
// 1 ± rho is safe since the sum is non-negative in its cell.
func (c *pldComposed) linear(i int, upper bool) (k, b float64) {
	a, b, cnt := c.sums(i)
	if !upper && i <= c.capTop {
		return 0, 0 // b was lowered by the cap: only 0 is a safe lower bound
	}
	fft, wi, wTop := c.errTerms(i, cnt)
	if upper {
		e := fft + pldMul(c.lost, wi) + pldMul(c.tailTop, wTop)
		return (1+c.rho)*(a+e) + pldRelSlack*a + c.inf + float64(cnt)*1e-300, b
	}
	return (1-c.rho)*a - pldRelSlack*a - fft - pldMul(c.tailTop+c.tailBot+c.lost, wi), b
}

// errTerms returns the FFT error bound e2·W_i·G_i of the δ sum over the cnt
// terms from index i, W_i and W at the top of the window (see linear).
func (c *pldComposed) errTerms(i, cnt int) (fft, wi, wTop float64) {
	i = max(i, c.i0)
	wi = math.Exp(c.logWAt(i))
	g := math.Sqrt(float64(cnt))
	if c.lambda > 0 && cnt > 0 {
		g = math.Sqrt(math.Expm1(-2*c.lambda*c.h*float64(cnt)) / math.Expm1(-2*c.lambda*c.h))
	}
	wTop = 1.0
	if n := len(c.c); n > 0 {
		wTop = math.Exp(c.logWAt(n - 1))
	}
	return pldMul(c.e2*g*(1+1e-12), wi), wi, wTop
}

// pldMul returns x·w for x, w ≥ 0, with 0·∞ = 0 (a vanishing error term
// stays 0 where the tilt's weight overflows).
func pldMul(x, w float64) float64 {
	if x == 0 {
		return 0
	}
	return x * w
}

// noisyAt reports whether the untilted error terms at eps move ε by more
// than pldNoiseFrac of the target gap (see pldResult.noisy), for this
// composition alone.
func (c *pldComposed) noisyAt(eps, delta float64) bool {
	if math.IsInf(eps, 1) || math.IsNaN(eps) {
		return true
	}
	i := c.index(eps)
	s := 1e-3
	if d := c.at(eps, i, true); d > 0 {
		if _, b := c.linear(i, true); b > 0 {
			s = math.Max(s, math.Exp(eps-c.bScale)*b/d)
		}
	}
	return c.noise(eps) > pldNoiseFrac*pldTargetGap*math.Max(eps, 0.01)*s*delta
}

// noise returns the error terms of the upper δ at eps that a tilt can
// shrink (FFT round-off and the window tails), to decide whether to tilt.
func (c *pldComposed) noise(eps float64) float64 {
	i := c.index(eps)
	_, _, cnt := c.sums(i)
	fft, wi, wTop := c.errTerms(i, cnt)
	return fft + pldMul(c.tailBot+c.lost, wi) + pldMul(c.tailTop, wTop)
}

// at returns the clamped bound at ε with terms i... (see linear).
func (c *pldComposed) at(eps float64, i int, upper bool) float64 {
	if upper && c.lambda > 0 && i <= 0 {
		// Below a tilted window: the original mass between eps and the
		// window (tilted mass ≤ tailBot, but W is unbounded there) is not
		// bounded; only the trivial bound holds.
		return 1
	}
	k, b := c.linear(i, upper)
	d := k
	if b > 0 {
		d = k - pldExpTimes(eps-c.bScale, b, !upper)
	}
	return math.Max(0, math.Min(d, 1))
}

// pldExpTimes returns e^eps·b for b > 0, rounded up when up is set and down
// otherwise. For |eps| < 700 it is the plain product. Beyond, e^eps alone
// would overflow (at eps ≈ 709.78; an infinite product would drive δ(ε) to
// 0, an under-report) or underflow while b is large; the product is then
// formed as exp(eps + log b). The relative error of either form (a few
// times max(1, |eps + log b|)·u < 1e-12) is resolved by the same factor
// 1 ± 1e-12 in both, so that the result stays monotone in eps across the
// switch (δ bounds built from it are then non-increasing in ε).
func pldExpTimes(eps, b float64, up bool) float64 {
	var v float64
	if eps < 700 && eps > -700 {
		v = math.Exp(eps) * b
	} else {
		v = math.Exp(eps + logmath.Log(b))
	}
	if up {
		return v * (1 + 1e-12)
	}
	return v * (1 - 1e-12)
}

// epsilonLower returns a certified lower bound on ε(delta): the largest ε
// at which the lower δ-bound exceeds delta (the true δ(ε) is
// non-increasing, so it exceeds delta at every smaller ε too). The lower
// bound need not be monotone in ε (its error terms are weighted by W at the
// cell, which grows toward small losses under a tilt), so the grid is
// scanned from the top for the last cell where it exceeds delta, and ε is
// solved for inside that cell.
func (c *pldComposed) epsilonLower(delta float64) float64 {
	at := func(eps float64, i int) float64 { return c.at(eps, i, false) }
	// g(j) = bound at ε = loss(j) (terms > loss(j) are j+1...).
	j := len(c.c) - 1
	for ; j >= c.i0; j-- {
		if at(c.loss(j), j+1) > delta {
			break
		}
	}
	if j == len(c.c)-1 {
		return c.loss(j) // exceeds delta at the top of the window
	}
	var left float64
	if j < c.i0 {
		// The cell (0, loss(i0)], with the terms of ε = 0.
		if j = c.i0 - 1; j >= len(c.c)-1 || at(0, c.i0) <= delta {
			return 0
		}
	} else {
		left = c.loss(j)
	}
	// The bound is K − e^ε·B on (left, loss(j+1)] with the terms ≥ j+1.
	right := c.loss(j + 1)
	kConst, b := c.linear(j+1, false)
	eps := left
	if b > 0 && kConst > delta {
		eps = logmath.Log(kConst-delta) - logmath.Log(b) + c.bScale
	}
	eps = math.Max(left, math.Min(eps, right))
	return math.Max(left, eps*(1-1e-12))
}

// index returns the first index whose loss is > eps.
func (c *pldComposed) index(eps float64) int {
	i := int(math.Floor((eps-c.shift)/c.h)) - c.lo + 1
	// Guard the floating floor both ways.
	for i > 0 && i-1 < len(c.c) && c.loss(i-1) > eps {
		i--
	}
	for i < len(c.c) && i >= 0 && c.loss(i) <= eps {
		i++
	}
	return max(i, 0)
}

// delta returns δ(ε) bounded from above (upper = true) or below.
func (c *pldComposed) delta(eps float64, upper bool) float64 {
	return c.at(eps, c.index(eps), upper)
}

// epsilon returns inf{ε ≥ 0 : bound(ε) ≤ δ} where bound is the upper or
// lower δ-bound; +Inf if there is none. bound is non-increasing in ε, so
// the grid cell is found by bisection and ε inside it in closed form
// (within a cell bound(ε) = const − e^ε·B). For the upper bound the result
// is rounded up.
func (c *pldComposed) epsilon(delta float64, upper bool) float64 {
	if !upper {
		return c.epsilonLower(delta)
	}
	at := func(eps float64, i int) float64 { return c.at(eps, i, upper) }
	if at(0, c.index(0)) <= delta {
		return 0
	}
	// g(j) = bound at ε = loss(j) (terms > loss(j) are j+1...).
	lo, hi := c.i0, len(c.c)-1 // loss(lo) > 0
	if hi < lo || at(c.loss(hi), hi+1) > delta {
		return math.Inf(1)
	}
	if at(c.loss(lo), lo+1) <= delta {
		hi = lo
	} else {
		for hi-lo > 1 {
			mid := int(uint(lo+hi) >> 1)
			if at(c.loss(mid), mid+1) <= delta {
				hi = mid
			} else {
				lo = mid
			}
		}
	}
	// ε* ∈ (loss(hi−1), loss(hi)] (or (0, loss(hi)]), terms ≥ hi.
	left := 0.0
	if hi > c.i0 {
		left = c.loss(hi - 1)
	}
	right := c.loss(hi)
	if hi == 0 && c.lambda > 0 {
		return right // below a tilted window the bound is trivial (see at)
	}
	// Solve bound(ε) = δ with the terms i ≥ hi: bound = K − e^ε·B.
	kConst, b := c.linear(hi, upper)
	var eps float64
	switch {
	case kConst <= delta:
		eps = left
	case b <= 0:
		// The bound is kConst > δ throughout the cell (b underflows to 0
		// for losses beyond ~745): it first drops to δ at the right end.
		eps = right
	default:
		// In logs: b may be subnormal (it carries e^{bScale−loss} down to
		// e^{−1400}), and then the ratio overflows.
		eps = logmath.Log(kConst-delta) - logmath.Log(b) + c.bScale
	}
	eps = math.Max(left, math.Min(eps, right))
	if !upper {
		return math.Max(left, eps*(1-1e-12))
	}
	// The upper ε is certified by evaluating the very bound that delta
	// reports: step up (relative 1e-12, doubling) until it is at most δ,
	// else take the cell's right end, where the bisection showed it is.
	step := 1e-12 * math.Max(1, math.Abs(eps))
	for k := 0; k < 64 && eps < right; k++ {
		if c.at(eps, c.index(eps), true) <= delta {
			return eps
		}
		eps = math.Min(math.Nextafter(eps+step, math.Inf(1)), right)
		step *= 2
	}
	return right
}
