package accounting

import (
	"context"
	"errors"
	"testing"
)

// ManyPhases returns the composition of n distinct Poisson-sampled
// Gaussian phases (q = 0.01, σ = 1 + i·1e-6, count 1 each), repeated once
// at the end with the first phase again (merged into it).
func manyPhases(n int) Composed {
	evs := make([]Event, 0, n+1)
	for i := range n {
		evs = append(evs, PoissonSampled{SamplingRate: 0.01, Event: Gaussian{NoiseMultiplier: 1 + float64(i)*1e-6}})
	}
	evs = append(evs, evs[0])
	return Composed{Events: evs}
}

// TestNormalizeManyPhasesLinear bounds the work of normalising, bounding
// and merging n distinct phases by the step keys compared or indexed: at
// most a few per step (a scan per step compared n²/2 keys, and 100,000
// phases took minutes).
func TestNormalizeManyPhasesLinear(t *testing.T) {
	const n = 20000
	e := manyPhases(n)
	planProbes.Store(0)
	p, err := Normalize(e, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Bounded()
	if err != nil {
		t.Fatal(err)
	}
	m, err := Plan{}.Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	m, err = m.Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := planProbes.Load(); got > 8*n {
		t.Errorf("normalise, bound and merge twice %d distinct phases: %d keys compared or indexed, want <= %d", n, got, 8*n)
	}
	// First-appearance order and counts, as before.
	if len(m.Steps) != n || m.Steps[0].Count != 4 || m.Steps[1].Count != 2 || m.Total() != 2*(n+1) {
		t.Fatalf("got %d steps, counts %d, %d, total %d; want %d, 4, 2, %d", len(m.Steps), m.Steps[0].Count, m.Steps[1].Count, m.Total(), n, 2*(n+1))
	}
	for i, s := range m.Steps {
		if want := 1 + float64(i)*1e-6; s.Sigma != want || s.Rate != 0.01 {
			t.Fatalf("step %d: σ %g, q %g; want %g, 0.01", i, s.Sigma, s.Rate, want)
		}
	}
	if m.Steps[0].Path != "Composed[0]/PoissonSampled/Gaussian" {
		t.Errorf("path of the first step %q", m.Steps[0].Path)
	}
}

// stopAfter is a context whose Err reports cancellation after n calls.
type stopAfter struct {
	context.Context
	n int
}

func (c *stopAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestUnmarshalManyPhasesCancel: decoding a long ComposedDpEvent checks
// its context every 1024 elements (a file of a million phases took a
// minute to decode, deaf to SIGINT).
func TestUnmarshalManyPhasesCancel(t *testing.T) {
	b, err := MarshalEvent(manyPhases(5000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UnmarshalEventContext(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	ctx := &stopAfter{Context: context.Background(), n: 2} // the entry check and the first 1024 elements
	if _, err := UnmarshalEventContext(ctx, b); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled during the decoding: err %v, want context.Canceled", err)
	}
	if ctx.n != -1 {
		t.Errorf("Err called %d times after the cancellation, want once", -1-ctx.n)
	}
}
