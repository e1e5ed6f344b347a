package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// truncatedEvent is a TruncatedSubsampledGaussianDpEvent as the ledger and
// --emit-events write it.
type truncatedEvent struct {
	Class string  `json:"class_name"`
	N     int     `json:"dataset_size"`
	Q     float64 `json:"sampling_probability"`
	Cap   int     `json:"truncated_batch_size"`
	Sigma float64 `json:"noise_multiplier"`
}

// TestTrainTruncatedPoissonMatchesEps: train --sampling truncated-poisson
// --max-batch 110 --eps 2 on digits (1,437 examples, expected lots of 100,
// 2 epochs of 15 steps) calibrates σ as dpcalc sigma does for the same run
// (--batch 100 --n 1437 --steps 30), its ledger is 30 ×
// TruncatedSubsampledGaussianDpEvent{1437, 100/1437, 110, σ}, exactly the
// events dpcalc eps --emit-events writes for those flags, and dpcalc eps
// --ledger gives the run's ε, at most 2, digit for digit with eps on the
// flags.
func TestTrainTruncatedPoissonMatchesEps(t *testing.T) {
	ck := filepath.Join(t.TempDir(), "run.ckpt")
	out, stderr, code := runCLI("train", "--json", "--dataset", "digits", "--sampling", "truncated-poisson", "--max-batch", "110",
		"--eps", "2", "--epochs", "2", "--hidden", "8", "--seed", "1", "--quiet", "--checkpoint", ck)
	if code != 0 {
		t.Fatalf("train: exit %d: %s", code, stderr)
	}
	var tr struct {
		Rows     []allocRow `json:"rows"`
		Training struct {
			Steps int     `json:"steps"`
			Sigma float64 `json:"noise_multiplier"`
			Led   struct {
				Segments []struct {
					Event truncatedEvent `json:"event"`
					Count int            `json:"count"`
				} `json:"segments"`
			} `json:"ledger"`
		} `json:"training"`
	}
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatal(err)
	}
	r := tr.Training
	flags := []string{"--batch", "100", "--n", "1437", "--steps", "30", "--sampling", "truncated-poisson", "--max-batch", "110"}
	sout, stderr, code := runCLI(append([]string{"sigma", "--json", "--eps", "2"}, flags...)...)
	if code != 0 {
		t.Fatalf("sigma: exit %d: %s", code, stderr)
	}
	var sg struct{ Rows []allocRow }
	if err := json.Unmarshal([]byte(sout), &sg); err != nil {
		t.Fatal(err)
	}
	// dpcalc sigma measured 2.046777537815982 here.
	if len(sg.Rows) != 1 || sg.Rows[0].Value != r.Sigma || r.Sigma < 2.04 || r.Sigma > 2.05 {
		t.Errorf("train calibrated σ %v, dpcalc sigma %+v; want equal, about 2.0468", r.Sigma, sg.Rows)
	}
	sigma := strconv.FormatFloat(r.Sigma, 'g', -1, 64)
	events := filepath.Join(t.TempDir(), "events.json")
	eout, stderr, code := runCLI(append([]string{"eps", "--json", "--sigma", sigma, "--emit-events", events}, flags...)...)
	if code != 0 {
		t.Fatalf("eps: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	var emitted struct {
		Event truncatedEvent `json:"event"`
		Count int            `json:"count"`
	}
	if err := json.Unmarshal(b, &emitted); err != nil {
		t.Fatal(err)
	}
	want := truncatedEvent{"TruncatedSubsampledGaussianDpEvent", 1437, 100.0 / 1437, 110, r.Sigma}
	if r.Steps != 30 || len(r.Led.Segments) != 1 || r.Led.Segments[0].Event != want || r.Led.Segments[0].Count != 30 {
		t.Errorf("%d steps, ledger %+v; want 30 × %+v", r.Steps, r.Led.Segments, want)
	}
	if emitted.Event != want || emitted.Count != 30 {
		t.Errorf("eps --emit-events %+v × %d; want the ledger's 30 × %+v", emitted.Event, emitted.Count, want)
	}
	lout, stderr, code := runCLI("eps", "--json", "--ledger", ck+".ledger")
	if code != 0 {
		t.Fatalf("eps --ledger: exit %d: %s", code, stderr)
	}
	var fromFlags, fromLedger struct{ Rows []allocRow }
	if json.Unmarshal([]byte(eout), &fromFlags) != nil || json.Unmarshal([]byte(lout), &fromLedger) != nil || len(fromFlags.Rows) != 1 || len(fromLedger.Rows) != 1 {
		t.Fatalf("eps rows: %s / %s", eout, lout)
	}
	fl, le := fromFlags.Rows[0], fromLedger.Rows[0]
	if fl.Epsilon == nil || le.Epsilon == nil || *fl.Epsilon != *le.Epsilon || *le.Epsilon > 2 || !eqPtr(fl.Lower, le.Lower) {
		t.Errorf("eps on the flags %+v, on the ledger %+v; want the same ε ≤ 2", fl, le)
	}
	for _, row := range tr.Rows {
		if row.Accountant == "pld" && (row.Epsilon == nil || *row.Epsilon != *fl.Epsilon) {
			t.Errorf("train's pld row %+v, eps %v", row, *fl.Epsilon)
		}
	}
}

// TestTrainTruncatedPoissonFlags: --max-batch and truncated-poisson need
// each other, the cap is in [1, N], canaries are refused, each with exit 2
// and one line naming the flag ({"error": ...} with --json); a resume with
// another cap is refused naming --max-batch, and a resume to 3 epochs has
// paid 45 steps.
func TestTrainTruncatedPoissonFlags(t *testing.T) {
	base := []string{"train", "--dataset", "digits", "--sigma", "1", "--epochs", "1", "--quiet"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-batch", "110"}, "--max-batch is for --sampling truncated-poisson"},
		{[]string{"--sampling", "shuffle", "--max-batch", "110"}, "--max-batch is for --sampling truncated-poisson"},
		{[]string{"--sampling", "truncated-poisson"}, "--sampling truncated-poisson needs --max-batch"},
		{[]string{"--sampling", "truncated-poisson", "--max-batch", "0"}, "invalid --max-batch: 0, want >= 1"},
		{[]string{"--sampling", "truncated-poisson", "--max-batch", "5000"}, "invalid --max-batch: 5000, want in [1, 1437]"},
		{[]string{"--sampling", "truncated-poisson", "--max-batch", "110", "--canaries", "10"}, "invalid --sampling: truncated-poisson, want poisson with canaries"},
	} {
		_, stderr, code := runCLI(append(append([]string(nil), base...), tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
		out, _, code := runCLI(append(append([]string{"--json"}, base...), tc.args...)...)
		var e struct{ Error string }
		if json.Unmarshal([]byte(out), &e) != nil || code != 2 || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%v --json: exit %d, %q; want 2 and {\"error\": ...%q}", tc.args, code, out, tc.want)
		}
	}

	ck := filepath.Join(t.TempDir(), "run.ckpt")
	args := []string{"train", "--json", "--dataset", "digits", "--sampling", "truncated-poisson", "--max-batch", "110", "--sigma", "2",
		"--hidden", "8", "--seed", "1", "--quiet", "--checkpoint", ck}
	if _, stderr, code := runCLI(append(args, "--epochs", "1")...); code != 0 {
		t.Fatalf("first session: exit %d: %s", code, stderr)
	}
	_, stderr, code := runCLI("train", "--dataset", "digits", "--sampling", "truncated-poisson", "--max-batch", "120", "--checkpoint", ck, "--resume", "--quiet")
	if code != 2 || !strings.Contains(stderr, "--max-batch") {
		t.Errorf("resume with --max-batch 120: exit %d, stderr %q; want 2 naming --max-batch", code, stderr)
	}
	out, stderr, code := runCLI("train", "--json", "--dataset", "digits", "--checkpoint", ck, "--resume", "--epochs", "3", "--quiet")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	var r trainJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Result.Steps != 45 || len(r.Result.Ledger.Segments) != 1 || r.Result.Ledger.Segments[0].Count != 45 {
		t.Errorf("resumed run: %d steps, ledger %+v; want 45 steps paid", r.Result.Steps, r.Result.Ledger.Segments)
	}
}
