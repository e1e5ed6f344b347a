package pld

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/internal/testenv"
	"github.com/dpcalc/dpcalc/internal/testref"
)

type refRow struct {
	kind     string
	sigma, q float64
	steps    int
	delta    float64
	eps      float64
}

// loadRefs reads testdata/pld/pld_ref.csv (testdata/pld/gen_pld.py,
// mpmath at 60 digits).
func loadRefs(t *testing.T) []refRow {
	t.Helper()
	rows := testref.CSV(t, "pld/pld_ref.csv")
	var refs []refRow
	for _, r := range rows[1:] {
		var v [5]float64
		for i := range v {
			var err error
			if v[i], err = strconv.ParseFloat(r[i+1], 64); err != nil {
				t.Fatal(err)
			}
		}
		refs = append(refs, refRow{r[0], v[0], v[1], int(v[2]), v[3], v[4]})
	}
	if len(refs) < 10 {
		t.Fatalf("only %d reference rows", len(refs))
	}
	return refs
}

func accountantFor(t testing.TB, e accounting.Event, opt Options) *Accountant {
	t.Helper()
	a, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose(e, 1); err != nil {
		t.Fatal(err)
	}
	return a
}

// checkBracket fails unless lo ≤ want ≤ up (with rel slack for the
// reference's own last digit), up − lo ≤ gap·want (or gapAbs) and no value
// is NaN.
func checkBracket(t *testing.T, lo, up, want, slack, gap, gapAbs float64) {
	t.Helper()
	if math.IsNaN(lo) || math.IsNaN(up) || lo > up {
		t.Fatalf("bounds [%v, %v] malformed", lo, up)
	}
	if lo > want*(1+slack) || up < want*(1-slack) {
		t.Errorf("[%.10g, %.10g] does not contain %.10g", lo, up, want)
	}
	if up-lo > math.Max(gap*want, gapAbs) {
		t.Errorf("gap %.3g (%.4f%%) > %g·eps; [%.10g, %.10g]", up-lo, 100*(up-lo)/want, gap, lo, up)
	}
}

func TestPLDGaussianClosedForm(t *testing.T) {
	for _, r := range loadRefs(t) {
		if r.kind != "gauss" {
			continue
		}
		t.Run(fmt.Sprintf("sigma=%g,T=%d,delta=%g", r.sigma, r.steps, r.delta), func(t *testing.T) {
			a := accountantFor(t, self(gauss(r.sigma), r.steps), Options{})
			lo, up, err := a.EpsilonBounds(t.Context(), r.delta)
			if err != nil {
				t.Fatal(err)
			}
			// The closed form is exact up to the 1e-13 bisection bracket;
			// the brief asks for 1e-6 relative.
			checkBracket(t, lo, up, r.eps, 1e-12, 1e-6, 0)
			if e, _ := a.Epsilon(t.Context(), r.delta); e != up {
				t.Errorf("Epsilon = %v, EpsilonBounds upper = %v", e, up)
			}
		})
	}
}

// TestPLDGaussianFFT runs the FFT path (closed form disabled) on plain and
// heterogeneous Gaussian compositions, whose ε is known exactly.
func TestPLDGaussianFFT(t *testing.T) {
	noClosedForm = true
	defer func() { noClosedForm = false }()
	for _, r := range loadRefs(t) {
		if r.kind != "gauss" || r.delta < 1e-12 || r.steps > 10000 {
			continue
		}
		t.Run(fmt.Sprintf("sigma=%g,T=%d,delta=%g", r.sigma, r.steps, r.delta), func(t *testing.T) {
			a := accountantFor(t, self(gauss(r.sigma), r.steps), Options{})
			lo, up, err := a.EpsilonBounds(t.Context(), r.delta)
			if err != nil {
				t.Fatal(err)
			}
			checkBracket(t, lo, up, r.eps, 1e-12, 0.01, 1e-4)
			// Upper bound within 0.5% of the exact value.
			if up > r.eps*1.005+1e-4 {
				t.Errorf("upper %v more than 0.5%% above exact %v", up, r.eps)
			}
		})
	}
	t.Run("heterogeneous", func(t *testing.T) {
		// 30 steps of σ=3 and 50 of σ=5 equal one Gaussian with
		// σ = (30/9 + 50/25)^(−1/2).
		e := composed(self(gauss(3), 30), self(gauss(5), 50))
		a := accountantFor(t, e, Options{})
		lo, up, err := a.EpsilonBounds(t.Context(), 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		elo, ehi := closedEpsilon(1/math.Sqrt(30.0/9+50.0/25), 1e-6)
		want := (elo + ehi) / 2
		checkBracket(t, lo, up, want, 1e-12, 0.01, 0)
	})
}

// TestPLDSingleStep checks one subsampled-Gaussian step against the exact
// hockey-stick divergence of both directions (mpmath).
func TestPLDSingleStep(t *testing.T) {
	for _, r := range loadRefs(t) {
		if r.kind != "step" {
			continue
		}
		t.Run(fmt.Sprintf("sigma=%g,q=%g,delta=%g", r.sigma, r.q, r.delta), func(t *testing.T) {
			a := accountantFor(t, sampled(r.q, gauss(r.sigma)), Options{})
			lo, up, err := a.EpsilonBounds(t.Context(), r.delta)
			if err != nil {
				t.Fatal(err)
			}
			checkBracket(t, lo, up, r.eps, 1e-12, 0.01, 1e-3)
		})
	}
}

func loadSubsampledRefs(t *testing.T) map[string][2]float64 {
	t.Helper()
	b, err := os.ReadFile(testref.Path("pld/subsampled_ref.csv"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][2]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if len(f) != 7 || strings.HasPrefix(line, "#") || f[0] == "sigma" {
			continue
		}
		lo, _ := strconv.ParseFloat(f[5], 64)
		up, _ := strconv.ParseFloat(f[6], 64)
		m[f[0]+","+f[1]+","+f[2]] = [2]float64{lo, up}
	}
	return m
}

// TestPLDTableCases checks the three cases of the brief against the
// external estimates and against the fine-grid brackets of
// testdata/pld/subsampled_ref.csv.
func TestPLDTableCases(t *testing.T) {
	fine := loadSubsampledRefs(t)
	for _, c := range tableCases {
		t.Run(fmt.Sprintf("sigma=%g,q=%g,T=%d", c.sigma, c.q, c.steps), func(t *testing.T) {
			a := accountantFor(t, accounting.SubsampledGaussian(c.sigma, c.q, c.steps), Options{})
			lo, up, err := a.EpsilonBounds(t.Context(), 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			// The PRV estimate is printed to 4 decimals: ±5e-5.
			if lo > c.prv+5e-5 || up < c.prv-5e-5 {
				t.Errorf("[%.6f, %.6f] does not contain the PRV estimate %.4f", lo, up, c.prv)
			}
			ref, ok := fine[fmt.Sprintf("%g,%g,%d", c.sigma, c.q, c.steps)]
			if !ok {
				t.Fatal("no fine-grid reference")
			}
			// Both are certified brackets of the same number: they overlap.
			if lo > ref[1] || up < ref[0] {
				t.Errorf("[%.8f, %.8f] disjoint from fine-grid [%.8f, %.8f]", lo, up, ref[0], ref[1])
			}
			mid := (ref[0] + ref[1]) / 2
			if up-lo > 0.01*mid {
				t.Errorf("gap %.4f%% > 1%%", 100*(up-lo)/mid)
			}
			if up > ref[1]*1.005 {
				t.Errorf("upper %.6f more than 0.5%% above the true value (≤ %.6f)", up, ref[1])
			}
			t.Logf("eps in [%.6f, %.6f], gap %.3f%%, fine-grid [%.7f, %.7f]", lo, up, 100*(up-lo)/mid, ref[0], ref[1])
		})
	}
}

// TestPLDLongComposition checks T = 1e6 (σ=4, q=0.01): a certified bracket
// with gap ≤ 1%, consistent with a run on a 2× finer grid.
func TestPLDLongComposition(t *testing.T) {
	if testing.Short() {
		t.Skip("long composition")
	}
	e := accounting.SubsampledGaussian(4, 0.01, 1000000)
	a := accountantFor(t, e, Options{})
	lo, up, err := a.EpsilonBounds(t.Context(), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if up-lo > 0.01*up {
		t.Errorf("gap %.4f%% > 1%%: [%v, %v]", 100*(up-lo)/up, lo, up)
	}
	h := a.res0(t).h
	f := accountantFor(t, e, Options{GridWidth: h / 2})
	flo, fup, err := f.EpsilonBounds(t.Context(), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if lo > fup || up < flo {
		t.Errorf("[%v, %v] disjoint from finer [%v, %v]", lo, up, flo, fup)
	}
	if up > fup*1.005 {
		t.Errorf("upper %v more than 0.5%% above the finer upper %v", up, fup)
	}
	t.Logf("T=1e6: [%.6f, %.6f] gap %.3f%%; h/2: [%.6f, %.6f]", lo, up, 100*(up-lo)/up, flo, fup)
}

func TestPLDDeltaBounds(t *testing.T) {
	tests := []struct {
		name     string
		sigma, q float64
		steps    int
		delta    float64
	}{
		{"table 1", 4, 0.01, 10000, 1e-5},
		{"small delta", 1, 0.05, 500, 1e-10},
		{"large q", 1.2, 0.5, 50, 1e-6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := accountantFor(t, accounting.SubsampledGaussian(tt.sigma, tt.q, tt.steps), Options{})
			lo, up, err := a.EpsilonBounds(t.Context(), tt.delta)
			if err != nil {
				t.Fatal(err)
			}
			// δ_upper(ε_upper) ≤ δ: the upper ε is certified by the upper δ.
			_, dUp, err := a.DeltaBounds(t.Context(), up)
			if err != nil {
				t.Fatal(err)
			}
			if dUp > tt.delta*(1+1e-9) {
				t.Errorf("delta upper at eps upper = %g > %g", dUp, tt.delta)
			}
			// Below the lower ε the lower δ is still above δ.
			dLo, _, err := a.DeltaBounds(t.Context(), lo*(1-1e-6))
			if err != nil {
				t.Fatal(err)
			}
			if lo > 0 && dLo < tt.delta*(1-1e-6) {
				t.Errorf("delta lower just below eps lower = %g < %g", dLo, tt.delta)
			}
			if d, _ := a.Delta(t.Context(), up); d != dUp {
				t.Errorf("Delta = %g, DeltaBounds upper = %g", d, dUp)
			}
		})
	}
}

// TestPLDProperties checks, on seeded random inputs, that lower ≤ upper and
// that ε is monotone in σ, q and T: the true ε is, so a bound for the more
// private setting may not exceed a bound for the less private one in the
// certified direction (lower(more private) ≤ upper(less private)), and with
// parameters 25% apart the brackets are strictly ordered.
func TestPLDProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := testenv.Size(4, 12)
	eps := func(sigma, q float64, steps int) (float64, float64) {
		a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
		lo, up, err := a.EpsilonBounds(t.Context(), 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if !(lo <= up) || math.IsNaN(lo) {
			t.Fatalf("sigma=%g q=%g T=%d: bounds [%v, %v]", sigma, q, steps, lo, up)
		}
		return lo, up
	}
	for i := 0; i < n; i++ {
		sigma := 0.7 + 4*rng.Float64()
		q := math.Exp(math.Log(1e-3) * rng.Float64()) // 1e-3 … 1
		steps := 1 + rng.IntN(3000)
		lo, up := eps(sigma, q, steps)
		name := fmt.Sprintf("sigma=%.3g q=%.3g T=%d", sigma, q, steps)
		check := func(what string, lo2, up2 float64) {
			// (lo2, up2) belong to a more private setting.
			if lo2 > up {
				t.Errorf("%s, %s: lower %v > upper %v of the less private setting", name, what, lo2, up)
			}
			if up > 0 && up2 >= lo {
				t.Errorf("%s, %s: brackets not ordered: [%v, %v] vs [%v, %v]", name, what, lo2, up2, lo, up)
			}
		}
		lo2, up2 := eps(sigma*1.25, q, steps)
		check("sigma up", lo2, up2)
		lo2, up2 = eps(sigma, q*0.75, steps)
		check("q down", lo2, up2)
		if steps > 4 {
			lo2, up2 = eps(sigma, q, steps*3/4)
			check("T down", lo2, up2)
		}
	}
}

func TestPLDCountLinearity(t *testing.T) {
	e := sampled(0.02, gauss(1.3))
	ways := map[string]func(a *Accountant) error{
		"Compose(e, 300)": func(a *Accountant) error { return a.Compose(e, 300) },
		"SelfComposed":    func(a *Accountant) error { return a.Compose(self(e, 300), 1) },
		"3 × Compose(SelfComposed{e, 100})": func(a *Accountant) error {
			for i := 0; i < 3; i++ {
				if err := a.Compose(self(e, 100), 1); err != nil {
					return err
				}
			}
			return nil
		},
		"Composed{SelfComposed{e,150}, e×150}": func(a *Accountant) error {
			return a.Compose(composed(self(e, 150), self(composed(e, accounting.NoOp{}), 150)), 1)
		},
	}
	var ref [2]float64
	first := true
	for name, f := range ways {
		a, _ := New(Options{})
		if err := f(a); err != nil {
			t.Fatal(err)
		}
		lo, up, err := a.EpsilonBounds(t.Context(), 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if first {
			ref, first = [2]float64{lo, up}, false
			if !(up > 0) {
				t.Fatalf("%s: eps = %v", name, up)
			}
			continue
		}
		if lo != ref[0] || up != ref[1] {
			t.Errorf("%s: [%v, %v], want [%v, %v]", name, lo, up, ref[0], ref[1])
		}
	}
}

func TestPLDHeterogeneous(t *testing.T) {
	a := accounting.SubsampledGaussian(2, 0.02, 400)
	b := accounting.SubsampledGaussian(1, 0.005, 900)
	epsOf := func(e accounting.Event) (float64, float64) {
		acc := accountantFor(t, e, Options{})
		lo, up, err := acc.EpsilonBounds(t.Context(), 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		return lo, up
	}
	aLo, aUp := epsOf(a)
	bLo, bUp := epsOf(b)
	lo, up := epsOf(composed(a, b))
	if up-lo > 0.01*up {
		t.Errorf("gap %.3f%%", 100*(up-lo)/up)
	}
	// The composition loses more privacy than either part, and (for
	// these μ-GDP-like parts) less than their sum.
	if up < math.Max(aLo, bLo) || lo <= math.Max(aUp, bUp) {
		t.Errorf("composition [%v, %v] not above parts [%v, %v], [%v, %v]", lo, up, aLo, aUp, bLo, bUp)
	}
	if lo > aUp+bUp {
		t.Errorf("composition lower %v above the sum of the parts %v", lo, aUp+bUp)
	}
	// Order of events does not matter.
	lo2, up2 := epsOf(composed(b, a))
	if lo2 != lo || up2 != up {
		t.Errorf("order changed the result: [%v, %v] vs [%v, %v]", lo2, up2, lo, up)
	}
}

func TestPLDEdgeCases(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name     string
		e        accounting.Event
		wantZero bool
		wantInf  bool
	}{
		{"noop", accounting.NoOp{}, true, false},
		{"q=0", sampled(0, gauss(1)), true, false},
		{"sigma=inf", gauss(inf), true, false},
		{"empty composed", accounting.Composed{}, true, false},
		{"non-private", composed(gauss(1), accounting.NonPrivate{}), false, true},
		{"sigma=0", sampled(0.1, gauss(0)), false, true},
		{"tiny q", accounting.SubsampledGaussian(1, 1e-9, 1000), false, false},
		{"large sigma", accounting.SubsampledGaussian(1000, 0.5, 100), false, false},
		{"small sigma", accounting.SubsampledGaussian(0.2, 0.3, 10), false, false},
		{"small sigma tiny q", accounting.SubsampledGaussian(0.3, 1e-4, 1000), false, false},
		{"q near 1", accounting.SubsampledGaussian(1, 0.999, 20), false, false},
		{"T=1e7", accounting.SubsampledGaussian(20, 0.001, 10000000), false, false}, // long test step only
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.HasPrefix(tt.name, "T=") {
				testenv.SkipUnlessLong(t, "long composition")
			}
			a := accountantFor(t, tt.e, Options{})
			lo, up, err := a.EpsilonBounds(t.Context(), 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			dlo, dup, err := a.DeltaBounds(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []float64{lo, up, dlo, dup} {
				if math.IsNaN(v) || v < 0 {
					t.Fatalf("bad value: eps [%v, %v], delta [%v, %v]", lo, up, dlo, dup)
				}
			}
			switch {
			case tt.wantZero:
				if lo != 0 || up != 0 || dup != 0 {
					t.Errorf("eps [%v, %v], delta(1) %v, want 0", lo, up, dup)
				}
			case tt.wantInf:
				if !math.IsInf(up, 1) || dup != 1 {
					t.Errorf("eps %v, delta(1) %v, want +Inf and 1", up, dup)
				}
			default:
				if !(lo <= up) || math.IsInf(up, 0) || dlo > dup || dup > 1 {
					t.Errorf("eps [%v, %v], delta(1) [%v, %v]", lo, up, dlo, dup)
				}
				if up > 0 && up-lo > math.Max(0.01*up, 1e-3) {
					t.Errorf("gap: eps [%v, %v]", lo, up)
				}
			}
			t.Logf("eps [%v, %v], delta(1) [%v, %v]", lo, up, dlo, dup)
		})
	}
}

func TestPLDBadInput(t *testing.T) {
	nan := math.NaN()
	if _, err := New(Options{GridWidth: -1}); !errors.Is(err, accounting.ErrInvalidParameter) {
		t.Errorf("GridWidth -1: err = %v", err)
	}
	tests := []struct {
		name  string
		e     accounting.Event
		count int
		param string // "" = unsupported event
		path  string
	}{
		{"count 0", gauss(1), 0, "count", ""},
		{"self count 0", self(gauss(1), 0), 1, "count", ""},
		{"q 1.5", sampled(1.5, gauss(1)), 1, "q", ""},
		{"q nan", sampled(nan, gauss(1)), 1, "q", ""},
		{"sigma -1", gauss(-1), 1, "sigma", ""},
		{"sigma nan", composed(accounting.NoOp{}, gauss(nan)), 1, "sigma", ""},
		{"zcdp", accounting.ZCDP{Rho: 1}, 1, "", "ZCDP"},
		{"nested eps-delta", composed(gauss(1), self(epsDelta(1, 1e-6), 3)), 1, "", "Composed[1]/SelfComposed/EpsilonDelta"},
		{"sampled zcdp", sampled(0.1, accounting.ZCDP{Rho: 1}), 1, "", "PoissonSampled/ZCDP"},
		{"nil", nil, 1, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := New(Options{})
			if err := a.Compose(gauss(3), 1); err != nil {
				t.Fatal(err)
			}
			before, _ := a.Epsilon(t.Context(), 1e-5)
			err := a.Compose(tt.e, tt.count)
			if tt.param != "" {
				var pe *accounting.ParamError
				if !errors.As(err, &pe) || pe.Name != tt.param {
					t.Errorf("err = %v, want ParamError for %s", err, tt.param)
				}
			} else {
				var ue *accounting.UnsupportedEventError
				if !errors.As(err, &ue) || !errors.Is(err, accounting.ErrUnsupportedEvent) || ue.Path != tt.path {
					t.Errorf("err = %v, want UnsupportedEventError at %q", err, tt.path)
				}
			}
			// State unchanged.
			if after, _ := a.Epsilon(t.Context(), 1e-5); after != before {
				t.Errorf("eps changed from %v to %v after a failed Compose", before, after)
			}
		})
	}
	a := accountantFor(t, gauss(1), Options{})
	for _, d := range []float64{1, -1, nan, math.Inf(1)} { // δ = 0 is in range (accountingtest)
		if _, _, err := a.EpsilonBounds(t.Context(), d); !errors.Is(err, accounting.ErrInvalidParameter) {
			t.Errorf("delta %v: err = %v", d, err)
		}
	}
	for _, e := range []float64{-1, nan} {
		if _, _, err := a.DeltaBounds(t.Context(), e); !errors.Is(err, accounting.ErrInvalidParameter) {
			t.Errorf("eps %v: err = %v", e, err)
		}
	}
}

func TestPLDKind(t *testing.T) {
	var acc accounting.Accountant = accountantFor(t, accounting.NoOp{}, Options{})
	if acc.Kind() != accounting.KindPLD {
		t.Errorf("Kind = %v", acc.Kind())
	}
}

func ExampleAccountant() {
	ctx := context.Background()
	acc, err := New(Options{})
	if err != nil {
		panic(err)
	}
	// DP-SGD: 10,000 steps, sampling rate 0.01, noise multiplier 4.
	if err := acc.Compose(accounting.SubsampledGaussian(4, 0.01, 10000), 1); err != nil {
		panic(err)
	}
	lo, up, err := acc.EpsilonBounds(ctx, 1e-5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.4f <= eps <= %.4f\n", lo, up)
	// Output: 0.9467 <= eps <= 0.9473
}

var benchSinkPLD float64

func BenchmarkPLD(b *testing.B) {
	for _, c := range []struct {
		sigma, q float64
		steps    int
	}{{4, 0.01, 10000}, {4, 0.01, 40000}, {2, 0.05, 2000}, {4, 0.01, 1000000}} {
		e := accounting.SubsampledGaussian(c.sigma, c.q, c.steps)
		b.Run(fmt.Sprintf("Epsilon/sigma=%g,q=%g,T=%d", c.sigma, c.q, c.steps), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				a, _ := New(Options{})
				_ = a.Compose(e, 1)
				v, _ := a.Epsilon(b.Context(), 1e-5)
				benchSinkPLD = v
			}
		})
		b.Run(fmt.Sprintf("EpsilonBounds/sigma=%g,q=%g,T=%d", c.sigma, c.q, c.steps), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				a, _ := New(Options{})
				_ = a.Compose(e, 1)
				lo, up, _ := a.EpsilonBounds(b.Context(), 1e-5)
				benchSinkPLD = lo + up
			}
		})
	}
}

// BenchmarkPLDSlow covers the costly corners: a tiny sampling rate, where
// the per-step grid is at its cap while the loss is concentrated near 0
// (the sweep's 22 s case), and explicit fine grids (--pld-grid).
func BenchmarkPLDSlow(b *testing.B) {
	for _, c := range []struct {
		name     string
		sigma, q float64
		steps    int
		delta, h float64
	}{
		{"tinyq/sigma=0.54,q=6.6e-6,T=13", 0.54, 6.6e-6, 13, 2e-5, 0},
		// A peer's setting, where dp_accounting's PLD took as long.
		{"peer/sigma=0.7985,q=0.0005428,T=821", 0.7985, 0.0005428, 821, 7.795e-10, 0},
		{"tinyq/sigma=0.742,q=2.1e-9,T=7512", 0.742, 2.1e-9, 7512, 2.6e-12, 0},
		{"grid/h=1e-3", 4, 0.01, 10000, 1e-5, 1e-3},
		{"grid/h=3e-4", 4, 0.01, 10000, 1e-5, 3e-4},
		{"grid/h=1e-4", 4, 0.01, 10000, 1e-5, 1e-4},
	} {
		e := accounting.SubsampledGaussian(c.sigma, c.q, c.steps)
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				a, _ := New(Options{GridWidth: c.h})
				_ = a.Compose(e, 1)
				lo, up, _ := a.EpsilonBounds(b.Context(), c.delta)
				benchSinkPLD = lo + up
			}
		})
	}
}

// BenchmarkPLDCalibrate mimics σ calibration: 25 fresh accountants with
// σ between 2 and 8 for q = 0.01, T = 10,000.
func BenchmarkPLDCalibrate(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for k := 0; k < 25; k++ {
			a, _ := New(Options{})
			_ = a.Compose(accounting.SubsampledGaussian(2+6*float64(k)/24, 0.01, 10000), 1)
			v, _ := a.Epsilon(b.Context(), 1e-5)
			benchSinkPLD = v
		}
	}
}

// TestPLDGridWidthOption checks that any user grid gives a certified
// bracket: coarse grids are looser but still contain the fine-grid value.
func TestPLDGridWidthOption(t *testing.T) {
	fine := loadSubsampledRefs(t)["4,0.01,10000"]
	for _, h := range []float64{2e-3, 5e-4, 1e-4} {
		a := accountantFor(t, accounting.SubsampledGaussian(4, 0.01, 10000), Options{GridWidth: h})
		lo, up, err := a.EpsilonBounds(t.Context(), 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if lo > fine[1] || up < fine[0] {
			t.Errorf("h=%g: [%v, %v] disjoint from fine-grid [%v, %v]", h, lo, up, fine[0], fine[1])
		}
		if a.res0(t).h != h {
			t.Errorf("h=%g: grid changed to %g", h, a.res0(t).h)
		}
		t.Logf("h=%g: [%.6f, %.6f]", h, lo, up)
	}
}

// TestPLDComposeInvalidates checks that composing after a query recomputes.
func TestPLDComposeInvalidates(t *testing.T) {
	a := accountantFor(t, accounting.SubsampledGaussian(4, 0.01, 5000), Options{})
	e1, err := a.Epsilon(t.Context(), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose(accounting.SubsampledGaussian(4, 0.01, 5000), 1); err != nil {
		t.Fatal(err)
	}
	lo, up, err := a.EpsilonBounds(t.Context(), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	// 5000 + 5000 steps is the first table case.
	fine := loadSubsampledRefs(t)["4,0.01,10000"]
	if !(e1 < lo) || lo > fine[1] || up < fine[0] {
		t.Errorf("after 2×5000 steps: [%v, %v] (5000 steps: %v), want around [%v, %v]", lo, up, e1, fine[0], fine[1])
	}
}

// TestPLDDeltaGaussianFFT compares δ(ε) bounds of the FFT path with the
// exact Gaussian δ (Balle and Wang 2018, Theorem 8).
func TestPLDDeltaGaussianFFT(t *testing.T) {
	noClosedForm = true
	defer func() { noClosedForm = false }()
	for _, eps := range []float64{0.5, 2, 5} {
		a := accountantFor(t, self(gauss(8), 50), Options{})
		lo, up, err := a.DeltaBounds(t.Context(), eps)
		if err != nil {
			t.Fatal(err)
		}
		want, err := gaussian.Delta(8/math.Sqrt(50), 1, eps)
		if err != nil {
			t.Fatal(err)
		}
		if lo > want || up < want {
			t.Errorf("eps=%g: delta [%g, %g] does not contain %g", eps, lo, up, want)
		}
		if up > 1.2*want || lo < want/1.2 {
			t.Errorf("eps=%g: delta [%g, %g] more than 20%% from %g", eps, lo, up, want)
		}
	}
}
