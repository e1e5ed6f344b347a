package integrate

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

var logSqrt2Pi = 0.5 * math.Log(2*math.Pi)

// logNormPDF is log φ((x-m)/s)/s.
func logNormPDF(x, m, s float64) float64 {
	z := (x - m) / s
	return -0.5*z*z - logSqrt2Pi - math.Log(s)
}

func TestLogClosedForms(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	type tc struct {
		name string
		logf func(float64) float64
		a, b float64
		opt  *Options
		want float64 // closed form of log ∫f
	}
	tests := []tc{
		{"gaussian whole line", func(x float64) float64 { return -0.5 * x * x }, -inf, inf, nil, logSqrt2Pi},
		{"gaussian half line", func(x float64) float64 { return -0.5 * x * x }, 0, inf, nil, logSqrt2Pi - math.Ln2},
		{"gaussian left half", func(x float64) float64 { return -0.5 * x * x }, -inf, 0, nil, logSqrt2Pi - math.Ln2},
		{"gaussian finite", func(x float64) float64 { return logNormPDF(x, 0, 1) }, -1, 2,
			nil, math.Log(math.Erf(2/math.Sqrt2)/2 + math.Erf(1/math.Sqrt2)/2)},
		{"uniform", func(float64) float64 { return 0 }, -3, 5, nil, math.Log(8)},
		// e^{λx}·φ(x) integrates to e^{λ²/2}: a log-value near 1e4 at λ=141.
		{"exp tilt 10", func(x float64) float64 { return 10*x + logNormPDF(x, 0, 1) }, -inf, inf, nil, 50},
		{"exp tilt 50", func(x float64) float64 { return 50*x + logNormPDF(x, 0, 1) }, -inf, inf, nil, 1250},
		{"exp tilt 141", func(x float64) float64 { return 141*x + logNormPDF(x, 0, 1) }, -inf, inf, nil, 141 * 141 / 2.0},
		{"exp tilt 141 finite", func(x float64) float64 { return 141*x + logNormPDF(x, 0, 1) }, -50, 250, nil, 141 * 141 / 2.0},
		{"exp tilt 141 with center", func(x float64) float64 { return 141*x + logNormPDF(x, 0, 1) }, -inf, inf,
			&Options{Center: 141}, 141 * 141 / 2.0},
		// Log-value near -1e4: the Gaussian tail beyond 141 (log Φ(-141) from
		// the asymptotic series of logmath.NormCDF, accurate to 1e-17).
		{"gaussian tail at 141", func(x float64) float64 { return logNormPDF(x, 0, 1) }, 141, inf, nil, logmath.NormSF(141)},
		{"scaled minus 1e4", func(x float64) float64 { return -1e4 - 0.5*x*x }, -inf, inf, nil, -1e4 + logSqrt2Pi},
		{"scaled plus 1e4 wide", func(x float64) float64 { return 1e4 + logNormPDF(x, 3, 1000) }, -inf, inf,
			&Options{Scale: 1000}, 1e4},
	}
	// Gaussian moments: ∫ x^{2k} φ(x) dx = (2k-1)!! = 2^k Γ(k+1/2)/√π.
	for k := 1; k <= 10; k++ {
		lg, _ := math.Lgamma(float64(k) + 0.5)
		want := float64(k)*math.Ln2 + lg - 0.5*math.Log(math.Pi)
		kk := float64(2 * k)
		tests = append(tests, tc{"gaussian moment " + string(rune('0'+k%10)), func(x float64) float64 {
			return kk*math.Log(math.Abs(x)) + logNormPDF(x, 0, 1)
		}, -inf, inf, nil, want})
	}
	// Lognormal moments: E[X^k] = exp(kμ + k²s²/2) for log X ~ N(μ, s²).
	for _, k := range []float64{0, 1, 2, 3.5} {
		const mu, s = 0.5, 1.5
		tests = append(tests, tc{"lognormal moment", func(x float64) float64 {
			lx := math.Log(x)
			return k*lx - lx + logNormPDF(lx, mu, s)
		}, 0, inf, nil, k*mu + k*k*s*s/2})
	}
	for _, tt := range tests {
		res, err := Log(tt.logf, tt.a, tt.b, tt.opt)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got := res.LogValue
		diff := math.Abs(got - tt.want)
		// The error estimate must bound the true error (up to the rounding
		// of the closed form itself, 4 ulp of the value), and meet the
		// default tolerance.
		round := 4 * eps * math.Max(1, math.Abs(tt.want))
		if diff > res.AbsErr+round {
			t.Errorf("%s: log ∫ = %.17g, want %.17g: error %g exceeds estimate %g", tt.name, got, tt.want, diff, res.AbsErr)
		}
		// Tolerance 1e-12 on the log value, widened by the floor that
		// float64 logarithms of size |want| impose (16 eps·|want|).
		if tol := 1e-12 + 16*eps*math.Abs(tt.want); res.AbsErr > tol || res.Status != Success {
			t.Errorf("%s: AbsErr %g status %v, want <= %g and success", tt.name, res.AbsErr, res.Status, tol)
		}
		if diff/math.Max(1, math.Abs(tt.want)) > 1e-12 {
			t.Errorf("%s: log ∫ = %.17g, want %.17g (diff %g)", tt.name, got, tt.want, diff)
		}
	}
}

func TestLogFailures(t *testing.T) {
	t.Parallel()
	// An integrable singularity x^-0.99 defeats a 300-evaluation budget.
	sing := func(x float64) float64 { return -0.99 * math.Log(x) }
	res, err := Log(sing, 0, 1, &Options{MaxEval: 300})
	if !errors.Is(err, ErrBudget) || res.Status != BudgetExhausted {
		t.Errorf("singular integrand: err %v status %v, want ErrBudget", err, res.Status)
	}
	if res.Evaluations > 300 {
		t.Errorf("singular integrand: %d evaluations, budget 300", res.Evaluations)
	}
	nan := func(x float64) float64 {
		if x > 0.5 {
			return math.NaN()
		}
		return 0
	}
	if _, err := Log(nan, 0, 1, nil); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN integrand: err %v, want ErrNonFinite", err)
	}
	for _, tt := range []struct {
		name string
		a, b float64
		opt  *Options
	}{
		{"reversed", 1, 0, nil},
		{"nan end", math.NaN(), 1, nil},
		{"negative tol", 0, 1, &Options{RelTol: -1}},
		{"tiny budget", 0, 1, &Options{MaxEval: 3}},
		{"zero scale", 0, 1, &Options{Scale: -2}},
	} {
		if res, err := Log(sing, tt.a, tt.b, tt.opt); err == nil || res.Status != BadInput {
			t.Errorf("%s: err %v status %v, want bad input", tt.name, err, res.Status)
		}
	}
	zero := func(float64) float64 { return math.Inf(-1) }
	if res, err := Log(zero, -1, math.Inf(1), nil); err != nil || !math.IsInf(res.LogValue, -1) {
		t.Errorf("zero integrand: %v %v, want -Inf", res.LogValue, err)
	}
	if res, err := Log(sing, 2, 2, nil); err != nil || !math.IsInf(res.LogValue, -1) {
		t.Errorf("empty range: %v %v, want -Inf", res.LogValue, err)
	}
}

func TestGaussKronrod15(t *testing.T) {
	t.Parallel()
	x, wk, wg := GaussKronrod15()
	// Exactness: K15 integrates x^d exactly for d <= 22, G7 for d <= 13.
	for d := 0; d <= 22; d++ {
		want := 0.0
		if d%2 == 0 {
			want = 2 / float64(d+1)
		}
		var sk, sg float64
		for i := range x {
			p := math.Pow(x[i], float64(d))
			sk += wk[i] * p
			sg += wg[i] * p
		}
		if math.Abs(sk-want) > 1e-15 {
			t.Errorf("K15 on x^%d: %g, want %g", d, sk, want)
		}
		if d <= 13 && math.Abs(sg-want) > 1e-15 {
			t.Errorf("G7 on x^%d: %g, want %g", d, sg, want)
		}
	}
	for i := 1; i < 15; i++ {
		if !(x[i] > x[i-1]) {
			t.Fatalf("nodes not increasing at %d", i)
		}
	}
}

var benchResultFloat64 float64

// BenchmarkLog integrates e^{λx}·φ(x) over the real line (log-value λ²/2).
func BenchmarkLog(b *testing.B) {
	for _, lambda := range []float64{1, 100} {
		b.Run("lambda="+strconv.Itoa(int(lambda)), func(b *testing.B) {
			f := func(x float64) float64 { return lambda*x + logNormPDF(x, 0, 1) }
			for i := 0; i < b.N; i++ {
				r, _ := Log(f, math.Inf(-1), math.Inf(1), nil)
				benchResultFloat64 = r.LogValue
			}
		})
	}
}
