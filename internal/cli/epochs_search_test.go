package cli

import (
	"strconv"
	"testing"
)

// rowsOf runs a command line and returns its single row.
func rowOf(t *testing.T, args ...string) Row {
	t.Helper()
	_, stderr, o := execute(args...)
	rs, ok := o.Result.(*Rows)
	if o.Code != 0 || !ok || len(rs.Rows) != 1 {
		t.Fatalf("%v: exit %d, %q, result %#v", args, o.Code, stderr, o.Result)
	}
	return rs.Rows[0]
}

// TestPLDEpochsSearchSeeded bounds the pld queries of an epochs search:
// rdp's answer seeds it (pld's ε is never above rdp's), so where rdp
// admits the whole range (σ 4, q 0.01, ε 8, up to 1e5 steps) one pld query
// confirms it, where the plain search doubled from 1 step (18 queries;
// with q 1e-12 and 1e9 steps, 31 queries took 422 s).
func TestPLDEpochsSearchSeeded(t *testing.T) {
	pldSearchQueries.Store(0)
	r := rowOf(t, "epochs", "--sigma", "4", "--q", "0.01", "--eps", "8", "--delta", "1e-5", "--accountant", "pld", "--max-steps", "100000")
	if r.Steps != 100000 || r.Epsilon == nil || *r.Epsilon > 8 {
		t.Fatalf("epochs: %d steps, ε %v; want 100000 (the limit) within ε 8", r.Steps, r.Epsilon)
	}
	if n := pldSearchQueries.Load(); n > 2 {
		t.Errorf("epochs search made %d pld queries, want <= 2", n)
	}
}

// TestPLDEpochsSearchExact checks that the seeded search finds the same
// largest step count as the plain one where the answer is inside the
// range (exact below a million steps).
func TestPLDEpochsSearchExact(t *testing.T) {
	pldSearchQueries.Store(0)
	n := rowOf(t, "epochs", "--sigma", "1.1", "--q", "0.01", "--eps", "2", "--delta", "1e-5", "--accountant", "pld").Steps
	// n fits and n+1 does not, by pld's own ε.
	for _, c := range []struct {
		steps int
		fits  bool
	}{{n, true}, {n + 1, false}} {
		e := rowOf(t, "eps", "--sigma", "1.1", "--q", "0.01", "--steps", strconv.Itoa(c.steps), "--delta", "1e-5", "--accountant", "pld")
		if e.Epsilon == nil {
			t.Fatalf("eps at %d steps: no ε", c.steps)
		}
		if got := *e.Epsilon <= 2; got != c.fits {
			t.Errorf("%d steps: ε %g, fits %v, want %v", c.steps, *e.Epsilon, got, c.fits)
		}
	}
	t.Logf("%d steps, %d pld queries", n, pldSearchQueries.Load())
}
