package accounting

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// scratchHead is the head of l's first n entries computed from nothing: a
// ledger with l's run id and a copy of its segments, without l's memo.
func scratchHead(t *testing.T, l *Ledger, n int) string {
	t.Helper()
	c := &Ledger{Segments: append([]Segment(nil), l.Segments...), RunID: l.RunID}
	h, err := c.HeadAt(n)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// hashesOf returns the chain entries f hashed (the chainHashes hook).
func hashesOf(f func()) int64 {
	before := chainHashes.Load()
	f()
	return chainHashes.Load() - before
}

// TestLedgerHeadIncremental: the head of a 1e5-entry chained ledger
// extended by one entry costs one hash, and what an epoch of a run does
// with it (its head, its JSON, its Mark, a checkpoint's JSON of it, a
// clone) costs nothing more; a loaded ledger's head is the one its loading
// verified. The old Head hashed the whole chain every time (1e5 + 2
// hashes for one more entry; a 1e6-entry ledger took 0.7 s per head, four
// heads an epoch). Every head equals the one computed from scratch.
func TestLedgerHeadIncremental(t *testing.T) {
	const n = 100000
	step := PoissonSampled{SamplingRate: 0.01, Event: Gaussian{NoiseMultiplier: 1.1}}
	l := chainLedger(t, testRunID, n-1)
	if got := hashesOf(func() { l.Head() }); got != n+1 {
		t.Errorf("first head of %d entries: %d hashes, want %d (h_0 and one per entry)", n, got, n+1)
	}
	if err := l.Record(step, 1); err != nil {
		t.Fatal(err)
	}
	var h string
	if got := hashesOf(func() { h, _ = l.Head() }); got != 1 {
		t.Errorf("head after one more entry: %d hashes, want 1", got)
	}
	if want := scratchHead(t, l, n+1); h != want {
		t.Fatalf("incremental head %.12s, from scratch %.12s", h, want)
	}
	path := filepath.Join(t.TempDir(), "l.json")
	var m Mark
	var loaded *Ledger
	if got := hashesOf(func() {
		if _, err := json.Marshal(l); err != nil {
			t.Fatal(err)
		}
		var err error
		if m, err = l.Mark(); err != nil {
			t.Fatal(err)
		}
		if err := SaveLedger(path, l); err != nil {
			t.Fatal(err)
		}
		if hc, _ := l.Clone().Head(); hc != h {
			t.Errorf("clone's head %.12s, want %.12s", hc, h)
		}
	}); got != 0 {
		t.Errorf("JSON, Mark, SaveLedger and a clone's head of an unchanged ledger: %d hashes, want 0", got)
	}
	if m.Head != h || m.Len != n+1 {
		t.Errorf("Mark = %+v, want {%d %.12s}", m, n+1, h)
	}
	// Loading verifies the head (n+2 hashes); the loaded ledger keeps it.
	if got := hashesOf(func() {
		var err error
		if loaded, err = LoadLedger(path); err != nil {
			t.Fatal(err)
		}
	}); got != n+2 {
		t.Errorf("loading: %d hashes, want %d", got, n+2)
	}
	if err := loaded.Record(step, 2); err != nil {
		t.Fatal(err)
	}
	if got := hashesOf(func() { h, _ = loaded.Head() }); got != 2 {
		t.Errorf("loaded ledger extended by 2: %d hashes, want 2", got)
	}
	if want := scratchHead(t, loaded, n+3); h != want {
		t.Errorf("loaded and extended: head %.12s, from scratch %.12s", h, want)
	}
	// A new segment: one hash per entry as well.
	if err := loaded.Record(Gaussian{NoiseMultiplier: 3}, 3); err != nil {
		t.Fatal(err)
	}
	if got := hashesOf(func() { h, _ = loaded.Head() }); got != 3 {
		t.Errorf("new segment of 3: %d hashes, want 3", got)
	}
	if want := scratchHead(t, loaded, n+6); h != want {
		t.Errorf("after a new segment: head %.12s, from scratch %.12s", h, want)
	}
	// Earlier prefixes are still right (from scratch), and Covers holds.
	for _, k := range []int{0, 1, 2, n, n + 1, n + 4} {
		got, err := loaded.HeadAt(k)
		if err != nil || got != scratchHead(t, loaded, k) {
			t.Errorf("HeadAt(%d) = %.12s, %v; want the head from scratch", k, got, err)
		}
	}
	if err := loaded.Covers(m); err != nil {
		t.Errorf("the extended ledger does not cover its earlier mark: %v", err)
	}
}

// TestLedgerHeadMemoDropped: changes the kept head does not describe (a
// new run id, a truncated or replaced segment list, a changed last
// segment) are not answered from it: the head is the one from scratch.
func TestLedgerHeadMemoDropped(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(l *Ledger)
	}{
		{"run id", func(l *Ledger) { l.RunID = "ffeeddccbbaa99887766554433221100" }},
		{"truncated", func(l *Ledger) { l.Segments = l.Segments[:1] }},
		{"truncated and regrown", func(l *Ledger) {
			l.Segments = l.Segments[:1]
			l.Record(Gaussian{NoiseMultiplier: 2}, 60)
		}},
		{"last count lowered", func(l *Ledger) { l.Segments[1].Count = 10 }},
		{"last event changed", func(l *Ledger) { l.Segments[1].Event = Gaussian{NoiseMultiplier: 5} }},
		{"replaced", func(l *Ledger) {
			l.Segments = []Segment{{Gaussian{NoiseMultiplier: 7}, 1}, {PoissonSampled{SamplingRate: 0.5, Event: Gaussian{NoiseMultiplier: 1}}, 50}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := chainLedger(t, testRunID, 50)
			if _, err := l.Head(); err != nil {
				t.Fatal(err)
			}
			tc.change(l)
			h, err := l.Head()
			if err != nil || h != scratchHead(t, l, l.Len()) {
				t.Errorf("head %.12s, %v; want the head from scratch %.12s", h, err, scratchHead(t, l, l.Len()))
			}
		})
	}
}

// TestLedgerRecordAmortised: Record validates the event it adds and the
// segments it has not seen, not the whole ledger again: one more Record
// on a ledger of 2000 segments validates one event (it validated all 2001
// before, a quadratic cost: 20000 alternating Records took 43 s). A
// segment appended or a tip changed by hand is still validated.
func TestLedgerRecordAmortised(t *testing.T) {
	const segs = 2000
	var l Ledger
	for i := range segs {
		if err := l.Record(Gaussian{NoiseMultiplier: float64(1 + i%2)}, 1); err != nil {
			t.Fatal(err)
		}
	}
	before := eventChecks.Load()
	if err := l.Record(Gaussian{NoiseMultiplier: 3}, 1); err != nil {
		t.Fatal(err)
	}
	if got := eventChecks.Load() - before; got != 1 {
		t.Errorf("Record on %d segments: %d event validations, want 1", segs, got)
	}
	if err := l.Validate(); err != nil || l.Len() != segs+1 || len(l.Segments) != segs+1 {
		t.Fatalf("ledger after the Records: %v, %d entries, %d segments", err, l.Len(), len(l.Segments))
	}
	// A bad segment added by hand is found by the next Record.
	l.Segments = append(l.Segments, Segment{Event: Gaussian{NoiseMultiplier: 1}, Count: 0})
	err := l.Record(Gaussian{NoiseMultiplier: 1}, 1)
	if !errors.Is(err, ErrInvalidParameter) || !strings.Contains(err.Error(), "segment 2001") {
		t.Errorf("Record after a hand-appended count-0 segment: %v, want ErrInvalidParameter naming segment 2001", err)
	}
	// So is a last segment changed in place.
	l.Segments = l.Segments[:segs+1]
	l.Segments[segs].Count = -1
	if err := l.Record(Gaussian{NoiseMultiplier: 1}, 1); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("Record after the last count was set to -1: %v, want ErrInvalidParameter", err)
	}
}

// TestLedgerEqual: Equal compares run id and segments, not the work a
// ledger kept.
func TestLedgerEqual(t *testing.T) {
	a := chainLedger(t, testRunID, 30)
	b := chainLedger(t, testRunID, 10, 20)
	a.Head()
	if !a.Equal(b) || !b.Equal(a) || !a.Equal(a.Clone()) {
		t.Errorf("equal ledgers (one with a computed head) not Equal")
	}
	if c := chainLedger(t, testRunID, 31); a.Equal(c) {
		t.Errorf("ledgers of 31 and 32 entries Equal")
	}
	if c := chainLedger(t, "ffeeddccbbaa99887766554433221100", 30); a.Equal(c) {
		t.Errorf("ledgers of different runs Equal")
	}
	if !(&Ledger{}).Equal(&Ledger{Segments: []Segment{}}) || (&Ledger{}).Equal(nil) {
		t.Errorf("empty ledgers: nil and empty segment lists should be Equal, a nil ledger not")
	}
}
