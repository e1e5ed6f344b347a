package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type allocRow struct {
	Accountant string   `json:"accountant"`
	Quantity   string   `json:"quantity"`
	Value      float64  `json:"value"`
	Sigma      float64  `json:"sigma"`
	Q          float64  `json:"q"`
	Steps      int      `json:"steps"`
	Sampling   string   `json:"sampling"`
	Epsilon    *float64 `json:"epsilon"`
	Lower      *float64 `json:"epsilon_lower"`
	PairLower  *float64 `json:"pair_epsilon_lower"`
}

// TestTrainRandomAllocationMatchesEps: train --sampling random-allocation
// --k 2 --eps 2 on digits (1,437 examples, lots of 100: t = ⌈2·1437/100⌉ =
// 29 steps an epoch) calibrates σ as dpcalc sigma does for the same flags,
// its ledger holds one RandomAllocation{2, 29} event per epoch, and every ε
// row it reports is the row dpcalc eps gives for --batch 100 --n 1437
// --epochs 2 --sampling random-allocation --k 2 at that σ, digit for digit
// (the pld interval and its certified lower row included).
func TestTrainRandomAllocationMatchesEps(t *testing.T) {
	out, stderr, code := runCLI("train", "--json", "--dataset", "digits", "--sampling", "random-allocation", "--k", "2",
		"--eps", "2", "--accountant", "rdp", "--epochs", "2", "--hidden", "8", "--seed", "1", "--quiet")
	if code != 0 {
		t.Fatalf("train: exit %d: %s", code, stderr)
	}
	var tr struct {
		Rows     []allocRow `json:"rows"`
		Training struct {
			Steps int     `json:"steps"`
			Sigma float64 `json:"noise_multiplier"`
			Acc   float64 `json:"test_accuracy"`
			Led   struct {
				Segments []struct {
					Event struct {
						Class    string `json:"class_name"`
						Selected int    `json:"num_selected"`
						Steps    int    `json:"num_steps"`
						Event    struct {
							Sigma float64 `json:"noise_multiplier"`
						} `json:"event"`
					} `json:"event"`
					Count int `json:"count"`
				} `json:"segments"`
			} `json:"ledger"`
		} `json:"training"`
	}
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatal(err)
	}
	r := tr.Training
	if r.Steps != 58 || len(r.Led.Segments) != 1 {
		t.Fatalf("%d steps, ledger %+v; want 58 steps, one segment", r.Steps, r.Led.Segments)
	}
	if s := r.Led.Segments[0]; s.Count != 2 || s.Event.Class != "RandomAllocationDpEvent" || s.Event.Selected != 2 || s.Event.Steps != 29 || s.Event.Event.Sigma != r.Sigma {
		t.Errorf("ledger segment %+v; want 2 × RandomAllocationDpEvent{2 of 29, σ %g}", s, r.Sigma)
	}
	flags := []string{"--batch", "100", "--n", "1437", "--epochs", "2", "--sampling", "random-allocation", "--k", "2"}
	sout, stderr, code := runCLI(append([]string{"sigma", "--json", "--eps", "2", "--accountant", "rdp"}, flags...)...)
	if code != 0 {
		t.Fatalf("sigma: exit %d: %s", code, stderr)
	}
	var sg struct{ Rows []allocRow }
	if err := json.Unmarshal([]byte(sout), &sg); err != nil {
		t.Fatal(err)
	}
	// dpcalc sigma measured 1.3798036913715916 here.
	if len(sg.Rows) != 1 || sg.Rows[0].Value != r.Sigma || r.Sigma < 1.37 || r.Sigma > 1.39 {
		t.Errorf("train calibrated σ %v, dpcalc sigma %+v; want equal, about 1.3798", r.Sigma, sg.Rows)
	}
	if len(tr.Rows) < 3 {
		t.Fatalf("train reported %d rows: %+v", len(tr.Rows), tr.Rows)
	}
	sigma := strconv.FormatFloat(r.Sigma, 'g', -1, 64)
	lower := false                 // pld's interval, its lower end certified for the run
	eps := map[string][]allocRow{} // dpcalc eps's rows, by accountant
	for _, row := range tr.Rows {
		if row.Accountant == "pld" && row.Lower != nil && row.PairLower != nil {
			lower = true
		}
		if eps[row.Accountant] == nil {
			eout, stderr, code := runCLI(append([]string{"eps", "--json", "--sigma", sigma, "--accountant", row.Accountant}, flags...)...)
			if code != 0 {
				t.Fatalf("eps --accountant %s: exit %d: %s", row.Accountant, code, stderr)
			}
			var ep struct{ Rows []allocRow }
			if err := json.Unmarshal([]byte(eout), &ep); err != nil {
				t.Fatal(err)
			}
			eps[row.Accountant] = ep.Rows
		}
		found := false
		for _, e := range eps[row.Accountant] {
			if e.Accountant == row.Accountant && e.Quantity == row.Quantity {
				found = true
				if e.Value != row.Value || e.Q != row.Q || e.Steps != row.Steps || e.Sampling != row.Sampling || !eqPtr(e.Lower, row.Lower) || !eqPtr(e.PairLower, row.PairLower) {
					t.Errorf("%s %s: train %+v, eps %+v; want the same", row.Accountant, row.Quantity, row, e)
				}
			}
		}
		if !found {
			t.Errorf("%s %s: no such row from dpcalc eps: %+v", row.Accountant, row.Quantity, eps[row.Accountant])
		}
	}
	if !lower {
		t.Errorf("no pld interval with a lower end certified for the run in train's report: %+v", tr.Rows)
	}
}

func eqPtr(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// TestTrainRandomAllocationBadK: a bad --k is refused before training with
// exit 2 and one line naming --k, as {"error": ...} with --json.
func TestTrainRandomAllocationBadK(t *testing.T) {
	base := []string{"train", "--dataset", "digits", "--sigma", "1", "--epochs", "1", "--quiet"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sampling", "random-allocation", "--k", "0"}, "invalid --k: 0, want >= 1"},
		{[]string{"--sampling", "random-allocation", "--k", "-3"}, "invalid --k: -3, want >= 1"},
		{[]string{"--sampling", "balls-in-bins", "--k", "2"}, "--k is for --sampling random-allocation"},
		{[]string{"--k", "2"}, "--k is for --sampling random-allocation"},
		{[]string{"--sampling", "random-allocation", "--k", "20000"}, "invalid --k: 20000, want in [1, 11675]"},
		{[]string{"--sampling", "balls-in-bins", "--canaries", "10"}, "invalid --sampling: balls-in-bins, want poisson with canaries"},
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
}

// TestTrainRandomAllocationResume: a checkpointed random-allocation run
// refuses a resume with another --k (exit 2 naming it) and, resumed to 2
// epochs, has paid 2 RandomAllocation epochs in its ledger.
func TestTrainRandomAllocationResume(t *testing.T) {
	ck := filepath.Join(t.TempDir(), "run.ckpt")
	args := []string{"train", "--json", "--dataset", "digits", "--sampling", "random-allocation", "--k", "2", "--sigma", "2",
		"--hidden", "8", "--seed", "1", "--quiet", "--checkpoint", ck}
	if _, stderr, code := runCLI(append(args, "--epochs", "1")...); code != 0 {
		t.Fatalf("first session: exit %d: %s", code, stderr)
	}
	_, stderr, code := runCLI("train", "--dataset", "digits", "--sampling", "random-allocation", "--k", "3", "--checkpoint", ck, "--resume", "--quiet")
	if code != 2 || !strings.Contains(stderr, "--k") {
		t.Errorf("resume with --k 3: exit %d, stderr %q; want 2 naming --k", code, stderr)
	}
	out, stderr, code := runCLI("train", "--json", "--dataset", "digits", "--checkpoint", ck, "--resume", "--epochs", "2", "--quiet")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	var r trainJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Result.Steps != 58 || len(r.Result.Ledger.Segments) != 1 || r.Result.Ledger.Segments[0].Count != 2 {
		t.Errorf("resumed run: %d steps, ledger %+v; want 58 steps, 2 epochs paid", r.Result.Steps, r.Result.Ledger.Segments)
	}
}
