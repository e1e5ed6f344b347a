package render

import (
	"math"
	"strconv"
	"testing"
)

func mustParse(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

func TestGRound(t *testing.T) {
	for _, tc := range []struct {
		v        float64
		up, down string
	}{
		{0.0191434987, "0.0191435", "0.0191434"}, {0.98085650133, "0.980857", "0.980856"}, {1, "1", "1"}, {0, "0", "0"}, {0.5, "0.5", "0.5"}, {123456789, "1.23457e+08", "1.23456e+08"}, {0.99999999, "1", "0.999999"}, {0.0191, "0.0191", "0.0191"},
	} {
		if got := UpDigits(tc.v, 6); got != tc.up || mustParse(got) < tc.v {
			t.Errorf("UpDigits(%g) = %s, want %s", tc.v, got, tc.up)
		}
		if got := DownDigits(tc.v, 6); got != tc.down || mustParse(got) > tc.v {
			t.Errorf("DownDigits(%g) = %s, want %s", tc.v, got, tc.down)
		}
	}
}

// TestPctUp checks that the percentages in the statements round up.
func TestPctUp(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{0.0191435, "1.92"}, {0.019, "1.9"}, {0.5505908, "55.1"}, {1, "100"}, {0, "0"}, {0.00228839, "0.229"}, {0.999999, "100"},
	} {
		if got := PctUp(tc.x); got != tc.want || mustParse(got) < 100*tc.x && !math.IsInf(tc.x, 0) {
			t.Errorf("PctUp(%g) = %s, want %s", tc.x, got, tc.want)
		}
	}
}

// TestArg: a command-line argument reads back as the same float64 and is
// written as one types it.
func TestArg(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{1e-5, "1e-5"}, {0.01, "0.01"}, {4, "4"}, {1e21, "1e21"}, {1.5e-300, "1.5e-300"}, {50.001920000000005, "50.001920000000005"}, {1230, "1230"},
	} {
		got := Arg(tc.x)
		if got != tc.want || mustParse(got) != tc.x {
			t.Errorf("Arg(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}
