package accounting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"

	"github.com/dpcalc/dpcalc/internal/atomicfile"
)

// Segment is Count adaptive repetitions of Event in a [Ledger].
type Segment struct {
	Event Event
	Count int
}

// Ledger is the run-length compressed record of every mechanism a run has
// applied to its data, in order: consecutive repetitions of one event are
// stored as a single [Segment] with a count, so a training run of T identical
// steps costs one segment, not T.
//
// A ledger says what was run, not how much privacy it cost: [Ledger.Replay]
// composes it into any [Accountant]. It serialises to JSON with type-tagged
// events (see [MarshalEvent]), so the CLI can save it, reload it and replay it
// under a different accountant.
//
// The zero value is an empty ledger ready to use. A Ledger is not safe for
// concurrent use.
type Ledger struct {
	Segments []Segment
}

// Record appends count repetitions of e, merging with the last segment when
// e equals its event. It returns a *ParamError for count < 1, for a
// SelfComposed inside e with Count < 1, and for a count that would take the
// ledger's total ([Ledger.Len]) past math.MaxInt; and an
// *UnsupportedEventError for a nil (or nil-containing) event. On error the
// ledger is unchanged.
func (l *Ledger) Record(e Event, count int) error {
	if count < 1 {
		return &ParamError{Name: "count", Value: float64(count), Want: ">= 1"}
	}
	if err := checkLedgerEvent(e); err != nil {
		return err
	}
	total, err := l.total()
	if err != nil {
		return err
	}
	if count > math.MaxInt-total {
		return &ParamError{Name: "count", Value: float64(count),
			Want: fmt.Sprintf("a ledger total of at most %d (the ledger holds %d)", math.MaxInt, total)}
	}
	if n := len(l.Segments); n > 0 && reflect.DeepEqual(l.Segments[n-1].Event, e) {
		l.Segments[n-1].Count += count
		return nil
	}
	l.Segments = append(l.Segments, Segment{Event: e, Count: count})
	return nil
}

// Len returns the total number of recorded mechanism applications (the sum
// of the segment counts). Record, UnmarshalJSON and LoadLedger keep it at
// most math.MaxInt; for a ledger whose Segments were set by hand with counts
// summing past that, Len returns math.MaxInt instead of wrapping (and
// [Ledger.Validate] reports the problem).
func (l *Ledger) Len() int {
	n := 0
	for _, s := range l.Segments {
		if s.Count > 0 && n > math.MaxInt-s.Count {
			return math.MaxInt
		}
		n += s.Count
	}
	return n
}

// Validate reports whether the ledger is one Record could have built: every
// segment count ≥ 1, the counts summing to at most math.MaxInt, and every
// event non-nil at every depth with SelfComposed counts ≥ 1. Errors are
// *ParamError or *UnsupportedEventError, wrapped with the segment index.
func (l *Ledger) Validate() error {
	_, err := l.total()
	return err
}

// total returns Len, or the first reason the ledger is invalid.
func (l *Ledger) total() (int, error) {
	return validateSegments(l.Segments)
}

func validateSegments(segs []Segment) (int, error) {
	n := 0
	for i, s := range segs {
		if err := checkLedgerEvent(s.Event); err != nil {
			return 0, fmt.Errorf("accounting: ledger segment %d: %w", i, err)
		}
		if s.Count < 1 {
			return 0, fmt.Errorf("accounting: ledger segment %d: %w", i, &ParamError{Name: "count", Value: float64(s.Count), Want: ">= 1"})
		}
		if s.Count > math.MaxInt-n {
			return 0, fmt.Errorf("accounting: ledger segment %d: %w", i, &ParamError{Name: "count", Value: float64(s.Count),
				Want: fmt.Sprintf("a ledger total of at most %d (segments before it hold %d)", math.MaxInt, n)})
		}
		n += s.Count
	}
	return n, nil
}

// checkLedgerEvent rejects nil events and SelfComposed counts < 1 at any
// depth.
func checkLedgerEvent(e Event) error {
	if err := checkEventTree(e, "event"); err != nil {
		return err
	}
	return checkNestedCounts(e)
}

func checkNestedCounts(e Event) error {
	switch e := e.(type) {
	case PoissonSampled:
		return checkNestedCounts(e.Event)
	case SelfComposed:
		if e.Count < 1 {
			return &ParamError{Name: "count", Value: float64(e.Count), Want: ">= 1 in SelfComposed"}
		}
		return checkNestedCounts(e.Event)
	case Composed:
		for _, s := range e.Events {
			if err := checkNestedCounts(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// Clone returns a deep copy of the segment list (events are immutable
// values, so they are shared).
func (l *Ledger) Clone() *Ledger {
	return &Ledger{Segments: append([]Segment(nil), l.Segments...)}
}

// Event returns the whole ledger as one event: Composed of SelfComposed
// segments, or NoOp when the ledger is empty.
func (l *Ledger) Event() Event {
	if len(l.Segments) == 0 {
		return NoOp{}
	}
	evs := make([]Event, len(l.Segments))
	for i, s := range l.Segments {
		evs[i] = SelfComposed{Event: s.Event, Count: s.Count}
	}
	return Composed{Events: evs}
}

// Replay composes every segment, in order, into acc. Replay into a fresh
// accountant gives the privacy cost of the recorded run. On error the
// returned error names the segment; segments before it have been composed.
func (l *Ledger) Replay(acc Accountant) error {
	for i, s := range l.Segments {
		if err := acc.Compose(s.Event, s.Count); err != nil {
			return fmt.Errorf("accounting: ledger segment %d: %w", i, err)
		}
	}
	return nil
}

// ledgerJSON is the on-disk form: {"format":"dpcalc-ledger","version":1,"segments":[{"event":{...},"count":n}]}.
type ledgerJSON struct {
	Format   string        `json:"format"`
	Version  int           `json:"version"`
	Segments []segmentJSON `json:"segments"`
}

type segmentJSON struct {
	Event json.RawMessage `json:"event"`
	Count int             `json:"count"`
}

const ledgerFormat = "dpcalc-ledger"

// MarshalJSON encodes the ledger with type-tagged events. It refuses a
// ledger that fails [Ledger.Validate].
func (l Ledger) MarshalJSON() ([]byte, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	out := ledgerJSON{Format: ledgerFormat, Version: 1, Segments: make([]segmentJSON, len(l.Segments))}
	for i, s := range l.Segments {
		b, err := MarshalEvent(s.Event)
		if err != nil {
			return nil, fmt.Errorf("accounting: ledger segment %d: %w", i, err)
		}
		out.Segments[i] = segmentJSON{Event: b, Count: s.Count}
	}
	return json.Marshal(out)
}

// UnmarshalJSON decodes a ledger written by MarshalJSON. It rejects unknown
// formats, versions and event types, counts < 1 (SelfComposed ones too) and
// counts that sum past math.MaxInt; on error l is unchanged.
func (l *Ledger) UnmarshalJSON(b []byte) error {
	var in ledgerJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("accounting: ledger: %w", err)
	}
	if in.Format != ledgerFormat {
		return fmt.Errorf("accounting: ledger: format %q, want %q", in.Format, ledgerFormat)
	}
	if in.Version != 1 {
		return fmt.Errorf("accounting: ledger: version %d, want 1", in.Version)
	}
	segs := make([]Segment, len(in.Segments))
	for i, s := range in.Segments {
		e, err := UnmarshalEvent(s.Event)
		if err != nil {
			return fmt.Errorf("accounting: ledger segment %d: %w", i, err)
		}
		segs[i] = Segment{Event: e, Count: s.Count}
	}
	if _, err := validateSegments(segs); err != nil {
		return err
	}
	l.Segments = segs
	return nil
}

// SaveLedger writes l as JSON to path atomically: it writes a temporary file
// in the same directory, syncs it, and renames it over path, so a reader sees
// either the old file or the complete new one.
func SaveLedger(path string, l *Ledger) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// LoadLedger reads a ledger written by SaveLedger.
func LoadLedger(path string) (*Ledger, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("accounting: %w", err)
	}
	l := new(Ledger)
	if err := json.Unmarshal(b, l); err != nil {
		return nil, fmt.Errorf("accounting: %s: %w", path, err)
	}
	return l, nil
}

// writeFileAtomic writes b to path atomically (temp file in the same
// directory, fsync, rename, directory fsync; see internal/atomicfile), mode
// 0600: a reader sees the old file or the complete new one.
func writeFileAtomic(path string, b []byte) error {
	if err := atomicfile.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("accounting: %w", err)
	}
	return nil
}
