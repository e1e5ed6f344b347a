// Package work counts the units of work a computation reports on its
// context, so that a test can bound a call by how much it did rather than by
// how long it took: the count is the same on an idle and on a busy machine.
//
// Long computations report work through [Add] (accounting.Canceled reports
// one unit per call: long loops call it between units of work, such as a
// block of grid points, one FFT, one order or one bisection step). Without a
// [Meter] on the context, Add costs one context lookup and does nothing.
package work

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrLimit is wrapped by the error [Add] returns once a meter's limit is
// passed.
var ErrLimit = errors.New("work limit reached")

// Meter counts the units of work reported on the contexts [With] makes. It
// is safe for concurrent use.
type Meter struct {
	n       atomic.Int64
	limit   int64
	onStop  func()
	once    sync.Once
	stopped atomic.Int64 // the count when the limit was first passed
}

// NewMeter returns a meter that stops the work once more than limit units
// are reported (limit ≤ 0: it only counts). By default [Add] then returns
// an error wrapping [ErrLimit]; see [Meter.OnLimit].
func NewMeter(limit int64) *Meter { return &Meter{limit: limit} }

// OnLimit makes the meter call f once, when its limit is first passed,
// instead of failing the work: with f a context's cancel function the work
// sees a canceled context at its next check, which tests that every long
// loop checks its context after a fixed amount of work. It returns m.
func (m *Meter) OnLimit(f func()) *Meter {
	m.onStop = f
	return m
}

// Count returns the units reported so far.
func (m *Meter) Count() int64 { return m.n.Load() }

// Stopped returns the count right after the report that first passed the
// limit, or 0 if none did: Count() − Stopped() is the work done after
// that.
func (m *Meter) Stopped() int64 { return m.stopped.Load() }

// Limit returns the meter's limit (≤ 0: none).
func (m *Meter) Limit() int64 { return m.limit }

type key struct{}

// With returns a context whose work [Add] reports to m.
func With(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, key{}, m)
}

// From returns the meter of ctx, or nil.
func From(ctx context.Context) *Meter {
	m, _ := ctx.Value(key{}).(*Meter)
	return m
}

// Add reports n units of work on ctx's meter, if any. Once the meter's
// limit is passed it returns an error wrapping [ErrLimit], or calls the
// meter's OnLimit function once and returns nil.
func Add(ctx context.Context, n int64) error {
	m := From(ctx)
	if m == nil {
		return nil
	}
	c := m.n.Add(n)
	if m.limit <= 0 || c <= m.limit {
		return nil
	}
	m.once.Do(func() {
		m.stopped.Store(c)
		if m.onStop != nil {
			m.onStop()
		}
	})
	if m.onStop != nil {
		return nil
	}
	return fmt.Errorf("%w: more than %d units", ErrLimit, m.limit)
}
