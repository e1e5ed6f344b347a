package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate/statement"
)

// TestStatementUserLevelLines: once the user-level flag gives a run at
// user level (userLevel), the statement says so in words, and until then
// it says that none is stated. The library's user-level numbers are
// rendered with their certified interval.
func TestStatementUserLevelLines(t *testing.T) {
	g := &given{}
	row := Row{Sigma: 1, Q: 0.01, Steps: 100, Epochs: 1, Sampling: "poisson", Adjacency: "add-remove"}
	s := &statement.Statement{Delta: 1e-5,
		Example: statement.Epsilon{Kind: accounting.KindPLD, Lower: 1, Upper: 1.1, Bracketed: true},
		RDP:     statement.Epsilon{Kind: accounting.KindRDP, Upper: 1.2},
		GDP:     statement.GDP{Mu: 0.5, MuLower: 0.4, EpsilonMax: 3, TailDelta: 1e-12, EpsilonAtDelta: 1.3}}
	words := strings.Join(statementLines(g, row, s, Plan{}), "\n")
	if !strings.Contains(words, "No user-level guarantee is stated") || strings.Contains(words, "User-level ε") {
		t.Errorf("example level only:\n%s", words)
	}
	s.User = &statement.Epsilon{Kind: accounting.KindPLD, Lower: 2, Upper: 2.5, Bracketed: true}
	s.UserRDP = &statement.Epsilon{Kind: accounting.KindRDP, Upper: 3}
	s.ExamplesPerUser = 4
	words = strings.Join(statementLines(g, row, s, Plan{}), "\n")
	for _, want := range []string{"User-level with at most 4 examples per user", "User-level ε at δ = 1e-05 with 4 examples per user: the true ε lies in [2, 2.5] (pld, certified)."} {
		if !strings.Contains(words, want) {
			t.Errorf("user level: no %q in\n%s", want, words)
		}
	}
	if k, ev, err := userLevel(g); k != 0 || ev != nil || err != nil {
		t.Errorf("userLevel without the flag: %d, %v, %v", k, ev, err)
	}
}

// TestStatementExamplesPerUser: with --examples-per-user the statement's
// example-level rows stay example-level and its user-level rows are eps's
// for the same flag (TF Privacy's user-level check: about 2.532), marked
// with K; --group-size is refused naming the flag.
func TestStatementExamplesPerUser(t *testing.T) {
	run := []string{"--sigma", "1", "--batch", "64", "--n", "10000", "--epochs", "5", "--delta", "1e-6"}
	epsRow := func(args ...string) OutputRow {
		out, stderr, o := execute(append(append([]string{"eps"}, run...), append(args, "--json")...)...)
		var v Output
		if o.Code != 0 || json.Unmarshal([]byte(out), &v) != nil || len(v.Rows) != 1 {
			t.Fatalf("eps %v: exit %d %s", args, o.Code, stderr)
		}
		return v.Rows[0]
	}
	example, user := epsRow(), epsRow("--examples-per-user", "2")
	out, stderr, o := execute(append(append([]string{"statement"}, run...), "--examples-per-user", "2", "--json")...)
	var v Output
	if o.Code != 0 || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("statement: exit %d %s", o.Code, stderr)
	}
	var sawExample, sawUser bool
	for _, r := range v.Rows {
		if r.Accountant != "pld" || r.Quantity != "epsilon" || strings.Contains(r.Note, "not proven") {
			continue
		}
		want := example
		if r.ExamplesPerUser == 2 {
			want, sawUser = user, true
		} else {
			sawExample = true
		}
		if *r.Value != *want.Value || *r.EpsilonLower != *want.EpsilonLower {
			t.Errorf("row %+v: [%v, %v], eps gives [%v, %v]", r, *r.EpsilonLower, *r.Value, *want.EpsilonLower, *want.Value)
		}
	}
	if !sawExample || !sawUser || math.Abs(*user.Value-2.532) > 0.002 {
		t.Errorf("example row %v, user row %v (eps user-level %v, want about 2.532)", sawExample, sawUser, *user.Value)
	}
	_, stderr, o = execute(append(append([]string{"statement"}, run...), "--group-size", "2")...)
	if o.Code != ExitUsage || !strings.Contains(stderr, "--group-size") {
		t.Errorf("--group-size: exit %d, %q", o.Code, stderr)
	}
	_, stderr, o = execute("statement", "--ledger", "../../testdata/ledger/opacus_mnist.json", "--examples-per-user", "2")
	if o.Code != ExitUsage || !strings.Contains(stderr, "--examples-per-user is for the training flags") {
		t.Errorf("--ledger with --examples-per-user: exit %d, %q", o.Code, stderr)
	}
}
