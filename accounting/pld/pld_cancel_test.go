package pld

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPLDCancel cancels a slow composition (a tiny sampling rate: about
// 2 s of per-step discretisation and lower-bound merges on an idle core)
// 50 ms into Epsilon, EpsilonBounds, Delta and EpsilonCurve: each returns an
// error wrapping context.Canceled (every long loop, grid points, merges,
// offsets, parts, refinement, coarsening and curve points, checks the
// context).
func TestPLDCancel(t *testing.T) {
	const sigma, q, steps, delta = 0.742, 2.1e-9, 7512, 2.6e-12
	ev := self(sampled(q, gauss(sigma)), steps)
	calls := map[string]func(ctx context.Context, a *Accountant) error{
		"Epsilon": func(ctx context.Context, a *Accountant) error {
			_, err := a.Epsilon(ctx, delta)
			return err
		},
		"EpsilonBounds": func(ctx context.Context, a *Accountant) error {
			_, _, err := a.EpsilonBounds(ctx, delta)
			return err
		},
		"Delta": func(ctx context.Context, a *Accountant) error {
			_, err := a.Delta(ctx, 0.01)
			return err
		},
		"EpsilonCurve": func(ctx context.Context, _ *Accountant) error {
			b, _ := New(Options{})
			_, err := b.EpsilonCurve(ctx, sampled(q, gauss(sigma)), []int{steps / 2, steps}, delta)
			return err
		},
	}
	var slowest time.Duration
	for name, call := range calls {
		a := newPLDFor(t, ev, Options{})
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		err := call(ctx, a)
		took := time.Since(start)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want one wrapping context.Canceled", name, err)
		}
		slowest = max(slowest, took)
		t.Logf("%s: returned %v after the start (cancel at 50ms): %v", name, took, err)
	}
	t.Logf("slowest cancelled call: %v", slowest)
}

// TestPLDCancelPrompt: with a fine user grid (h = 1e-5 at σ = 1, q = 0.5:
// 2e6 grid points, about 10 s in all) Epsilon cancelled after 50 ms must
// return well within the time of one uninterrupted per-step grid, measured
// in the same run (a ratio, not a time limit). Before the grid and merge
// loops checked the context it returned only after the grid (about 1 s).
func TestPLDCancelPrompt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 2e6-point grid")
	}
	const h = 1e-5
	a := newPLDFor(t, sampled(0.5, gauss(1)), Options{GridWidth: h})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := a.Epsilon(ctx, 1e-5)
	took := time.Since(start)
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one wrapping context.Canceled", err)
	}
	pair := newPLDPair(1, 0.5, false)
	start = time.Now()
	if _, err := newPLDGrid(t.Context(), &pair, h, 1e-20); err != nil {
		t.Fatal(err)
	}
	grid := time.Since(start)
	t.Logf("cancelled Epsilon returned after %v; one grid takes %v", took, grid)
	if took > grid/4+50*time.Millisecond {
		t.Errorf("cancelled Epsilon returned after %v; one grid takes %v", took, grid)
	}
}
