package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/internal/cli"
)

// customRefs holds testdata/custom/references.json (gen.py, mpmath).
type customRefs struct {
	RR       customRef `json:"rr"`
	Gaussian customRef `json:"gaussian"`
	Approx   customRef `json:"approx"`
	Pure     struct {
		customRef
		KOV [][2]any `json:"kov"`
	} `json:"pure"`
}

type customRef struct {
	Delta     float64 `json:"delta"`
	Epsilon   string  `json:"epsilon"`
	AtEpsilon float64 `json:"at_epsilon"`
	DeltaAt   string  `json:"delta_at"`
}

func customFile(name string) string { return filepath.Join("..", "..", "testdata", "custom", name) }

func loadCustomRefs(t *testing.T) customRefs {
	t.Helper()
	b, err := os.ReadFile(customFile("references.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r customRefs
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// customRow runs args with --json and returns the one row of accountant.
func customRow(t *testing.T, accountant string, args ...string) cli.OutputRow {
	t.Helper()
	args = append(args, "--accountant", accountant, "--json")
	stdout, stderr, code := runCLI(args...)
	o, err := parseOutput(stdout)
	if err != nil || code != 0 || len(o.Rows) != 1 {
		t.Fatalf("%v: exit %d, %v\n%s%s", args, code, err, stdout, stderr)
	}
	return o.Rows[0]
}

// TestCustomReferences: pld's certified bracket of a supplied PMF or
// profile contains the exact ε and δ of the mechanism it describes
// (mpmath, testdata/custom/gen.py): 30-fold binary randomized response
// given as a PMF on its grid (exact), 25-fold pure 0.3-DP and
// (0.3, 1e-6)-DP given as profiles (Kairouz et al.'s optimal composition,
// which the pair attains);
// the pessimistic PMF of the Gaussian is above the Gaussian's exact ε and
// close to it; rdp's bounds are above the exact values.
func TestCustomReferences(t *testing.T) {
	refs := loadCustomRefs(t)
	for _, c := range []struct {
		name, file string
		ref        customRef
		exact      bool    // the PMF or profile is the mechanism's own: the pair's lower end is below the exact ε
		rel        float64 // pld's upper end within this of the exact ε: the grid of pld (and of the Gaussian's PMF)
		rdp        bool
	}{
		{"randomized response", "rr_pmf.json", refs.RR, true, 2e-3, true},
		{"pure profile", "pure_profile.json", refs.Pure.customRef, true, 2e-3, true},
		{"(ε, δ) profile", "approx_profile.json", refs.Approx, true, 2e-3, false},
		{"pessimistic Gaussian PMF", "gaussian_pmf.json", refs.Gaussian, false, 5e-3, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := num(t, c.ref.Epsilon)
			delta := strconv.FormatFloat(c.ref.Delta, 'g', -1, 64)
			r := customRow(t, "pld", "eps", "--events", customFile(c.file), "--delta", delta)
			if r.EpsilonUpper == nil || *r.EpsilonUpper < want || *r.EpsilonUpper > want*(1+c.rel) {
				t.Errorf("pld ε upper %v, want in [%g, %g]", r.EpsilonUpper, want, want*(1+c.rel))
			}
			if c.exact && (r.PairEpsilonLower == nil || *r.PairEpsilonLower > want) {
				t.Errorf("pld pair's lower end %v above the exact ε %g", r.PairEpsilonLower, want)
			}
			d := customRow(t, "pld", "delta", "--events", customFile(c.file), "--eps", strconv.FormatFloat(c.ref.AtEpsilon, 'g', -1, 64))
			if wd := num(t, c.ref.DeltaAt); d.Delta == nil || *d.Delta < wd || *d.Delta > wd*1.02 {
				t.Errorf("pld δ(%g) = %v, want in [%g, %g]", c.ref.AtEpsilon, d.Delta, wd, wd*1.02)
			}
			if c.rdp {
				r := customRow(t, "rdp", "eps", "--events", customFile(c.file), "--delta", delta)
				if r.Epsilon == nil || *r.Epsilon < want || *r.Epsilon > want*1.1 {
					t.Errorf("rdp ε %v, want in [%g, %g]", r.Epsilon, want, want*1.1)
				}
			}
		})
	}
}

// TestCustomCurveGaussian: the Gaussian's RDP curve (σ 2) supplied at
// orders 1.5..256 and composed 100 times gives rdp at least rdp's own
// Gaussian answer, and within 0.5% of it (the orders between the given
// ones are bounded by the convex envelope): 35.1266 against 35.0673.
func TestCustomCurveGaussian(t *testing.T) {
	got := customRow(t, "rdp", "eps", "--events", customFile("gaussian_curve.json"), "--delta", "1e-5")
	own := customRow(t, "rdp", "eps", "--sigma", "2", "--q", "1", "--steps", "100", "--delta", "1e-5")
	if got.Epsilon == nil || own.Epsilon == nil || *got.Epsilon < *own.Epsilon || *got.Epsilon > *own.Epsilon*1.005 {
		t.Errorf("curve's ε %v, Gaussian's %v: want the curve's within [1, 1.005] times", got.Epsilon, own.Epsilon)
	}
	// pld bounds the curve through the profile it implies: a finite bound,
	// never below the Gaussian's exact ε (19.74 at σ 0.2, q 1, one step).
	p := customRow(t, "pld", "eps", "--events", customFile("gaussian_curve.json"), "--delta", "1e-5")
	exact := customRow(t, "pld", "eps", "--sigma", "0.2", "--q", "1", "--steps", "1", "--delta", "1e-5")
	if p.EpsilonUpper == nil || exact.EpsilonUpper == nil || *p.EpsilonUpper < *exact.EpsilonUpper {
		t.Errorf("pld of the curve %v, of the Gaussian %v", p.EpsilonUpper, exact.EpsilonUpper)
	}
}

// TestCustomComposed: a supplied PMF composed with 1000 Poisson-sampled
// Gaussian steps in one events file gives what the same pair gives as a
// dpcalc event (randomized response at ε 0.5 is the pair of an (0.5, 0)
// guarantee), in pld, and rdp of the RDP curve of the unsampled Gaussian
// composed with the sampled one is at least rdp's answer for the events
// dpcalc knows.
func TestCustomComposed(t *testing.T) {
	dir := t.TempDir()
	known := filepath.Join(dir, "known.json")
	b, err := os.ReadFile(customFile("composed.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	first := ev["events"].([]any)[0].(map[string]any)
	first["event"] = map[string]any{"class_name": "EpsilonDeltaDpEvent", "epsilon": 0.5, "delta": 0}
	out, _ := json.Marshal(ev)
	if err := os.WriteFile(known, out, 0o600); err != nil {
		t.Fatal(err)
	}
	got := customRow(t, "pld", "eps", "--events", customFile("composed.json"))
	want := customRow(t, "pld", "eps", "--events", known)
	if got.EpsilonUpper == nil || want.EpsilonUpper == nil || *got.EpsilonUpper < *want.EpsilonUpper*(1-1e-3) || *got.EpsilonUpper > *want.EpsilonUpper*(1+1e-3) {
		t.Errorf("pld: custom %v, known %v", got.EpsilonUpper, want.EpsilonUpper)
	}
	// rdp: the Gaussian (σ 1) as a curve at orders 1.5..256 beside 1000
	// Poisson-sampled steps.
	curve := filepath.Join(dir, "curve.json")
	var orders, vals []string
	for _, a := range []float64{1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 48, 64, 128, 256} {
		orders = append(orders, strconv.FormatFloat(a, 'g', -1, 64))
		vals = append(vals, strconv.FormatFloat(a/2, 'g', -1, 64))
	}
	sampled := `{"class_name":"SelfComposedDpEvent","count":1000,"event":{"class_name":"PoissonSampledDpEvent","sampling_probability":0.01,"event":{"class_name":"GaussianDpEvent","noise_multiplier":1}}}`
	withCurve := `{"class_name":"ComposedDpEvent","events":[{"module_name":"dpcalc","class_name":"RdpCurveDpEvent","orders":[` +
		strings.Join(orders, ",") + `],"rdp":[` + strings.Join(vals, ",") + `]},` + sampled + `]}`
	if err := os.WriteFile(curve, []byte(withCurve), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(known, []byte(`{"class_name":"ComposedDpEvent","events":[{"class_name":"GaussianDpEvent","noise_multiplier":1},`+sampled+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	gr := customRow(t, "rdp", "eps", "--events", curve)
	wr := customRow(t, "rdp", "eps", "--events", known)
	if gr.Epsilon == nil || wr.Epsilon == nil || *gr.Epsilon < *wr.Epsilon || *gr.Epsilon > *wr.Epsilon*1.01 {
		t.Errorf("rdp: curve %v, Gaussian %v: want within [1, 1.01] times", *gr.Epsilon, *wr.Epsilon)
	}
}

// TestCustomRefusals: each accountant without a sound bound refuses a
// custom event in its row, naming the event (zcdp and ac bound only the
// custom events that are ε-DP: a profile with δ = 0 at some ε, a
// pessimistic PMF with no mass at infinite loss); a PMF not stated
// pessimistic is refused by pld and rdp naming the field.
func TestCustomRefusals(t *testing.T) {
	dir := t.TempDir()
	opt := filepath.Join(dir, "opt.json")
	if err := os.WriteFile(opt, []byte(`{"module_name":"dpcalc","class_name":"PldPmfDpEvent","value_discretization_interval":0.5,`+
		`"pessimistic_estimate":false,"symmetric":true,"remove_lower_loss":0,"remove_probs":[0.5,0,0.5],"remove_infinity_mass":0}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, accountant, want string
	}{
		{customFile("gaussian_curve.json"), "zcdp", "RdpCurve"},
		{customFile("gaussian_curve.json"), "ma", "RdpCurve"},
		{customFile("gaussian_curve.json"), "ac", "RdpCurve"},
		{customFile("gaussian_pmf.json"), "zcdp", "PldPmf"},
		{customFile("gaussian_pmf.json"), "ac", "PldPmf"},
		{customFile("approx_profile.json"), "zcdp", "PrivacyProfile"},
		{customFile("approx_profile.json"), "ac", "PrivacyProfile"},
		{customFile("gaussian_pmf.json"), "rdp", "infinite loss"},
		{opt, "pld", "pessimistic_estimate"},
		{opt, "rdp", "pessimistic_estimate"},
	} {
		stdout, stderr, code := runCLI("eps", "--events", c.file, "--accountant", c.accountant)
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.accountant) {
			t.Errorf("%s %s: exit %d, %q %q; want a one-line refusal naming %q", filepath.Base(c.file), c.accountant, code, stdout, stderr, c.want)
		}
	}
}
