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
