package pld

import (
	"context"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

func userAccountant(t *testing.T, sigma, q float64, k, steps int) *Accountant {
	t.Helper()
	ev, err := accounting.UserLevel(sigma, q, k, steps)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose(ev, 1); err != nil {
		t.Fatal(err)
	}
	return a
}

// A user of 1000 examples at q 0.0064, 300 steps: the binomial's left-out
// shifts (η ≈ e^−712 a step) make the pairs the user's own only up to
// T·η·(2 + e^ε) in δ. The pairs' lower end there, about 1230, comes from the
// add direction, where e^ε·T·η is far above any δ, so it is not one on the
// user's ε; only the remove direction's lower end (here none) is.
func TestSlackAddDirectionLowerEnd(t *testing.T) {
	ctx := context.Background()
	a := userAccountant(t, 1, 0.0064, 1000, 300)
	pairs, err := a.pairsEpsilonBracket(ctx, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if pairs.Lower < 1000 {
		t.Fatalf("pairs' lower end %v, want the add direction's, above 1000", pairs.Lower)
	}
	rem, _, _, err := a.removeAccountant().epsilonBounds(ctx, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.EpsilonBracket(ctx, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if b.Upper != pairs.Upper || b.Lower > rem || b.Lower > pairs.Lower {
		t.Errorf("bracket %+v: want upper %v and lower at most the remove direction's %v", b, pairs.Upper, rem)
	}
	d, err := a.DeltaBracket(ctx, 1200)
	if err != nil {
		t.Fatal(err)
	}
	remD, _, _, err := a.removeAccountant().deltaBounds(ctx, 1200)
	if err != nil {
		t.Fatal(err)
	}
	if d.Lower > remD {
		t.Errorf("δ(1200) bracket %+v: lower above the remove direction's %v", d, remD)
	}
}

// Where the slack is below δ's rounding (ε 20, δ 1e-6: e^−690), the
// pairs' bracket stands and no second accountant is made.
func TestSlackNegligible(t *testing.T) {
	ctx := context.Background()
	a := userAccountant(t, 60, 0.0064, 1000, 10)
	if math.IsInf(a.logSlack(), -1) {
		t.Fatal("a user of 1000 examples at q 0.0064 has a tail")
	}
	pairs, err := a.pairsEpsilonBracket(ctx, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.EpsilonBracket(ctx, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if b != pairs || a.removes != nil || b.Lower <= 0 {
		t.Errorf("bracket %+v, pairs' %+v, remove accountant made: %v", b, pairs, a.removes != nil)
	}
}

func TestSlackAt(t *testing.T) {
	for _, c := range []struct{ logS, eps float64 }{{-700, 0}, {-700, 10}, {-1e3, 700}, {-5, 3}, {-710, 0}} {
		want := math.Exp(c.logS + math.Log(2+math.Exp(c.eps)))
		got := slackAt(c.logS, c.eps, false)
		if !(got >= want && got <= math.Max(want*(1+1e-9), want+1e-323)) {
			t.Errorf("slackAt(%v, %v) = %v, want just above %v", c.logS, c.eps, got, want)
		}
		if w, r := math.Exp(c.logS+math.Ln2), slackAt(c.logS, c.eps, true); !(r >= w && r <= math.Max(w*(1+1e-9), w+1e-323)) {
			t.Errorf("remove slack %v, want just above %v", r, w)
		}
	}
	if s := slackAt(-700, 1500, false); !math.IsInf(s, 1) {
		t.Errorf("overflowing slack %v, want +Inf", s)
	}
}

// Where the add direction's upper δ just below the pairs' lower end is
// below δ, the pairs' lower end is the remove direction's, and it stands
// (less one ulp) without composing the remove pairs again: a user of 300
// examples at q 0.0064, 200 steps, ε about 750, where e^ε·T·η is far
// above δ.
func TestSlackRemoveLowerEndCheap(t *testing.T) {
	ctx := context.Background()
	a := userAccountant(t, 1, 0.0064, 300, 200)
	pairs, err := a.pairsEpsilonBracket(ctx, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if pairs.Lower < 700 {
		t.Fatalf("pairs' lower end %v, want above 700 (where the slack is not negligible)", pairs.Lower)
	}
	b, err := a.EpsilonBracket(ctx, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if b.Lower != math.Nextafter(pairs.Lower, 0) || b.Upper != pairs.Upper || a.removes != nil || a.adds == nil {
		t.Errorf("bracket %+v, pairs' %+v; remove pairs composed: %v", b, pairs, a.removes != nil)
	}
	d, err := a.DeltaBracket(ctx, 740)
	if err != nil {
		t.Fatal(err)
	}
	dp, err := a.pairsDeltaBracket(ctx, 740)
	if err != nil {
		t.Fatal(err)
	}
	if d.Lower != dp.Lower || dp.Lower <= 0 || a.removes != nil {
		t.Errorf("δ(740) bracket %+v, pairs' %+v; remove pairs composed: %v", d, dp, a.removes != nil)
	}
}
