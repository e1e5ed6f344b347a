package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/internal/cli"
)

// writeScores writes a scores CSV: nIn members then nOut non-members, the
// members scoring 1 and the others 0 (perfect separation) unless mixed.
func writeScores(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "scores.csv")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// perfectScores: 1,000 canaries, the first 100 members scoring 1, the rest
// non-members scoring 0.
func perfectScores() string {
	var b strings.Builder
	b.WriteString("score,member\n")
	for i := 0; i < 1000; i++ {
		if i < 100 {
			b.WriteString("1,1\n")
		} else {
			b.WriteString("0,0\n")
		}
	}
	return b.String()
}

type auditRunJSON struct {
	OneRun, FDP, ClopperPearson, Certified *cli.OutputRow
}

// auditRows reads the rows of audit-run's (or train --canaries') --json
// output by accountant.
func auditRows(t *testing.T, out string) auditRunJSON {
	t.Helper()
	var r auditRunJSON
	rows := decodeOutput(t, out).Rows
	for i := range rows {
		switch rows[i].Accountant {
		case "one-run":
			r.OneRun = &rows[i]
		case "fdp":
			r.FDP = &rows[i]
		case "clopper-pearson":
			r.ClopperPearson = &rows[i]
		case "pld":
			r.Certified = &rows[i]
		}
	}
	return r
}

// TestAuditRunPublicCheck: 1,000 canaries, 100 guesses all right, 95%:
// ε ≥ 3.49297 at δ = 0 and 3.46538 at δ = 1e-5, from a CSV and from the
// same data as JSON.
func TestAuditRunPublicCheck(t *testing.T) {
	csvPath := writeScores(t, perfectScores())
	var js strings.Builder
	js.WriteString("[")
	for i := 0; i < 1000; i++ {
		if i > 0 {
			js.WriteString(",")
		}
		m := 0
		if i < 100 {
			m = 1
		}
		fmt.Fprintf(&js, `{"score": %d, "member": %d}`, m, m)
	}
	js.WriteString("]")
	jsonPath := filepath.Join(t.TempDir(), "scores.json")
	if err := os.WriteFile(jsonPath, []byte(js.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{csvPath, jsonPath} {
		for _, tc := range []struct {
			delta string
			want  string
		}{{"0", "3.49297"}, {"1e-5", "3.46538"}} {
			out, stderr, code := runCLI("audit-run", "--scores", path, "--guesses", "100", "--delta", tc.delta, "--json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			r := auditRows(t, out)
			if r.OneRun == nil || r.OneRun.Value == nil || r.OneRun.Guesses == nil || r.OneRun.Correct == nil {
				t.Fatalf("no one-run row: %s", out)
			}
			if got := fmt.Sprintf("%.5f", *r.OneRun.Value); got != tc.want || *r.OneRun.Guesses != 100 || *r.OneRun.Correct != 100 || !r.OneRun.LowerBound {
				t.Errorf("%s, δ = %s: ε ≥ %s (%d/%d), want %s (100/100)", filepath.Base(path), tc.delta, got, *r.OneRun.Correct, *r.OneRun.Guesses, tc.want)
			}
		}
	}
}

// TestAuditRunCertified: with the run's σ, q and steps the certified
// interval is printed beside the bounds; a lower bound above the certified
// upper bound exits 1 (the claim is refuted).
func TestAuditRunCertified(t *testing.T) {
	path := writeScores(t, perfectScores())
	out, stderr, code := runCLI("audit-run", "--scores", path, "--sigma", "0.5", "--q", "0.1", "--steps", "1000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"empirical ε ≥ (one run, at δ=1e-05, 95% confidence)", "certified: true ε at δ=1e-05", "Gaussian f-DP"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// σ = 20 for 10 steps at q = 0.01 is far below ε = 3.4: refuted.
	out, stderr, code = runCLI("audit-run", "--scores", path, "--sigma", "20", "--q", "0.01", "--steps", "10", "--json")
	if code != 1 || !strings.Contains(stderr, "exceeds the certified upper bound") {
		t.Errorf("exit %d, stderr %q; want 1 and the refutation", code, stderr)
	}
	if r := auditRows(t, out); r.Certified == nil || r.Certified.EpsilonUpper == nil || decodeOutput(t, out).Error == "" {
		t.Fatalf("JSON %q: no certified row or no error", out)
	}
}

// TestAuditRunBadInput: bad input is one line naming the parameter, exit
// 2, and {"error": ...} with --json.
func TestAuditRunBadInput(t *testing.T) {
	good := writeScores(t, "score,member\n1,1\n0,0\n")
	for _, tc := range []struct {
		name string
		body string // scores file ("" = good)
		args []string
		want string
	}{
		{"no header", "1,1\n0,0\n", nil, "want the columns score and member"},
		{"member 2", "score,member\n1,2\n", nil, `line 2: member "2" is not 0 or 1`},
		{"NaN score", "score,member\nNaN,1\n", nil, `line 2: score "NaN" is not a finite number`},
		{"Inf score", "score,member\n+Inf,0\n", nil, "not a finite number"},
		{"empty", "score,member\n", nil, "no canaries"},
		{"JSON without member", `[{"score": 1}]`, nil, "want both score and member"},
		{"JSON not an array", `{"score": 1}`, nil, "JSON: want an array"},
		{"confidence 1", "", []string{"--confidence", "1"}, "invalid --confidence: 1, want in (0, 1)"},
		{"delta 1", "", []string{"--delta", "1"}, "invalid --delta: 1, want in [0, 1)"},
		{"guesses above m", "", []string{"--guesses", "3"}, "invalid --guesses: 3, want at most the number of canaries (2)"},
		{"negative guesses", "", []string{"--guesses", "-1"}, "invalid --guesses: -1"},
		{"sigma without q", "", []string{"--sigma", "1"}, "needs all of --sigma, --q and --steps"},
		{"ledger and sigma", "", []string{"--sigma", "1", "--ledger", "x"}, "not both"},
		{"bad q", "", []string{"--sigma", "1", "--q", "2", "--steps", "3"}, "invalid --q: 2"},
		{"missing ledger", "", []string{"--ledger", "/nonexistent/ledger"}, "invalid --ledger"},
	} {
		path := good
		if tc.body != "" {
			path = writeScores(t, tc.body)
		}
		args := append([]string{"audit-run", "--scores", path, "--json"}, tc.args...)
		out, stderr, code := runCLI(args...)
		var e struct{ Error string }
		if code != 2 || !strings.Contains(stderr, tc.want) || json.Unmarshal([]byte(out), &e) != nil || !strings.Contains(e.Error, tc.want) ||
			strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 2 and one line containing %q", tc.name, code, stderr, out, tc.want)
		}
	}
}

// TestTrainCanaries: `train --canaries 1000 --dataset digits --eps 1`
// prints the empirical bounds beside the certified interval (a short run:
// 5 epochs), writes --canary-scores for audit-run, and refuses the flags
// it cannot honour. σ is calibrated for the run on 1,437 + 1,000 slots
// (q = 100/2437, 25 steps an epoch): it equals `dpcalc sigma --batch 100
// --n 2437 --steps 125`, not the σ for 1,437 examples (q = 100/1437, 75
// steps).
func TestTrainCanaries(t *testing.T) {
	scores := filepath.Join(t.TempDir(), "scores.csv")
	out, stderr, code := runCLI("train", "--canaries", "1000", "--dataset", "digits", "--eps", "1", "--epochs", "5",
		"--seed", "1", "--canary-seed", "2", "--quiet", "--canary-scores", scores)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"1000 input canaries, 485 included", "empirical ε ≥ (one run, at δ=1e-05, 95% confidence)",
		"empirical ε ≥ (one run, Gaussian f-DP curve)", "certified: true ε at δ=1e-05", "q, steps                                            │ 0.0410341, 125 of 125"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(scores)
	if err != nil || !strings.HasPrefix(string(b), "score,member\n") || strings.Count(string(b), "\n") != 1001 {
		t.Fatalf("--canary-scores: %v, %d lines", err, strings.Count(string(b), "\n"))
	}
	if _, stderr, code := runCLI("audit-run", "--scores", scores); code != 0 {
		t.Errorf("audit-run on train's scores: exit %d: %s", code, stderr)
	}
	out, stderr, code = runCLI("train", "--canaries", "1000", "--dataset", "digits", "--eps", "1", "--epochs", "5",
		"--seed", "1", "--canary-seed", "2", "--quiet", "--json")
	var tr struct {
		NoiseMultiplier float64 `json:"noise_multiplier"`
	}
	if code != 0 || json.Unmarshal(decodeOutput(t, out).Training, &tr) != nil || auditRows(t, out).Certified == nil || auditRows(t, out).OneRun == nil {
		t.Fatalf("--json: exit %d, %s\n%s", code, stderr, out)
	}
	// train calibrates with the default accountant, pld.
	sig, _, _ := runCLI("sigma", "--eps", "1", "--batch", "100", "--n", "2437", "--steps", "125", "--accountant", "pld", "--json")
	if want := decodeOutput(t, sig).Rows[0].Value; want == nil || tr.NoiseMultiplier != *want {
		t.Errorf("σ = %v, want %v, pld's σ of 125 steps at q = 100/2437", tr.NoiseMultiplier, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--canaries", "0"}, "invalid --canaries: 0, want in [1, 1048576]"},
		{[]string{"--canaries", "10", "--checkpoint", filepath.Join(t.TempDir(), "ck")}, "--canaries cannot be combined with --checkpoint"},
		{[]string{"--canaries", "10", "--pca", "5", "--pca-sigma", "4"}, "--canaries cannot be combined with --pca"},
		{[]string{"--canaries", "10", "--sampling", "shuffle"}, "--canaries needs --sampling poisson"},
		{[]string{"--canary-kind", "gradient"}, "need --canaries M"},
	} {
		args := append([]string{"train", "--dataset", "digits", "--eps", "1", "--epochs", "1", "--quiet"}, tc.args...)
		if _, stderr, code := runCLI(args...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
