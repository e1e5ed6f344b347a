package accounting

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strings"

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
// composes it into any [Method]. It serialises to JSON with events in
// dp_accounting's DpEvent form (see [MarshalEvent]) and a SHA-256 checksum
// of its contents, so the
// CLI can save it, reload it (refusing a corrupted file) and replay it under
// a different accountant.
//
// A ledger with a RunID is also a hash chain (see [Ledger.Head]): every
// entry chains on the head before it, so a state of the ledger that an
// output was released at (a [Mark]) can later be checked against the
// ledger with [Ledger.Covers], and a ledger that was rolled back, replaced
// or belongs to another run is told apart from one that extends the state.
//
// Record validates only what it adds and [Ledger.Head] hashes only the
// entries added since the last head was computed: both keep what they did
// for the prefix they saw. Build a ledger with Record (or decode one), or
// assign Segments a whole new slice; do not change a recorded segment in
// place (its Event or Count) and then call Record or Head: the kept work
// would no longer describe it. [Ledger.Validate], MarshalJSON and
// [SaveLedger] always check the whole ledger.
//
// The zero value is an empty ledger ready to use. A Ledger is not safe for
// concurrent use.
type Ledger struct {
	Segments []Segment
	// RunID identifies the run the ledger belongs to (see [NewRunID]);
	// empty for an unchained ledger (no head), as every ledger was before
	// format version 4.
	RunID string

	// memo is work done on a prefix of Segments (validation, chain head),
	// so that Record and Head cost what was added since (see ledgerMemo).
	// It is not part of the ledger's value: compare ledgers with
	// [Ledger.Equal], not reflect.DeepEqual.
	memo *ledgerMemo
}

// Record appends count repetitions of e, merging with the last segment when
// e equals its event. It returns a *ParamError for count < 1, for a
// SelfComposed inside e with Count < 1, and for a count that would take the
// ledger's total ([Ledger.Len]) past math.MaxInt; and an
// *UnsupportedEventError for a nil (or nil-containing) event. It refuses
// to extend a ledger that fails [Ledger.Validate] (it checks the segments
// it has not seen before: O(1) amortised per call for a ledger built by
// Record). On error the ledger is unchanged.
func (l *Ledger) Record(e Event, count int) error {
	if count < 1 {
		return &ParamError{Name: "count", Value: float64(count), Want: ">= 1"}
	}
	if err := checkLedgerEvent(e); err != nil {
		return err
	}
	m := l.memoFor()
	nv, total := m.validPrefix(l.Segments)
	total, err := validateSegmentsFrom(l.Segments, nv, total)
	if err != nil {
		return err
	}
	if count > math.MaxInt-total {
		return &ParamError{Name: "count", Value: float64(count),
			Want: fmt.Sprintf("a ledger total of at most %d (the ledger holds %d)", math.MaxInt, total)}
	}
	if l.RunID != "" && count > MaxChainEntries-total {
		return &ParamError{Name: "count", Value: float64(count),
			Want: fmt.Sprintf("a chained ledger total of at most %d (the ledger holds %d)", MaxChainEntries, total)}
	}
	keepChain := m.chainTip(l.Segments, l.RunID) // still a prefix after the change
	if n := len(l.Segments); n > 0 && reflect.DeepEqual(l.Segments[n-1].Event, e) {
		l.Segments[n-1].Count += count
	} else {
		l.Segments = append(l.Segments, Segment{Event: e, Count: count})
	}
	nm := &ledgerMemo{base: &l.Segments[0], nValid: len(l.Segments), total: total + count, vTip: l.Segments[len(l.Segments)-1]}
	if keepChain {
		nm.setChain(m)
	}
	l.memo = nm
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
	return validateSegmentsFrom(segs, 0, 0)
}

// validateSegmentsFrom validates segs[from:] given that segs[:from] are
// valid with counts summing to n, and returns the total.
func validateSegmentsFrom(segs []Segment, from, n int) (int, error) {
	for i := from; i < len(segs); i++ {
		s := segs[i]
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

// checkLedgerEvent validates e as [Normalize] does: a ledger holds only
// events some method could bound.
func checkLedgerEvent(e Event) error {
	eventChecks.Add(1)
	_, err := Normalize(e, 1)
	return err
}

// Clone returns a deep copy of the segment list (events are immutable
// values, so they are shared). The copy keeps the work done on l (its
// chain head costs nothing more).
func (l *Ledger) Clone() *Ledger {
	c := &Ledger{Segments: append([]Segment(nil), l.Segments...), RunID: l.RunID}
	if m := l.memoFor(); m != nil {
		c.memo = m.rebased(&c.Segments[0])
	}
	return c
}

// Equal reports whether l and o hold the same ledger: the same run id and
// the same segments (events compared with reflect.DeepEqual; a nil and an
// empty segment list are equal). Use it rather than reflect.DeepEqual on
// Ledgers, which also compares the work a ledger keeps (see [Ledger]).
func (l *Ledger) Equal(o *Ledger) bool {
	if l == nil || o == nil {
		return l == o
	}
	if l.RunID != o.RunID || len(l.Segments) != len(o.Segments) {
		return false
	}
	for i, s := range l.Segments {
		if s.Count != o.Segments[i].Count || !reflect.DeepEqual(s.Event, o.Segments[i].Event) {
			return false
		}
	}
	return true
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
func (l *Ledger) Replay(acc Method) error {
	for i, s := range l.Segments {
		if err := acc.Compose(s.Event, s.Count); err != nil {
			return fmt.Errorf("accounting: ledger segment %d: %w", i, err)
		}
	}
	return nil
}

// On-disk form, version 4 (a chained ledger, one with a RunID):
//
//	{"format":"dpcalc-ledger","version":4,"run_id":"<32 hex digits>",
//	 "head":"<64 hex digits>","sha256":"<64 hex digits>",
//	 "segments":[{"event":{...},"count":n},...]}
//
// head is the chain head of all entries (see [Ledger.Head]); a reader
// recomputes it from run_id and the segments and refuses a mismatch. The
// checksum's canonical payload is {"format","version","run_id","head",
// "segments"} in this order, compact, as for version 3. An unchained
// ledger (no RunID) is still written as version 3, byte for byte as before.
//
// Version 3:
//
//	{"format":"dpcalc-ledger","version":3,"sha256":"<64 hex digits>",
//	 "segments":[{"event":{...},"count":n},...]}
//
// Each event is in dp_accounting's DpEvent form, as MarshalEvent writes it
// (so segments[i].event with segments[i].count can be handed to
// dp_accounting as SelfComposedDpEvent(event, count)). sha256 is the
// SHA-256, in lower-case hex, of the canonical payload: the compact JSON
// {"format":"dpcalc-ledger","version":3,"segments":[...]} (no sha256 field,
// no white space, events as MarshalEvent writes them, fields in this
// order). A reader decodes the segments, re-encodes them
// canonically and compares the hashes, so any change to what the file
// means (a digit of a count, σ or q, an event type, a dropped segment) is
// refused, while white space and other changes that decode to the same
// ledger are not errors.
//
// Version 2 is version 3 with the legacy "type"-tagged events
// (ledger_event.go) in the segments and in the canonical payload; it is
// still read (checksum verified against the legacy encoding) and never
// written. Version 1 is version 2 without the sha256 field.
// [Ledger.UnmarshalJSON] still accepts it, for ledgers embedded in
// containers that carry their own checksum (trainer checkpoints written
// before version 2); [LoadLedger] refuses it (see there).
type ledgerJSON struct {
	Format   string        `json:"format"`
	Version  int           `json:"version"`
	RunID    string        `json:"run_id,omitempty"`
	Head     string        `json:"head,omitempty"`
	SHA256   string        `json:"sha256,omitempty"`
	Segments []segmentJSON `json:"segments"`
}

type segmentJSON struct {
	Event json.RawMessage `json:"event"`
	Count int             `json:"count"`
}

const (
	ledgerFormat  = "dpcalc-ledger"
	ledgerVersion = 3
	// chainVersion is the format version of a chained ledger.
	chainVersion = 4
)

// ledgerError is a ledger decoding error: one line, "accounting: <where>:
// <what>", where is "ledger" or "ledger file <path>". It unwraps to the
// cause (a *ParamError for a bad count, an *UnsupportedEventError, a
// *json.SyntaxError, ...), if any.
type ledgerError struct {
	where, what string
	err         error
}

func (e *ledgerError) Error() string { return "accounting: " + e.where + ": " + e.what }
func (e *ledgerError) Unwrap() error { return e.err }

// ledgerProblem is what is wrong with a ledger, without the location.
type ledgerProblem struct {
	what string
	err  error
}

func problem(err error, format string, args ...any) *ledgerProblem {
	return &ledgerProblem{what: oneLine(fmt.Sprintf(format, args...)), err: err}
}

// oneLine drops the "accounting: " prefixes of nested messages and any line
// breaks, so the final error reads as one line with one prefix.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "accounting: ", "")
	return strings.Join(strings.Fields(s), " ")
}

// canonicalSegments encodes segs as the payload's segment list of a
// ledger of the given version (3: MarshalEvent; 1 and 2: the legacy form).
func canonicalSegments(segs []Segment, version int) ([]segmentJSON, error) {
	marshal := MarshalEvent
	if version < 3 {
		marshal = marshalLegacyEvent
	}
	out := make([]segmentJSON, len(segs))
	for i, s := range segs {
		b, err := marshal(s.Event)
		if err != nil {
			return nil, fmt.Errorf("accounting: ledger segment %d: %w", i, err)
		}
		out[i] = segmentJSON{Event: b, Count: s.Count}
	}
	return out, nil
}

// ledgerChecksum returns the lower-case hex SHA-256 of the canonical
// payload of segs in a ledger of the given version, run id and head (both
// empty below version 4; see ledgerJSON).
func ledgerChecksum(segs []segmentJSON, version int, runID, head string) (string, error) {
	b, err := json.Marshal(ledgerJSON{Format: ledgerFormat, Version: version, RunID: runID, Head: head, Segments: segs})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// MarshalJSON encodes the ledger with events in dp_accounting's DpEvent
// form and its checksum: format version 4 with its run id and chain head
// for a chained ledger, else version 3. It refuses a ledger that fails
// [Ledger.Validate] or holds an event with no JSON encoding (e.g. a
// non-finite σ).
func (l Ledger) MarshalJSON() ([]byte, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	version, head := ledgerVersion, ""
	if l.RunID != "" {
		h, err := l.Head()
		if err != nil {
			return nil, err
		}
		version, head = chainVersion, h
	}
	segs, err := canonicalSegments(l.Segments, version)
	if err != nil {
		return nil, err
	}
	sum, err := ledgerChecksum(segs, version, l.RunID, head)
	if err != nil {
		return nil, fmt.Errorf("accounting: ledger: %w", err)
	}
	return json.Marshal(ledgerJSON{Format: ledgerFormat, Version: version, RunID: l.RunID, Head: head, SHA256: sum, Segments: segs})
}

// UnmarshalJSON decodes a ledger written by MarshalJSON: exactly one JSON
// value, format "dpcalc-ledger", version 4 (chained: its head must match
// its run id and segments), 3 (or 2, with legacy events) with
// a checksum that matches the decoded segments, or version 1 without one (accepted unverified, for
// ledgers inside checkpoints that have their own checksum; LoadLedger
// refuses version 1 files). It rejects unknown fields, event types, counts
// < 1 and totals past math.MaxInt. Errors are one line; on error l is
// unchanged.
func (l *Ledger) UnmarshalJSON(b []byte) error {
	d, p := decodeLedger(b)
	if p != nil {
		return &ledgerError{where: "ledger", what: p.what, err: p.err}
	}
	l.Segments, l.RunID, l.memo = d.segs, d.runID, d.memo
	return nil
}

// decoded is a verified ledger, its format version and the work its
// verification did (validation, chain head).
type decoded struct {
	segs    []Segment
	runID   string
	version int
	memo    *ledgerMemo
}

// decodeLedger decodes and verifies b.
func decodeLedger(b []byte) (decoded, *ledgerProblem) {
	if len(bytes.TrimSpace(b)) == 0 {
		return decoded{}, problem(nil, "empty")
	}
	var in ledgerJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return decoded{}, problem(err, "truncated (JSON ends after %d bytes)", len(b))
		case errors.As(err, &se):
			return decoded{}, problem(err, "not valid JSON at byte %d: %v", se.Offset, err)
		}
		return decoded{}, problem(err, "%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return decoded{}, problem(err, "data after the ledger at byte %d", dec.InputOffset())
	}
	if in.Format != ledgerFormat {
		return decoded{}, problem(nil, "format %q, want %q", in.Format, ledgerFormat)
	}
	switch in.Version {
	case 1:
		if in.SHA256 != "" {
			return decoded{}, problem(nil, "version 1 ledgers have no sha256 field (corrupted version number?)")
		}
	case 2, ledgerVersion, chainVersion:
		if in.SHA256 == "" {
			return decoded{}, problem(nil, "version %d ledger without its sha256 checksum", in.Version)
		}
		if in.Segments == nil {
			return decoded{}, problem(nil, "version %d ledger without a segments list", in.Version)
		}
	default:
		return decoded{}, problem(nil, "version %d, want %d or %d (or 2 or 1)", in.Version, chainVersion, ledgerVersion)
	}
	switch {
	case in.Version == chainVersion && !validRunID(in.RunID):
		return decoded{}, problem(nil, "version %d ledger with run_id %q, want %d lower-case hex digits", in.Version, in.RunID, runIDLen)
	case in.Version == chainVersion && in.Head == "":
		return decoded{}, problem(nil, "version %d ledger without its chain head", in.Version)
	case in.Version < chainVersion && (in.RunID != "" || in.Head != ""):
		return decoded{}, problem(nil, "version %d ledgers have no run_id or head (corrupted version number?)", in.Version)
	}
	unmarshal := UnmarshalEvent
	if in.Version < 3 {
		unmarshal = unmarshalLegacyEvent
	}
	segs := make([]Segment, len(in.Segments))
	for i, s := range in.Segments {
		e, err := unmarshal(s.Event)
		if err != nil {
			if in.Version < 3 {
				return decoded{}, problem(err, "segment %d: %v (a version %d ledger holds legacy \"type\"-tagged events)", i, err, in.Version)
			}
			return decoded{}, problem(err, "segment %d: %v", i, err)
		}
		segs[i] = Segment{Event: e, Count: s.Count}
	}
	n, err := validateSegments(segs)
	if err != nil {
		return decoded{}, problem(err, "%s", strings.TrimPrefix(oneLine(err.Error()), "ledger "))
	}
	dl := &Ledger{Segments: segs, RunID: in.RunID}
	if len(segs) > 0 {
		dl.memo = &ledgerMemo{base: &segs[0], nValid: len(segs), total: n, vTip: segs[len(segs)-1]}
	}
	if in.Version == chainVersion {
		if n > MaxChainEntries {
			return decoded{}, problem(nil, "chained ledger of %d entries, at most %d", n, MaxChainEntries)
		}
		head, err := dl.Head()
		if err != nil {
			return decoded{}, problem(err, "%v", err)
		}
		if head != in.Head {
			return decoded{}, problem(nil, "chain head mismatch: the file records head %.12s…, its run id and segments give %.12s… "+
				"(corrupted or edited; restore it from a copy)", in.Head, head)
		}
	}
	if in.Version >= 2 {
		canon, err := canonicalSegments(segs, in.Version)
		if err != nil {
			return decoded{}, problem(err, "%v", err)
		}
		sum, err := ledgerChecksum(canon, in.Version, in.RunID, in.Head)
		if err != nil {
			return decoded{}, problem(err, "%v", err)
		}
		if in.SHA256 != sum {
			return decoded{}, problem(nil, "checksum mismatch: the file records sha256 %.12s…, its contents hash to %.12s… "+
				"(corrupted or edited; restore it from a copy)", in.SHA256, sum)
		}
	}
	return decoded{segs: segs, runID: in.RunID, version: in.Version, memo: dl.memo}, nil
}

// SaveLedger writes l as indented JSON (format version 4 if chained, else 3, with its checksum)
// to path atomically: it writes a temporary file in the same directory, syncs
// it, and renames it over path, so a reader sees either the old file or the
// complete new one.
func SaveLedger(path string, l *Ledger) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// LoadLedger reads a ledger written by SaveLedger and verifies its checksum.
// A truncated, corrupted or edited file is refused with a one-line error
// naming the file and what is wrong; no partial ledger is returned.
//
// Version 1 files (written before the checksum was added) are refused too:
// they cannot be told apart from corrupted ones. To keep using one whose
// contents you trust, decode it with json.Unmarshal into a Ledger (which
// still accepts version 1) and write it again with SaveLedger.
func LoadLedger(path string) (*Ledger, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("accounting: %w", err)
	}
	return parseLedgerFile(path, b)
}

// parseLedgerFile is LoadLedger after reading the file.
func parseLedgerFile(path string, b []byte) (*Ledger, error) {
	where := "ledger file " + path
	d, p := decodeLedger(b)
	if p != nil {
		return nil, &ledgerError{where: where, what: p.what, err: p.err}
	}
	if d.version == 1 {
		return nil, &ledgerError{where: where, what: "version 1 ledger files have no checksum and are no longer loaded; " +
			"if you trust it, json.Unmarshal it into an accounting.Ledger and write it again with SaveLedger"}
	}
	return &Ledger{Segments: d.segs, RunID: d.runID, memo: d.memo}, nil
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
