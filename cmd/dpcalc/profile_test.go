package main

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/calibrate/profile"
	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/internal/render"
)

var mnistArgs = []string{"profile", "--sigma", "4", "--q", "0.01", "--epochs", "100", "--deltas", "1e-5,1e-6", "--fpr", "0.01,0.1", "--eps-range", "0:1", "--points", "3"}

// TestProfileSameAsAPI checks that the CLI prints exactly the numbers of
// calibrate/profile.Compute for the same run (JSON, to the bit; CSV, to
// the shortest round-trip representation).
func TestProfileSameAsAPI(t *testing.T) {
	pld := func() (accounting.Method, error) { return registry.New(accounting.KindPLD, registry.Options{}) }
	want, err := profile.Compute(t.Context(), pld, calibrate.Training{SamplingRate: 0.01, Steps: 10000}.Event(4),
		profile.Options{Deltas: []float64{1e-5, 1e-6}, FPRs: []float64{0.01, 0.1}, Epsilons: []float64{0, 0.5, 1}})
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(append(mnistArgs, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := profileOf(t, stdout)
	if got.Steps != 10000 || got.Accountant != "pld" || !got.Certified || !got.Bounded {
		t.Errorf("steps %d, accountant %s, certified %v, bounded %v", got.Steps, got.Accountant, got.Certified, got.Bounded)
	}
	for i, e := range want.Epsilons {
		if got.Epsilons[i] != e {
			t.Errorf("epsilons[%d] = %+v, want %+v", i, got.Epsilons[i], e)
		}
	}
	for i, d := range want.Deltas {
		if got.Deltas[i] != d {
			t.Errorf("deltas[%d] = %+v, want %+v", i, got.Deltas[i], d)
		}
	}
	for i, a := range want.Attacks {
		if got.Attacks[i] != a {
			t.Errorf("attacks[%d] = %+v, want %+v", i, got.Attacks[i], a)
		}
	}
	if len(got.Tradeoff) != len(want.Curve) || got.Advantage != want.Advantage || got.Accuracy != want.Accuracy {
		t.Errorf("%d curve points, advantage %g, accuracy %g; want %d, %g, %g", len(got.Tradeoff), got.Advantage, got.Accuracy, len(want.Curve), want.Advantage, want.Accuracy)
	}
	if s := "1% false positives catches at most " + render.PctUp(want.Attacks[0].TPR) + "% of members"; !strings.Contains(got.Statements[0], s) {
		t.Errorf("statement %q", got.Statements[0])
	}

	stdout, _, code = runCLI(append(mnistArgs, "--format", "csv")...)
	if code != 0 {
		t.Fatalf("csv: exit %d", code)
	}
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]float64{}
	for _, r := range recs[1:] {
		v, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			t.Fatalf("csv row %v: %v", r, err)
		}
		byKey[r[0]+"@"+r[2]] = v
	}
	for k, w := range map[string]float64{
		"epsilon@1e-05": want.Epsilons[0].Epsilon, "delta@0.5": want.Deltas[1].Delta,
		"max_tpr@0.01": want.Attacks[0].TPR, "advantage@": want.Advantage, "min_fnr@0.5": want.Tradeoff.FNR(0.5),
	} {
		if byKey[k] != w {
			t.Errorf("csv %s = %v, want %v", k, byKey[k], w)
		}
	}
}

// TestProfileOutputFinite runs the boundary cases through every format:
// exit 0, no NaN or Inf anywhere in the output, and JSON that parses.
func TestProfileOutputFinite(t *testing.T) {
	for _, run := range [][]string{
		{"--sigma", "1e-300", "--q", "1", "--steps", "1"},
		{"--sigma", "1e300", "--q", "1", "--steps", "1"},
		{"--sigma", "0.5", "--q", "1", "--steps", "1"},
		{"--sigma", "4", "--q", "0.01", "--epochs", "100", "--accountant", "dpd-zcdp"},
		{"--sigma", "1", "--q", "1e-9", "--steps", "1"},
	} {
		for _, format := range []string{"table", "json", "csv"} {
			args := append(append([]string{"profile"}, run...), "--format", format)
			stdout, stderr, code := runCLI(args...)
			if code != 0 {
				t.Errorf("%v: exit %d: %s", args, code, stderr)
				continue
			}
			for _, bad := range []string{"NaN", "Inf", "inf"} {
				if strings.Contains(stdout, bad) {
					t.Errorf("%v: output contains %q:\n%s", args, bad, stdout)
				}
			}
			if format == "json" {
				if _, err := parseOutput(stdout); err != nil {
					t.Errorf("%v: %v", args, err)
				}
			}
		}
	}
}

func TestProfileNotCertified(t *testing.T) {
	stdout, _, code := runCLI("profile", "--sigma", "4", "--q", "0.01", "--epochs", "100", "--accountant", "dpd-ac", "--fpr", "0.01")
	if code != 0 || !strings.Contains(stdout, "NOT certified") || !strings.Contains(stdout, "Not certified: dpd-ac is a procedure") {
		t.Errorf("exit %d, output:\n%s", code, stdout)
	}
}

func TestProfileBadInput(t *testing.T) {
	base := []string{"profile", "--sigma", "4", "--q", "0.01", "--epochs", "1"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"sigma", []string{"profile", "--sigma", "-1", "--q", "0.01", "--epochs", "1"}, "invalid --sigma: -1"},
		{"q", []string{"profile", "--sigma", "1", "--q", "2", "--epochs", "1"}, "invalid --q: 2"},
		{"delta zero", append(base, "--deltas", "1e-5,0"), "invalid --deltas: 0, want each δ in (0, 1)"},
		{"delta nan", append(base, "--deltas", "NaN"), "invalid --deltas: not a number"},
		{"delta word", append(base, "--deltas", "small"), "--deltas"},
		{"fpr one", append(base, "--fpr", "1"), "invalid --fpr: 1"},
		{"fpr negative", append(base, "--fpr=-0.1"), "invalid --fpr: -0.1"},
		{"eps range reversed", append(base, "--eps-range", "2:1"), "invalid --eps-range"},
		{"eps range inf", append(base, "--eps-range", "0:Inf"), "invalid --eps-range"},
		{"eps list negative", append(base, "--eps-range", "1,-1"), "invalid --eps-range"},
		{"points", append(base, "--points", "1"), "invalid --points: 1"},
		{"plot extension", append(base, "--plot", "x.pdf"), "invalid --plot"},
		{"format", append(base, "--format", "xml"), "--format"},
		{"accountant all", append(base, "--accountant", "all"), "--accountant"},
		{"pld grid", append(base, "--pld-grid", "2"), "invalid --pld-grid: 2"},
		{"too many rates", append(base, "--fpr", strings.Repeat("0.5,", 1000)+"0.5"), "invalid --fpr: 1001 values, want at most 1000"},
		{"too many ε", append(base, "--eps-range", strings.Repeat("1,", 1000)+"1"), "invalid --eps-range: 1001 values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(append(tt.args, "--json")...)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and one line containing %q", code, stderr, tt.want)
			}
			var obj map[string]string
			if err := json.Unmarshal([]byte(stdout), &obj); err != nil || !strings.Contains(obj["error"], tt.want) {
				t.Errorf("stdout %q, want {\"error\": ...}", stdout)
			}
		})
	}
}

// TestProfileFormatJSONError checks that --format json, like --json, gets
// its error as {"error": ...} on stdout.
func TestProfileFormatJSONError(t *testing.T) {
	for _, f := range [][]string{{"--format", "json"}, {"--format=json"}} {
		stdout, _, code := runCLI(append([]string{"profile", "--sigma", "-1", "--q", "0.01", "--epochs", "1"}, f...)...)
		var obj map[string]string
		if err := json.Unmarshal([]byte(stdout), &obj); code != 2 || err != nil || !strings.Contains(obj["error"], "invalid --sigma") {
			t.Errorf("%v: exit %d, stdout %q", f, code, stdout)
		}
	}
}

func TestProfilePlot(t *testing.T) {
	for _, name := range []string{"p.png", "p.svg"} {
		path := filepath.Join(t.TempDir(), name)
		if _, stderr, code := runCLI(append(mnistArgs, "--plot", path)...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) < 1000 {
			t.Errorf("%s: %d bytes, %v", name, len(b), err)
		}
	}
}

// TestProfileTakesEpsRunFlags checks that profile takes every flag of eps
// that describes the run (all but eps's own δ and accountant choice), so
// that a flag added to trainingFlags reaches both commands.
func TestProfileTakesEpsRunFlags(t *testing.T) {
	var c cli.CLI
	k, err := cli.New(&c, io.Discard, io.Discard, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	flags := func(cmd string) map[string]bool {
		out := map[string]bool{}
		for _, n := range k.Model.Children {
			if n.Name == cmd {
				for _, f := range n.Flags {
					out[f.Name] = true
				}
			}
		}
		if len(out) == 0 {
			t.Fatalf("no command %s", cmd)
		}
		return out
	}
	eps, prof := flags("eps"), flags("profile")
	own := map[string]bool{"delta": true, "accountant": true, "pld-grid": true, "ac-sampling": true, "emit-events": true, "emit-format": true}
	for f := range eps {
		if !own[f] && !prof[f] {
			t.Errorf("eps takes --%s, profile does not", f)
		}
	}
	if !eps["sigma"] || !eps["q"] || !eps["epochs"] || !eps["steps"] {
		t.Errorf("eps flags %v, want at least sigma, q, epochs, steps", eps)
	}
}

// TestProfileScheduleAndEvents: profile takes eps's training flags: a
// two-phase --schedule and the same training as an --events file give the
// same profile, equal to the API's on the composed event.
func TestProfileScheduleAndEvents(t *testing.T) {
	two := accounting.Composed{Events: []accounting.Event{
		calibrate.Training{SamplingRate: 0.01, Steps: 500}.Event(1),
		calibrate.Training{SamplingRate: 0.02, Steps: 300}.Event(2),
	}}
	rdp := func() (accounting.Method, error) { return registry.New(accounting.KindRDP, registry.Options{}) }
	opt := profile.Options{Deltas: []float64{1e-5}, FPRs: []float64{0.01}, Epsilons: []float64{0, 1}}
	want, err := profile.Compute(t.Context(), rdp, two, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := accounting.MarshalEvent(two)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "two.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	common := []string{"profile", "--accountant", "rdp", "--deltas", "1e-5", "--fpr", "0.01", "--eps-range", "0,1", "--json"}
	for _, args := range [][]string{
		{"--schedule", "sigma=1,q=0.01,steps=500; sigma=2,q=0.02,steps=300"},
		{"--events", file},
	} {
		stdout, stderr, code := runCLI(append(common, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		got := profileOf(t, stdout)
		if got.Steps != 800 || got.Epsilons[0] != want.Epsilons[0] || got.Attacks[0] != want.Attacks[0] || got.Deltas[1] != want.Deltas[1] {
			t.Errorf("%v: steps %d, ε %+v, attack %+v, δ %+v; want 800, %+v, %+v, %+v", args, got.Steps,
				got.Epsilons[0], got.Attacks[0], got.Deltas[1], want.Epsilons[0], want.Attacks[0], want.Deltas[1])
		}
	}
	if _, stderr, code := runCLI("profile", "--schedule", "sigma=1,q=0.01"); code != 2 || !strings.Contains(stderr, "schedule") {
		t.Errorf("bad schedule: exit %d, %s", code, stderr)
	}
}

// profileOf reads profile's --json rows back into the numbers of a
// profile (those the rows carry: the accountant's, the training's steps).
func profileOf(t *testing.T, stdout string) cli.Profile {
	t.Helper()
	out := decodeOutput(t, stdout)
	var p cli.Profile
	val := func(x *float64) float64 {
		if x == nil {
			return math.Inf(1)
		}
		return *x
	}
	p.Certified = true
	for _, r := range out.Rows {
		p.Accountant = r.Accountant
		if r.Procedure {
			p.Certified = false
		}
		switch r.Quantity {
		case "epsilon":
			p.Steps = *r.Steps
			p.Bounded = r.EpsilonLower != nil
			e := profile.EpsilonAt{Delta: *r.Delta, Epsilon: val(r.Value)}
			if r.EpsilonLower != nil {
				e.Lower = *r.EpsilonLower
			}
			p.Epsilons = append(p.Epsilons, e)
		case "delta":
			d := profile.DeltaAt{Epsilon: *r.Epsilon, Delta: *r.Value}
			if r.DeltaLower != nil {
				d.Lower = *r.DeltaLower
			}
			p.Deltas = append(p.Deltas, d)
		case "max_tpr":
			p.Attacks = append(p.Attacks, profile.Point{FPR: *r.FPR, FNR: *r.FNR, TPR: *r.TPR})
		case "min_fnr":
			p.Tradeoff = append(p.Tradeoff, profile.Point{FPR: *r.FPR, FNR: *r.FNR, TPR: *r.TPR})
		case "advantage":
			p.Advantage = *r.Value
		case "accuracy":
			p.Accuracy = *r.Value
		}
	}
	p.Statements = out.Statements
	return p
}
