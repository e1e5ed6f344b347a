package accounting_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// TestBinomialTailReference: the user-level mixture lists the binomial's
// shifts lo..hi whose log-probability is above −708 and names the rest a
// tail (BinomialCount K, BinomialRate q); the tail's bounds log η and log
// Σ_{tail} p_c e^{a·c²} are at least the exact sums over every left-out
// shift computed with mpmath at 60 digits
// (testdata/userlevel/tail_reference.py, 14 rows: upper tails at q 0.0064
// to 0.05, K 1000 to 5000, and the lower tail of q 0.6), less 1e-15 of
// their magnitude for their rounding to float64, and above them by at most
// 1e-10 of their magnitude plus 1e-7 (the margins of 1e-12 and the
// pieces' tangents; measured: at most 6.6e-12 relative, 3e-8 absolute).
func TestBinomialTailReference(t *testing.T) {
	rows, lines := testref.Floats(t, "testdata/userlevel/tail_sums.txt", 6)
	for i, v := range rows {
		q, k, lo, hi, a, want := v[0], int(v[1]), int(v[2]), int(v[3]), v[4], v[5]
		m, err := accounting.UserMixture(1, q, k)
		if err != nil {
			t.Fatal(err)
		}
		c := m.Sensitivities
		if int(c[0]) != lo || int(c[len(c)-1]) != hi || m.BinomialCount != k || m.BinomialRate != q {
			t.Errorf("%s: listed %v..%v, binomial (%d, %v); want %d..%d, (%d, %v)", lines[i], c[0], c[len(c)-1], m.BinomialCount, m.BinomialRate, lo, hi, k, q)
			continue
		}
		tail := accounting.NewBinomialTail(k, q, lo, hi)
		got := tail.LogMoment(a)
		if a == 0 && tail.LogMass() != got {
			t.Errorf("%s: LogMass %v, LogMoment(0) %v", lines[i], tail.LogMass(), got)
		}
		slack := 1e-10*math.Abs(want) + 1e-7
		if !(got >= want-1e-15*math.Abs(want)) || got > want+slack {
			t.Errorf("%s: log tail sum %v, exact %v (excess %.3g)", lines[i], got, want, got-want)
		}
	}
	if len(rows) != 14 {
		t.Errorf("%d reference rows, want 14", len(rows))
	}
}

// TestUserMixtureNormalProbabilities: every probability a user mixture
// lists is a normal float64 (at least 2^−1022), and those at the ends of
// its run, the least probable, are within 1e-12 of the binomial's
// computed with mpmath at 60 digits (testdata/userlevel/tail_ends.txt, 4
// settings; the tail's bounds are checked against the sums over exactly
// the shifts outside these runs in TestBinomialTailReference). Before,
// shifts down to log-probability −745 were listed as subnormal floats:
// at K 1000, q 0.0064 the run was 0..259 and p_259 = e^−744.62 was stored
// as 2^−1074 = e^−744.44, 20% above the binomial's.
func TestUserMixtureNormalProbabilities(t *testing.T) {
	rows, lines := testref.Floats(t, "testdata/userlevel/tail_ends.txt", 6)
	for i, v := range rows {
		q, k, lo, hi := v[0], int(v[1]), v[2], v[3]
		m, err := accounting.UserMixture(1, q, k)
		if err != nil {
			t.Fatal(err)
		}
		c, p := m.Sensitivities, m.SamplingProbs
		for j, x := range p {
			if !(x >= 0x1p-1022) {
				t.Errorf("%s: shift %v has probability %v, below the smallest normal float64", lines[i], c[j], x)
			}
		}
		if c[0] != lo || c[len(c)-1] != hi {
			t.Errorf("%s: listed %v..%v, want %v..%v", lines[i], c[0], c[len(c)-1], lo, hi)
			continue
		}
		for j, want := range []float64{v[4], v[5]} {
			got := math.Log(p[j*(len(p)-1)])
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("%s: log p at shift %v is %v, binomial %v", lines[i], c[j*(len(c)-1)], got, want)
			}
		}
	}
	if len(rows) != 4 {
		t.Errorf("%d reference rows, want 4", len(rows))
	}
}

// TestBinomialTailEdges: the largest count, 2^53, at q 1e-15 (about 1,200
// pieces): the tail's mass is finite and below 5·e^−708, its largest
// shift is k; a tail on the low side only (q 0.6, K 1000) has its largest
// shift lo − 1; a run holding every shift leaves an empty tail; q 1 and q
// 0.5 at K 1000 leave nothing out (no tail).
func TestBinomialTailEdges(t *testing.T) {
	const k = 1 << 53
	m, err := accounting.UserMixture(1, 1e-15, k)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Sensitivities
	tail := accounting.NewBinomialTail(k, 1e-15, int(c[0]), int(c[len(c)-1]))
	if lm := tail.LogMass(); !(lm < math.Log(5)-708) || math.IsInf(lm, 0) || tail.MaxShift() != k || m.BinomialCount != k {
		t.Errorf("k 2^53, q 1e-15: log η %v, max shift %v, binomial count %d", lm, tail.MaxShift(), m.BinomialCount)
	}
	if g := tail.LogMoment(1); !(g > 1e31) || math.IsInf(g, 0) {
		t.Errorf("k 2^53: log moment at a 1 %v, want about k² = 8.1e31", g)
	}
	// Every user mixture's tail is below 5·e^−708 (see UserMixture), its
	// bound too: measured at most e^−708.09 (K 1000, q 0.1, both sides).
	for _, k := range []int{2, 100, 1000, 1_000_000, 1 << 53} {
		for _, q := range []float64{5e-324, 1e-15, 1e-4, 0.1, 0.5, 0.99, 1 - 1e-10} {
			m, err := accounting.UserMixture(1, q, k)
			if err != nil || m.BinomialCount == 0 {
				continue
			}
			c := m.Sensitivities
			if lm := accounting.NewBinomialTail(k, q, int(c[0]), int(c[len(c)-1])).LogMass(); !(lm < math.Log(5)-708) {
				t.Errorf("k %d, q %v: log η %v, want below log 5 − 708", k, q, lm)
			}
		}
	}
	low := accounting.NewBinomialTail(1000, 0.6, 38, 1000)
	if low.MaxShift() != 37 {
		t.Errorf("low tail: max shift %v, want 37", low.MaxShift())
	}
	if all := accounting.NewBinomialTail(10, 0.5, 0, 10); !math.IsInf(all.LogMass(), -1) || !math.IsInf(all.LogMoment(3), -1) || all.MaxShift() != 0 {
		t.Errorf("every shift listed: log η %v, max shift %v; want −Inf, 0", all.LogMass(), all.MaxShift())
	}
	for _, q := range []float64{1, 0.5} {
		m, err := accounting.UserMixture(1, q, 1000)
		if err != nil || m.BinomialCount != 0 || m.BinomialRate != 0 {
			t.Errorf("q %v, k 1000: binomial (%d, %v), %v; want no tail", q, m.BinomialCount, m.BinomialRate, err)
		}
	}
}

// TestBinomialMixtureRefused: a tail's parameters are checked when the
// event is accounted (Normalize), each error naming the field and the
// valid range.
func TestBinomialMixtureRefused(t *testing.T) {
	good, err := accounting.UserMixture(1, 0.0064, 1000)
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(m *accounting.MixtureOfGaussians)) accounting.MixtureOfGaussians {
		m := good
		m.Sensitivities = append([]float64(nil), good.Sensitivities...)
		m.SamplingProbs = append([]float64(nil), good.SamplingProbs...)
		f(&m)
		return m
	}
	if _, err := accounting.Normalize(good, 1); err != nil {
		t.Fatalf("the user mixture itself: %v", err)
	}
	for _, tc := range []struct {
		name string
		m    accounting.MixtureOfGaussians
		want string
	}{
		{"rate above 1", with(func(m *accounting.MixtureOfGaussians) { m.BinomialRate = 1.5 }), "binomial_rate"},
		{"rate 1", with(func(m *accounting.MixtureOfGaussians) { m.BinomialRate = 1 }), "in (0, 1) when binomial_count is given"},
		{"rate without count", with(func(m *accounting.MixtureOfGaussians) { m.BinomialCount = 0 }), "0 when binomial_count is 0"},
		{"negative count", with(func(m *accounting.MixtureOfGaussians) { m.BinomialCount = -1 }), "binomial_count"},
		{"count below the shifts", with(func(m *accounting.MixtureOfGaussians) { m.BinomialCount = 100 }), "integers in [0, 100]"},
		{"fractional shift", with(func(m *accounting.MixtureOfGaussians) { m.Sensitivities[3] = 2.5 }), "integers in [0, 1000]"},
		{"a gap in the run", with(func(m *accounting.MixtureOfGaussians) {
			m.SamplingProbs[5] += m.SamplingProbs[4]
			m.SamplingProbs[4] = 0
		}), "consecutive integers"},
		{"mode outside", with(func(m *accounting.MixtureOfGaussians) { m.BinomialRate = 0.9 }), "the binomial's mode 900"},
	} {
		_, err := accounting.Normalize(tc.m, 1)
		var pe *accounting.ParamError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want a ParamError with %q", tc.name, err, tc.want)
		}
	}
}
