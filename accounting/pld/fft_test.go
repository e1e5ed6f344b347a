package pld

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestInverseBandLimited checks inverseFFT's decimated transform against
// the n-point inverse on random band-limited spectra, and that it falls
// back to the n-point transform where the band is too wide.
func TestInverseBandLimited(t *testing.T) {
	for _, c := range []struct {
		n, top int
		pruned bool
	}{
		{24000, 100, true}, {4096, 10, true}, {1500, 3, true},
		{24000, 2000, true}, {24000, 5999, false}, {1000, 200, false}, {7, 1, false},
	} {
		rng := rand.New(rand.NewPCG(uint64(c.n), uint64(c.top)))
		z := make([]complex128, c.n/2+1)
		for f := 0; f <= c.top; f++ {
			z[f] = complex(rng.Float64()-0.5, rng.Float64()-0.5)
		}
		z[0] = complex(real(z[0]), 0)
		want := make([]float64, c.n)
		got := make([]float64, c.n)
		fft := getFFT(c.n)
		fft.Sequence(want, z)
		tw := inverseFFT(fft, got, z)
		putFFT(fft)
		if (tw > 0) != c.pruned {
			t.Errorf("n %d top %d: pruned %v, want %v", c.n, c.top, tw > 0, c.pruned)
		}
		var scale, diff float64
		for i := range want {
			scale = math.Max(scale, math.Abs(want[i]))
			diff = math.Max(diff, math.Abs(got[i]-want[i]))
		}
		if diff > 1e-13*scale {
			t.Errorf("n %d top %d: max difference %g (scale %g)", c.n, c.top, diff, scale)
		}
	}
}

// TestComposeRoundOffBound composes Binomial(40, 1/2) 1000 times and 40
// times (pmfs of Binomial(40000, 1/2) and Binomial(1600, 1/2), exact from
// big integers) and checks that the FFT's error is within its bound e2
// in ℓ2. The first composition sets nearly every frequency's power to 0
// and takes the band-limited inverse (skipLog, inverseFFT).
func TestComposeRoundOffBound(t *testing.T) {
	const m = 40
	step := binomialPMF(m)
	for _, count := range []int{1000, 40} {
		parts := []part{{pmf: pmf{lo: -m / 2, p: step}, count: count}}
		c, err := composeParts(t.Context(), parts, 1, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := len(c.c)
		// The exact circular composition on the window: loss index
		// k = K − count·m/2 with K ~ Binomial(count·m, 1/2), folded mod n.
		exact := make([]float64, n)
		for K, v := range binomialPMF(count * m) {
			k := K - count*m/2
			j := ((k-c.lo)%n + n) % n
			exact[j] += v
		}
		var diff2, norm2 float64
		for j := range exact {
			d := c.c[j] - exact[j]
			diff2 += d * d
			norm2 += exact[j] * exact[j]
		}
		diff := math.Sqrt(diff2)
		t.Logf("count %d n %d: ‖error‖₂ %.3g, bound e2 %.3g, ‖c‖₂ %.3g", count, n, diff, c.e2, math.Sqrt(norm2))
		if !(diff <= c.e2) {
			t.Errorf("count %d: ‖error‖₂ = %g exceeds e2 = %g", count, diff, c.e2)
		}
		if c.e2 > 1e-10*math.Sqrt(norm2) {
			t.Errorf("count %d: e2 = %g is not a tight bound (‖c‖₂ = %g)", count, c.e2, math.Sqrt(norm2))
		}
	}
}

// binomialPMF returns the pmf of Binomial(n, 1/2), each entry rounded to
// nearest from exact big-integer binomial coefficients.
func binomialPMF(n int) []float64 {
	p := make([]float64, n+1)
	c := big.NewInt(1)
	den := new(big.Float).SetMantExp(big.NewFloat(1), -n)
	for k := 0; k <= n; k++ {
		f := new(big.Float).SetPrec(200).SetInt(c)
		f.Mul(f, den)
		p[k], _ = f.Float64()
		c.Mul(c, big.NewInt(int64(n-k)))
		c.Quo(c, big.NewInt(int64(k+1)))
	}
	return p
}
