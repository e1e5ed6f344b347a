package cli

import (
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
	if k, ev, err := userLevel(g, Plan{}); k != 0 || ev != nil || err != nil {
		t.Errorf("userLevel without the flag: %d, %v, %v", k, ev, err)
	}
}
