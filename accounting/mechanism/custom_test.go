package mechanism

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

func customOf(t *testing.T, e accounting.Event) Mechanism {
	t.Helper()
	m, err := Of(accounting.Step{Mechanism: accounting.MechOther, Leaf: e, Rate: 1, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// hockey returns H_{e^eps}(P‖Q) = P(L > eps) − e^eps·Q(L > eps) of a pair.
func hockey(p Pair, eps float64) float64 {
	tl := p.Tails(eps)
	return math.Max(0, math.Exp(tl.PAbove)-math.Exp(eps+tl.QAbove))
}

// gaussianHockey is the Gaussian pair's H at eps (μ = 1/σ), for every
// real eps (Balle and Wang 2018, Theorem 8).
func gaussianHockey(mu, eps float64) float64 {
	phi := func(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }
	return phi(-eps/mu+mu/2) - math.Exp(eps)*phi(-eps/mu-mu/2)
}

// TestCurveRDPSound: the Gaussian's curve α/(2σ²) given at orders 1.5..256
// bounds the Gaussian's log moment λ(λ+1)/(2σ²) at every order up to the
// largest (the envelope of a convex function lies above it), equals it at
// the given orders up to rounding, and is +Inf above the largest order.
func TestCurveRDPSound(t *testing.T) {
	const sigma = 1.3
	orders := []float64{1.5, 2, 3, 4, 6, 8, 16, 32, 64, 256}
	vals := make([]float64, len(orders))
	for i, a := range orders {
		vals[i] = a / (2 * sigma * sigma)
	}
	r, err := customOf(t, accounting.RdpCurve{Orders: orders, RDP: vals}).RDP()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	exact := func(l float64) float64 { return l * (l + 1) / (2 * sigma * sigma) }
	for l := 0.001; l <= 255; l *= 1.01 {
		v, _ := r.LogMomentAt(ctx, nil, 1, l)
		if v < exact(l) {
			t.Fatalf("λ %g: %g below the Gaussian's %g", l, v, exact(l))
		}
	}
	for _, a := range orders {
		v, _ := r.LogMomentAt(ctx, nil, 3, a-1)
		if w := 3 * exact(a-1); v < w || v > w*(1+1e-14) {
			t.Errorf("α %g: %g, want 3·%g", a, v, exact(a-1))
		}
	}
	if v, _ := r.LogMomentAt(ctx, nil, 1, 255.5); !math.IsInf(v, 1) {
		t.Errorf("above the largest order: %g, want +Inf", v)
	}
}

// TestCurveRDPRepairs: a value above what the others imply is lowered by
// the facts the curve obeys: with ε(2) = 1, ε(3) = 5, ε(4) = 2, D_3 ≤ D_4
// gives ε(3) ≤ 2, and convexity of (α−1)D_α between λ = 1 and λ = 3 gives
// K(2) ≤ (1 + 6)/2 = 3.5 (not 2·5 = 10).
func TestCurveRDPRepairs(t *testing.T) {
	r, err := customOf(t, accounting.RdpCurve{Orders: []float64{2, 3, 4}, RDP: []float64{1, 5, 2}}).RDP()
	if err != nil {
		t.Fatal(err)
	}
	v, _ := r.LogMomentAt(context.Background(), nil, 1, 2)
	if v < 3.5 || v > 3.5*(1+1e-14) {
		t.Errorf("K(2) = %g, want 3.5", v)
	}
	// Below the smallest order: λ·ε(α_1) (here 0.5·1).
	if v, _ := r.LogMomentAt(context.Background(), nil, 1, 0.5); v < 0.5 || v > 0.5*(1+1e-14) {
		t.Errorf("K(0.5) = %g, want 0.5", v)
	}
}

// TestProfilePairPure: the pair of the profile (ε, 0) is randomized
// response R_ε: P-masses a = e^ε/(1+e^ε) at +ε and 1−a at −ε, Q the
// reverse, nothing at ±∞.
func TestProfilePairPure(t *testing.T) {
	const eps = 0.7
	p, a := profilePair([]float64{eps}, []float64{0})
	want := newPurePair(eps)
	if len(a.loss) != 2 || math.Abs(a.loss[0]+eps) > 1e-9 || math.Abs(a.loss[1]-eps) > 1e-9 {
		t.Fatalf("losses %v, want ±%g", a.loss, eps)
	}
	if !math.IsInf(a.logPInf, -1) {
		t.Errorf("P-mass at +∞ %g, want none", math.Exp(a.logPInf))
	}
	for _, l := range []float64{-1, -eps, 0, 0.3, eps, 1} {
		if g, w := hockey(p, l), hockey(want, l); g < w || g > w*(1+1e-9)+1e-9 {
			t.Errorf("H at %g: %g, R_ε's %g", l, g, w)
		}
	}
}

// TestProfilePairDominates: the pair of points of the Gaussian's (σ 1)
// profile has every hockey-stick divergence of the Gaussian, at every ε
// (between the points and below 0 too), and no more than the points
// state at the points.
func TestProfilePairDominates(t *testing.T) {
	const mu = 1.0
	var eps, delta []float64
	for e := 0.0; e <= 8; e += 0.25 {
		eps = append(eps, e)
		delta = append(delta, math.Min(1, gaussianHockey(mu, e)*(1+1e-12)))
	}
	p, _ := profilePair(eps, delta)
	for e := -4.0; e <= 9; e += 0.01 {
		if g, w := hockey(p, e), gaussianHockey(mu, e); g < w*(1-1e-12) {
			t.Fatalf("H at %g: %g below the Gaussian's %g", e, g, w)
		}
	}
	for i, e := range eps {
		if g := hockey(p, e); g > delta[i]*(1+1e-8)+1e-300 {
			t.Errorf("H at %g: %g above the point's %g", e, g, delta[i])
		}
	}
}

// TestPMFRDP: the Rényi curve of the PMF of binary randomized response at
// ε 0.5 is R_ε's closed form; a PMF not stated pessimistic is refused by
// PLD and RDP naming pessimistic_estimate, one with mass at +∞ by RDP.
func TestPMFRDP(t *testing.T) {
	const eps = 0.5
	a := math.Exp(eps) / (1 + math.Exp(eps))
	probs := make([]float64, 101)
	probs[0], probs[100] = 1-a, a
	pmf := accounting.PldPmf{DiscretizationInterval: 0.01, Symmetric: true, Pessimistic: true,
		Remove: accounting.PmfSide{LowerLoss: -50, Probs: probs}}
	r, err := customOf(t, pmf).RDP()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []float64{0.1, 1, 5, 40} {
		v, _ := r.LogMomentAt(context.Background(), nil, 1, l)
		if w := (pureRDP{eps: eps}).at(l); math.Abs(v-w) > 1e-12*math.Max(1, w) {
			t.Errorf("λ %g: %g, R_ε's %g", l, v, w)
		}
	}
	pmf.Pessimistic = false
	m := customOf(t, pmf)
	if _, err := m.PLD(); err == nil || !strings.Contains(err.Error(), "pessimistic_estimate") {
		t.Errorf("PLD: %v", err)
	}
	if _, err := m.RDP(); err == nil || !strings.Contains(err.Error(), "pessimistic_estimate") {
		t.Errorf("RDP: %v", err)
	}
	pmf.Pessimistic = true
	pmf.Remove.InfinityMass = 1e-12
	pmf.Remove.Probs = []float64{1 - a, 0, a - 1e-12}
	pmf.Remove.LowerLoss, pmf.DiscretizationInterval = -1, eps
	if _, err := customOf(t, pmf).RDP(); err == nil || !strings.Contains(err.Error(), "infinite loss") {
		t.Errorf("RDP with mass at +∞: %v", err)
	}
}
