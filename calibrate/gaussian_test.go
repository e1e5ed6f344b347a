package calibrate

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/internal/testref"
)

type gaussianRef struct {
	kind            string
	a, b, c         float64
	value, logValue float64
}

// loadGaussianRefs reads testdata/pld/gaussian_ref.csv, produced by
// testdata/pld/gen_gaussian.py (mpmath, 60 digits).
func loadGaussianRefs(t *testing.T) []gaussianRef {
	t.Helper()
	rows := testref.CSV(t, "pld/gaussian_ref.csv")
	var refs []gaussianRef
	for _, r := range rows[1:] {
		var v [5]float64
		for i := range v {
			x, err := strconv.ParseFloat(r[i+1], 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				t.Fatal(err)
			}
			v[i] = x
		}
		refs = append(refs, gaussianRef{r[0], v[0], v[1], v[2], v[3], v[4]})
	}
	if len(refs) < 20 {
		t.Fatalf("only %d reference rows", len(refs))
	}
	return refs
}

func TestGaussianDeltaReference(t *testing.T) {
	for _, r := range loadGaussianRefs(t) {
		if r.kind != "delta" {
			continue
		}
		t.Run(fmt.Sprintf("sigma=%g,sens=%g,eps=%g", r.a, r.b, r.c), func(t *testing.T) {
			// log δ to 1e-11 absolute, i.e. δ to 1e-11 relative, or 1e-13
			// relative on log δ where |log δ| is in the thousands (the
			// log itself carries that float64 rounding).
			got := gaussian.LogDelta(r.a, r.b, r.c)
			tol := 1e-11 + 1e-13*math.Abs(r.logValue)
			if math.Abs(got-r.logValue) > tol {
				t.Errorf("log delta = %.17g, want %.17g (tol %g)", got, r.logValue, tol)
			}
			d, err := gaussian.Delta(r.a, r.b, r.c)
			if err != nil {
				t.Fatal(err)
			}
			if r.value > 1e-300 && math.Abs(d-r.value) > 1e-10*r.value {
				t.Errorf("delta = %.17g, want %.17g", d, r.value)
			}
		})
	}
}

func TestAnalyticGaussianSigmaReference(t *testing.T) {
	for _, r := range loadGaussianRefs(t) {
		if r.kind != "sigma" {
			continue
		}
		t.Run(fmt.Sprintf("eps=%g,delta=%g,sens=%g", r.a, r.b, r.c), func(t *testing.T) {
			got, err := AnalyticGaussianSigma(r.a, r.b, r.c)
			if err != nil {
				t.Fatal(err)
			}
			// Safe side: never below the exact root (up to the 1e-13
			// uncertainty of δ itself), and within 1e-9 relative of it.
			if got < r.value*(1-1e-13) || got > r.value*(1+1e-9) {
				t.Errorf("sigma = %.17g, want %.17g (safe side, 1e-9 rel)", got, r.value)
			}
			d, _ := gaussian.Delta(got, r.c, r.a)
			if d > r.b {
				t.Errorf("gaussian.Delta(sigma) = %g > delta = %g", d, r.b)
			}
		})
	}
}

func TestClassicGaussianSigma(t *testing.T) {
	tests := []struct {
		name             string
		eps, delta, sens float64
	}{
		{"eps 0.5", 0.5, 1e-5, 1},
		{"eps 0.1 sens 3", 0.1, 1e-8, 3},
		{"eps 0.9", 0.9, 1e-3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClassicGaussianSigma(tt.eps, tt.delta, tt.sens)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.sens * math.Sqrt(2*math.Log(1.25/tt.delta)) / tt.eps
			if math.Abs(got-want) > 1e-15*want {
				t.Errorf("got %g, want %g", got, want)
			}
			// Sandwich: for ε < 1 the classical σ is private, so it is at
			// least the analytic (smallest) σ.
			a, err := AnalyticGaussianSigma(tt.eps, tt.delta, tt.sens)
			if err != nil {
				t.Fatal(err)
			}
			if a > got {
				t.Errorf("analytic sigma %g > classic sigma %g", a, got)
			}
		})
	}
}

func TestGaussianMonotone(t *testing.T) {
	prev := 1.0
	for _, eps := range []float64{0, 0.1, 0.5, 1, 2, 5, 10, 15, 20} {
		d, err := gaussian.Delta(1.5, 1, eps)
		if err != nil {
			t.Fatal(err)
		}
		if !(d < prev) || d <= 0 {
			t.Errorf("delta(%g) = %g, not in (0, %g)", eps, d, prev)
		}
		prev = d
	}
}

func TestGaussianBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		f     func() (float64, error)
		param string
	}{
		{"delta sigma 0", func() (float64, error) { return gaussian.Delta(0, 1, 1) }, "sigma"},
		{"delta sigma nan", func() (float64, error) { return gaussian.Delta(nan, 1, 1) }, "sigma"},
		{"delta sens inf", func() (float64, error) { return gaussian.Delta(1, inf, 1) }, "sensitivity"},
		{"delta eps negative", func() (float64, error) { return gaussian.Delta(1, 1, -1) }, "eps"},
		{"delta eps inf", func() (float64, error) { return gaussian.Delta(1, 1, inf) }, "eps"},
		{"analytic eps 0", func() (float64, error) { return AnalyticGaussianSigma(0, 1e-5, 1) }, "eps"},
		{"analytic delta 1", func() (float64, error) { return AnalyticGaussianSigma(1, 1, 1) }, "delta"},
		{"analytic delta 0", func() (float64, error) { return AnalyticGaussianSigma(1, 0, 1) }, "delta"},
		{"analytic sens -1", func() (float64, error) { return AnalyticGaussianSigma(1, 1e-5, -1) }, "sensitivity"},
		{"classic delta nan", func() (float64, error) { return ClassicGaussianSigma(1, nan, 1) }, "delta"},
		{"classic eps -1", func() (float64, error) { return ClassicGaussianSigma(-1, 1e-5, 1) }, "eps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.f()
			var pe *accounting.ParamError
			if !errors.As(err, &pe) || pe.Name != tt.param {
				t.Errorf("err = %v, want ParamError for %s", err, tt.param)
			}
		})
	}
}

func ExampleAnalyticGaussianSigma() {
	sigma, err := AnalyticGaussianSigma(1, 1e-5, 1)
	if err != nil {
		panic(err)
	}
	classic, _ := ClassicGaussianSigma(1, 1e-5, 1)
	fmt.Printf("analytic %.4f, classic %.4f\n", sigma, classic)
	// Output: analytic 3.7306, classic 4.8448
}
