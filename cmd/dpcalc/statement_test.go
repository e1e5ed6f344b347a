package main

import (
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/internal/cli"
)

// statementOut runs dpcalc with --json and parses the one output shape.
func statementOut(t *testing.T, args ...string) cli.Output {
	t.Helper()
	stdout, stderr, code := runCLI(append(args, "--json")...)
	if code != 0 {
		t.Fatalf("dpcalc %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	o, err := parseOutput(stdout)
	if err != nil {
		t.Fatalf("dpcalc %s: %v\n%s", strings.Join(args, " "), err, stdout)
	}
	return o
}

func rowOf(o cli.Output, accountant, quantity string, procedure bool) *cli.OutputRow {
	for i, r := range o.Rows {
		if r.Accountant == accountant && r.Quantity == quantity && r.Procedure == procedure {
			return &o.Rows[i]
		}
	}
	return nil
}

func sameFloat(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// TestStatementSameAsEps: the statement's ε is eps's for the same run, to
// the bit: pld's certified interval (and the pairs' own lower end where
// they are not attained), rdp's ε and order, and for shuffled batches the
// Poisson reading.
func TestStatementSameAsEps(t *testing.T) {
	for _, run := range [][]string{
		{"--sigma", "4", "--q", "0.01", "--epochs", "100"},
		{"--sigma", "1", "--batch", "60", "--n", "6000", "--epochs", "3", "--sampling", "shuffle", "--adjacency", "replace-one"},
		{"--schedule", "sigma=1,q=0.01,steps=500; sigma=2,q=0.02,steps=300", "--delta", "1e-6"},
		{"--ledger", "../../testdata/ledger/opacus_rdp.json", "--delta", "2.0833333333333333e-05"},
	} {
		s := statementOut(t, append([]string{"statement"}, run...)...)
		for _, k := range []string{"pld", "rdp"} {
			e := statementOut(t, append([]string{"eps", "--accountant", k}, run...)...)
			got, want := rowOf(s, k, "epsilon", false), rowOf(e, k, "epsilon", false)
			if got == nil || want == nil {
				t.Fatalf("%v: no %s row: statement %v, eps %v", run, k, s.Rows, e.Rows)
			}
			if !sameFloat(got.Value, want.Value) || !sameFloat(got.EpsilonLower, want.EpsilonLower) || !sameFloat(got.EpsilonUpper, want.EpsilonUpper) ||
				!sameFloat(got.PairEpsilonLower, want.PairEpsilonLower) || !sameFloat(got.Lambda, want.Lambda) || got.Note != want.Note || got.Steps == nil || *got.Steps != *want.Steps {
				t.Errorf("%v: %s: statement %+v, eps %+v", run, k, *got, *want)
			}
			if k == "pld" && strings.Contains(strings.Join(run, " "), "shuffle") {
				got, want := rowOf(s, "pld", "epsilon", true), rowOf(e, "pld", "epsilon", true)
				if got == nil || want == nil || !sameFloat(got.Value, want.Value) {
					t.Errorf("%v: Poisson reading: statement %v, eps %v", run, got, want)
				}
			}
		}
		mu := rowOf(s, "pld", "mu", false)
		if mu == nil || mu.Value == nil || mu.MuLower == nil || *mu.MuLower > *mu.Value || len(s.Statements) < 5 {
			t.Errorf("%v: μ row %+v, statements %q", run, mu, s.Statements)
		}
	}
}

// TestStatementGDPClosedForm: four unsampled Gaussian steps of σ = 2 are
// exactly μ = √4/2 = 1 GDP, inside the μ row's certified interval.
func TestStatementGDPClosedForm(t *testing.T) {
	s := statementOut(t, "statement", "--schedule", "sigma=2,q=1,steps=4")
	mu := rowOf(s, "pld", "mu", false)
	if mu == nil || mu.MuLower == nil || mu.MuUpper == nil || !(*mu.MuLower <= 1 && 1 <= *mu.MuUpper && *mu.MuUpper < 1.001) {
		t.Fatalf("μ row %+v, want [lower, upper] around 1", mu)
	}
}

// TestStatementNotProven: for shuffled and fixed-size batches the Poisson
// number appears only labelled "not proven for this sampling", as a
// procedure row beside the certified interval, in the table and in words;
// Poisson batches have no such row.
func TestStatementNotProven(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--sigma", "1", "--batch", "60", "--n", "6000", "--epochs", "3", "--sampling", "shuffle", "--adjacency", "replace-one"}, true},
		{[]string{"--sigma", "1", "--batch", "60", "--n", "6000", "--epochs", "3", "--sampling", "fixed", "--adjacency", "replace-one"}, true},
		{[]string{"--sigma", "1", "--q", "0.01", "--epochs", "3"}, false},
	} {
		args := append([]string{"statement"}, c.args...)
		s := statementOut(t, args...)
		r := rowOf(s, "pld", "epsilon", true)
		words := strings.Join(s.Statements, "\n")
		if !c.want {
			if r != nil || strings.Contains(words, "not proven") {
				t.Errorf("%v: a Poisson reading for Poisson batches: %+v", c.args, r)
			}
			continue
		}
		if r == nil || !strings.HasPrefix(r.Note, "not proven for this sampling") || r.Sampling != "poisson" || r.Adjacency != "add-remove" {
			t.Errorf("%v: Poisson reading row %+v", c.args, r)
		}
		if !strings.Contains(words, "is not proven for this sampling") {
			t.Errorf("%v: statements %q", c.args, s.Statements)
		}
		cert := rowOf(s, "pld", "epsilon", false)
		if cert == nil || cert.PairEpsilonLower == nil || cert.EpsilonLower == nil || cert.Sampling == "poisson" {
			t.Errorf("%v: certified row %+v, want the run's interval with its marked lower end", c.args, cert)
		}
		stdout, _, code := runCLI(args...)
		if code != 0 || !strings.Contains(stdout, "│ not proven for this sampling") || !strings.Contains(stdout, "*, ") {
			t.Errorf("%v: table (exit %d) lacks the label or the marked lower end:\n%s", c.args, code, stdout)
		}
	}
}

// TestStatementBadInput: bad input exits 2 with one line naming the flag,
// and with --json prints only {"error": …}.
func TestStatementBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sigma", "1", "--q", "2", "--epochs", "3"}, "invalid --q: 2, want in (0, 1]"},
		{[]string{"--sigma", "-1", "--q", "0.1", "--epochs", "3"}, "invalid --sigma: -1"},
		{[]string{"--sigma", "1", "--q", "0.1", "--epochs", "3", "--delta", "0"}, "invalid --delta: 0, want in (0, 1)"},
		{[]string{"--sigma", "1", "--q", "0.1", "--epochs", "3", "--delta", "1"}, "invalid --delta: 1, want in (0, 1)"},
		{[]string{"--sigma", "1", "--q", "0.1"}, "missing flags: --epochs=EPOCHS or --steps=STEPS"},
		{[]string{"--q", "0.1", "--steps", "3"}, "missing flags: --sigma=SIGMA"},
		{[]string{"--sigma", "1", "--q", "0.1", "--steps", "3", "--pld-grid", "2"}, "invalid --pld-grid: 2, want in (0, 1]"},
		{[]string{"--sigma", "1", "--batch", "60", "--n", "6000", "--epochs", "3", "--sampling", "shuffle"}, "--sampling shuffle needs --adjacency replace-one"},
		{[]string{"--ledger", "../../testdata/ledger/unknown.json"}, "--ledger ../../testdata/ledger/unknown.json: an object with keys"},
		{[]string{"--ledger", "../../testdata/ledger/opacus_rdp.json", "--sigma", "1"}, "--ledger replaces --sigma"},
	} {
		args := append([]string{"statement"}, c.args...)
		stdout, stderr, code := runCLI(args...)
		if code != 2 || !strings.HasPrefix(stderr, "dpcalc: ") || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", c.args, code, stderr, stdout, c.want)
		}
		stdout, _, code = runCLI(append(args, "--json")...)
		o, err := parseOutput(stdout)
		if code != 2 || err != nil || !strings.Contains(o.Error, c.want) || o.Command != "" || o.Rows != nil {
			t.Errorf("%v --json: exit %d, %v, %q", c.args, code, err, stdout)
		}
	}
}
