package cli

import (
	"bytes"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestExamplesPerUserOne: --examples-per-user 1 is the example-level
// answer, bit for bit, on eps, delta, sigma and epochs.
func TestExamplesPerUserOne(t *testing.T) {
	for _, args := range [][]string{
		{"eps", "--sigma", "1.1", "--q", "0.01", "--steps", "1000", "--accountant", "all"},
		{"delta", "--sigma", "1.1", "--q", "0.01", "--steps", "1000", "--eps", "2", "--accountant", "all"},
		{"sigma", "--eps", "2", "--q", "0.01", "--steps", "1000", "--accountant", "rdp"},
		{"epochs", "--sigma", "1.1", "--q", "0.01", "--eps", "2", "--accountant", "rdp"},
	} {
		plain, o1 := runRows(t, args...)
		one, o2 := runRows(t, append(args, "--examples-per-user", "1")...)
		if o1.Code != 0 || o2.Code != 0 || len(plain.Rows) == 0 {
			t.Fatalf("%v: exit %d, %d", args, o1.Code, o2.Code)
		}
		for i := range plain.Rows {
			a, b := plain.Rows[i].Output(plain.Quantity), one.Rows[i].Output(one.Quantity)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%v row %d:\n%+v\n%+v", args, i, a, b)
			}
		}
	}
}

// TestExamplesPerUser: TF Privacy's user-level check (N 10,000, lot 64,
// 5 epochs, σ 1, δ 1e-6, K 2: about 2.532) through the flag, with the row
// saying it is user-level; sigma calibrates under it (the σ found gives
// at most the target, and is above the example-level σ); a group of 2
// records under Poisson sampling is a user of 2 examples, and a group of 4
// at q = 1 is the Gaussian of σ/4 (for ma and ac too, which have no bound
// for the mixture: at q = 1 the steps are unsampled Gaussians, whose
// group event is exact).
func TestExamplesPerUser(t *testing.T) {
	rows, o := runRows(t, "eps", "--sigma", "1", "--batch", "64", "--n", "10000", "--epochs", "5", "--delta", "1e-6", "--examples-per-user", "2")
	if o.Code != 0 {
		t.Fatal(o.Err)
	}
	r := rows.Rows[0]
	if r.Accountant != "pld" || r.ExamplesPerUser != 2 || r.EpsilonLower == nil || r.EpsilonUpper == nil ||
		!(*r.EpsilonLower <= 2.5325 && *r.EpsilonUpper >= 2.5315 && *r.EpsilonUpper < 2.5327) || !strings.Contains(r.Note, "user-level") {
		t.Errorf("TF Privacy's check: %+v", r.Output("epsilon"))
	}
	group, _ := runRows(t, "eps", "--sigma", "1", "--batch", "64", "--n", "10000", "--epochs", "5", "--delta", "1e-6", "--group-size", "2")
	if g := group.Rows[0]; g.GroupSize != 2 || *g.EpsilonUpper != *r.EpsilonUpper || *g.EpsilonLower != *r.EpsilonLower {
		t.Errorf("group of 2: %+v, user of 2: %+v", g.Output("epsilon"), r.Output("epsilon"))
	}
	g4, _ := runRows(t, "eps", "--sigma", "1", "--q", "1", "--steps", "3", "--group-size", "4", "--accountant", "all")
	s4, _ := runRows(t, "eps", "--sigma", "0.25", "--q", "1", "--steps", "3", "--accountant", "pld")
	s4all, _ := runRows(t, "eps", "--sigma", "0.25", "--q", "1", "--steps", "3", "--accountant", "all")
	for i, g := range g4.Rows {
		if g.Accountant == "pld" && (*g.EpsilonUpper != *s4.Rows[0].EpsilonUpper || *g.EpsilonLower != *s4.Rows[0].EpsilonLower) {
			t.Errorf("group of 4 at q 1: [%v, %v]; σ/4: [%v, %v]", *g.EpsilonLower, *g.EpsilonUpper, *s4.Rows[0].EpsilonLower, *s4.Rows[0].EpsilonUpper)
		}
		if g.Accountant == "ma" || g.Accountant == "ac" {
			if g.Epsilon == nil || *g.Epsilon != *s4all.Rows[i].Epsilon || !strings.Contains(g.Note, "exact for unsampled noise") {
				t.Errorf("%s: %+v; σ/4 gives %v", g.Accountant, g.Output("epsilon"), *s4all.Rows[i].Epsilon)
			}
		}
	}
	sig, o := runRows(t, "sigma", "--eps", "3", "--delta", "1e-6", "--q", "0.0064", "--steps", "100", "--examples-per-user", "2")
	ex, _ := runRows(t, "sigma", "--eps", "3", "--delta", "1e-6", "--q", "0.0064", "--steps", "100")
	if o.Code != 0 || sig.Rows[0].ExamplesPerUser != 2 || !(sig.Rows[0].Sigma > ex.Rows[0].Sigma) || *sig.Rows[0].EpsilonUpper > 3 {
		t.Errorf("sigma: user level %+v, example level σ %v", sig.Rows[0].Output("sigma"), ex.Rows[0].Sigma)
	}
	ep, o := runRows(t, "epochs", "--sigma", "1", "--eps", "2.6", "--delta", "1e-6", "--q", "0.0064", "--examples-per-user", "2", "--accountant", "pld", "--max-steps", "1000")
	if o.Code != 0 || ep.Rows[0].ExamplesPerUser != 2 || !(ep.Rows[0].Steps >= 782 && ep.Rows[0].Steps < 900) {
		t.Errorf("epochs: %+v (782 steps give 2.5326)", ep.Rows[0].Output("steps"))
	}
}

// TestExamplesPerUserRefused: bad K and the cases dpcalc has no bound
// for are usage errors (exit 2) naming the flag and why.
func TestExamplesPerUserRefused(t *testing.T) {
	base := []string{"eps", "--sigma", "1", "--q", "0.0064", "--epochs", "5"}
	for _, tc := range []struct {
		args       []string
		flag, want string
	}{
		{[]string{"--examples-per-user", "0"}, "examples-per-user", "want an integer in [1, 2^53]"},
		{[]string{"--examples-per-user", "-2"}, "examples-per-user", "want an integer in [1, 2^53]"},
		{[]string{"--examples-per-user", "1e9"}, "examples-per-user", "at most 1024"},
		{[]string{"--examples-per-user", "2", "--adjacency", "replace-one"}, "examples-per-user", "add-remove only"},
		{[]string{"--group-size", "0"}, "group-size", "want an integer in [1,"},
		{[]string{"--group-size", "1000", "--examples-per-user", "1000"}, "group-size", "at most 1024"},
	} {
		_, o := runRows(t, append(append([]string(nil), base...), tc.args...)...)
		if o.Code != 2 || o.Flag != tc.flag || o.Err == nil || !strings.Contains(o.Err.Error(), tc.want) {
			t.Errorf("%v: exit %d, flag %q, %v; want 2, %s, %q", tc.args, o.Code, o.Flag, o.Err, tc.flag, tc.want)
		}
	}
	for _, args := range [][]string{
		{"eps", "--sigma", "1", "--batch", "64", "--n", "10000", "--epochs", "5", "--sampling", "fixed", "--adjacency", "replace-one", "--examples-per-user", "2"},
		{"eps", "--sigma", "1", "--batch", "64", "--n", "10000", "--epochs", "5", "--sampling", "shuffle", "--adjacency", "replace-one", "--group-size", "2", "--examples-per-user", "2"},
		{"eps", "--sigma", "1", "--steps", "100", "--sampling", "random-allocation", "--examples-per-user", "2"},
		{"eps", "--sigma", "1", "--q", "0.01", "--n", "1000", "--max-batch", "20", "--steps", "10", "--sampling", "truncated-poisson", "--examples-per-user", "2"},
	} {
		_, o := runRows(t, args...)
		if o.Code != 2 || o.Err == nil || !strings.Contains(o.Err.Error(), "--sampling poisson only") {
			t.Errorf("%v: exit %d, %v", args, o.Code, o.Err)
		}
	}
}

// TestProfileUserLevel: profile's result and JSON rows say the profile is
// user-level with K (they did not: the numbers were user-level, the
// output silent).
func TestProfileUserLevel(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := Execute(t.Context(), []string{"profile", "--sigma", "1", "--q", "0.01", "--steps", "10", "--examples-per-user", "2", "--json"}, IO{Stdout: &stdout, Stderr: &stderr}, Hooks{})
	p, ok := o.Result.(*Profile)
	if o.Code != 0 || !ok || p.ExamplesPerUser != 2 || !strings.Contains(p.training(), "user-level (users of at most 2 examples)") ||
		!strings.Contains(stdout.String(), `"examples_per_user": 2`) {
		t.Errorf("exit %d, %+v\n%s", o.Code, o.Result, stdout.String())
	}
}

// TestExamplesPerUserTail: at K 1000, q 0.0064 the binomial's shifts 250
// to 1000 (probabilities e^−708 or below) are the mixture's tail, which rdp
// and zcdp now bound. rdp over 782 steps at σ 1, δ 1e-100 gives 42143.0
// at λ 0.0101; the curve of the listed shifts alone gave 32378.2 at λ
// 0.0209, where it was 0.57 per step against a lower bound of 5520.7 on
// the real user's (the mechanism package checks the curve against
// mpmath). zcdp at σ 60, δ 1e-6 uses ρ of the largest shift, 1000, not
// the largest listed: 111061 (was 7920.27 from shift 259). A group of 10 users of 100 examples, and a
// group of 1000 records, are the same user of 1000 examples, tail
// included.
func TestExamplesPerUserTail(t *testing.T) {
	base := []string{"eps", "--sigma", "1", "--q", "0.0064", "--steps", "782", "--delta", "1e-100", "--accountant", "rdp"}
	for _, extra := range [][]string{{"--examples-per-user", "1000"}, {"--group-size", "10", "--examples-per-user", "100"}, {"--group-size", "1000"}} {
		rows, o := runRows(t, append(append([]string(nil), base...), extra...)...)
		if o.Code != 0 {
			t.Fatal(o.Err)
		}
		r := rows.Rows[0]
		if r.Epsilon == nil || math.Abs(*r.Epsilon/42142.991882242655-1) > 1e-9 || r.Lambda == nil || math.Abs(*r.Lambda-0.0100700) > 1e-6 {
			t.Errorf("rdp %v: ε %v at λ %v, want 42142.9919 at 0.0100700", extra, fmtPtr(r.Epsilon), fmtPtr(r.Lambda))
		}
	}
	rows, o := runRows(t, "eps", "--sigma", "60", "--q", "0.0064", "--steps", "782", "--delta", "1e-6", "--examples-per-user", "1000", "--accountant", "zcdp")
	if o.Code != 0 {
		t.Fatal(o.Err)
	}
	if r := rows.Rows[0]; r.Epsilon == nil || math.Abs(*r.Epsilon/111061.02372364934-1) > 1e-9 {
		t.Errorf("zcdp: ε %v, want 111061.02", fmtPtr(r.Epsilon))
	}
}

// fmtPtr formats a *float64 for messages ("nil" for nil).
func fmtPtr(p *float64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}
