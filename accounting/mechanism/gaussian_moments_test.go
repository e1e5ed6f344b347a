package mechanism

import (
	"bufio"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/integrate"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// relDiff returns |got − want| / |want| (or |got| when want is 0).
func relDiff(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// TestLogMomentsAgainstBinomial checks the integrated E2 against the exact
// binomial sum over σ ∈ [0.5, 50], q ∈ [1e-5, 0.5], integer λ ≤ 256, and
// that each reported error bound covers the difference.
func TestLogMomentsAgainstBinomial(t *testing.T) {
	t.Parallel()
	sigmas := []float64{0.5, 0.8, 1, 2, 4, 10, 25, 50}
	qs := []float64{1e-5, 1e-4, 1e-3, 0.01, 0.1, 0.5}
	lambdas := []float64{1, 2, 3, 5, 8, 13, 21, 32, 50, 64, 100, 128, 200, 256}
	worst := 0.0
	for _, s := range sigmas {
		for _, q := range qs {
			ms, err := GaussianLogMoments(s, q, lambdas)
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range lambdas {
				m := ms[i]
				want := logMomentBinomial(s, q, int(l))
				d := relDiff(m.LogE2, want)
				worst = math.Max(worst, d)
				// 1e-12 relative on log E2 (the brief's target); the binomial
				// reference itself is good to a few ulp.
				if d > 1e-12 {
					t.Errorf("σ=%g q=%g λ=%g: log E2 = %.17g, binomial %.17g, rel diff %g", s, q, l, m.LogE2, want, d)
				}
				if math.Abs(m.LogE2-want) > m.AbsError+4*0x1p-52*want {
					t.Errorf("σ=%g q=%g λ=%g: error %g not covered by AbsError %g", s, q, l, math.Abs(m.LogE2-want), m.AbsError)
				}
				if m.Alpha != math.Max(m.LogE1, m.LogE2) || !(m.AbsError >= 0) || math.IsInf(m.Alpha, 0) {
					t.Errorf("σ=%g q=%g λ=%g: inconsistent moment %+v", s, q, l, m)
				}
			}
		}
	}
	t.Logf("worst relative difference integration vs binomial: %.3g", worst)
}

// TestLogMomentsReference compares with testdata/moments/reference.csv,
// computed by gen_reference.py with mpmath at 60 digits from the definitions
// (eqs. 3–4), at fractional and integer orders.
// reference_fractional.csv holds orders below 1 (Rényi orders in (1, 2)).
func TestLogMomentsReference(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file string
		min  int
	}{{"moments/reference.csv", 30}, {"moments/reference_fractional.csv", 20}} {
		t.Run(c.file, func(t *testing.T) { checkMomentsReference(t, c.file, c.min, GaussianLogMoment) })
		// The continuous search's path: one order, the partition laid out
		// for its octave and shared through the cache.
		grids := make(map[[3]float64]*momentGrid)
		one := func(sigma, q, l float64) (GaussianMoment, error) {
			return logMomentOne(t.Context(), sigma, q, l, grids)
		}
		t.Run(c.file+"/one", func(t *testing.T) { checkMomentsReference(t, c.file, c.min, one) })
	}
}

func checkMomentsReference(t *testing.T, file string, minRows int, logMoment func(sigma, q, l float64) (GaussianMoment, error)) {
	f, err := os.Open(testref.Path(file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	worst := 0.0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		var v [6]float64
		for i, fld := range strings.Split(line, ",") {
			if v[i], err = strconv.ParseFloat(fld, 64); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
		}
		m, err := logMoment(v[0], v[1], v[2])
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"log E1", m.LogE1, v[3]}, {"log E2", m.LogE2, v[4]}, {"alpha", m.Alpha, v[5]}} {
			d := relDiff(c.got, c.want)
			worst = math.Max(worst, d)
			if d > 1e-10 { // the brief's tolerance for the reference table
				t.Errorf("σ=%g q=%g λ=%g: %s = %.17g, want %.17g (rel %g)", v[0], v[1], v[2], c.name, c.got, c.want, d)
			}
		}
		if math.Abs(m.Alpha-v[5]) > m.AbsError {
			t.Errorf("σ=%g q=%g λ=%g: error %g exceeds bound %g", v[0], v[1], v[2], math.Abs(m.Alpha-v[5]), m.AbsError)
		}
		n++
	}
	if n < minRows {
		t.Fatalf("only %d reference rows", n)
	}
	t.Logf("%d reference rows, worst relative difference %.3g", n, worst)
}

func TestLogMomentsClosedForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		sigma, q, lam float64
		want          float64 // α, closed form
		tol           float64
	}{
		// q = 1: α(λ) = λ(λ+1)/(2σ²) exactly.
		{"no sampling small", 4, 1, 2.5, 2.5 * 3.5 / 32, 1e-15},
		{"no sampling large", 0.5, 1, 256, 256 * 257 / 0.5, 1e-15},
		// λ = 1: E2 − 1 = q²·expm1(1/σ²) (only k = 2 survives), and E1 ≤ E2.
		// Tiny α near 4e-14 must keep its digits.
		{"tiny alpha", 50, 1e-5, 1, math.Log1p(1e-10 * math.Expm1(1.0/2500)), 1e-13},
		{"lambda one", 4, 0.01, 1, math.Log1p(1e-4 * math.Expm1(1.0/16)), 1e-13},
	}
	for _, tt := range tests {
		m, err := GaussianLogMoment(tt.sigma, tt.q, tt.lam)
		if err != nil {
			t.Fatal(err)
		}
		if d := relDiff(m.Alpha, tt.want); d > tt.tol {
			t.Errorf("%s: α = %.17g, want %.17g (rel %g)", tt.name, m.Alpha, tt.want, d)
		}
	}
	// The binomial form at q = 1 agrees too.
	if got, err := GaussianLogMomentBinomial(3, 1, 7); err != nil || relDiff(got, 7*8/18.0) > 1e-15 {
		t.Errorf("GaussianLogMomentBinomial(3, 1, 7) = %v, %v", got, err)
	}
}

// TestLogMomentsLargeAlpha: α in the thousands (σ = 0.5, λ = 256) stays
// finite and matches the binomial form. At σ = 0.005 the partition cannot
// be built; λ = 2.5 used to get +Inf there and is now bracketed by the
// binomial log E2 at λ = 2 and 3 (log E2 does not decrease in λ), which at
// this σ are their k = λ+1 terms to double precision (the others are
// e^-40000 smaller): (λ+1)λ/(2σ²) + (λ+1)·log q.
func TestLogMomentsLargeAlpha(t *testing.T) {
	t.Parallel()
	m, err := GaussianLogMoment(0.5, 0.01, 256)
	if err != nil {
		t.Fatal(err)
	}
	want := logMomentBinomial(0.5, 0.01, 256)
	if want < 1e5 || relDiff(m.Alpha, want) > 1e-12 {
		t.Errorf("α = %.17g, want %.17g", m.Alpha, want)
	}
	m, err = GaussianLogMoment(0.005, 0.01, 2.5)
	if err != nil {
		t.Fatal(err)
	}
	// 1/(2σ²) of the float64 σ = 0.005 (not exactly 20000), in 200 bits.
	s := new(big.Float).SetPrec(200).SetFloat64(0.005)
	inv, _ := new(big.Float).Quo(big.NewFloat(1).SetPrec(200), new(big.Float).Mul(s, new(big.Float).Mul(s, big.NewFloat(2)))).Float64()
	lo, hi := 6*inv+3*math.Log(0.01), 12*inv+4*math.Log(0.01)
	if up := m.Upper(); !(up >= hi) || relDiff(up, hi) > 1e-12 {
		t.Errorf("σ = 0.005: upper α = %.17g, want log E2(3) = %.17g (not below)", up, hi)
	}
	if low := m.Alpha - m.AbsError; !(low <= lo) || relDiff(low, lo) > 1e-12 {
		t.Errorf("σ = 0.005: lower α = %.17g, want log E2(2) = %.17g (not above)", low, lo)
	}
}

// TestMomentBound: Abadi et al. (2016) Lemma 3's bound holds where it
// applies, and is NaN where it does not.
func TestMomentBound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ sigma, q float64 }{{4, 0.01}, {8, 0.005}, {2, 0.02}, {50, 1e-5}} {
		lmax := c.sigma * c.sigma * math.Log(1/(c.q*c.sigma))
		for _, l := range []float64{1, 1.5, 2, 4, 8, 16, 32} {
			if l > lmax {
				continue
			}
			m, err := GaussianLogMoment(c.sigma, c.q, l)
			if err != nil {
				t.Fatal(err)
			}
			b := GaussianMomentBound(c.sigma, c.q, l)
			if !(m.Upper() <= b) {
				t.Errorf("σ=%g q=%g λ=%g: α = %g above the Lemma 3 bound %g", c.sigma, c.q, l, m.Upper(), b)
			}
		}
	}
	if b := GaussianMomentBound(4, 0.1, 2); !math.IsNaN(b) {
		t.Errorf("GaussianMomentBound outside q < 1/(16σ) = %v, want NaN", b)
	}
}

func TestLogMomentsBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		sigma, q float64
		lambdas  []float64
		param    string
	}{
		{"zero sigma", 0, 0.1, []float64{2}, "sigma"},
		{"nan sigma", math.NaN(), 0.1, []float64{2}, "sigma"},
		{"inf sigma", math.Inf(1), 0.1, []float64{2}, "sigma"},
		{"zero q", 1, 0, []float64{2}, "q"},
		{"q above one", 1, 1.5, []float64{2}, "q"},
		{"order below MinOrder", 1, 0.1, []float64{2, 0.5, MinOrder / 2}, "lambda"},
		{"zero order", 1, 0.1, []float64{0}, "lambda"},
		{"nan order", 1, 0.1, []float64{math.NaN()}, "lambda"},
	}
	for _, tt := range tests {
		_, err := GaussianLogMoments(tt.sigma, tt.q, tt.lambdas)
		var pe *accounting.ParamError
		if !errors.As(err, &pe) || pe.Name != tt.param {
			t.Errorf("%s: err = %v, want accounting.ParamError on %s", tt.name, err, tt.param)
		}
	}
	// λ = 0, and λ so large that the O(λ) sum would not fit in memory
	// (a3c3c5f tried to allocate it).
	for _, l := range []int{0, -1, 1_000_001, math.MaxInt} {
		if _, err := GaussianLogMomentBinomial(1, 0.1, l); !errors.Is(err, accounting.ErrInvalidParameter) {
			t.Errorf("GaussianLogMomentBinomial λ=%d: err = %v", l, err)
		}
	}
	if v, err := GaussianLogMomentBinomial(1, 0.1, 1_000_000); err != nil || !(v > 0) || math.IsInf(v, 0) {
		t.Errorf("GaussianLogMomentBinomial λ=1e6 = %g, %v", v, err)
	}
}

var benchResultFloat64 float64

// BenchmarkLogMomentOne is α at one fractional order, σ = 4, q = 0.01.
func BenchmarkLogMomentOne(b *testing.B) {
	for i := 0; i < b.N; i++ {
		m, _ := GaussianLogMoment(4, 0.01, 8.5)
		benchResultFloat64 = m.Alpha
	}
}

// benchOrders is the moments accountant's default grid (moments.DefaultOrders).
var benchOrders = func() []float64 {
	var o []float64
	for l := 1.0; l <= 4; l += 0.25 {
		o = append(o, l)
	}
	for l := 4.5; l <= 10; l += 0.5 {
		o = append(o, l)
	}
	for l := 11.0; l <= 24; l++ {
		o = append(o, l)
	}
	return append(o, 26, 28, 30, 32, 36, 40, 48, 56, 64, 80, 96, 128, 192, 256)
}()

// BenchmarkLogMomentsGrid is α over the default grid for a fresh σ.
func BenchmarkLogMomentsGrid(b *testing.B) {
	for _, sigma := range []float64{1, 4, 50} {
		b.Run("sigma="+strconv.FormatFloat(sigma, 'g', -1, 64), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ms, _ := GaussianLogMoments(sigma, 0.01, benchOrders)
				benchResultFloat64 = ms[0].Alpha
			}
		})
	}
}

// BenchmarkLogMomentBinomial is the closed form at λ = 32 and 256.
func BenchmarkLogMomentBinomial(b *testing.B) {
	for i := 0; i < b.N; i++ {
		v, _ := GaussianLogMomentBinomial(4, 0.01, 32)
		w, _ := GaussianLogMomentBinomial(4, 0.01, 256)
		benchResultFloat64 = v + w
	}
}

// TestLogMomentsIntegrateOracle cross-checks the shared-node integrator
// against the general adaptive integrate.Log applied to eqs. 3–4 directly
// (E1 = ∫μ0·L^{−λ}, E2 = ∫μ0·L^{λ+1}, L = μ/μ0): the two must agree within
// the sum of their error estimates.
func TestLogMomentsIntegrateOracle(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ sigma, q, lambda float64 }{
		{4, 0.01, 8.5}, {1, 0.1, 20.5}, {10, 0.3, 100.25}, {0.7, 0.05, 3.75}, {30, 0.001, 1.5},
	} {
		m, err := GaussianLogMoment(c.sigma, c.q, c.lambda)
		if err != nil {
			t.Fatal(err)
		}
		g := &momentGrid{sigma: c.sigma, q: c.q, logQ: math.Log(c.q), l1q: math.Log1p(-c.q)}
		logPhi := func(z float64) float64 {
			return -z*z/(2*c.sigma*c.sigma) - math.Log(c.sigma) - 0.5*math.Log(2*math.Pi)
		}
		for _, k := range []struct {
			name   string
			b      float64
			center float64
			got    float64
		}{{"log E1", -c.lambda, 0, m.LogE1}, {"log E2", c.lambda + 1, c.lambda + 1, m.LogE2}} {
			res, err := integrate.Log(func(z float64) float64 { return logPhi(z) + k.b*g.logL(z) },
				math.Inf(-1), math.Inf(1), &integrate.Options{Scale: c.sigma, Center: k.center, RelTol: 1e-13})
			if err != nil {
				t.Fatalf("%+v %s: %v", c, k.name, err)
			}
			d := math.Abs(k.got - res.LogValue)
			t.Logf("%+v %s: diff %.3g, bounds %.3g + %.3g", c, k.name, d, m.AbsError, res.AbsErr)
			if d > res.AbsErr+m.AbsError+1e-15 {
				t.Errorf("%+v %s: %.17g vs integrate.Log %.17g: diff %g above error bounds %g + %g",
					c, k.name, k.got, res.LogValue, d, m.AbsError, res.AbsErr)
			}
		}
	}
}

// TestLogMomentsSweep draws seeded random (σ, q, λ) well beyond the grids
// above (σ ∈ [0.3, 100], q ∈ [1e-8, 1], λ ∈ [1, 300], fractional and
// integer) and checks that every moment is finite and non-negative, α(λ) is
// non-decreasing in λ, and at integer λ the integrated log E2 matches the
// binomial form to 1e-12 with Upper() above it.
func TestLogMomentsSweep(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 9))
	for i := 0; i < 150; i++ {
		s := math.Exp(math.Log(0.3) + rng.Float64()*math.Log(100/0.3))
		q := math.Exp(math.Log(1e-8) + rng.Float64()*math.Log(1/1e-8))
		if rng.IntN(10) == 0 {
			q = 1
		}
		var ls []float64
		for k := 0; k < 6; k++ {
			l := 1 + rng.Float64()*299
			if k%2 == 0 {
				l = math.Round(l)
			}
			ls = append(ls, l)
		}
		sort.Float64s(ls)
		ms, err := GaussianLogMoments(s, q, ls)
		if err != nil {
			t.Fatal(err)
		}
		for j, m := range ms {
			if !(m.Alpha >= 0) || math.IsInf(m.Alpha, 1) || !(m.AbsError >= 0) || math.IsInf(m.AbsError, 1) {
				t.Errorf("σ=%g q=%g λ=%g: %+v", s, q, ls[j], m)
				continue
			}
			if j > 0 && m.Upper() < ms[j-1].Alpha {
				t.Errorf("σ=%g q=%g: α(%g) = %g below α(%g) = %g", s, q, ls[j], m.Upper(), ls[j-1], ms[j-1].Alpha)
			}
			if ls[j] == math.Round(ls[j]) {
				b := logMomentBinomial(s, q, int(ls[j]))
				if m.Upper() < b || relDiff(m.LogE2, b) > 1e-12 {
					t.Errorf("σ=%g q=%g λ=%g: log E2 %.17g (upper %.17g), binomial %.17g", s, q, ls[j], m.LogE2, m.Upper(), b)
				}
			}
		}
	}
}
