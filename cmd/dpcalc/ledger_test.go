package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/cli"
)

// ledgerRow runs eps --ledger with args and --json and returns its row.
func ledgerRow(t *testing.T, args ...string) cli.OutputRow {
	t.Helper()
	stdout, stderr, code := runCLI(append([]string{"eps"}, append(args, "--json")...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	o := decodeOutput(t, stdout)
	if len(o.Rows) != 1 || o.Rows[0].Epsilon == nil {
		t.Fatalf("%v: want one row with ε\n%s", args, stdout)
	}
	return o.Rows[0]
}

// TestLedgerOpacusCheck: an Opacus RDPAccountant's state after 50 steps at
// σ = 3, q = 0.2 gives rdp ε = 2.169 at δ = 1/48000 (the check;
// Opacus itself prints 2.16).
func TestLedgerOpacusCheck(t *testing.T) {
	r := ledgerRow(t, "--ledger", filepath.Join("..", "..", "testdata", "ledger", "opacus_rdp.json"),
		"--delta", "2.0833333333333333e-05", "--accountant", "rdp")
	if got := *r.Epsilon; math.Abs(got-2.169) > 5e-4 {
		t.Errorf("rdp ε = %v, want 2.169 (±5e-4)", got)
	}
	if r.LedgerFormat != "opacus" || !strings.Contains(r.Note, "read Opacus accountant state (mechanism rdp, 1 history entry)") || r.Steps == nil || *r.Steps != 50 {
		t.Errorf("row says format %q, note %q, steps %v", r.LedgerFormat, r.Note, r.Steps)
	}
}

// TestLedgerFormatsAgree: the same two-phase run as an Opacus state, a
// dpcalc training ledger, a dp_accounting DpEvent read by --ledger (also
// from stdin) and by --events, and --schedule gives one ε; each row says
// what it read.
func TestLedgerFormatsAgree(t *testing.T) {
	l := &accounting.Ledger{}
	for _, s := range []struct {
		q, sigma float64
		n        int
	}{{0.01, 1, 5000}, {0.02, 2, 3000}} {
		if err := l.Record(accounting.PoissonSampled{SamplingRate: s.q, Event: accounting.Gaussian{NoiseMultiplier: s.sigma}}, s.n); err != nil {
			t.Fatal(err)
		}
	}
	ledger := filepath.Join(t.TempDir(), "model.ckpt.ledger")
	if err := accounting.SaveLedger(ledger, l); err != nil {
		t.Fatal(err)
	}
	dpevent := filepath.Join("..", "..", "testdata", "dpevent", "py", "two_phase.json")
	want := epsOf(t, "eps", "--schedule", twoPhase)
	for _, tc := range []struct {
		name, file, format, note string
	}{
		{"opacus", filepath.Join("..", "..", "testdata", "ledger", "opacus_two_phase.json"), "opacus", "read Opacus accountant state (mechanism prv, 2 history entries)"},
		{"dpcalc ledger", ledger, "dpcalc-ledger", "read dpcalc training ledger (2 segments, 8000 steps)"},
		{"dp_accounting", dpevent, "dp_accounting", "read dp_accounting DpEvent"},
	} {
		r := ledgerRow(t, "--ledger", tc.file)
		if *r.Epsilon != want || r.LedgerFormat != tc.format || r.Note != tc.note {
			t.Errorf("%s: ε = %v (schedule %v), format %q, note %q; want format %q, note %q", tc.name, *r.Epsilon, want, r.LedgerFormat, r.Note, tc.format, tc.note)
		}
	}
	b, err := os.ReadFile(dpevent)
	if err != nil {
		t.Fatal(err)
	}
	stdin = strings.NewReader(string(b))
	r := ledgerRow(t, "--ledger", "-")
	stdin = os.Stdin
	if *r.Epsilon != want || r.LedgerFormat != "dp_accounting" {
		t.Errorf("stdin: ε = %v, format %q", *r.Epsilon, r.LedgerFormat)
	}
	if e := epsOf(t, "eps", "--events", dpevent); e != want {
		t.Errorf("--events: ε = %v, want %v", e, want)
	}
	// --events says nothing of a format: it reads one.
	if r := ledgerRow(t, "--events", dpevent); r.LedgerFormat != "" {
		t.Errorf("--events row has ledger_format %q", r.LedgerFormat)
	}
}

// TestLedgerRefused: unknown and corrupt files, and --ledger with other
// training flags, are one-line errors with exit 2 (JSON {"error"} with
// --json) naming the file and what was expected.
func TestLedgerRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknown := write("unknown.json", `{"version": 1, "config": {}, "events": []}`)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown format", []string{"--ledger", unknown}, "--ledger " + unknown + `: an object with keys "config", "events", "version", which is no format dpcalc reads: want a dpcalc training ledger`},
		{"truncated opacus", []string{"--ledger", write("trunc.json", `{"mechanism": "rdp", "history": [[3.0,`)}, "truncated"},
		{"bad opacus value", []string{"--ledger", write("neg.json", `{"mechanism": "rdp", "history": [[-1, 0.2, 5]]}`)}, "sigma = -1 at SelfComposed/PoissonSampled/Gaussian, want >= 0"},
		{"zero steps", []string{"--ledger", write("zero.json", `{"mechanism": "rdp", "history": [[1, 0.2, 0]]}`)}, "count = 0 at SelfComposed, want >= 1"},
		{"missing file", []string{"--ledger", filepath.Join(dir, "none.json")}, "no such file"},
		{"with --sigma", []string{"--ledger", filepath.Join("..", "..", "testdata", "ledger", "opacus_rdp.json"), "--sigma", "1"}, "--ledger replaces --sigma"},
		{"with --events", []string{"--ledger", unknown, "--events", unknown}, "--events and --ledger can't be used together"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(append([]string{"eps"}, tc.args...)...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, stdout, stderr, tc.want)
			}
			stdout, _, code = runCLI(append([]string{"eps", "--json"}, tc.args...)...)
			var e struct{ Error string }
			if code != 2 || json.Unmarshal([]byte(stdout), &e) != nil || !strings.Contains(e.Error, tc.want) {
				t.Errorf("--json: exit %d, %q", code, stdout)
			}
		})
	}
}

// TestProfileLedger: profile takes --ledger too and says what it read; its
// bound is that of the same run given by the training flags.
func TestProfileLedger(t *testing.T) {
	run := func(args ...string) (cli.Output, cli.OutputRow) {
		t.Helper()
		stdout, stderr, code := runCLI(append([]string{"profile", "--json", "--deltas", "1e-5"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s%s", args, code, stdout, stderr)
		}
		p := decodeOutput(t, stdout)
		var eps []cli.OutputRow
		for _, r := range p.Rows {
			if r.Quantity == "epsilon" {
				eps = append(eps, r)
			}
		}
		if len(eps) != 1 || eps[0].Epsilon == nil {
			t.Fatalf("%v: want one ε row: %s", args, stdout)
		}
		return p, eps[0]
	}
	l, le := run("--ledger", filepath.Join("..", "..", "testdata", "ledger", "opacus_rdp.json"))
	_, fe := run("--sigma", "3", "--q", "0.2", "--steps", "50")
	if len(l.Statements) == 0 || l.Statements[0] != "The run was read from Opacus accountant state (mechanism rdp, 1 history entry)." {
		t.Errorf("statements %q", l.Statements)
	}
	if *le.Epsilon != *fe.Epsilon {
		t.Errorf("--ledger ε %v, flags %v", *le.Epsilon, *fe.Epsilon)
	}
}
