package accounting

import (
	"crypto/sha256"
	"reflect"
	"sync/atomic"
)

// ledgerMemo is the work a [Ledger] has already done on a prefix of its
// Segments, so that Record and Head cost what was added since, not the
// whole ledger:
//
//   - validation: the first nValid segments passed the checks of
//     [Ledger.Validate] and their counts sum to total;
//   - chain: the chain head after the first pos entries (see [Ledger.Head]),
//     pos = before + within, the last within entries of them in segment seg.
//
// A memo is immutable once made (a Ledger replaces its pointer), so copies
// of a Ledger may share one. It is not part of the ledger's value: compare
// ledgers with [Ledger.Equal].
//
// A memo is used only while the ledger still has the prefix it describes,
// as far as an O(1) check can tell: the same backing array of Segments
// (base), at least the segments it covers, and its last covered segment
// with the same event and at least its count (Record only raises the last
// count or appends). Assigning Segments a new slice, truncating it or
// changing the tip segment drops the memo; an in-place change of an earlier
// segment is not seen (see [Ledger]).
type ledgerMemo struct {
	base *Segment // &Segments[0] when made

	nValid int     // segments validated; 0: none
	total  int     // their count sum
	vTip   Segment // Segments[nValid-1] as validated

	chain  bool   // the chain fields are set
	runID  string // the run id the head was computed under
	seg    int    // segment of the chain tip
	before int    // entries in the segments before seg
	within int    // entries of segment seg covered, 1 ≤ within ≤ its count
	tipEv  Event  // segment seg's event
	evHash [sha256.Size]byte
	head   [sha256.Size]byte
}

// Test hooks: the work Record and Head do, counted so tests can bound it by
// counts rather than time.
var (
	// chainHashes counts the entries hashed into chain heads (one SHA-256
	// block computation each).
	chainHashes atomic.Int64
	// eventChecks counts ledger event validations (one Normalize each).
	eventChecks atomic.Int64
)

// memoFor returns l's memo if it still describes a prefix of l.Segments
// (see ledgerMemo), else nil.
func (l *Ledger) memoFor() *ledgerMemo {
	m := l.memo
	if m == nil || len(l.Segments) == 0 || &l.Segments[0] != m.base {
		return nil
	}
	return m
}

// validPrefix returns the number of leading segments m validated and their
// count sum, if they are still l's (0, 0 otherwise).
func (m *ledgerMemo) validPrefix(segs []Segment) (n, total int) {
	if m == nil || m.nValid == 0 || len(segs) < m.nValid {
		return 0, 0
	}
	tip := segs[m.nValid-1]
	if tip.Count != m.vTip.Count || !reflect.DeepEqual(tip.Event, m.vTip.Event) {
		return 0, 0
	}
	return m.nValid, m.total
}

// chainTip reports whether m's chain head is of a prefix of segs under
// runID.
func (m *ledgerMemo) chainTip(segs []Segment, runID string) bool {
	if m == nil || !m.chain || m.runID != runID || len(segs) <= m.seg {
		return false
	}
	s := segs[m.seg]
	return s.Count >= m.within && reflect.DeepEqual(s.Event, m.tipEv)
}

// rebased returns a copy of m for the same segments in another backing
// array (a clone's).
func (m *ledgerMemo) rebased(base *Segment) *ledgerMemo {
	c := *m
	c.base = base
	return &c
}

// setChain copies o's chain fields into m.
func (m *ledgerMemo) setChain(o *ledgerMemo) {
	m.chain, m.runID, m.seg, m.before, m.within = o.chain, o.runID, o.seg, o.before, o.within
	m.tipEv, m.evHash, m.head = o.tipEv, o.evHash, o.head
}
