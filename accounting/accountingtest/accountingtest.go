// Package accountingtest is the conformance suite every [accounting.Method]
// runs from its own package's tests: [Run] checks the contracts of
// accounting/accountant.go and the boundary table of [accounting.Normalize]
// as they show in answers, on one shared set of settings, so that
// accountants cannot drift apart at the edges.
//
// An [accounting.Accountant] gets every check; an [accounting.Procedure]
// every check that does not presume an upper bound (the ε↔δ round trip, δ
// never 0, ε > 0 where the loss is certainly positive, and the exact
// references are skipped).
package accountingtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testenv"
	"github.com/dpcalc/dpcalc/internal/testref"
	"github.com/dpcalc/dpcalc/internal/work"
)

// Options tunes [Run].
type Options struct {
	// WorkLimit bounds the work of every Epsilon and Delta call the suite
	// makes, in the units long computations report on their context
	// (accounting.Canceled and the search steps; see internal/work): a call
	// that does more is stopped and fails the test, on every machine alike.
	// 0 means DefaultWorkLimit.
	WorkLimit int64
	// Full runs the full cross product of the edge table (also set by the
	// environment variable DPCALC_EDGE_FULL=1; hours for pld).
	Full bool
	// Random is the number of random edge-table combinations run by
	// default; 0 means 16.
	Random int
	// ExactStride, if above 1, checks every ExactStride-th row of each
	// exact reference table by default (every row in the long test step,
	// see internal/testenv), for a method whose queries are costly.
	ExactStride int
	// NotMonotone, if set, says why the method is not monotone in q and δ
	// (a procedure whose published reading is not): the Monotone checks
	// then run in σ and T only. Accountants must not set it.
	NotMonotone string
	// FloorDelta, if set, says why the method's δ(ε) may fall as q grows
	// where its certified lower bound is 0 (the upper bound there is a
	// numerical floor, not the mechanism's δ): δ(1) is then checked along q
	// only where the method's DeltaBounds lower bound is positive.
	FloorDelta string
	// ReverseGap is the relative slack of the reverse round trip
	// Epsilon(Delta(ε)) ≤ ε·(1+ReverseGap) for a method whose Epsilon and
	// Delta refine a discretisation separately for the question asked; 0
	// means 1e-12 (rounding only).
	ReverseGap float64
}

// DefaultWorkLimit is the default [Options.WorkLimit]: about 3× the
// heaviest call of the long test step's edge table (pld, 36,228 units at
// σ=1 q=1e-6 T=1e9 δ=1e-300; some 30 s of pld's work on an idle core at
// this limit).
const DefaultWorkLimit = 100000

// Factory returns a fresh method.
type Factory func() (accounting.Method, error)

// The edge table: the extremes of float64 and of each parameter's domain,
// where accountants once disagreed, returned NaN or panicked.
var (
	EdgeSigmas = []float64{5e-324, 1e-300, 1e-160, 7e-155, 1e-150, 1e-100, 1e-10, 0.05, 1, 4, 1e3, 1e6, 1e100, 1e150, 1e300, math.MaxFloat64}
	EdgeRates  = []float64{5e-324, 1e-300, 1e-100, 1e-12, 1e-6, 0.01, 0.5, 1}
	EdgeSteps  = []int{1, 1000, 1e6, 1e9, 1e12}
	EdgeDeltas = []float64{5e-324, 1e-300, 1e-50, 1e-10, 1e-5, 0.5}
)

// Run runs the conformance suite on the methods newMethod makes, as subtests
// of t named name.
func Run(t *testing.T, name string, newMethod Factory, opts Options) {
	if opts.WorkLimit == 0 {
		opts.WorkLimit = DefaultWorkLimit
	}
	if opts.Random == 0 {
		opts.Random = 16
	}
	if os.Getenv("DPCALC_EDGE_FULL") != "" {
		opts.Full = true
	}
	t.Run(name, func(t *testing.T) {
		s := &suite{newMethod: newMethod, opts: opts}
		m := s.fresh(t)
		_, isAcc := m.(accounting.Accountant)
		_, isProc := m.(accounting.Procedure)
		s.accountant = isAcc
		t.Run("Contract", func(t *testing.T) { s.contract(t, isAcc, isProc) })
		t.Run("BadInput", s.badInput)
		t.Run("Empty", s.empty)
		t.Run("Unbounded", s.unbounded)
		t.Run("Unsupported", s.unsupported)
		t.Run("Linearity", s.linearity)
		t.Run("Monotone", s.monotone)
		t.Run("Bounds", s.bounds)
		t.Run("Idempotent", s.idempotent)
		t.Run("Canceled", s.canceled)
		t.Run("Edge", s.edge)
		if isAcc {
			t.Run("RoundTrip", s.roundTrip)
			t.Run("DeltaNeverZero", s.deltaNeverZero)
			t.Run("ExactQ1", s.exactQ1)
			t.Run("ExactT1", s.exactT1)
			t.Run("ExactTinySigma", s.exactTinySigma)
		}
		t.Logf("the heaviest call did %d units of work (limit %d)", s.most.Load(), s.opts.WorkLimit)
	})
}

type suite struct {
	newMethod  Factory
	opts       Options
	accountant bool
	most       atomic.Int64 // the most units of work of one guarded call
}

func (s *suite) fresh(t *testing.T) accounting.Method {
	t.Helper()
	m, err := s.newMethod()
	if err != nil {
		t.Fatalf("newMethod: %v", err)
	}
	if m == nil {
		t.Fatal("newMethod returned nil")
	}
	return m
}

// composed returns a fresh method with e composed count times, or the
// Compose error.
func (s *suite) composed(t *testing.T, e accounting.Event, count int) (accounting.Method, error) {
	t.Helper()
	m := s.fresh(t)
	return m, m.Compose(e, count)
}

// mustComposed is composed, failing t on error.
func (s *suite) mustComposed(t *testing.T, e accounting.Event, count int) accounting.Method {
	t.Helper()
	m, err := s.composed(t, e, count)
	if err != nil {
		t.Fatalf("Compose(%s, %d): %v", show(e), count, err)
	}
	return m
}

// show formats an event compactly with full precision.
func show(e accounting.Event) string {
	switch e := e.(type) {
	case accounting.Gaussian:
		return "Gaussian{" + g(e.NoiseMultiplier) + "}"
	case accounting.PoissonSampled:
		return "PoissonSampled{" + g(e.SamplingRate) + ", " + show(e.Event) + "}"
	case accounting.SelfComposed:
		return "SelfComposed{" + show(e.Event) + ", " + strconv.Itoa(e.Count) + "}"
	case accounting.Composed:
		parts := make([]string, len(e.Events))
		for i, x := range e.Events {
			parts[i] = show(x)
		}
		return "Composed{" + strings.Join(parts, ", ") + "}"
	case accounting.EpsilonDelta:
		return "EpsilonDelta{" + g(e.Epsilon) + ", " + g(e.Delta) + "}"
	case accounting.ZCDP:
		return "ZCDP{rho " + g(e.Rho) + ", xi " + g(e.Xi) + "}"
	}
	return fmt.Sprintf("%#v", e)
}

func g(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// result of one guarded call.
type result struct {
	v        float64
	err      error
	panicked any
	overWork bool  // stopped past the work limit
	work     int64 // units of work the call reported
}

// guard runs f with a context whose work meter stops it past the work
// limit, recovering a panic.
func (s *suite) guard(t *testing.T, f func(ctx context.Context) (float64, error)) (r result) {
	t.Helper()
	m := work.NewMeter(s.opts.WorkLimit)
	defer func() {
		if p := recover(); p != nil {
			r.panicked = p
		}
		r.work = m.Count()
		for c := s.most.Load(); r.work > c && !s.most.CompareAndSwap(c, r.work); c = s.most.Load() {
		}
		if r.err != nil && errors.Is(r.err, work.ErrLimit) {
			r.overWork = true
		}
	}()
	r.v, r.err = f(work.With(t.Context(), m))
	return r
}

// eps returns m.Epsilon(δ), failing t on a panic, a timeout, an error or an
// invalid value.
func (s *suite) eps(t *testing.T, where string, m accounting.Method, delta float64) float64 {
	t.Helper()
	r := s.guard(t, func(ctx context.Context) (float64, error) { return m.Epsilon(ctx, delta) })
	if msg := s.bad(r, true); msg != "" {
		t.Fatalf("%s: Epsilon(%s): %s", where, g(delta), msg)
	}
	return r.v
}

// delta returns m.Delta(ε), like eps.
func (s *suite) delta(t *testing.T, where string, m accounting.Method, epsilon float64) float64 {
	t.Helper()
	r := s.guard(t, func(ctx context.Context) (float64, error) { return m.Delta(ctx, epsilon) })
	if msg := s.bad(r, false); msg != "" {
		t.Fatalf("%s: Delta(%s): %s", where, g(epsilon), msg)
	}
	return r.v
}

// bad describes what is wrong with r ("" if nothing): a panic, a timeout,
// an error, NaN, ε < 0 or -Inf, δ outside [0, 1].
func (s *suite) bad(r result, isEps bool) string {
	switch {
	case r.panicked != nil:
		return fmt.Sprintf("panic: %v", r.panicked)
	case r.overWork:
		return fmt.Sprintf("no answer within %d units of work (internal/work)", s.opts.WorkLimit)
	case r.err != nil:
		return "error: " + r.err.Error()
	}
	return badValue(r.v, isEps)
}

func badValue(v float64, isEps bool) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case isEps && v < 0:
		return "negative ε " + g(v)
	case !isEps && (v < 0 || v > 1):
		return "δ = " + g(v) + " outside [0, 1]"
	}
	return ""
}

func (s *suite) contract(t *testing.T, isAcc, isProc bool) {
	m := s.fresh(t)
	if isAcc == isProc {
		t.Errorf("%T: Accountant %v, Procedure %v; want exactly one", m, isAcc, isProc)
	}
	if p, ok := m.(accounting.Procedure); ok && strings.TrimSpace(p.Caveat()) == "" {
		t.Errorf("%T: empty Caveat", m)
	}
	if m.Kind() == "" {
		t.Errorf("%T: empty Kind", m)
	}
	m2 := s.fresh(t)
	if m == m2 {
		t.Errorf("newMethod returned the same method twice")
	}
}

// badInput: arguments outside the documented ranges are a *ParamError
// naming the parameter (and the event's path), and leave the method as it
// was; δ = 0 and ε = +Inf are in range (Method's doc).
func (s *suite) badInput(t *testing.T) {
	step := accounting.PoissonSampled{SamplingRate: 0.01, Event: accounting.Gaussian{NoiseMultiplier: 1}}
	m := s.mustComposed(t, step, 100)
	before := s.eps(t, "before", m, 1e-5)
	wantParam := func(what string, err error, name, path string) {
		t.Helper()
		var pe *accounting.ParamError
		if !errors.As(err, &pe) || pe.Name != name || pe.Path != path || !errors.Is(err, accounting.ErrInvalidParameter) {
			t.Errorf("%s: %v; want *ParamError %q at %q", what, err, name, path)
		}
	}
	for _, d := range []float64{math.NaN(), -5e-324, -1, 1, 1.5, math.Inf(1), math.Inf(-1)} {
		r := s.guard(t, func(ctx context.Context) (float64, error) { return m.Epsilon(ctx, d) })
		if r.panicked != nil || r.overWork {
			t.Fatalf("Epsilon(%s): %+v", g(d), r)
		}
		wantParam("Epsilon("+g(d)+")", r.err, "delta", "")
	}
	for _, x := range []float64{math.NaN(), -5e-324, -1, math.Inf(-1)} {
		r := s.guard(t, func(ctx context.Context) (float64, error) { return m.Delta(ctx, x) })
		if r.panicked != nil || r.overWork {
			t.Fatalf("Delta(%s): %+v", g(x), r)
		}
		wantParam("Delta("+g(x)+")", r.err, "eps", "")
	}
	for _, c := range []struct {
		e           accounting.Event
		count       int
		name, path  string
		unsupported bool
	}{
		{step, 0, "count", "", false},
		{step, -1, "count", "", false},
		{accounting.Composed{Events: []accounting.Event{step, accounting.PoissonSampled{SamplingRate: 0.5, Event: accounting.Gaussian{NoiseMultiplier: -1}}}}, 1,
			"sigma", "Composed[1]/PoissonSampled/Gaussian", false},
		{accounting.SelfComposed{Event: accounting.PoissonSampled{SamplingRate: 2, Event: accounting.Gaussian{NoiseMultiplier: 1}}, Count: 3}, 1,
			"q", "SelfComposed/PoissonSampled", false},
		{accounting.Composed{Events: []accounting.Event{accounting.NoOp{}, nil}}, 1, "", "Composed[1]", true},
		{accounting.SelfComposed{Event: step, Count: accounting.MaxCount}, 1, "count", "SelfComposed/PoissonSampled/Gaussian", false},
	} {
		err := m.Compose(c.e, c.count)
		if c.unsupported {
			var ue *accounting.UnsupportedEventError
			if !errors.As(err, &ue) || ue.Path != c.path {
				t.Errorf("Compose(%s, %d): %v; want *UnsupportedEventError at %q", show(c.e), c.count, err, c.path)
			}
		} else {
			wantParam(fmt.Sprintf("Compose(%s, %d)", show(c.e), c.count), err, c.name, c.path)
		}
	}
	if after := s.eps(t, "after", m, 1e-5); after != before {
		t.Errorf("failed calls changed Epsilon(1e-5) from %s to %s", g(before), g(after))
	}
	// δ = 0 and ε = +Inf are in range.
	if e := s.eps(t, "δ = 0", m, 0); !math.IsInf(e, 1) {
		t.Errorf("Epsilon(0) = %s for a Gaussian composition, want +Inf (never pure DP)", g(e))
	}
	if e := s.eps(t, "δ = 0", s.fresh(t), 0); e != 0 {
		t.Errorf("Epsilon(0) = %s with nothing composed, want 0", g(e))
	}
	s.delta(t, "ε = +Inf", m, math.Inf(1))
}

// empty: nothing composed, and events that release nothing, give ε = 0
// and δ = 0 everywhere.
func (s *suite) empty(t *testing.T) {
	free := []struct {
		name string
		e    accounting.Event
	}{
		{"nothing", nil},
		{"NoOp", accounting.NoOp{}},
		{"empty Composed", accounting.Composed{}},
		{"q = 0", accounting.PoissonSampled{SamplingRate: 0, Event: accounting.Gaussian{NoiseMultiplier: 1}}},
		{"sigma = +Inf", accounting.Gaussian{NoiseMultiplier: math.Inf(1)}},
		{"NoOp x 1000", accounting.SelfComposed{Event: accounting.NoOp{}, Count: 1000}},
	}
	for _, f := range free {
		t.Run(f.name, func(t *testing.T) {
			m := s.fresh(t)
			if f.e != nil {
				if err := m.Compose(f.e, 5); err != nil {
					t.Fatalf("Compose(%s, 5): %v", show(f.e), err)
				}
			}
			for _, d := range []float64{5e-324, 1e-5, 0.5} {
				if e := s.eps(t, f.name, m, d); e != 0 {
					t.Errorf("Epsilon(%s) = %s, want 0", g(d), g(e))
				}
			}
			for _, x := range []float64{0, 1, math.Inf(1)} {
				if d := s.delta(t, f.name, m, x); d != 0 {
					t.Errorf("Delta(%s) = %s, want 0", g(x), g(d))
				}
			}
		})
	}
}

// unbounded: events with no finite bound give ε = +Inf and δ = 1, the same
// answer in every method (Gaussian{0} used to be +Inf in some and an error
// in others).
func (s *suite) unbounded(t *testing.T) {
	ps := func(q float64, e accounting.Event) accounting.Event {
		return accounting.PoissonSampled{SamplingRate: q, Event: e}
	}
	cases := []struct {
		name string
		e    accounting.Event
	}{
		{"NonPrivate", accounting.NonPrivate{}},
		{"Gaussian 0", accounting.Gaussian{}},
		{"Gaussian 1e-200", accounting.Gaussian{NoiseMultiplier: 1e-200}},
		{"Gaussian 7e-155", accounting.Gaussian{NoiseMultiplier: 7e-155}},
		{"sampled Gaussian 0", ps(0.01, accounting.Gaussian{})},
		{"sampled Gaussian 5e-324", ps(0.5, accounting.Gaussian{NoiseMultiplier: 5e-324})},
		{"after a step", accounting.Composed{Events: []accounting.Event{ps(0.01, accounting.Gaussian{NoiseMultiplier: 1}), accounting.NonPrivate{}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := s.mustComposed(t, c.e, 3)
			for _, d := range []float64{5e-324, 1e-5, 0.5} {
				if e := s.eps(t, c.name, m, d); !math.IsInf(e, 1) {
					t.Errorf("%s: Epsilon(%s) = %s, want +Inf", show(c.e), g(d), g(e))
				}
			}
			for _, x := range []float64{0, 1, 1e6} {
				if d := s.delta(t, c.name, m, x); d != 1 {
					t.Errorf("%s: Delta(%s) = %s, want 1", show(c.e), g(x), g(d))
				}
			}
		})
	}
}

// candidates are the leaf events the suite composes; each method supports
// some.
var candidates = []accounting.Event{
	accounting.Gaussian{NoiseMultiplier: 1.5},
	accounting.PoissonSampled{SamplingRate: 0.01, Event: accounting.Gaussian{NoiseMultiplier: 1}},
	accounting.EpsilonDelta{Epsilon: 0.5, Delta: 1e-6},
	accounting.EpsilonDelta{Epsilon: 0.3},
	accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.EpsilonDelta{Epsilon: 1, Delta: 1e-7}},
	accounting.ZCDP{Rho: 0.05},
	accounting.ZCDP{Rho: 0.01, Xi: 0.02},
	accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.ZCDP{Rho: 0.05}},
	accounting.DiscreteLaplace{NoiseParameter: 0.5, Sensitivity: 2},
	accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.DiscreteGaussian{Sigma: 2, Sensitivity: 1, Dimension: 1}},
	// Custom mechanisms: the Gaussian's curve (σ 2), binary randomized
	// response at ε 0.5 as a PMF, a profile with δ = 0 at its largest ε.
	accounting.RdpCurve{Orders: []float64{1.5, 2, 4, 8, 16, 32}, RDP: []float64{0.1875, 0.25, 0.5, 1, 2, 4}},
	accounting.PldPmf{DiscretizationInterval: 0.5, Pessimistic: true, Symmetric: true,
		Remove: accounting.PmfSide{LowerLoss: -1, Probs: []float64{0.3775406687981454, 0, 0.6224593312018546}}},
	accounting.PrivacyProfile{Epsilons: []float64{0.5, 1}, Deltas: []float64{1e-6, 0}},
}

// supported reports whether m supports every step of e; err is the first
// refusal.
func supported(m accounting.Method, e accounting.Event) (bool, error) {
	p, err := accounting.Normalize(e, 1)
	if err != nil {
		return false, err
	}
	for _, st := range p.Steps {
		if err := m.Supports(st); err != nil {
			return false, err
		}
	}
	return true, nil
}

// unsupported: an event the method refuses, nested at any depth, is an
// *UnsupportedEventError naming its path, and leaves the method unchanged.
func (s *suite) unsupported(t *testing.T) {
	base := accounting.PoissonSampled{SamplingRate: 0.01, Event: accounting.Gaussian{NoiseMultiplier: 1}}
	n := 0
	for _, leaf := range candidates {
		m := s.fresh(t)
		ok, serr := supported(m, leaf)
		if ok {
			continue
		}
		n++
		var ue *accounting.UnsupportedEventError
		if !errors.As(serr, &ue) {
			t.Errorf("Supports refuses %s with %v, want *UnsupportedEventError", show(leaf), serr)
			continue
		}
		p, _ := accounting.Normalize(leaf, 1)
		leafPath := p.Steps[0].Path
		nests := []struct {
			e    accounting.Event
			path string
		}{
			{leaf, leafPath},
			{accounting.SelfComposed{Event: leaf, Count: 4}, "SelfComposed/" + leafPath},
			{accounting.Composed{Events: []accounting.Event{accounting.NoOp{}, accounting.SelfComposed{
				Event: accounting.Composed{Events: []accounting.Event{accounting.NoOp{}, leaf}}, Count: 3}}},
				"Composed[1]/SelfComposed/Composed[1]/" + leafPath},
		}
		for _, nest := range nests {
			m := s.mustComposed(t, base, 10)
			before := s.eps(t, "before", m, 1e-5)
			err := m.Compose(nest.e, 2)
			if !errors.As(err, &ue) || ue.Path != nest.path || !errors.Is(err, accounting.ErrUnsupportedEvent) {
				t.Errorf("Compose(%s): %v; want *UnsupportedEventError at %q", show(nest.e), err, nest.path)
				continue
			}
			if !strings.Contains(err.Error(), nest.path) {
				t.Errorf("Compose(%s): message %q does not name %q", show(nest.e), err, nest.path)
			}
			if after := s.eps(t, "after", m, 1e-5); after != before {
				t.Errorf("failed Compose(%s) changed Epsilon(1e-5) from %s to %s", show(nest.e), g(before), g(after))
			}
		}
	}
	t.Logf("%d of %d candidate events unsupported", n, len(candidates))
}

// linearity: Compose(e, k), Compose(SelfComposed{e, k}, 1) and k calls of
// Compose(e, 1) give identical answers (the plan is the same), for every
// supported candidate event.
func (s *suite) linearity(t *testing.T) {
	var evs []accounting.Event
	for _, e := range candidates {
		if ok, _ := supported(s.fresh(t), e); ok {
			evs = append(evs, e)
		}
	}
	if len(evs) >= 2 {
		// A method may refuse a mix of supported steps (the DPD procedures
		// take T identical steps only): try it.
		pair := accounting.Composed{Events: evs[:2]}
		if _, err := s.composed(t, pair, 1); err == nil {
			evs = append(evs, pair)
		} else if !errors.Is(err, accounting.ErrUnsupportedEvent) {
			t.Errorf("Compose(%s): %v, want nil or an *UnsupportedEventError", show(pair), err)
		}
	}
	if len(evs) == 0 {
		t.Fatal("no candidate event supported")
	}
	for _, e := range evs {
		for _, k := range []int{1, 7, 300} {
			ms := map[string]accounting.Method{
				"Compose(e, k)":            s.mustComposed(t, e, k),
				"Compose(SelfComposed)":    s.mustComposed(t, accounting.SelfComposed{Event: e, Count: k}, 1),
				"Compose(SelfComposed, 1)": s.mustComposed(t, accounting.SelfComposed{Event: e, Count: 1}, k),
			}
			mk := s.fresh(t)
			for i := 0; i < k; i++ {
				if err := mk.Compose(e, 1); err != nil {
					t.Fatal(err)
				}
			}
			ms["k x Compose(e, 1)"] = mk
			ref := "Compose(e, k)"
			type ans struct{ eps, del float64 }
			want := ans{s.eps(t, ref, ms[ref], 1e-5), s.delta(t, ref, ms[ref], 1)}
			for name, m := range ms {
				got := ans{s.eps(t, name, m, 1e-5), s.delta(t, name, m, 1)}
				if got != want {
					t.Errorf("%s, k = %d: %s gives ε(1e-5) = %s, δ(1) = %s; %s gives %s, %s",
						show(e), k, name, g(got.eps), g(got.del), ref, g(want.eps), g(want.del))
				}
			}
		}
	}
}

// dpsgd is the event of T steps of a Poisson-subsampled Gaussian.
func dpsgd(sigma, q float64, steps int) accounting.Event {
	return accounting.SubsampledGaussian(sigma, q, steps)
}

// monotone: ε does not grow with σ or δ and does not fall with q or T; δ
// does not grow with σ or ε and does not fall with q or T. Exactly: two
// answers of one method to nested questions must be ordered.
func (s *suite) monotone(t *testing.T) {
	type pt struct {
		sigma, q float64
		steps    int
	}
	sigmas := []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 4, 10, 100, 1e4}
	qs := []float64{1e-5, 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.3, 0.6, 0.99, 1}
	steps := []int{1, 2, 10, 100, 1000, 10000, 100000}
	deltas := []float64{1e-300, 1e-50, 1e-12, 1e-10, 1e-8, 1e-5, 1e-3, 0.1, 0.5}
	epss := []float64{0, 0.01, 0.1, 0.5, 1, 2, 5, 10, 100}
	series := []struct {
		name string
		pts  []pt
		up   bool // ε grows along the series (q, T); else shrinks (σ)
	}{
		{"sigma", nil, false}, {"q", nil, true}, {"T", nil, true},
	}
	for _, x := range sigmas {
		series[0].pts = append(series[0].pts, pt{x, 0.01, 1000})
	}
	for _, x := range qs {
		series[1].pts = append(series[1].pts, pt{1, x, 1000})
	}
	for _, x := range steps {
		series[2].pts = append(series[2].pts, pt{1, 0.01, x})
	}
	for _, sr := range series {
		if sr.name == "q" && s.opts.NotMonotone != "" {
			t.Logf("q: not checked: %s", s.opts.NotMonotone)
			continue
		}
		t.Run(sr.name, func(t *testing.T) {
			var prevE, prevD float64
			for i, p := range sr.pts {
				m := s.mustComposed(t, dpsgd(p.sigma, p.q, p.steps), 1)
				where := fmt.Sprintf("σ=%s q=%s T=%d", g(p.sigma), g(p.q), p.steps)
				e := s.eps(t, where, m, 1e-5)
				d := s.delta(t, where, m, 1)
				if sr.name == "q" && s.opts.FloorDelta != "" {
					if b, ok := m.(accounting.BoundsReporter); ok {
						if lo, _, err := b.DeltaBounds(t.Context(), 1); err == nil && lo == 0 {
							d = prevD // at the floor: δ(1) not compared (FloorDelta)
						}
					}
				}
				if i > 0 {
					okE, okD := e <= prevE, d <= prevD
					if sr.up {
						okE, okD = e >= prevE, d >= prevD
					}
					dir := map[bool]string{true: "fall", false: "grow"}[sr.up]
					if !okE {
						t.Errorf("ε(1e-5) must not %s with %s: %s → %s at %s", dir, sr.name, g(prevE), g(e), where)
					}
					if !okD {
						t.Errorf("δ(1) must not %s with %s: %s → %s at %s", dir, sr.name, g(prevD), g(d), where)
					}
				}
				prevE, prevD = e, d
			}
		})
	}
	for _, p := range []pt{{1, 0.01, 1000}, {0.7, 0.1, 100}, {4, 1, 1}, {2, 1e-3, 10000}} {
		where := fmt.Sprintf("σ=%s q=%s T=%d", g(p.sigma), g(p.q), p.steps)
		if s.opts.NotMonotone != "" {
			t.Logf("delta %s: not checked: %s", where, s.opts.NotMonotone)
			continue
		}
		t.Run("delta "+where, func(t *testing.T) {
			m := s.mustComposed(t, dpsgd(p.sigma, p.q, p.steps), 1)
			prev := math.Inf(1)
			for _, d := range deltas {
				e := s.eps(t, where, m, d)
				if e > prev {
					t.Errorf("%s: ε must not grow with δ: ε(%s) = %s > %s at the smaller δ before it", where, g(d), g(e), g(prev))
				}
				prev = e
			}
			prev = 1
			for _, x := range epss {
				d := s.delta(t, where, m, x)
				if d > prev {
					t.Errorf("%s: δ must not grow with ε: δ(%s) = %s > %s at the smaller ε before it", where, g(x), g(d), g(prev))
				}
				prev = d
			}
		})
	}
}

// settings used by several checks: (σ, q, T).
var settings = []struct {
	sigma, q float64
	steps    int
}{
	{1, 0.01, 1000}, {0.7, 0.05, 100}, {4, 1, 1}, {2, 1e-3, 100000}, {1e3, 1, 1}, {0.5, 0.5, 10}, {1e5, 1, 1},
}

// bounds: a BoundsReporter's Epsilon is exactly the upper end of
// EpsilonBounds and Delta that of DeltaBounds, whichever is asked first and
// on a fresh method too; lower ≤ upper.
func (s *suite) bounds(t *testing.T) {
	if _, ok := s.fresh(t).(accounting.BoundsReporter); !ok {
		t.Skip("not a BoundsReporter")
	}
	for _, st := range settings {
		e := dpsgd(st.sigma, st.q, st.steps)
		for _, d := range []float64{1e-50, 1e-10, 1e-5} {
			where := fmt.Sprintf("%s δ=%s", show(e), g(d))
			m1 := s.mustComposed(t, e, 1)
			b1 := m1.(accounting.BoundsReporter)
			lo, hi, err := b1.EpsilonBounds(t.Context(), d)
			if err != nil {
				t.Fatalf("%s: EpsilonBounds: %v", where, err)
			}
			e1 := s.eps(t, where, m1, d)
			m2 := s.mustComposed(t, e, 1)
			e2 := s.eps(t, where, m2, d)
			_, hi2, err := m2.(accounting.BoundsReporter).EpsilonBounds(t.Context(), d)
			if err != nil {
				t.Fatalf("%s: EpsilonBounds: %v", where, err)
			}
			if !(lo <= hi) || e1 != hi || e2 != hi || hi2 != hi {
				t.Errorf("%s: EpsilonBounds [%s, %s]; Epsilon after it %s; Epsilon first %s, EpsilonBounds after it upper %s: want all uppers equal, lower ≤ upper",
					where, g(lo), g(hi), g(e1), g(e2), g(hi2))
			}
		}
		for _, x := range []float64{0.1, 1, 5} {
			where := fmt.Sprintf("%s ε=%s", show(e), g(x))
			m1 := s.mustComposed(t, e, 1)
			lo, hi, err := m1.(accounting.BoundsReporter).DeltaBounds(t.Context(), x)
			if err != nil {
				t.Fatalf("%s: DeltaBounds: %v", where, err)
			}
			d1 := s.delta(t, where, m1, x)
			m2 := s.mustComposed(t, e, 1)
			d2 := s.delta(t, where, m2, x)
			if !(lo <= hi) || d1 != hi || d2 != hi {
				t.Errorf("%s: DeltaBounds [%s, %s]; Delta after it %s, Delta on a fresh method %s: want all equal to the upper, lower ≤ upper",
					where, g(lo), g(hi), g(d1), g(d2))
			}
		}
	}
}

// idempotent: asking does not change the answer. Epsilon(δ) before and
// after other questions (Delta, EpsilonBounds, other δ) is the same.
func (s *suite) idempotent(t *testing.T) {
	for _, st := range settings {
		e := dpsgd(st.sigma, st.q, st.steps)
		m := s.mustComposed(t, e, 1)
		where := show(e)
		e1 := s.eps(t, where, m, 1e-5)
		d1 := s.delta(t, where, m, 1)
		s.eps(t, where, m, 1e-12)
		s.delta(t, where, m, 0.1)
		if b, ok := m.(accounting.BoundsReporter); ok {
			b.EpsilonBounds(t.Context(), 1e-7)
			b.DeltaBounds(t.Context(), 3)
		}
		if e2, d2 := s.eps(t, where, m, 1e-5), s.delta(t, where, m, 1); e2 != e1 || d2 != d1 {
			t.Errorf("%s: Epsilon(1e-5) %s then %s, Delta(1) %s then %s after other questions", where, g(e1), g(e2), g(d1), g(d2))
		}
	}
}

// canceled: with a context already done, Epsilon and Delta return (an
// error must wrap the context's error).
func (s *suite) canceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, st := range settings {
		e := dpsgd(st.sigma, st.q, st.steps)
		m := s.mustComposed(t, e, 1)
		r := s.guard(t, func(context.Context) (float64, error) { return m.Epsilon(ctx, 1e-5) })
		if r.panicked != nil || r.overWork || (r.err != nil && !errors.Is(r.err, context.Canceled)) {
			t.Errorf("%s: Epsilon with a canceled context: %+v", show(e), r)
		}
		r = s.guard(t, func(context.Context) (float64, error) { return m.Delta(ctx, 1) })
		if r.panicked != nil || r.overWork || (r.err != nil && !errors.Is(r.err, context.Canceled)) {
			t.Errorf("%s: Delta with a canceled context: %+v", show(e), r)
		}
	}
}

// roundTrip (accountants): Delta(Epsilon(δ)) ≤ δ exactly, and
// Epsilon(Delta(ε)) ≤ ε up to a relative 1e-12 (both directions round up, so
// one of them can only hold up to rounding): an accountant that certifies
// (ε, δ) one way certifies it the other way.
func (s *suite) roundTrip(t *testing.T) {
	for _, st := range settings {
		e := dpsgd(st.sigma, st.q, st.steps)
		m := s.mustComposed(t, e, 1)
		where := show(e)
		for _, d := range []float64{1e-50, 1e-10, 1e-5, 1e-3} {
			x := s.eps(t, where, m, d)
			if x == 0 || math.IsInf(x, 1) {
				continue
			}
			if back := s.delta(t, where, m, x); back > d {
				t.Errorf("%s: Epsilon(%s) = %s but Delta(%s) = %s > δ (×%.17g)", where, g(d), g(x), g(x), g(back), back/d)
			}
		}
		for _, x := range []float64{0.1, 0.5, 2, 8} {
			d := s.delta(t, where, m, x)
			if d == 0 || d >= 1 {
				continue
			}
			gap := s.opts.ReverseGap
			if gap == 0 {
				gap = 1e-12
			}
			if back := s.eps(t, where, m, d); back > x*(1+gap) {
				t.Errorf("%s: Delta(%s) = %s but Epsilon(%s) = %s > ε", where, g(x), g(d), g(d), g(back))
			}
		}
	}
}

// deltaNeverZero (accountants): a composition holding a Gaussian step is
// never pure DP, so δ(ε) > 0 at every finite ε (an underflow rounds up).
func (s *suite) deltaNeverZero(t *testing.T) {
	for _, c := range []struct {
		sigma, q float64
		steps    int
	}{{1e6, 1, 1}, {1, 0.01, 1000}, {1e100, 1e-6, 1}, {1e300, 1, 1}, {1, 1, 1}, {0.5, 0.5, 10}} {
		e := dpsgd(c.sigma, c.q, c.steps)
		m := s.mustComposed(t, e, 1)
		for _, x := range []float64{1, 100, 1e4, 1e300, math.MaxFloat64} {
			if d := s.delta(t, show(e), m, x); d == 0 {
				t.Errorf("%s: Delta(%s) = 0; a Gaussian step is never pure DP, want ≥ 5e-324", show(e), g(x))
			}
		}
	}
	// Every supported candidate that is not pure DP (Plan.PureEpsilon).
	for _, e := range candidates {
		p, _ := accounting.Normalize(e, 1)
		if ok, _ := supported(s.fresh(t), e); !ok || !math.IsInf(p.PureEpsilon(), 1) {
			continue
		}
		m := s.mustComposed(t, e, 1000)
		for _, x := range []float64{100, 1e4, 1e300} {
			if d := s.delta(t, show(e), m, x); d == 0 {
				t.Errorf("%s x 1000: Delta(%s) = 0; the plan is not pure DP, want ≥ 5e-324", show(e), g(x))
			}
		}
	}
}

// tvLower returns a lower bound on the total variation distance of T steps
// of a Poisson-subsampled Gaussian: that of one step, q·erf(1/(2√2σ))
// (rounded down by a relative 1e-12). δ below it forces ε > 0.
func tvLower(sigma, q float64) float64 {
	return q * math.Erf(1/(2*math.Sqrt2*sigma)) * (1 - 1e-12)
}

// edgePoint is one point of the edge table.
type edgePoint struct {
	sigma, q float64
	steps    int
	delta    float64
}

func (p edgePoint) String() string {
	return fmt.Sprintf("σ=%s q=%s T=%d δ=%s", g(p.sigma), g(p.q), p.steps, g(p.delta))
}

// edgePoints returns the covering design of the edge table: one factor at a
// time around σ=1 q=0.01 T=1000 δ=1e-5, σ×q pairs at T=1e6 δ=1e-5 (by
// default each σ with two rates and each rate with four σ; every pair in the
// long test step, see internal/testenv), and random combinations (four
// times as many in the long step); or the full cross product when Full.
func (s *suite) edgePoints() []edgePoint {
	var ps []edgePoint
	if s.opts.Full {
		for _, a := range EdgeSigmas {
			for _, b := range EdgeRates {
				for _, c := range EdgeSteps {
					for _, d := range EdgeDeltas {
						ps = append(ps, edgePoint{a, b, c, d})
					}
				}
			}
		}
		return ps
	}
	long := testenv.Long()
	base := edgePoint{1, 0.01, 1000, 1e-5}
	for _, a := range EdgeSigmas {
		p := base
		p.sigma = a
		ps = append(ps, p)
	}
	for _, b := range EdgeRates {
		p := base
		p.q = b
		ps = append(ps, p)
	}
	for _, c := range EdgeSteps {
		p := base
		p.steps = c
		ps = append(ps, p)
	}
	for _, d := range EdgeDeltas {
		p := base
		p.delta = d
		ps = append(ps, p)
	}
	for i, a := range EdgeSigmas {
		for j, b := range EdgeRates {
			if long || j == (2*i)%len(EdgeRates) || j == (2*i+1)%len(EdgeRates) {
				ps = append(ps, edgePoint{a, b, 1e6, 1e-5})
			}
		}
	}
	// Points where the full cross product found violations, pinned so
	// that the default run keeps checking them.
	ps = append(ps,
		edgePoint{1e100, 5e-324, 1, 5e-324}, // ac: ε = 0 below the total variation distance
	)
	r := rand.New(rand.NewPCG(10, 2026))
	random := s.opts.Random
	if long {
		random *= 4
	}
	for i := 0; i < random; i++ {
		ps = append(ps, edgePoint{EdgeSigmas[r.IntN(len(EdgeSigmas))], EdgeRates[r.IntN(len(EdgeRates))],
			EdgeSteps[r.IntN(len(EdgeSteps))], EdgeDeltas[r.IntN(len(EdgeDeltas))]})
	}
	return ps
}

// edge: at every point of the edge table Compose, Epsilon and Delta return
// within the deadline, without panic, a valid value or an error (Compose
// may refuse; Epsilon and Delta of a composed method may not). Accountants
// also never report ε = 0 where δ is below the total variation distance,
// and report +Inf and δ = 1 below SigmaFloor.
func (s *suite) edge(t *testing.T) {
	pts := s.edgePoints()
	fails := 0
	var most, total int64
	var mostAt edgePoint
	for _, p := range pts {
		msg, w := s.edgeOne(t, p)
		total += w
		if w > most {
			most, mostAt = w, p
		}
		if msg != "" {
			if fails++; fails <= 20 {
				t.Errorf("%v: %s", p, msg)
			}
		}
	}
	if fails > 0 {
		t.Errorf("%d of %d points fail (the first 20 shown)", fails, len(pts))
	}
	t.Logf("%d points, %d units of work in all; the most %d (limit %d per call) at %v", len(pts), total, most, s.opts.WorkLimit, mostAt)
}

// edgeOne checks one point; it returns what is wrong ("" if nothing) and
// the units of work of its Epsilon and Delta calls.
func (s *suite) edgeOne(t *testing.T, p edgePoint) (string, int64) {
	m := s.fresh(t)
	var cerr error
	r := s.guard(t, func(context.Context) (float64, error) {
		cerr = m.Compose(dpsgd(p.sigma, p.q, p.steps), 1)
		return 0, nil
	})
	switch {
	case r.panicked != nil:
		return fmt.Sprintf("Compose panicked: %v", r.panicked), 0
	case cerr != nil:
		var ue *accounting.UnsupportedEventError
		var pe *accounting.ParamError
		if !errors.As(cerr, &ue) && !errors.As(cerr, &pe) {
			return fmt.Sprintf("Compose: untyped error %v", cerr), 0
		}
		return "", 0
	}
	var msgs []string
	r = s.guard(t, func(ctx context.Context) (float64, error) { return m.Epsilon(ctx, p.delta) })
	e, w := r.v, r.work
	if msg := s.bad(r, true); msg != "" {
		msgs = append(msgs, "Epsilon: "+msg)
		e = math.NaN()
	}
	x := 1.0
	if e > 0 && !math.IsInf(e, 1) {
		x = e
	}
	r = s.guard(t, func(ctx context.Context) (float64, error) { return m.Delta(ctx, x) })
	d := r.v
	w += r.work
	if msg := s.bad(r, false); msg != "" {
		msgs = append(msgs, fmt.Sprintf("Delta(%s): %s", g(x), msg))
		d = math.NaN()
	}
	if s.accountant {
		unbounded := p.sigma < accounting.SigmaFloor
		switch {
		case unbounded && !math.IsNaN(e) && !math.IsInf(e, 1):
			msgs = append(msgs, fmt.Sprintf("Epsilon = %s, want +Inf (σ < SigmaFloor)", g(e)))
		case e == 0 && p.delta < tvLower(p.sigma, math.Max(p.q, accounting.RateFloor)):
			msgs = append(msgs, fmt.Sprintf("Epsilon = 0 but δ < %s, the total variation distance (ε = 0 under-reports)",
				g(tvLower(p.sigma, math.Max(p.q, accounting.RateFloor)))))
		}
		if unbounded && !math.IsNaN(d) && d != 1 {
			msgs = append(msgs, fmt.Sprintf("Delta(%s) = %s, want 1 (σ < SigmaFloor)", g(x), g(d)))
		}
		if !unbounded && d == 0 {
			msgs = append(msgs, fmt.Sprintf("Delta(%s) = 0, want > 0 (never pure DP)", g(x)))
		}
	}
	return strings.Join(msgs, "; "), w
}

// bigOf parses a reference value exactly.
func bigOf(t *testing.T, s string) *big.Float {
	t.Helper()
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		if exp, err := strconv.Atoi(s[i+1:]); (err != nil && strings.HasPrefix(s[i+1:], "-")) || exp < -100000 {
			// Below big.Float's range too: a positive value below every
			// positive float64 stands for it (only 0 compares below).
			return new(big.Float).SetMantExp(big.NewFloat(1), -1<<20)
		}
	}
	f, _, err := big.ParseFloat(s, 10, 400, big.ToNearestEven)
	if err != nil {
		t.Fatalf("reference value %q: %v", s, err)
	}
	return f
}

// cmpExact compares a float64 with an exact reference: -1, 0, +1.
func cmpExact(v float64, ref *big.Float) int {
	if math.IsInf(v, 1) {
		return 1
	}
	return new(big.Float).SetPrec(400).SetFloat64(v).Cmp(ref)
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("reference %q: %v", s, err)
	}
	return v
}

// exactQ1 (accountants): at q = 1, T Gaussians of noise multiplier σ are
// one Gaussian of σ/√T; the exact ε(δ) and δ(ε) (Balle and Wang 2018,
// Theorem 8, mpmath at 200 digits, testdata/conformance/gen.py) bound every
// accountant's answer from below, and a BoundsReporter's interval contains
// them.
func (s *suite) exactQ1(t *testing.T) {
	s.exactTable(t, "conformance/q1_eps.csv", "conformance/q1_delta.csv",
		func(r []string) accounting.Event {
			return accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: atof(t, r[0])}, Count: int(atof(t, r[1]))}
		})
}

// exactTinySigma (accountants): one Gaussian of σ from 1e-10 down to
// 1e-100, where ε ≈ 1/(2σ²) (5e19 to 5e199) and the two terms of the
// Gaussian's privacy profile cancel in float64; exact ε(δ) and δ(ε) at the
// float64 values of σ and ε (mpmath at 400 digits,
// testdata/conformance/gen_tiny_sigma.py). ac once reported ε = 4.99999988e19
// at σ = 1e-10, δ = 0.5 for the exact 4.99999999999999964e19.
func (s *suite) exactTinySigma(t *testing.T) {
	s.exactTable(t, "conformance/q1_tiny_eps.csv", "conformance/q1_tiny_delta.csv",
		func(r []string) accounting.Event {
			return accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: atof(t, r[0])}, Count: int(atof(t, r[1]))}
		})
}

// exactT1 (accountants): one Poisson-subsampled Gaussian step, exact
// hockey-stick divergence (max over add and remove, closed form in Φ).
func (s *suite) exactT1(t *testing.T) {
	s.exactTable(t, "conformance/t1_eps.csv", "conformance/t1_delta.csv",
		func(r []string) accounting.Event {
			return accounting.PoissonSampled{SamplingRate: atof(t, r[1]), Event: accounting.Gaussian{NoiseMultiplier: atof(t, r[0])}}
		})
}

// exactTable checks the rows (key columns 0 and 1, argument column 2,
// exact value column 3) of an ε(δ) and a δ(ε) table.
func (s *suite) exactTable(t *testing.T, epsFile, deltaFile string, event func([]string) accounting.Event) {
	for _, tab := range []struct {
		file  string
		isEps bool
	}{{epsFile, true}, {deltaFile, false}} {
		rows := testref.CSV(t, tab.file)[1:]
		var m accounting.Method
		key := ""
		bad := 0
		report := func(format string, args ...any) {
			t.Helper()
			if bad++; bad <= 20 {
				t.Errorf(format, args...)
			}
		}
		for i, r := range rows {
			if s.opts.ExactStride > 1 && !testenv.Long() && i%s.opts.ExactStride != 0 {
				continue
			}
			if k := r[0] + "," + r[1]; k != key {
				key = k
				var err error
				m, err = s.composed(t, event(r), 1)
				if err != nil {
					t.Fatalf("%s: Compose(%s): %v", tab.file, show(event(r)), err)
				}
			}
			arg, exact := atof(t, r[2]), bigOf(t, r[3])
			where := fmt.Sprintf("%s: %s", tab.file, show(event(r)))
			var got, lo, hi float64
			var berr error
			if tab.isEps {
				got = s.eps(t, where, m, arg)
				if b, ok := m.(accounting.BoundsReporter); ok {
					lo, hi, berr = b.EpsilonBounds(t.Context(), arg)
				}
			} else {
				got = s.delta(t, where, m, arg)
				if b, ok := m.(accounting.BoundsReporter); ok {
					lo, hi, berr = b.DeltaBounds(t.Context(), arg)
				}
			}
			what := map[bool]string{true: "Epsilon", false: "Delta"}[tab.isEps]
			if cmpExact(got, exact) < 0 {
				report("%s: %s(%s) = %s below the exact %s (relative %.3g)", where, what, r[2], g(got), r[3], relGap(got, exact))
			}
			if _, ok := m.(accounting.BoundsReporter); ok {
				switch {
				case berr != nil:
					t.Errorf("%s: %sBounds(%s): %v", where, what, r[2], berr)
				case cmpExact(lo, exact) > 0 || cmpExact(hi, exact) < 0:
					report("%s: %sBounds(%s) = [%s, %s] misses the exact %s", where, what, r[2], g(lo), g(hi), r[3])
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d failures in %d rows (the first 20 shown)", tab.file, bad, len(rows))
		}
	}
}

func relGap(v float64, ref *big.Float) float64 {
	r, _ := ref.Float64()
	if r == 0 {
		return math.Inf(-1)
	}
	return (v - r) / r
}
