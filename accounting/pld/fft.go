package pld

import (
	"math"
	"math/bits"
	"slices"
	"sync"

	"gonum.org/v1/gonum/dsp/fourier"
)

// goodSize returns the smallest n' ≥ n of the form 2^a·3^b·5^c that
// gonum's FFT can factor: its fftpack factorisation (4s first, then a 2,
// 3s, 5s) must have at most fftMaxFactors factors. A power of two up to
// 2^26 always qualifies.
func goodSize(n int) int {
	best := 1 << bits.Len(uint(n-1))
	for p3, b := 1, 0; p3 < best; p3, b = p3*3, b+1 {
		for p35, c := p3, 0; p35 < best; p35, c = p35*5, c+1 {
			m, a := p35, 0
			for m < n {
				m *= 2
				a++
			}
			if m < best && a/2+a%2+b+c <= fftMaxFactors {
				best = m
			}
		}
	}
	return best
}

// fftMaxFactors is the most factors gonum's fftpack can store (its ifac
// array has 15 entries, two of them a header); more panic with an index out
// of range in rffti1, e.g. at n = 2^3·3^12 = 4251528 (the long soundness
// sweep at σ = 0.6345, q = 0.0329, T = 42945767).
const fftMaxFactors = 13

// skipLog: a frequency whose composed power is at most e^{−skipLog}
// in modulus is set to 0 instead of being raised to its power (for a
// composition of many steps nearly all are, the spectrum of a smooth
// loss distribution being concentrated at low frequencies); the error
// this makes is charged to e2. skipAmp is e^{−skipLog}.
const skipLog = 700

var skipAmp = math.Exp(-skipLog) * (1 + 1e-12)

// inverseFFT sets buf to the unnormalised inverse real DFT of the
// half spectrum z (buf[j] = Σ_f Z_f e^{2πi·fj/n} over the Hermitian
// spectrum, as fft.Sequence). When z vanishes above a frequency F far
// below n/2, the output is computed as r = n/m inverse transforms of a
// length m dividing n with m/2 > F: buf[j·r+s] is the m-point inverse
// of Z_f·e^{2πi·fs/n} (f ≤ F), a decimation in time of the band-limited
// sequence. Each output passes through log2(m) < log2(n) butterflies, and
// Σ_s‖y_s‖₂² = n·‖Z‖₂², so the ℓ2 round-off bound of composeParts holds as
// for one n-point transform, plus the twiddles' relative error (returned,
// in units of u; 0 when no twiddles were used): each table root has its
// angle 2π·k/n ≤ 2π rounded three times (6π·u) and its sincos (2u), and
// the two products add 3u each, below 50u in all; a relative error ρ in
// every coefficient moves c by at most ρ·‖c‖₂ (Parseval).
func inverseFFT(fft *fourier.FFT, buf []float64, z []complex128) (twRound float64) {
	n := len(buf)
	top := len(z) - 1
	for top > 0 && z[top] == 0 {
		top--
	}
	m := bandLength(n, top)
	if m == 0 {
		fft.Sequence(buf, z)
		return 0
	}
	r := n / m
	sub := getFFT(m)
	defer putFFT(sub)
	tw := newUnityRoots(n)
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

// bandLength returns the smallest even divisor m of n with m/2 > top
// when it is at most n/4 (a saving worth the twiddles), else 0.
func bandLength(n, top int) int {
	for m := 2 * (top + 1); m <= n/4; m++ {
		if n%m == 0 && m%2 == 0 {
			return m
		}
	}
	return 0
}

// unityRoots gives the n-th roots of unity e^{2πi·k/n} as the product of
// two short tables (k = 64a + b), accurate to a few ulps.
type unityRoots struct {
	n      int
	hi, lo []complex128
}

func newUnityRoots(n int) unityRoots {
	t := unityRoots{n: n, hi: make([]complex128, n/64+1), lo: make([]complex128, 64)}
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

func (t unityRoots) at(k int) complex128 { return t.hi[k>>6] * t.lo[k&63] }

// abs2 returns |z|².
func abs2(z complex128) float64 { return real(z)*real(z) + imag(z)*imag(z) }

// cpow returns z^n by binary exponentiation.
func cpow(z complex128, n int) complex128 {
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

// powRoundBound returns a bound, in units of u = 2^−53, on the relative
// rounding error of z^n computed by cpow, to first order. Each complex
// multiplication has a relative error of at most √5·u < 3u (Brent,
// Percival, Zimmermann 2007, "Error bounds on complex floating-point
// multiplication", Math. Comp. 76, Theorem 1; with fused multiply-adds
// it is 2u). An error made in z^{2^k} reaches z^n raised to the power of
// the number of times z^{2^k} enters the product, at most n/2^k, which
// sums to at most n over the squarings; each of the at most bits(n)
// accumulating products enters once. The relative error of z^n therefore
// grows linearly in n, not in log n.
func powRoundBound(n int) float64 {
	return 3 * float64(n+bits.Len(uint(n)))
}

// fftPlans keeps FFT plans (their twiddle factors cost as much as a
// transform) per length for reuse, one goroutine at a time per plan. It
// survives garbage collections, which a sync.Pool does not: a σ search
// allocates hundreds of megabytes and emptied its pools again and again,
// rebuilding about 70 plans. It keeps at most maxPlanLength points of
// plans in all, dropping the least recently returned lengths first.
var fftPlans struct {
	sync.Mutex
	free  map[int][]*fourier.FFT
	order []int // lengths with free plans, least recently returned first
	total int   // Σ of the free plans' lengths
}

// maxPlanLength bounds the points of the plans fftPlans keeps (a plan of
// n points holds about 2n float64s).
const maxPlanLength = 1 << 20

func getFFT(n int) *fourier.FFT {
	fftPlans.Lock()
	if l := fftPlans.free[n]; len(l) > 0 {
		f := l[len(l)-1]
		fftPlans.free[n] = l[:len(l)-1]
		fftPlans.total -= n
		if len(l) == 1 {
			delete(fftPlans.free, n)
			fftPlans.order = slices.DeleteFunc(fftPlans.order, func(m int) bool { return m == n })
		}
		fftPlans.Unlock()
		return f
	}
	fftPlans.Unlock()
	return fourier.NewFFT(n)
}

func putFFT(f *fourier.FFT) {
	n := f.Len()
	if n > maxPlanLength {
		return
	}
	fftPlans.Lock()
	defer fftPlans.Unlock()
	if fftPlans.free == nil {
		fftPlans.free = map[int][]*fourier.FFT{}
	}
	fftPlans.free[n] = append(fftPlans.free[n], f)
	fftPlans.total += n
	fftPlans.order = append(slices.DeleteFunc(fftPlans.order, func(m int) bool { return m == n }), n)
	for fftPlans.total > maxPlanLength {
		m := fftPlans.order[0]
		l := fftPlans.free[m]
		fftPlans.free[m] = l[1:]
		fftPlans.total -= m
		if len(l) == 1 {
			delete(fftPlans.free, m)
			fftPlans.order = fftPlans.order[1:]
		}
	}
}
