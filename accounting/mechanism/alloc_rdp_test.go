package mechanism

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAllocRDP checks the balls-in-bins Rényi curve: the remove moment
// against its closed form at t = 2, α = 2 (E[(S/2)²] = (e^{μ²} + 1)/2) and
// at t = 3, α = 3; and the add bound against Monte Carlo of E[(t/S)^λ]
// (200,000 samples, fixed seed): above it, and within 3% of it.
func TestAllocRDP(t *testing.T) {
	mu := 0.5
	r2 := allocRDP{mu: mu, t: 2}
	if got, want := r2.removeMoment(2), math.Log((math.Exp(mu*mu)+1)/2); math.Abs(got-want) > 1e-13 {
		t.Errorf("t 2, α 2: %v, want %v", got, want)
	}
	// t = 3, α = 3: E[(Y1+Y2+Y3)³] = 3E[Y³] + 18E[Y²] + 6 (E[Y] = 1).
	r3 := allocRDP{mu: mu, t: 3}
	e2, e3 := math.Exp(mu*mu), math.Exp(3*mu*mu)
	if got, want := r3.removeMoment(3), math.Log((3*e3+18*e2+6)/27); math.Abs(got-want) > 1e-13 {
		t.Errorf("t 3, α 3: %v, want %v", got, want)
	}
	const steps, n = 10, 200_000
	r := allocRDP{mu: mu, t: steps}
	rng := rand.New(rand.NewPCG(7, 25))
	for _, m := range []float64{0.5, 2, 8, 20} {
		var s1 float64
		rng := rand.New(rand.NewPCG(uint64(m*1000), 25))
		_ = rng
		for i := 0; i < n; i++ {
			var s float64
			for j := 0; j < steps; j++ {
				s += math.Exp(mu*rng.NormFloat64() - mu*mu/2)
			}
			s1 += math.Pow(steps/s, m)
		}
		mc := math.Log(s1 / n)
		got := r.addMoment(m)
		t.Logf("λ %g: add bound %.6g, Monte Carlo %.6g; remove %.6g", m, got, mc, r.removeMoment(m+1))
		if got < mc-0.01*math.Abs(mc) || got > mc+0.03*math.Abs(mc)+1e-3 {
			t.Errorf("λ %g: add bound %v, Monte Carlo %v", m, got, mc)
		}
	}
	_ = rng
	if v, err := r.LogMomentAt(context.Background(), nil, 1, 4); err != nil || !(v > 0) {
		t.Errorf("LogMomentAt: %v, %v", v, err)
	}
}

// TestAllocRDPCoarse checks the add bound where the pairs' grid is capped
// (σ 1, t 100): on cells of a linear grid capped at 2048 cells (width 4)
// it was looser than no amplification (the unsampled Gaussian's 36 at
// λ 8 was taken); on relative cells it is within 2% of the remove moment.
func TestAllocRDPCoarse(t *testing.T) {
	r := allocRDP{mu: 1, t: 100}
	add, rem := r.addMoment(8), r.removeMoment(9)
	t.Logf("λ 8: add %.6g, remove %.6g, unsampled %g", add, rem, 8*9/2.0)
	if !(add < 1.02*rem+0.01) {
		t.Errorf("add %v, remove %v", add, rem)
	}
}
