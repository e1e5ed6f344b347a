package work

import (
	"context"
	"errors"
	"sync"
	"testing"
)

func TestCountAndLimit(t *testing.T) {
	if err := Add(context.Background(), 5); err != nil {
		t.Fatalf("Add without a meter: %v", err)
	}
	m := NewMeter(10)
	ctx := With(t.Context(), m)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 2 {
				if err := Add(ctx, 1); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if c := m.Count(); c != 8 {
		t.Errorf("Count = %d, want 8", c)
	}
	if err := Add(ctx, 2); err != nil {
		t.Errorf("Add to the limit: %v", err)
	}
	if err := Add(ctx, 1); !errors.Is(err, ErrLimit) {
		t.Errorf("Add past the limit: %v, want ErrLimit", err)
	}
	if c := m.Count(); c != 11 {
		t.Errorf("Count = %d, want 11", c)
	}
}

func TestOnLimitCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	m := NewMeter(3).OnLimit(func() { calls++; cancel() })
	ctx = With(ctx, m)
	for i := range 6 {
		if err := Add(ctx, 1); err != nil {
			t.Fatalf("Add %d: %v", i, err)
		}
		if got, want := ctx.Err() != nil, i >= 3; got != want {
			t.Fatalf("after %d units: canceled %v, want %v", i+1, got, want)
		}
	}
	if s := m.Stopped(); s != 4 {
		t.Errorf("Stopped = %d, want 4", s)
	}
	if calls != 1 {
		t.Errorf("OnLimit function called %d times, want 1", calls)
	}
}
