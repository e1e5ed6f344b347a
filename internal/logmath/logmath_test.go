package logmath

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

func TestAddSub(t *testing.T) {
	tests := []struct {
		name     string
		a, b     float64
		add, sub float64
	}{
		{"equal", 0, 0, math.Ln2, math.Inf(-1)},
		{"large", 1000, 999, 1000 + math.Log1p(math.Exp(-1)), 1000 + math.Log(1-math.Exp(-1))},
		{"tiny gap", 0, -1e-10, math.Log(2 - 1e-10), math.Log(1e-10)},
		{"minus inf", 3, math.Inf(-1), 3, 3},
	}
	for _, tt := range tests {
		if got := Add(tt.a, tt.b); !near(got, tt.add, 1e-9) {
			t.Errorf("%s: Add = %v, want %v", tt.name, got, tt.add)
		}
		if got := Sub(tt.a, tt.b); !near(got, tt.sub, 1e-6) {
			t.Errorf("%s: Sub = %v, want %v", tt.name, got, tt.sub)
		}
	}
	if !math.IsNaN(Sub(0, 1)) {
		t.Error("Sub(0, 1) should be NaN")
	}
}

func TestSumExp(t *testing.T) {
	if got, want := SumExp([]float64{800, 800, 800}), 800+math.Log(3); !near(got, want, 1e-15) {
		t.Errorf("SumExp = %v, want %v", got, want)
	}
	if got := SumExp(nil); !math.IsInf(got, -1) {
		t.Errorf("SumExp(nil) = %v, want -Inf", got)
	}
}

func TestNormCDF(t *testing.T) {
	// References: mpmath.log(mpmath.ncdf(x)) at 40 digits (mp.dps = 40).
	tests := []struct{ x, want float64 }{
		{0, -0.69314718055994530942},
		{-1, -1.8410216450092636},
		{-10, -53.23128515051247},
		{-19.9, -201.91716770733259757},
		{-20.1, -205.92711840194824576},
		{-36.9, -685.33288316535061216},
		{-37.1, -692.73828071562329266},
		{-40, -804.6084420137538},
		{-1000, -500007.82669481218431},
		{3, -0.0013508099647481938},
		{10, -7.619853024160527e-24},
	}
	for _, tt := range tests {
		if got := NormCDF(tt.x); !near(got, tt.want, 1e-13) {
			t.Errorf("NormCDF(%v) = %.17g, want %.17g", tt.x, got, tt.want)
		}
	}
}

func TestComb(t *testing.T) {
	if got, want := Comb(10, 3), math.Log(120); !near(got, want, 1e-13) {
		t.Errorf("Comb(10,3) = %v, want %v", got, want)
	}
}

// TestLogSubnormal checks Log against the closed form
// log 2^k = k·ln 2, across the subnormal range where math.Log on amd64
// returns about −709.09 for every argument (golang/go#56600).
func TestLogSubnormal(t *testing.T) {
	for k := -1074; k <= -1000; k++ {
		x := math.Ldexp(1, k)
		want := float64(k) * math.Ln2
		// Four ulps of |want| ≤ 745 (ulp 1.1e-13): the scaling subtracts
		// 54·ln 2 and the reference k·ln 2 is itself rounded.
		if got := Log(x); math.Abs(got-want) > 4.6e-13 {
			t.Errorf("Log(2^%d) = %.17g, want %.17g", k, got, want)
		}
		// x·3 (not a power of two): log 3 + k·ln 2.
		if k < -1023 {
			want3 := math.Log(3) + want
			if got := Log(3 * x); math.Abs(got-want3) > 4.6e-13 {
				t.Errorf("Log(3·2^%d) = %.17g, want %.17g", k, got, want3)
			}
		}
	}
	if got := Log(0); !math.IsInf(got, -1) {
		t.Errorf("Log(0) = %g, want -Inf", got)
	}
}
