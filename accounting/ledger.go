package accounting

import (
	"bytes"
	"encoding/json"
	"fmt"
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
// e equals its event. It returns a *ParamError for count < 1 and an
// *UnsupportedEventError for a nil (or nil-containing) event; on error the
// ledger is unchanged.
func (l *Ledger) Record(e Event, count int) error {
	if count < 1 {
		return &ParamError{Name: "count", Value: float64(count), Want: ">= 1"}
	}
	if err := checkEventTree(e, "event"); err != nil {
		return err
	}
	if n := len(l.Segments); n > 0 && reflect.DeepEqual(l.Segments[n-1].Event, e) {
		if l.Segments[n-1].Count > int(^uint(0)>>1)-count {
			return &ParamError{Name: "count", Value: float64(count), Want: "a total that fits in int"}
		}
		l.Segments[n-1].Count += count
		return nil
	}
	l.Segments = append(l.Segments, Segment{Event: e, Count: count})
	return nil
}

// Len returns the total number of recorded mechanism applications (the sum
// of the segment counts).
func (l *Ledger) Len() int {
	n := 0
	for _, s := range l.Segments {
		n += s.Count
	}
	return n
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

// MarshalJSON encodes the ledger with type-tagged events.
func (l Ledger) MarshalJSON() ([]byte, error) {
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
// formats, versions, event types and counts < 1; on error l is unchanged.
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
		if s.Count < 1 {
			return fmt.Errorf("accounting: ledger segment %d: %w", i, &ParamError{Name: "count", Value: float64(s.Count), Want: ">= 1"})
		}
		segs[i] = Segment{Event: e, Count: s.Count}
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
