package pld

import (
	"context"
	"errors"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/dpcalc/dpcalc/internal/work"
)

// cancelAfter returns a context that is cancelled once k units of work
// (internal/work) have been reported on it, and its meter.
func cancelAfter(t *testing.T, k int64) (context.Context, *work.Meter) {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	m := work.NewMeter(k).OnLimit(cancel)
	return work.With(ctx, m), m
}

// TestPLDCancel cancels a slow composition (a tiny sampling rate: about
// 2 s of per-step discretisation and lower-bound merges on an idle core)
// after a fixed amount of work into Epsilon, EpsilonBounds, Delta and
// EpsilonCurve: each returns an error wrapping context.Canceled (every long
// loop, grid points, merges, offsets, parts, refinement, coarsening and
// curve points, checks the context) at its next check of the context.
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
	for name, call := range calls {
		for _, k := range []int64{1, 40} {
			a := accountantFor(t, ev, Options{})
			ctx, m := cancelAfter(t, k)
			err := call(ctx, a)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s cancelled after %d units of work: err = %v, want one wrapping context.Canceled", name, k, err)
			}
			// Each goroutine stops at its next check: one more unit each.
			if after, most := m.Count()-m.Stopped(), int64(runtime.GOMAXPROCS(0)); after > most {
				t.Errorf("%s cancelled after %d units of work: %d more units before it returned, want at most %d", name, k, after, most)
			}
		}
	}
}

// countingPair counts the evaluations of its pair's tails.
type countingPair struct {
	mechanism.Pair
	n atomic.Int64
}

func (c *countingPair) Tails(l float64) mechanism.Tails {
	c.n.Add(1)
	return c.Pair.Tails(l)
}

// TestPLDCancelPrompt: the grid and merge loops check their context every
// checkEvery points, cells or evaluations, so that a fine grid (h = 1e-4
// at σ = 1, q = 0.5: 2e5 grid points) cancelled after k units of work stops
// after about (k+1)·checkEvery evaluations of the pair, not after all of
// them (before the grid and merge loops checked the context, cancelled
// Epsilon returned only after the whole grid, about 1 s at h = 1e-5).
func TestPLDCancelPrompt(t *testing.T) {
	const h, k = 1e-4, 3
	cp := &countingPair{Pair: gaussRemove(t, 1, 0.5)}
	ctx, _ := cancelAfter(t, k)
	_, err := newGrid(ctx, cp, h, 1e-20)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("grid: err = %v, want one wrapping context.Canceled", err)
	}
	if n := cp.n.Load(); n > (k+1)*checkEvery {
		t.Errorf("grid cancelled after %d units of work evaluated the pair %d times, want at most %d", k, n, (k+1)*checkEvery)
	}

	gr, err := newGrid(t.Context(), cp, h, 1e-20)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the grid has %d points", len(gr.tl))
	cp.n.Store(0)
	ctx, _ = cancelAfter(t, k)
	if _, err := gr.lower(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("merge: err = %v, want one wrapping context.Canceled", err)
	}
	if n := cp.n.Load(); n > (k+1)*checkEvery {
		t.Errorf("merge cancelled after %d units of work evaluated the pair %d times, want at most %d", k, n, (k+1)*checkEvery)
	}
	// Uncancelled, the merge evaluates the pair far more often: the bound
	// above is a real one.
	cp.n.Store(0)
	if _, err := gr.lower(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := cp.n.Load(); n < 10*(k+1)*checkEvery {
		t.Errorf("an uncancelled merge evaluates the pair %d times: too few for the bound above to tell", n)
	}
}

// TestLowerMergeNoiseFloor: the lower merge's Illinois search for each
// cell's right end stops once the merged loss is within φ's own float64
// error bound above the grid value, when that bound exceeds its 1e-6·h
// tolerance. Before, it alternated between noisy signs of φ until its cap
// of 40 evaluations in such cells (σ 0.7985, q 0.0005428, h 7.4e-5, the
// first grid of a peer's setting: 3.5 evaluations of the pair per grid
// point; now 1.0), for a lower bound that moves by about 1e-10 relative.
func TestLowerMergeNoiseFloor(t *testing.T) {
	cp := &countingPair{Pair: gaussRemove(t, 0.7985, 0.0005428)}
	gr, err := newGrid(t.Context(), cp, 7.405e-5, 1e-20)
	if err != nil {
		t.Fatal(err)
	}
	cp.n.Store(0)
	if _, err := gr.lower(t.Context()); err != nil {
		t.Fatal(err)
	}
	n, points := cp.n.Load(), len(gr.tl)
	t.Logf("%d grid points, %d evaluations of the pair in the merge", points, n)
	if n > 2*int64(points) {
		t.Errorf("the merge evaluated the pair %d times on %d grid points, want at most %d", n, points, 2*points)
	}
}
