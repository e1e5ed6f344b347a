package pld

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/sysmem"
	"github.com/dpcalc/dpcalc/internal/work"
	"gonum.org/v1/gonum/dsp/fourier"
)

// part is count adaptive repetitions of one discretised step.
type part struct {
	pmf   pmf
	count int
}

// composition is a composed privacy loss distribution with the bookkeeping
// needed for certified bounds on δ(ε):
//
//	c[i]     computed mass at loss (lo+i)·h, negatives clamped to 0;
//	inf      mass at +∞;
//	tailTop  bound on the mass above the window (aliased into it);
//	tailBot  bound on the mass below the window (aliased into it);
//	e2       bound on the ℓ2 norm of the FFT error in c.
type composition struct {
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

	// Exponential tilt (see composeParts): c[i] = c̃[i]·W(loss_i), W(l) =
	// e^{logW − lambda·l}, where c̃ is what the FFT computed; tailTop,
	// tailBot and e2 are bounds in the tilted measure c̃, and rho bounds the
	// relative error of the tilt and of W. lambda = 0: W = 1, rho = 0.
	lambda, logW, rho float64
	lost              float64 // tilted mass dropped by tiltParts's underflow floor

	// top is the highest loss index (relative to lo) at which the exact
	// composition of the parts can have mass: the sum of their top
	// indices. Above it the finite mass is exactly 0, whatever the FFT
	// computed there (round-off, or mass below the window aliased to its
	// top), so the upper δ at losses beyond it is inf alone. topKnown is
	// false where no such index was recorded.
	top      int
	topKnown bool
}

// windowLogEta is log of the mass allowed outside the FFT window on each side
// (the exact Chernoff bound for the chosen window is then added to the
// upper and subtracted from the lower δ).
var windowLogEta = math.Log(1e-15)

// maxFFT caps the FFT length.
const maxFFT = 1 << 23

var errTooLarge = errors.New("accounting: pld: the composition does not fit a grid of this width")

// composeParts convolves the parts with one real FFT per part plus one inverse
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
// grows linearly in the exponent (see powRoundBound). Negative masses are clamped to 0, which
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
func composeParts(ctx context.Context, parts []part, h float64, wantTop bool, lambda float64) (*composition, error) {
	if len(parts) == 1 && parts[0].count == 1 {
		lambda = 0 // placed exactly below: nothing to gain
	}
	if lambda > 0 {
		return composeTilted(ctx, parts, h, wantTop, lambda)
	}
	out, minK, maxK := newComposition(parts, h)
	if len(parts) == 0 {
		out.c = []float64{1}
		out.buildSums()
		return out, nil
	}
	n, err := out.window(parts, wantTop, minK, maxK)
	if err != nil {
		return nil, err
	}
	if err := memCheck(n, len(parts)); err != nil {
		return nil, err
	}
	out.c = make([]float64, n)
	if len(parts) == 1 && parts[0].count == 1 {
		out.place(&parts[0].pmf)
	} else if err := out.convolve(ctx, parts); err != nil {
		return nil, err
	}
	out.buildSums()
	return out, nil
}

// composeTilted composes the parts tilted by e^{lambda·loss} and turns the
// result back into the original measure (see composeParts).
func composeTilted(ctx context.Context, parts []part, h float64, wantTop bool, lambda float64) (*composition, error) {
	tp, logW, rho, lost, ok := tiltParts(parts, h, lambda)
	if !ok {
		return nil, errTooLarge
	}
	out, err := composeParts(ctx, tp, h, wantTop, 0)
	if err != nil {
		return nil, err
	}
	out.lost = lost
	out.untilt(lambda, logW, rho)
	return out, nil
}

// newComposition returns the composition of the parts with its +∞ mass,
// 1 − Π (1 − inf_s)^{n_s}, and its loss shift set, and the range
// [minK, maxK] of its loss indices.
func newComposition(parts []part, h float64) (out *composition, minK, maxK int) {
	out = &composition{h: h}
	var logFin float64
	for _, pt := range parts {
		logFin += float64(pt.count) * math.Log1p(-math.Min(pt.pmf.inf, 1))
		out.shift += float64(pt.count) * pt.pmf.off
		minK += pt.count * pt.pmf.lo
		maxK += pt.count * (pt.pmf.lo + len(pt.pmf.p) - 1)
	}
	out.inf = math.Min(1, -math.Expm1(logFin)*(1+1e-13))
	out.top, out.topKnown = maxK, true // relative to lo once the window sets it
	return out, minK, maxK
}

// window chooses the loss window of the composition by Chernoff bounds
// (chernoffWindow), keeping losses ≥ 0 when wantTop is set, sets c.lo and
// the bounds tailTop and tailBot on the mass outside it, and returns its
// length n (a size the FFT factors, spare room at the top, where δ is
// decided), or errTooLarge.
func (c *composition) window(parts []part, wantTop bool, minK, maxK int) (n int, err error) {
	h := c.h
	lams, kPos, kNeg, top, bot := chernoffWindow(parts, h)
	if !(math.Abs(top/h) < maxFFT*4 && math.Abs(bot/h) < 1e15) || top-bot > maxFFT*h {
		return 0, errTooLarge
	}
	kTop := min(maxK, int(math.Ceil(top/h)))
	kBot := max(minK, int(math.Floor(bot/h)))
	if k0 := int(math.Ceil(-c.shift / h)); wantTop && kTop < k0 {
		kTop = min(maxK, k0) // keep losses ≥ 0 in the window
	}
	need := kTop - kBot + 1
	for _, pt := range parts {
		need = max(need, len(pt.pmf.p))
	}
	if need > maxFFT {
		return 0, errTooLarge
	}
	n = goodSize(need)
	// Spare room goes to the top, where δ is decided.
	kTop = kBot + n - 1
	c.lo = kBot
	c.top = maxK - kBot
	c.tailTop = tailBound(kPos, lams, h, kTop+1, maxK)
	c.tailBot = tailBound(kNeg, lams, -h, kBot-1, -minK)
	return n, nil
}

// place puts a single step's masses into the window exactly (no FFT).
func (c *composition) place(pm *pmf) {
	n := len(c.c)
	for i, v := range pm.p {
		// Mass below the window is moved up to its bottom (raises the
		// upper bound; the lower bound subtracts tailBot ≥ it); mass
		// above is dropped (tailTop is added to the upper bound).
		j := max(pm.lo+i-c.lo, 0)
		if j < n {
			c.c[j] += v
		}
	}
}

// convolve composes the parts by one real FFT per part and one inverse,
// powers taken in the frequency domain, into the window c.c, and sets the
// bound e2 on the ℓ2 norm of its round-off (see composeParts).
func (c *composition) convolve(ctx context.Context, parts []part) error {
	n := len(c.c)
	fft := getFFT(n)
	defer putFFT(fft)
	buf := make([]float64, n)
	sp := newSpectrum(n, len(parts))
	for si, pt := range parts {
		if err := fftWork(ctx, n); err != nil {
			return err
		}
		sp.multiply(fft, buf, si, pt)
	}
	if err := fftWork(ctx, n); err != nil {
		return err
	}
	twRound := inverseFFT(fft, buf, sp.z)
	var l2 float64
	for j := 0; j < n; j++ {
		k := c.lo + j // loss index
		src := ((k-sp.offset)%n + n) % n
		v := buf[src] / float64(n)
		if v < 0 {
			v = 0
		}
		c.c[j] = v
		l2 += v * v
	}
	l2 = math.Sqrt(l2)
	const u = 0x1p-53
	lg := float64(bits.Len(uint(n)))
	fwd := sp.forwardNorm(parts)
	// A power set to 0 was at most e^{−skipLog} in modulus: at most
	// √2·e^{−skipLog}/√n per frequency in ‖c‖₂ (Parseval).
	c.e2 = u*(10*lg*fwd+(10*lg+sp.powRound+4+twRound)*l2)*1.01 + math.Sqrt(2*sp.skipped/float64(n))*skipAmp
	return nil
}

// spectrum is the running product z = Π_s ẑ_s^{n_s} of the parts'
// transforms of length n, with what the round-off bound of composeParts
// needs: amp[s][f] = |z_s,f|^{n_s−1}·Π_{r≠s}|z_r,f|^{n_r}, how an error in
// z_s,f reaches z_f (first order). With more than exactAmpParts parts the
// factors of the later parts (each ≤ 1) are left out, which only enlarges
// the bound and keeps the cost linear in the parts; each part's amp is
// then final once computed, and is reduced to its weighted sum of squares
// (ss[s]) at once, so that the memory does not grow with the number of
// parts.
type spectrum struct {
	n        int
	z, coef  []complex128
	exact    bool
	amp      [][]float64
	ss       []float64
	ampBuf   []float64
	offset   int     // Σ count·lo: composed index j ↔ loss index offset + j (mod n)
	powRound float64 // the rounding of the powers, in units of u
	skipped  float64 // how many powers were set to 0 (see skipLog)
}

func newSpectrum(n, parts int) *spectrum {
	sp := &spectrum{n: n, z: make([]complex128, n/2+1), coef: make([]complex128, n/2+1),
		exact: parts <= exactAmpParts, amp: make([][]float64, parts), ss: make([]float64, parts)}
	for i := range sp.z {
		sp.z[i] = 1
	}
	return sp
}

// multiply transforms part si (pt) and multiplies its count-th power into
// z, by binary exponentiation, then one product.
func (sp *spectrum) multiply(fft *fourier.FFT, buf []float64, si int, pt part) {
	for i := range buf {
		buf[i] = 0
	}
	copy(buf, pt.pmf.p)
	sp.offset += pt.count * pt.pmf.lo
	coef := fft.Coefficients(sp.coef, buf)
	z, amp := sp.z, sp.amp
	if sp.exact {
		amp[si] = make([]float64, len(coef))
	} else {
		if sp.ampBuf == nil {
			sp.ampBuf = make([]float64, len(coef))
		}
		clear(sp.ampBuf)
		amp[si] = sp.ampBuf
	}
	// |v|² ≤ skip2 means |v^count| ≤ e^{−skipLog} (and, for count ≥
	// 2, |v|^{2(count−1)} ≤ e^{−skipLog}): the power is set to 0.
	skip2 := 0.0
	if pt.count >= 2 {
		skip2 = math.Exp(-2*skipLog/float64(pt.count)) * (1 - 1e-12)
	}
	for i, v := range coef {
		if z[i] == 0 {
			continue // amp[si][i] = 0: nothing reaches this frequency
		}
		if v2 := abs2(v); v2 <= skip2 {
			amp[si][i] = skipAmp * abs2(z[i])
			if sp.exact {
				for r := 0; r < si; r++ {
					amp[r][i] *= skipAmp
				}
			}
			z[i] = 0
			sp.skipped++
			continue
		}
		pw := cpow(v, pt.count)
		// Squared amplitudes: |z|^{2(n−1)} = |z^n|²/|z|², or exactly 0
		// when both vanish.
		pw2 := abs2(pw)
		a2 := 1.0
		if pt.count > 1 {
			a2 = 0
			if v2 := abs2(v); v2 > 0 {
				a2 = pw2 / v2
			}
		}
		amp[si][i] = a2 * abs2(z[i]) // × the parts before s
		if sp.exact {
			for r := 0; r < si; r++ {
				amp[r][i] *= pw2 // × this part, for the earlier ones
			}
		}
		z[i] *= pw
	}
	// z^n by binary exponentiation, then one product into z.
	sp.powRound += powRoundBound(pt.count) + 3
	if !sp.exact {
		sp.ss[si] = ampSum(amp[si], sp.n)
		amp[si] = nil
	}
}

// forwardNorm returns Σ_s count_s·‖c₋₁,s‖₂, the forward transforms' share
// of the round-off bound: ‖c₋₁,s‖₂ = ‖amp_s‖₂/√n by Parseval (the real
// FFT stores half the spectrum: the inner frequencies count twice).
func (sp *spectrum) forwardNorm(parts []part) float64 {
	var fwd float64
	for si, pt := range parts {
		if sp.exact {
			sp.ss[si] = ampSum(sp.amp[si], sp.n)
		}
		fwd += float64(pt.count) * math.Sqrt(sp.ss[si]/float64(sp.n))
	}
	return fwd
}

// memCheck refuses a composition of length n whose arrays would not
// fit in the memory available (see sysmem.Check): the masses, the FFT
// buffer, plan, spectrum and running product, the suffix sums, and the
// error amplification of up to exactAmpParts parts (one reused array
// beyond), about 8·n·(8 + parts/2) bytes.
func memCheck(n, parts int) error {
	if parts > exactAmpParts {
		parts = 1
	}
	need := 8 * float64(n) * (8 + float64(parts)/2)
	return sysmem.Check(need, fmt.Sprintf("pld: a composition on %d grid points", n),
		"the number of steps or distinct phases (or set a coarser --pld-grid), or use --accountant rdp")
}

// ampSum returns Σ w_i·amp_i over a half spectrum of an n-point real
// FFT: the inner frequencies count twice (w = 2), the zero frequency and,
// for even n, the last once.
func ampSum(amp []float64, n int) float64 {
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

// exactAmpParts is the most parts for which the FFT error amplification
// is computed with all factors (quadratic in the number of parts).
const exactAmpParts = 8

// fftWork checks ctx before an FFT of n points and reports its work: one
// unit per checkEvery points (see internal/work), as grid loops do.
func fftWork(ctx context.Context, n int) error {
	if err := accounting.Canceled(ctx); err != nil {
		return err
	}
	if err := work.Add(ctx, int64(n/checkEvery)); err != nil {
		return fmt.Errorf("accounting: stopped: %w", err)
	}
	return nil
}
