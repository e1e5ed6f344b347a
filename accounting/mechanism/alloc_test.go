package mechanism

import (
	"math"
	"strings"
	"testing"
)

// TestAllocationPairsRefuses checks the boundary rows of AllocationPairs:
// each is a clear error, returned at once (no convolution is started).
func TestAllocationPairsRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		mu   float64
		t    int
		want string
	}{
		{"one step", 0.5, 1, "t >= 2"},
		{"mu zero", 0, 10, "μ > 0"},
		{"sigma below 0.25", 5, 10, "σ = 0.2"},
		// 10^6 steps an epoch: about 2e13 operations, refused.
		{"too large", 0.25, 1_000_000, "too large"},
	} {
		if _, err := AllocationPairs(c.mu, c.t, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestAllocationUpperPairMass checks the dominating pair is a pair: P and
// Q each have total mass 1 within the margin of its atoms, and the P-mass
// of the event it reveals (tails above y_max, dropped ends) is tiny.
func TestAllocationUpperPairMass(t *testing.T) {
	pp, err := AllocationPairs(0.5, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	p := pp.Remove.(*discretePair)
	tl := p.Tails(-1e300)
	sumP, sumQ := expSum(tl.PAbove, tl.PBelow), expSum(tl.QAbove, tl.QBelow)
	if d := sumP - 1; d < -1e-15 || d > 2e-12 {
		t.Errorf("P total %v", sumP)
	}
	if d := sumQ - 1; d < -1e-15 || d > 2e-12 {
		t.Errorf("Q total %v", sumQ)
	}
	if pinf := p.Support().LogInf; pinf > -20 {
		t.Errorf("P-mass at +∞: e^%v, want below 2e-9", pinf)
	}
}

func expSum(a, b float64) float64 {
	var s float64
	for _, x := range []float64{a, b} {
		if x > -800 {
			s += math.Exp(x)
		}
	}
	return s
}

// TestAllocationLowerPairRoundsSafe checks that the dominated pairs do
// not gain from the rounding of their masses: every atom's loss lies
// below the logarithm of its grid mean j·Δ/t (the exact likelihood ratio
// of the merged output, rounded the safe way) by the margin, for remove
// (loss log v) and add (loss −log v), so the first measure's masses are
// scaled down and the second's up.
func TestAllocationLowerPairRoundsSafe(t *testing.T) {
	const mu, steps = 0.5, 10
	pp, err := AllocationPairs(mu, steps, true)
	if err != nil {
		t.Fatal(err)
	}
	_, d := allocGrid(mu)
	margin := math.Log1p(1e-9) - math.Log1p(-1e-9)
	for name, pr := range map[string]Pair{"remove": pp.Remove, "add": pp.Add} {
		p := pr.(*discretePair)
		if len(p.loss) < 10 {
			t.Fatalf("%s: %d atoms", name, len(p.loss))
		}
		for i, l := range p.loss {
			// The nearest grid mean v = j·Δ/t to the atom.
			v := math.Exp(l)
			if name == "add" {
				v = math.Exp(-l)
			}
			j := math.Round(v * steps / d)
			want := math.Log(j * d / steps)
			if name == "add" {
				want = -want
			}
			if got := want - l; math.Abs(got-margin) > 1e-13 {
				t.Fatalf("%s atom %d: loss %v is %v below the grid's %v, want %v", name, i, l, got, want, margin)
			}
			if math.Abs(p.lp[i]-p.lq[i]-l) > 1e-12*math.Max(1, math.Abs(l)) {
				t.Fatalf("%s atom %d: log p − log q = %v, loss %v", name, i, p.lp[i]-p.lq[i], l)
			}
		}
	}
}
