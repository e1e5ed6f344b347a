package registry_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/testref"
	"github.com/dpcalc/dpcalc/internal/work"
)

// Edge cases that once gave wrong or no answers, reproduced at the
// accounting level, one named test each: no or almost no noise, huge σ, q
// = 1, tiny δ, nested sampling, and the search for the most epochs.
// CLI-level reproductions (exit codes, SIGTERM, tables) belong to
// cmd/dpcalc.

// within runs f with a context whose work meter (internal/work) stops it
// past limit units of work, and fails t if f returns an error, needs more
// work than that, or panics: "answers quickly" as a bound on work, the same
// on every machine.
func within(t *testing.T, limit int64, what string, f func(ctx context.Context) error) {
	t.Helper()
	m := work.NewMeter(limit)
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return f(work.With(t.Context(), m))
	}()
	switch {
	case errors.Is(err, work.ErrLimit):
		t.Errorf("%s: no answer within %d units of work", what, limit)
	case err != nil:
		t.Errorf("%s: %v", what, err)
	}
	t.Logf("%s: %d units of work", what, m.Count())
}

// allMethods returns a fresh method of every kind, procedures included.
func allMethods(t *testing.T) map[accounting.Kind]accounting.Method {
	t.Helper()
	ms := map[accounting.Kind]accounting.Method{}
	for _, k := range registry.Kinds() {
		m, err := registry.New(k, registry.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ms[k] = m
	}
	return ms
}

// TestAuditNoNoise: `audit --sigma 1e-200 --q 1 --steps 1 --eps 0.1`
// said the true ε lies in [0, 0] and the claim holds. No noise has no
// finite bound: the interval is [+Inf, +Inf] and the claim is violated,
// never "holds". The control rows pin that Audit decides at all.
func TestAuditNoNoise(t *testing.T) {
	for _, tc := range []struct {
		sigma, eps float64
		want       calibrate.Verdict
	}{
		{1e-200, 0.1, calibrate.Violated},
		{7e-155, 0.1, calibrate.Violated},
		{1, 100, calibrate.Holds},     // exact ε(1e-5) of one Gaussian σ=1 is 4.4
		{1, 0.01, calibrate.Violated}, // far below it
	} {
		r, err := calibrate.Audit(t.Context(), accounting.SubsampledGaussian(tc.sigma, 1, 1), calibrate.Epsilons{Epsilon: tc.eps, Delta: 1e-5}, 0)
		if err != nil {
			t.Errorf("σ=%g ε=%g: %v", tc.sigma, tc.eps, err)
			continue
		}
		if r.Verdict != tc.want || math.IsNaN(r.Lower) || r.Lower > r.Upper || (tc.sigma < 1e-100 && (r.Lower == 0 || r.Upper == 0)) {
			t.Errorf("audit σ=%g q=1 T=1 ε=%g δ=1e-5: [%g, %g] %q, want %q", tc.sigma, tc.eps, r.Lower, r.Upper, r.Verdict, tc.want)
		}
	}
}

// TestAuditNaNLower: `audit --sigma 6.55749e-10 --q 0.448916
// --steps 1 --delta 6.3571e-159 --eps 1` printed a NaN lower bound.
func TestAuditNaNLower(t *testing.T) {
	r, err := calibrate.Audit(t.Context(), accounting.SubsampledGaussian(6.55749e-10, 0.448916, 1), calibrate.Epsilons{Epsilon: 1, Delta: 6.3571e-159}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(r.Lower) || math.IsNaN(r.Upper) || r.Lower < 0 || r.Lower > r.Upper {
		t.Errorf("audit: [%g, %g], want 0 ≤ lower ≤ upper, no NaN", r.Lower, r.Upper)
	}
}

// TestPLDTinySigma: `eps --sigma 7e-155 --q 1 --steps 1 --accountant
// pld` gave ε = 0 (from σ ≈ 7e-155 to 7.5e-155). Below SigmaFloor the
// answer is +Inf; at and just above it, ε is positive.
func TestPLDTinySigma(t *testing.T) {
	for _, sigma := range []float64{7e-155, 7.2e-155, 7.5e-155, 1e-152, math.Nextafter(accounting.SigmaFloor, 0), accounting.SigmaFloor, 1e-150, 1e-140} {
		m, _ := registry.New(accounting.KindPLD, registry.Options{})
		if err := m.Compose(accounting.SubsampledGaussian(sigma, 1, 1), 1); err != nil {
			t.Fatal(err)
		}
		// Measured: at most 29 units.
		within(t, 1000, fmt.Sprintf("pld σ=%g", sigma), func(ctx context.Context) error {
			e, err := m.Epsilon(ctx, 1e-5)
			if err != nil {
				return err
			}
			if !(e > 0) || (sigma < accounting.SigmaFloor && !math.IsInf(e, 1)) {
				return fmt.Errorf("ε(1e-5) = %g, want > 0 (+Inf below SigmaFloor)", e)
			}
			return nil
		})
	}
}

// TestPLDTinySigmaSampled: `eps --sigma 1e-160 --q 0.01 --steps 1000
// --accountant pld` ran for more than 300 s. It must answer (+Inf: σ is
// below SigmaFloor) at once: within 1000 units of work.
func TestPLDTinySigmaSampled(t *testing.T) {
	for _, sigma := range []float64{1e-160, 1e-150, 1e-140} {
		m, _ := registry.New(accounting.KindPLD, registry.Options{})
		if err := m.Compose(accounting.SubsampledGaussian(sigma, 0.01, 1000), 1); err != nil {
			t.Fatal(err)
		}
		// Measured: at most 80 units.
		within(t, 1000, fmt.Sprintf("pld σ=%g q=0.01 T=1000", sigma), func(ctx context.Context) error {
			e, err := m.Epsilon(ctx, 1e-5)
			if err == nil && (math.IsNaN(e) || e <= 0 || (sigma < accounting.SigmaFloor && !math.IsInf(e, 1))) {
				return fmt.Errorf("ε(1e-5) = %g", e)
			}
			return err
		})
	}
}

// TestHugeSigma: `eps --sigma 1e308 --q 0.01 --epochs 10` panicked
// (makeslice) in every command from σ ≈ 6e307. Every method answers with a
// valid value.
func TestHugeSigma(t *testing.T) {
	for _, sigma := range []float64{6e307, 1e308, math.MaxFloat64} {
		for k, m := range allMethods(t) {
			where := fmt.Sprintf("%s σ=%g q=0.01 T=1000", k, sigma)
			// Measured: at most 346 units (pld).
			within(t, 5000, where, func(ctx context.Context) error {
				if err := m.Compose(accounting.SubsampledGaussian(sigma, 0.01, 1000), 1); err != nil {
					return err
				}
				e, err := m.Epsilon(ctx, 1e-5)
				if err != nil || math.IsNaN(e) || e < 0 || math.IsInf(e, 0) {
					return fmt.Errorf("Epsilon(1e-5) = %g, %v; want finite ≥ 0", e, err)
				}
				d, err := m.Delta(ctx, 1)
				if err != nil || math.IsNaN(d) || d < 0 || d > 1 {
					return fmt.Errorf("Delta(1) = %g, %v", d, err)
				}
				return nil
			})
		}
	}
}

// TestPLDIntervalQ1: at q = 1, σ = 1e5, δ = 1e-50 the pld interval
// lay entirely below the exact ε (testdata/conformance/q1_eps.csv, mpmath at
// 200 digits). The conformance suite checks every row; this is the one
// that failed.
func TestPLDIntervalQ1(t *testing.T) {
	var exact string
	for _, r := range testref.CSV(t, "conformance/q1_eps.csv")[1:] {
		if r[0] == "1e5" && r[1] == "1" && r[2] == "1e-50" {
			exact = r[3]
		}
	}
	if exact == "" {
		t.Fatal("row σ=1e5 T=1 δ=1e-50 missing from q1_eps.csv")
	}
	ex, _, err := big.ParseFloat(exact, 10, 400, big.ToNearestEven)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := registry.New(accounting.KindPLD, registry.Options{})
	if err := m.Compose(accounting.Gaussian{NoiseMultiplier: 1e5}, 1); err != nil {
		t.Fatal(err)
	}
	lo, hi, err := m.(accounting.BoundsReporter).EpsilonBounds(t.Context(), 1e-50)
	if err != nil {
		t.Fatal(err)
	}
	if big.NewFloat(lo).Cmp(ex) > 0 || big.NewFloat(hi).Cmp(ex) < 0 {
		t.Errorf("pld σ=1e5 q=1 δ=1e-50: [%.17g, %.17g] misses the exact %s", lo, hi, exact)
	}
}

// TestGaussianZero: Gaussian{0} was ε = +Inf for ma/rdp/pld and a
// ParamError for ac/zcdp/dpd. Every method, procedures included, gives +Inf
// and δ = 1, bare and sampled.
func TestGaussianZero(t *testing.T) {
	for _, e := range []accounting.Event{
		accounting.Gaussian{},
		accounting.SubsampledGaussian(0, 0.01, 100),
	} {
		for k, m := range allMethods(t) {
			if err := m.Compose(e, 1); err != nil {
				t.Errorf("%s: Compose(%#v): %v", k, e, err)
				continue
			}
			eps, err1 := m.Epsilon(t.Context(), 1e-5)
			d, err2 := m.Delta(t.Context(), 1)
			if err1 != nil || err2 != nil || !math.IsInf(eps, 1) || d != 1 {
				t.Errorf("%s: %#v: Epsilon(1e-5) = %g, %v; Delta(1) = %g, %v; want +Inf and 1", k, e, eps, err1, d, err2)
			}
		}
	}
}

// TestNestedPoisson: PoissonSampled{PoissonSampled{…}} was accepted
// by ac/zcdp and refused by ma/rdp/pld, and the same nested path was
// spelled three ways in errors. Every method accepts it and answers as for
// Poisson sampling at the plan's product rate; a bad σ inside is the same
// *ParamError at the same path everywhere.
func TestNestedPoisson(t *testing.T) {
	nested := accounting.SelfComposed{Event: accounting.PoissonSampled{SamplingRate: 0.5,
		Event: accounting.PoissonSampled{SamplingRate: 0.02, Event: accounting.Gaussian{NoiseMultiplier: 1}}}, Count: 100}
	p, err := accounting.Normalize(nested, 1)
	if err != nil || len(p.Steps) != 1 {
		t.Fatal(p, err)
	}
	flat := accounting.SelfComposed{Event: p.Steps[0].Event(), Count: 100}
	for k, m := range allMethods(t) {
		if err := m.Compose(nested, 1); err != nil {
			t.Errorf("%s: Compose(nested): %v", k, err)
			continue
		}
		f, _ := registry.New(k, registry.Options{})
		if err := f.Compose(flat, 1); err != nil {
			t.Fatal(err)
		}
		a, err1 := m.Epsilon(t.Context(), 1e-5)
		b, err2 := f.Epsilon(t.Context(), 1e-5)
		if err1 != nil || err2 != nil || a != b {
			t.Errorf("%s: nested ε = %g (%v), flat at rate %g ε = %g (%v)", k, a, err1, p.Steps[0].Rate, b, err2)
		}
	}
	bad := accounting.PoissonSampled{SamplingRate: 0.5, Event: accounting.PoissonSampled{SamplingRate: 0.02, Event: accounting.Gaussian{NoiseMultiplier: -1}}}
	const path = "SelfComposed/PoissonSampled/PoissonSampled/Gaussian"
	for k, m := range allMethods(t) {
		err := m.Compose(accounting.SelfComposed{Event: bad, Count: 3}, 1)
		var pe *accounting.ParamError
		if !errors.As(err, &pe) || pe.Path != path || pe.Name != "sigma" {
			t.Errorf("%s: %v, want *ParamError sigma at %s", k, err, path)
		}
	}
}

// TestDeltaNotZero: `delta --sigma 1e6 --q 1 --steps 1 --eps 1e4`
// gave δ = 0 from ma, rdp and zcdp; a Gaussian mechanism is never pure DP.
func TestDeltaNotZero(t *testing.T) {
	for k, m := range allMethods(t) {
		if _, ok := m.(accounting.Accountant); !ok {
			continue
		}
		if err := m.Compose(accounting.SubsampledGaussian(1e6, 1, 1), 1); err != nil {
			t.Fatal(err)
		}
		for _, x := range []float64{1e4, 1e300} {
			if d, err := m.Delta(t.Context(), x); err != nil || !(d > 0) {
				t.Errorf("%s: Delta(%g) = %g, %v; want ≥ 5e-324", k, x, d, err)
			}
		}
	}
}

// TestPLDEpochs: `epochs --sigma 0.3 --q 0.01 --eps 100 --accountant
// pld` returned 1910 steps though 1911 steps gave 99.77 ≤ 100, and
// `epochs --sigma 1e6 --q 1e-12 --eps 1e-9` showed ε = 0.0194 for a 1e-9
// budget: Epsilon and EpsilonBounds disagreed. MaxSteps's answer n must fit
// the budget under Epsilon of a fresh accountant and n+1 must not.
func TestPLDEpochs(t *testing.T) {
	f := func() (accounting.Method, error) { return registry.New(accounting.KindPLD, registry.Options{}) }
	for _, tc := range []struct {
		sigma, q, eps float64
		limit         int
	}{
		{0.3, 0.01, 100, 100000},
		{1e6, 1e-12, 1e-9, 1 << 40},
	} {
		where := fmt.Sprintf("pld σ=%g q=%g ε=%g δ=1e-5", tc.sigma, tc.q, tc.eps)
		// Measured: at most 60,584 units (σ 1e6, q 1e-12).
		within(t, 300000, where, func(ctx context.Context) error {
			n, err := calibrate.MaxSteps(ctx, f, tc.sigma, tc.q, tc.eps, 1e-5, tc.limit)
			if err != nil {
				return err
			}
			at := func(steps int) (float64, error) {
				return calibrate.Epsilon(ctx, f, accounting.SubsampledGaussian(tc.sigma, tc.q, steps), 1e-5)
			}
			if n > 0 {
				e, err := at(n)
				if err != nil || !(e <= tc.eps) {
					return fmt.Errorf("MaxSteps = %d but ε(%d) = %g (%v) exceeds the budget", n, n, e, err)
				}
			}
			if n < tc.limit {
				e, err := at(n + 1)
				if err != nil || e <= tc.eps {
					return fmt.Errorf("MaxSteps = %d but ε(%d) = %g (%v) fits the budget", n, n+1, e, err)
				}
			}
			t.Logf("%s: MaxSteps = %d", where, n)
			return nil
		})
	}
}

// parseRef parses a reference value exactly; a value below big.Float's
// exponent range (δ = 1e-2171472402) becomes a positive value below every
// float64, so that only 0 compares below it.
func parseRef(t *testing.T, s string) *big.Float {
	t.Helper()
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		if exp, err := strconv.Atoi(s[i+1:]); (err != nil && strings.HasPrefix(s[i+1:], "-")) || exp < -100000 {
			return new(big.Float).SetMantExp(big.NewFloat(1), -1<<20)
		}
	}
	f, _, err := big.ParseFloat(s, 10, 400, big.ToNearestEven)
	if err != nil {
		t.Fatalf("reference %q: %v", s, err)
	}
	return f
}

// TestClosedFormsQ1Delta: δ(ε) of ma, rdp and zcdp at q = 1 against their
// closed forms (testdata/conformance/q1_closed_delta.csv): at or above the
// exact value, within a relative 1e-11 of it (δ is exp of a rounded
// logarithm), and never 0 (an underflow rounds up to 5e-324).
func TestClosedFormsQ1Delta(t *testing.T) {
	rows := testref.CSV(t, "conformance/q1_closed_delta.csv")
	col := map[accounting.Kind]int{accounting.KindMA: 3, accounting.KindRDP: 4, accounting.KindZCDP: 5}
	for _, r := range rows[1:] {
		sigma, _ := strconv.ParseFloat(r[0], 64)
		steps, _ := strconv.Atoi(r[1])
		eps, _ := strconv.ParseFloat(r[2], 64)
		for k, c := range col {
			m, _ := registry.New(k, registry.Options{})
			if err := m.Compose(accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: sigma}, Count: steps}, 1); err != nil {
				t.Fatal(err)
			}
			got, err := m.Delta(t.Context(), eps)
			if err != nil {
				t.Errorf("%s σ=%s T=%d ε=%s: %v", k, r[0], steps, r[2], err)
				continue
			}
			ex := parseRef(t, r[c])
			exf, _ := ex.Float64()
			if big.NewFloat(got).Cmp(ex) < 0 || got == 0 || got > exf*(1+1e-11)+2*math.SmallestNonzeroFloat64 {
				t.Errorf("%s σ=%s T=%d ε=%s: δ = %.17g, exact closed form %s", k, r[0], steps, r[2], got, r[c])
			}
		}
	}
}

// TestClosedFormsQ1: at q = 1 the ma, rdp and zcdp accountants evaluate
// closed forms (testdata/conformance/q1_closed.csv, mpmath at 200 digits
// over moments.DefaultOrders; see gen.py for the formulas). Each answer is
// at or above its exact value (rounded up), and within a relative 1e-12 of
// it.
func TestClosedFormsQ1(t *testing.T) {
	rows := testref.CSV(t, "conformance/q1_closed.csv")
	col := map[accounting.Kind]int{accounting.KindMA: 3, accounting.KindRDP: 4, accounting.KindZCDP: 5}
	for _, r := range rows[1:] {
		sigma, _ := strconv.ParseFloat(r[0], 64)
		steps, _ := strconv.Atoi(r[1])
		delta, _ := strconv.ParseFloat(r[2], 64)
		for k, c := range col {
			m, _ := registry.New(k, registry.Options{})
			if err := m.Compose(accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: sigma}, Count: steps}, 1); err != nil {
				t.Fatal(err)
			}
			got, err := m.Epsilon(t.Context(), delta)
			if err != nil {
				t.Errorf("%s σ=%s T=%d δ=%s: %v", k, r[0], steps, r[2], err)
				continue
			}
			ex, _, err := big.ParseFloat(r[c], 10, 400, big.ToNearestEven)
			if err != nil {
				t.Fatal(err)
			}
			exf, _ := ex.Float64()
			if big.NewFloat(got).Cmp(ex) < 0 || got > exf*(1+1e-12) {
				t.Errorf("%s σ=%s T=%d δ=%s: ε = %.17g, exact closed form %s (relative %.3g)", k, r[0], steps, r[2], got, r[c], (got-exf)/exf)
			}
		}
	}
}
