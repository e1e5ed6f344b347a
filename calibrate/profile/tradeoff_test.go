package profile_test

import (
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/calibrate/profile"
)

// TestTradeoffFNR checks f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)}
// for small families in closed form. The bound is rounded down by at most
// a few 2⁻⁵⁰, so each case allows 1e-14 below the exact value and nothing
// above it.
func TestTradeoffFNR(t *testing.T) {
	ln2 := math.Ln2
	tests := []struct {
		name  string
		t     profile.Tradeoff
		alpha float64
		want  float64
	}{
		{"empty family bounds nothing", nil, 0.1, 0},
		{"perfect privacy (0, 0): β = 1 − α", profile.Tradeoff{{0, 0}}, 0.3, 0.7},
		{"(0, δ): β = 1 − δ − α", profile.Tradeoff{{0, 0.25}}, 0.3, 0.45},
		{"(ln 2, 0.1) at α = 0.1: first line", profile.Tradeoff{{ln2, 0.1}}, 0.1, 0.7},
		{"(ln 2, 0.1) at α = 0.6: reflected line", profile.Tradeoff{{ln2, 0.1}}, 0.6, 0.15},
		{"(ln 2, 0.1) at α = 0.95: nothing", profile.Tradeoff{{ln2, 0.1}}, 0.95, 0},
		{"α = 0: 1 − δ", profile.Tradeoff{{3, 0.01}}, 0, 0.99},
		{"α = 1: 0", profile.Tradeoff{{0, 0}}, 1, 0},
		{"max over the family", profile.Tradeoff{{ln2, 0.1}, {0, 0.5}, {math.Log(4), 0.01}}, 0.1, 0.7},
		{"max over the family, other member", profile.Tradeoff{{ln2, 0.3}, {math.Log(4), 0.01}}, 0.1, 0.59},
		{"δ = 1 gives nothing", profile.Tradeoff{{0, 1}}, 0.1, 0},
		{"δ > 1 gives nothing", profile.Tradeoff{{0, 2}}, 0.1, 0},
		{"NaN δ gives nothing", profile.Tradeoff{{0, math.NaN()}}, 0.1, 0},
		{"negative ε gives nothing", profile.Tradeoff{{-1, 0}}, 0.1, 0},
		{"ε = +Inf gives 1 − δ at α = 0", profile.Tradeoff{{math.Inf(1), 0.2}}, 0, 0.8},
		{"ε = +Inf gives nothing at α > 0", profile.Tradeoff{{math.Inf(1), 0.2}}, 1e-300, 0},
		{"huge ε: e^ε α overflows to +Inf, no NaN", profile.Tradeoff{{800, 0}}, 0.5, 0},
		{"α outside [0, 1]", profile.Tradeoff{{0, 0}}, 1.5, 0},
		{"α negative", profile.Tradeoff{{0, 0}}, -0.1, 0},
		{"α NaN", profile.Tradeoff{{0, 0}}, math.NaN(), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.t.FNR(tc.alpha)
			if !(got <= tc.want && got >= tc.want-1e-14) {
				t.Errorf("FNR(%g) = %.17g, want %.17g (at most 1e-14 below)", tc.alpha, got, tc.want)
			}
			tpr := tc.t.TPR(tc.alpha)
			if !(tpr >= 1-tc.want && tpr <= 1-tc.want+1e-14) || tpr > 1 {
				t.Errorf("TPR(%g) = %.17g, want %.17g (at most 1e-14 above, <= 1)", tc.alpha, tpr, 1-tc.want)
			}
		})
	}
}

func TestTradeoffSorted(t *testing.T) {
	got := profile.Tradeoff{{2, 0.1}, {1, 0.2}, {2, 0.1}, {1, 0.1}}.Sorted()
	want := profile.Tradeoff{{1, 0.1}, {1, 0.2}, {2, 0.1}}
	if len(got) != len(want) {
		t.Fatalf("Sorted = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Sorted = %v, want %v", got, want)
		}
	}
}
