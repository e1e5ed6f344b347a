package mechanism

import (
	"context"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// TestMixtureTailRDPReference: the user-level mixture's Rényi curve is at
// least a lower bound on the real user's remove-direction log moment,
// log Σ_c p_c^{λ+1} e^{λ(λ+1)c²/(2σ²)} over all K + 1 shifts, computed with
// mpmath at 60 digits (testdata/userlevel/tail_reference.py; 7 settings,
// K 1000 to 5000), less 1e-15 of it for its rounding. The curve of the
// listed components alone, which dpcalc used before, was below it where
// the shifts left out dominate: at K 1000, q 0.0064, σ 60, λ 64 it was
// 26.84 against 249,433 (and 0.39 against 5,520.7 at σ 1, λ 0.0209, the
// order rdp chose for 782 steps at δ 1e-100). Where the bound is
// dominated by the largest shift, the curve is within 1e-6 of it relative
// (Minkowski's bound of a single term is exact; measured 7.8e-7, the
// shifts next to the largest).
func TestMixtureTailRDPReference(t *testing.T) {
	rows, lines := testref.Floats(t, "../testdata/userlevel/tail_moments.txt", 5)
	for i, v := range rows {
		q, k, sigma, lambda, lb := v[0], int(v[1]), v[2], v[3], v[4]
		r := userRDP(t, sigma, q, k)
		got, err := r.LogMomentAt(context.Background(), nil, 1, lambda)
		if err != nil {
			t.Fatal(err)
		}
		if !(got >= lb-1e-15*math.Abs(lb)) {
			t.Errorf("%s: K(λ) %.17g below the real user's lower bound %.17g", lines[i], got, lb)
		}
		if lb > 1000 && got > lb+1e-6*math.Abs(lb) {
			t.Errorf("%s: K(λ) %.17g, more than 1e-6 above the lower bound %.17g", lines[i], got, lb)
		}
	}
	if len(rows) != 7 {
		t.Errorf("%d reference rows, want 7", len(rows))
	}
}

// TestMixtureTailZCDP: ρ is at least K(λ)/(λ(λ+1)) at every order of the
// mpmath lower bounds of TestMixtureTailRDPReference (zCDP asks D_{λ+1} ≤
// ρ(λ+1)); for K 1000, q 0.0064, σ 60 the bound at λ 256 needs ρ ≥ 119.16,
// and ρ is the largest shift's, 1000²/(2·60²) = 138.89; from the largest
// shift listed, 259, it was 9.32.
func TestMixtureTailZCDP(t *testing.T) {
	rows, lines := testref.Floats(t, "../testdata/userlevel/tail_moments.txt", 5)
	for i, v := range rows {
		q, k, sigma, lambda, lb := v[0], int(v[1]), v[2], v[3], v[4]
		rho, _, err := userMechanism(t, sigma, q, k).ZCDP()
		if err != nil {
			t.Fatal(err)
		}
		if need := lb / (lambda * (lambda + 1)); !(rho >= need) {
			t.Errorf("%s: ρ %v, the lower bound needs %v", lines[i], rho, need)
		}
		want := float64(k) * float64(k) / (2 * sigma * sigma)
		if rho < want || rho > want*(1+1e-14) {
			t.Errorf("%s: ρ %v, want K²/(2σ²) = %v rounded up", lines[i], rho, want)
		}
	}
}

// TestMixtureTailPairs: the pairs of a user mixture with shifts left out
// carry them as an atom of mass η at +∞ in P (and at −∞ in Q): P(L > l) ≥
// η at every loss, in both directions, and is η where the listed
// components' own tails vanish (losses 1e5 and up at σ 1); Support says so; the pairs are not the Gaussian
// closed form, and they count as attained (η < e^−700: the user's δ is
// below their lower bound by at most T·η·(2 + e^ε)). η is the mpmath sum of the left-out probabilities
// (testdata/userlevel/tail_sums.txt: log η = −708.861 at K 1000, q 0.0064),
// and the atom is within 1e-11 of it.
func TestMixtureTailPairs(t *testing.T) {
	const logEta = -708.86136017970837461
	m := userMechanism(t, 1, 0.0064, 1000)
	p, err := m.PLD()
	if err != nil {
		t.Fatal(err)
	}
	if p.GaussianSigma != 0 || p.Symmetric || !p.Attained {
		t.Errorf("GaussianSigma %v, Symmetric %v, Attained %v; want 0, false, true (η below e^−700)", p.GaussianSigma, p.Symmetric, p.Attained)
	}
	for name, pair := range map[string]Pair{"remove": p.Remove, "add": p.Add} {
		if li := pair.Support().LogInf; li < logEta || li > logEta+1e-11*math.Abs(logEta) {
			t.Errorf("%s: Support().LogInf %v, want log η %v", name, li, logEta)
		}
		for _, l := range []float64{1e5, 1e7, 1e300} {
			tl := pair.Tails(l)
			if tl.PAbove < logEta || tl.PAbove > logEta+1e-11*math.Abs(logEta) {
				t.Errorf("%s: log P(L > %g) = %v, want the atom's log η %v", name, l, tl.PAbove, logEta)
			}
			if tq := pair.Tails(-l); tq.QBelow < logEta {
				t.Errorf("%s: log Q(L ≤ %g) = %v, below log η %v", name, -l, tq.QBelow, logEta)
			}
		}
	}
}

// TestMixtureTailWideRun: a hand-written mixture that lists only the
// mode, 30,000, of a Binomial(10⁵, 0.3) user (σ 1000) leaves η = 0.9972
// to its tail, whose bound from the tail's pieces is above 1 (log η
// +0.026). The add direction's (1 − η)^−λ was then NaN, and so was the
// Rényi curve at λ 1 and 10 (rdp: no finite ε at δ 1e-5; the pairs'
// tails NaN). Now η is taken as at most 1: the add bound is +Inf and the
// curve is the smaller of the Jensen and the largest shift's Gaussian
// bounds, at least the real user's log moment's lower bound Σ_c p_c^{λ+1}
// e^{λ(λ+1)c²/(2σ²)} (from Lgamma, shifts within 3,000 of the mode; at
// λ 1 it is 913.1, the curve 940.1) and at most the Gaussian of shift
// 10⁵, λ(λ+1)·5000.
func TestMixtureTailWideRun(t *testing.T) {
	const k, q, sigma = 100000, 0.3, 1000.0
	m, err := Of(accounting.Step{Mechanism: accounting.MechOther, Rate: 1, Count: 1,
		Leaf: accounting.MixtureOfGaussians{StandardDeviation: sigma, Sensitivities: []float64{30000}, SamplingProbs: []float64{1},
			BinomialCount: k, BinomialRate: q}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.RDP()
	if err != nil {
		t.Fatal(err)
	}
	lgk, _ := math.Lgamma(k + 1)
	for _, lambda := range []float64{0.5, 1, 10} {
		got, err := r.LogMomentAt(context.Background(), nil, 1, lambda)
		if err != nil {
			t.Fatal(err)
		}
		b := lambda + 1
		lb := math.Inf(-1)
		for c := 27000.0; c <= 33000; c++ {
			lc, _ := math.Lgamma(c + 1)
			lkc, _ := math.Lgamma(k - c + 1)
			lp := lgk - lc - lkc + c*math.Log(q) + (k-c)*math.Log1p(-q)
			lb = logmath.Add(lb, b*lp+lambda*b*c*c/(2*sigma*sigma))
		}
		lb -= 1e-9 * math.Abs(lb) // Lgamma's rounding at 10⁵, downwards
		if g := lambda * b * k * k / (2 * sigma * sigma); !(got >= lb) || got > g*(1+1e-12) {
			t.Errorf("λ %g: K(λ) %v, want in [%v, %v]", lambda, got, lb, g)
		}
	}
	p, err := m.PLD()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []float64{0, 900, 1e5} {
		if tl := p.Remove.Tails(l); math.IsNaN(tl.PAbove) || math.IsNaN(tl.QAbove) || math.IsNaN(tl.PBelow) || math.IsNaN(tl.QBelow) {
			t.Errorf("remove pair at loss %g: %+v", l, tl)
		}
	}
}

// TestMixtureTailAdversarial: at 23 extreme settings of the user-level
// mixture, each with a tail (K 2 to 10⁶, q 1e-300 to 1 − 1e-10, σ 0.05
// to 100, λ 1e-6 to 10⁶), the Rényi curve is at least the mpmath lower
// bound on the real user's remove-direction log moment
// (testdata/userlevel/tail_adversarial.txt), less 1e-15 of it for its
// rounding. Measured: at least 1.8e-15 above it relative (where the
// Gaussian of shift K decides), 3e-12 where a tail's shift does.
func TestMixtureTailAdversarial(t *testing.T) {
	rows, lines := testref.Floats(t, "../testdata/userlevel/tail_adversarial.txt", 5)
	for i, v := range rows {
		q, k, sigma, lambda, lb := v[0], int(v[1]), v[2], v[3], v[4]
		mix, err := accounting.UserMixture(sigma, q, k)
		if err != nil {
			t.Fatal(err)
		}
		if mix.BinomialCount == 0 {
			t.Errorf("%s: no tail", lines[i])
		}
		r := userRDP(t, sigma, q, k)
		got, err := r.LogMomentAt(context.Background(), nil, 1, lambda)
		if err != nil {
			t.Fatal(err)
		}
		if !(got >= lb-1e-15*math.Abs(lb)) {
			t.Errorf("%s: K(λ) %.17g below the real user's lower bound %.17g", lines[i], got, lb)
		}
	}
	if len(rows) != 23 {
		t.Errorf("%d reference rows, want 23", len(rows))
	}
}

// TestMixtureSubnormalProbability: a hand-written mixture may list a
// probability below the smallest normal float64 (1e-320 at shift 40, σ 1);
// its log is −736.83, not math.Log's −709.09 for every subnormal, which
// made the component e^27.7 times heavier than listed: the remove pair's
// log P(L > 200) was −714.9 where it is log(1e-320·Φ̄(x − 40)) = −744.9,
// x = (200 + 800 − log 1e-320)/40 the point where the loss reaches 200.
func TestMixtureSubnormalProbability(t *testing.T) {
	m, err := Of(accounting.Step{Mechanism: accounting.MechOther, Rate: 1, Count: 1,
		Leaf: accounting.MixtureOfGaussians{StandardDeviation: 1, Sensitivities: []float64{0, 40}, SamplingProbs: []float64{1, 1e-320}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.PLD()
	if err != nil {
		t.Fatal(err)
	}
	logp := logmath.Log(1e-320)
	x := (200 + 800 - logp) / 40
	want := logp + logmath.NormCDF(40-x) // Φ̄(x − 40) = Φ(40 − x); the shift 0's Φ̄(x) is e^−945 of it
	if got := p.Remove.Tails(200).PAbove; math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("log P(L > 200) = %v, want %v", got, want)
	}
}
