package pld

import (
	"context"
	"runtime"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// manyPhases returns n distinct Poisson-sampled Gaussian phases of one
// step each: q = 0.01, σ = 1 + i·step.
func manyPhases(n int, step float64) accounting.Event {
	evs := make([]accounting.Event, n)
	for i := range evs {
		evs[i] = accounting.PoissonSampled{SamplingRate: 0.01, Event: accounting.Gaussian{NoiseMultiplier: 1 + float64(i)*step}}
	}
	return accounting.Composed{Events: evs}
}

// TestManyPhasesMemory bounds what pld allocates for ε(δ) of 400 distinct
// phases: it must not grow with the number of phases (each held its
// per-step grids and FFT error arrays, about 1 MB apiece; 10,000 phases
// took 11 GB). The grouped compositions hold at most maxDistinctSteps steps.
func TestManyPhasesMemory(t *testing.T) {
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose(manyPhases(400, 1e-5), 1); err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	lo, up, err := a.EpsilonBounds(context.Background(), 1e-5)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("400 phases: [%g, %g], %d MB allocated", lo, up, alloc>>20)
	if alloc > 150<<20 {
		t.Errorf("ε(1e-5) of 400 distinct phases allocated %d MB, want <= 150 MB", alloc>>20)
	}
	if !(lo > 0 && up >= lo && up-lo < 2e-3*up) {
		t.Errorf("bracket [%g, %g]: want a positive one within 0.2%%", lo, up)
	}
}

// TestGroupedBracketsExact checks the grouped bounds against the
// composition of every distinct step: both bracket the true ε and δ, so
// they overlap, and the grouped upper bound is at least the exact lower
// one and vice versa.
func TestGroupedBracketsExact(t *testing.T) {
	ctx := context.Background()
	ev := accounting.Composed{Events: []accounting.Event{
		manyPhases(20, 7e-4),
		accounting.SelfComposed{Event: accounting.PoissonSampled{SamplingRate: 0.02, Event: accounting.Laplace{NoiseMultiplier: 3}}, Count: 50},
		accounting.Gaussian{NoiseMultiplier: 20}, accounting.Gaussian{NoiseMultiplier: 30},
	}}
	bounds := func(maxKeys int) (e0, e1, d0, d1 float64) {
		old := maxDistinctSteps
		maxDistinctSteps = maxKeys
		defer func() { maxDistinctSteps = old }()
		a, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(ev, 1); err != nil {
			t.Fatal(err)
		}
		n := groupCalls.Load()
		if e0, e1, err = a.EpsilonBounds(ctx, 1e-6); err != nil {
			t.Fatal(err)
		}
		if d0, d1, err = a.DeltaBounds(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if grouped := groupCalls.Load() > n; grouped != (maxKeys < 23) {
			t.Fatalf("maxDistinctSteps %d: grouped %v", maxKeys, grouped)
		}
		return
	}
	x0, x1, xd0, xd1 := bounds(1000)
	g0, g1, gd0, gd1 := bounds(8)
	t.Logf("ε: exact [%g, %g], grouped [%g, %g]; δ(1): exact [%g, %g], grouped [%g, %g]", x0, x1, g0, g1, xd0, xd1, gd0, gd1)
	if g0 > x1 || g1 < x0 || gd0 > xd1 || gd1 < xd0 {
		t.Errorf("grouped brackets must contain the truth the exact ones contain")
	}
	if g1 < x1*(1-1e-3) || g1 > x1*1.01 || g0 < x0*0.99 {
		t.Errorf("grouped ε bracket [%g, %g] too far from the exact [%g, %g]", g0, g1, x0, x1)
	}
}
