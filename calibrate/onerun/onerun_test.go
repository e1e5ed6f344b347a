package onerun

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// relClose reports |got − want| ≤ tol·|want| (or ≤ tol when want is 0).
func relClose(got, want, tol float64) bool {
	if want == 0 {
		return math.Abs(got) <= tol
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	x, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// normalQuantiles returns n scores at the normal quantiles Φ⁻¹((i+½)/n),
// shifted by mu (jax_privacy's deterministic normal scores).
func normalQuantiles(n int, mu float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		p := (float64(i) + 0.5) / float64(n)
		x[i] = -math.Sqrt2*math.Erfcinv(2*p) + mu
	}
	return x
}

func shiftedNormals(n int, mu float64) []Canary {
	var cs []Canary
	for _, s := range normalQuantiles(n, 0) {
		cs = append(cs, Canary{Score: s})
	}
	for _, s := range normalQuantiles(n, mu) {
		cs = append(cs, Canary{Score: s, Member: true})
	}
	return cs
}

// TestPublicChecks holds the public values to 5 significant
// digits (rtol 1e-5, jax_privacy's tolerance): m = 1000 canaries, 100
// guesses all right, 95% confidence; and 10,000 non-member scores at the
// normal quantiles with 10,000 members shifted by μ, 95%, δ = 1e-6, every
// hull threshold with Bonferroni (jax_privacy's auditing tests; μ = 4 is
// theirs too).
func TestPublicChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		delta float64
		want  float64
	}{
		{"all 100 right, delta 0", 0, 3.49297},
		{"all 100 right, delta 1e-5", 1e-5, 3.46538},
	} {
		got, err := EpsilonLower(Counts{Canaries: 1000, Guesses: 100, Correct: 100}, 0.95, tc.delta)
		if err != nil || !relClose(got, tc.want, 1e-5) {
			t.Errorf("%s: got %.8g, %v; want %g", tc.name, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		mu           float64
		oneRun, fdp  float64
		fdpTolerance float64
	}{
		{1, 1.13346, 2.164749, 1e-5},
		{2, 2.311945, 4.7218075, 1e-5},
		{4, 4.395568, 9.133752, 1e-5},
	} {
		r, err := Audit(shiftedNormals(10000, tc.mu), Options{Confidence: 0.95, Delta: 1e-6})
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(r.OneRun.Epsilon, tc.oneRun, 1e-5) {
			t.Errorf("mu %g: one-run %.8g, want %g", tc.mu, r.OneRun.Epsilon, tc.oneRun)
		}
		if r.FDP == nil || !relClose(r.FDP.Epsilon, tc.fdp, tc.fdpTolerance) {
			t.Errorf("mu %g: f-DP %+v, want %g", tc.mu, r.FDP, tc.fdp)
		}
	}
}

// TestPublishedPins: the values arXiv 2305.08846v1 prints (Appendix D,
// m = 1000, r = 100, v = 75, δ = 1e-4: 0.673; §7, m = 100,000, r = 1510,
// v = 1439, δ = 1e-5: 2.675, truncated), at 95%.
func TestPublishedPins(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c     Counts
		delta float64
		want  float64
	}{
		{Counts{1000, 100, 75}, 1e-4, 0.673},
		{Counts{100000, 1510, 1439}, 1e-5, 2.675},
	} {
		got, err := EpsilonLower(tc.c, 0.95, tc.delta)
		if err != nil || math.Abs(got-tc.want) > 1e-3 {
			t.Errorf("%+v: got %.6f, %v; want %g (to the printed digit)", tc.c, got, err, tc.want)
		}
	}
}

// TestPValueReference compares PValue with exact mpmath sums
// (testdata/onerun/pvalue_ref.csv, gen.py). Tolerance 1e-9 relative: the
// pmfs come from log-gamma values near n log n, rounded up by their error
// bound (about 1e-10 relative for n = 3000), and PValue must never be below
// the exact value.
func TestPValueReference(t *testing.T) {
	t.Parallel()
	rows := testref.CSV(t, "onerun/pvalue_ref.csv")
	for _, r := range rows[1:] {
		c := Counts{atoi(t, r[0]), atoi(t, r[1]), atoi(t, r[2])}
		eps, delta, want := num(t, r[3]), num(t, r[4]), num(t, r[5])
		got, err := PValue(c, eps, delta)
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(got, want, 1e-9) && math.Abs(got-want) > 1e-300 {
			t.Errorf("PValue(%+v, %g, %g) = %.17g, want %.17g", c, eps, delta, got, want)
		}
		if got < want*(1-1e-13) {
			t.Errorf("PValue(%+v, %g, %g) = %.17g is below the exact %.17g (must err high)", c, eps, delta, got, want)
		}
	}
}

// TestEpsilonReference compares the bounds with mpmath bisections
// (testdata/onerun/epsilon_ref.csv). One-run: 1e-9 relative (both bisect
// to ≤ 1e-12); f-DP: 1e-7 (the reference bisects to 1e-10 relative). The
// bound must not exceed the reference by more than the reference's own
// bracket.
func TestEpsilonReference(t *testing.T) {
	t.Parallel()
	rows := testref.CSV(t, "onerun/epsilon_ref.csv")
	for _, r := range rows[1:] {
		c := Counts{atoi(t, r[0]), atoi(t, r[1]), atoi(t, r[2])}
		conf, delta, want := num(t, r[3]), num(t, r[4]), num(t, r[5])
		got, err := EpsilonLower(c, conf, delta)
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(got, want, 1e-9) || got > want*(1+1e-13)+1e-15 {
			t.Errorf("EpsilonLower(%+v, %g, %g) = %.15g, want %.15g", c, conf, delta, got, want)
		}
		if r[6] == "" {
			continue
		}
		wantF := num(t, r[6])
		gotF, err := EpsilonLowerFDP(c, conf, delta)
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(gotF, wantF, 1e-7) {
			t.Errorf("EpsilonLowerFDP(%+v, %g, %g) = %.12g, want %.12g", c, conf, delta, gotF, wantF)
		}
	}
}

// TestClopperPearsonReference compares with mpmath bisection on the exact
// binomial CDF (testdata/onerun/clopper_pearson_ref.csv), 1e-9 relative
// (the CDF is rounded up by its pmfs' error bound, which moves p by about
// 1e-11 relative at n = 10,000), and the bound must not be below the
// reference (it errs high).
func TestClopperPearsonReference(t *testing.T) {
	t.Parallel()
	rows := testref.CSV(t, "onerun/clopper_pearson_ref.csv")
	for _, r := range rows[1:] {
		k, n, s, want := atoi(t, r[0]), atoi(t, r[1]), num(t, r[2]), num(t, r[3])
		got := ClopperPearsonUpper(k, n, s)
		if !relClose(got, want, 1e-9) || got < want*(1-1e-14) {
			t.Errorf("ClopperPearsonUpper(%d, %d, %g) = %.17g, want %.17g", k, n, s, got, want)
		}
	}
}

// TestScoresReference checks Audit on the normal-quantile scores against
// an independent scipy computation that tries every hull threshold without
// pruning (testdata/onerun/scores_ref.csv): the hull size exactly (the
// Bonferroni factor), the one-run bound to 1e-7 (scipy's binomial in
// float64, brentq to 1e-10) and the Clopper–Pearson bound to 1e-7 (scipy's
// beta quantile).
func TestScoresReference(t *testing.T) {
	t.Parallel()
	rows := testref.CSV(t, "onerun/scores_ref.csv")
	for _, r := range rows[1:] {
		n, mu, conf, delta := atoi(t, r[0]), num(t, r[1]), num(t, r[2]), num(t, r[3])
		res, err := Audit(shiftedNormals(n, mu), Options{Confidence: conf, Delta: delta})
		if err != nil {
			t.Fatal(err)
		}
		if res.Thresholds != atoi(t, r[4]) {
			t.Errorf("mu %g: %d hull thresholds, want %s", mu, res.Thresholds, r[4])
		}
		if w := num(t, r[5]); !relClose(res.OneRun.Epsilon, w, 1e-7) {
			t.Errorf("mu %g: one-run %.12g, want %.12g", mu, res.OneRun.Epsilon, w)
		}
		if w := num(t, r[6]); !relClose(res.ClopperPearson.Epsilon, w, 1e-7) {
			t.Errorf("mu %g: Clopper-Pearson %.12g, want %.12g", mu, res.ClopperPearson.Epsilon, w)
		}
	}
}

// TestBoundNeverAboveTruthRandomizedResponse simulates a mechanism with
// known ε: randomized response on each canary's inclusion bit (reporting
// the bit with probability e^ε/(1+e^ε)), which is exactly ε-DP per canary
// with δ = 0. For each of 2,000 runs of 2,000 canaries (fixed seed) the
// auditor guesses "member" on the canaries reported as 1, a threshold
// fixed in advance, so the bound at 95% may exceed the true ε in at most
// 5% of runs; for this design the exact rate is 4.63% (see
// TestExactViolationRate). Observed with seed 24: 110 of 2,000 runs (5.5%,
// within sampling error of 4.63%: +1.8 standard deviations; 20,000 runs
// with another seed gave 4.79%), and 38 (1.9%) with every threshold tried
// (Bonferroni). The test fails if more than 136 runs exceed the truth:
// P[Binomial(2000, 0.05) > 136] < 1e-6, so a correct bound fails it with
// probability below 1e-6 over seeds.
func TestBoundNeverAboveTruthRandomizedResponse(t *testing.T) {
	t.Parallel()
	const (
		runs  = 2000
		m     = 2000
		epsRR = 1.0
		limit = 136
	)
	rng := rand.New(rand.NewPCG(24, 2305))
	p := 1 / (1 + math.Exp(-epsRR))
	over, overB := 0, 0
	cs := make([]Canary, m)
	for run := 0; run < runs; run++ {
		ones := 0
		for i := range cs {
			member := rng.IntN(2) == 1
			out := member
			if rng.Float64() >= p {
				out = !member
			}
			s := 0.0
			if out {
				s, ones = 1, ones+1
			}
			cs[i] = Canary{Score: s, Member: member}
		}
		if ones == 0 {
			continue
		}
		r, err := Audit(cs, Options{Confidence: 0.95, Guesses: ones})
		if err != nil {
			t.Fatal(err)
		}
		if r.OneRun.Epsilon > epsRR {
			over++
		}
		rb, err := Audit(cs, Options{Confidence: 0.95})
		if err != nil {
			t.Fatal(err)
		}
		if rb.OneRun.Epsilon > epsRR {
			overB++
		}
	}
	t.Logf("randomized response, ε = %g: bound above the truth in %d of %d runs (fixed threshold), %d (every threshold)", epsRR, over, runs, overB)
	if over > limit || overB > limit {
		t.Errorf("the bound exceeded the true ε in %d (fixed) and %d (Bonferroni) of %d runs, want at most %d (5%% plus sampling error)", over, overB, runs, limit)
	}
	if over == 0 {
		t.Errorf("the bound never came above the truth: the test has no teeth (expected about 4.6%% of runs)")
	}
}

// TestBoundNeverAboveTruthGaussian simulates the Gaussian mechanism: each
// canary's score is N(μ·member, 1), μ = 1.5, so the mechanism is exactly
// μ-GDP per canary and its true ε(δ) is Balle and Wang's. Over 100 runs of
// 2,000 canaries (seed 7) neither the binomial nor the f-DP bound (which
// assumes exactly this curve) exceeds ε(10⁻⁵) = 7.05; the largest seen are
// 2.36 and 4.01. Far below the truth: one run with 2,000 canaries cannot
// certify more (the bound is capped by the number of guesses), so this
// case checks the direction and that f-DP is the tighter of the two.
func TestBoundNeverAboveTruthGaussian(t *testing.T) {
	t.Parallel()
	const (
		runs  = 100
		m     = 2000
		mu    = 1.5
		delta = 1e-5
	)
	truth := gaussianEpsilon(mu, delta)
	rng := rand.New(rand.NewPCG(7, 2410))
	cs := make([]Canary, m)
	maxB, maxF := 0.0, 0.0
	for run := 0; run < runs; run++ {
		for i := range cs {
			member := rng.IntN(2) == 1
			s := rng.NormFloat64()
			if member {
				s += mu
			}
			cs[i] = Canary{Score: s, Member: member}
		}
		r, err := Audit(cs, Options{Confidence: 0.95, Delta: delta})
		if err != nil {
			t.Fatal(err)
		}
		maxB, maxF = math.Max(maxB, r.OneRun.Epsilon), math.Max(maxF, r.FDP.Epsilon)
	}
	t.Logf("Gaussian μ = %g: true ε(%g) = %.4f; largest bounds over %d runs: one-run %.4f, f-DP %.4f", mu, delta, truth, runs, maxB, maxF)
	if maxB > truth || maxF > truth {
		t.Errorf("a bound exceeded the true ε %.4f: one-run %.4f, f-DP %.4f", truth, maxB, maxF)
	}
	if maxF <= maxB {
		t.Errorf("the f-DP bound (%.4f) is no tighter than the binomial one (%.4f) on a Gaussian mechanism", maxF, maxB)
	}
}

// TestExactViolationRate computes, without sampling, the probability that
// the bound exceeds the true ε in the randomized-response design of
// TestBoundNeverAboveTruthRandomizedResponse: the number r of canaries
// reported as 1 is Binomial(m, ½), the correct guesses among them are
// Binomial(r, e^ε/(1+e^ε)), and for each r the smallest v whose
// EpsilonLower exceeds ε is found; the rate is Σ_r P[r]·P[Binomial(r, p) ≥
// v_r]. The theorem says at most 5%; this implementation gives 0.04633
// (scipy's binomial, in testdata/onerun/gen.py's terms, gives 0.046332).
func TestExactViolationRate(t *testing.T) {
	t.Parallel()
	const (
		m   = 2000
		eps = 1.0
	)
	lp, lq := logOdds(eps)
	lh := math.Log(0.5)
	rate, mass := 0.0, 0.0
	for r := m/2 - 300; r <= m/2+300; r++ { // ±13 standard deviations
		lw, _ := logPMF(m, r, lh, lh)
		w := math.Exp(lw)
		mass += w
		v := int(float64(r) / (1 + math.Exp(-eps)))
		for ; v <= r; v++ {
			e, err := EpsilonLower(Counts{m, r, v}, 0.95, 0)
			if err != nil {
				t.Fatal(err)
			}
			if e > eps {
				break
			}
		}
		rate += w * upperTail(r, v, lp, lq, true)
	}
	t.Logf("exact rate of bounds above ε = %g: %.5f (probability mass covered %.15f)", eps, rate, mass)
	if rate > 0.05 || math.Abs(rate-0.04633) > 5e-5 {
		t.Errorf("violation rate %.6f, want at most 0.05 (0.04633 for this design)", rate)
	}
}

// gaussianEpsilon is the exact ε(δ) of the μ-GDP Gaussian mechanism, by
// bisection on gaussian.LogDelta.
func gaussianEpsilon(mu, delta float64) float64 {
	lo, hi := 0.0, 100.0
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if gaussian.LogDelta(1/mu, 1, mid) > math.Log(delta) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// TestBadInput: every invalid argument is an error naming it.
func TestBadInput(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	ok := []Canary{{1, true}, {0, false}}
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"no canaries", func() error { _, err := Audit(nil, Options{}); return err }, "no canaries"},
		{"NaN score", func() error { _, err := Audit([]Canary{{nan, true}}, Options{}); return err }, "canary 0: score NaN"},
		{"infinite score", func() error { _, err := Audit([]Canary{{math.Inf(1), true}}, Options{}); return err }, "finite"},
		{"too many guesses", func() error { _, err := Audit(ok, Options{Guesses: 3}); return err }, "guesses = 3"},
		{"negative guesses", func() error { _, err := Audit(ok, Options{Guesses: -1}); return err }, "guesses = -1"},
		{"confidence 1", func() error { _, err := Audit(ok, Options{Confidence: 1}); return err }, "confidence = 1"},
		{"confidence NaN", func() error { _, err := EpsilonLower(Counts{1, 1, 1}, nan, 0); return err }, "confidence = NaN"},
		{"delta 1", func() error { _, err := EpsilonLower(Counts{1, 1, 1}, 0.95, 1); return err }, "delta = 1"},
		{"negative delta", func() error { _, err := PValue(Counts{1, 1, 1}, 1, -1e-9); return err }, "delta = -1e-09"},
		{"negative eps", func() error { _, err := PValue(Counts{1, 1, 1}, -1, 0); return err }, "eps = -1"},
		{"no canary", func() error { _, err := EpsilonLower(Counts{0, 0, 0}, 0.95, 0); return err }, "canaries = 0"},
		{"guesses above m", func() error { _, err := EpsilonLower(Counts{10, 11, 1}, 0.95, 0); return err }, "guesses = 11"},
		{"correct above guesses", func() error { _, err := EpsilonLower(Counts{10, 5, 6}, 0.95, 0); return err }, "correct = 6"},
		{"f-DP at delta 0", func() error { _, err := EpsilonLowerFDP(Counts{10, 5, 5}, 0.95, 0); return err }, "delta in (0, 1)"},
	} {
		err := tc.err()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestBoundaries: the edge cases of the bounds, each by name.
func TestBoundaries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		c     Counts
		delta float64
		want  float64 // exact, or -1 for "> 0"
	}{
		{"no guesses", Counts{100, 0, 0}, 0, 0},
		{"half right is no evidence", Counts{1000, 500, 250}, 0, 0},
		{"all wrong", Counts{100, 50, 0}, 1e-5, 0},
		{"one right guess cannot reject at 95%", Counts{1, 1, 1}, 0, 0},
		{"five right guesses reject eps = 0 at 95%", Counts{5, 5, 5}, 0, -1},
		{"huge delta swamps the evidence", Counts{1000, 100, 100}, 0.01, 0},
	} {
		got, err := EpsilonLower(tc.c, 0.95, tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		if tc.want >= 0 && got != tc.want || tc.want < 0 && !(got > 0) {
			t.Errorf("%s: %g, want %g", tc.name, got, tc.want)
		}
	}
	// All five right at δ = 0: (e^ε/(1+e^ε))⁵ = 0.05 exactly at the root.
	got, _ := EpsilonLower(Counts{5, 5, 5}, 0.95, 0)
	p := math.Pow(0.05, 0.2)
	if want := math.Log(p / (1 - p)); !relClose(got, want, 1e-11) || got > want {
		t.Errorf("5 of 5: %.15g, want %.15g (from below)", got, want)
	}
}
