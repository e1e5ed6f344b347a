package accounting

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// The hash chain of a ledger with a RunID. Its entries are the ledger's
// mechanism applications one by one (a segment of count k is k entries), so
// a head depends on what was recorded, not on how the appends were grouped
// into segments or file writes:
//
//	h_0 = SHA-256("dpcalc-ledger-chain\n" ‖ run id)
//	h_i = SHA-256(h_(i-1) ‖ SHA-256(event_i))
//
// with event_i in its canonical JSON encoding ([MarshalEvent]). The head of
// the first n entries is h_n in lower-case hex. Two ledgers of one run with
// equal heads at n agree on their first n entries (up to a SHA-256
// collision); ledgers of different runs have different heads from h_0 on.
const chainDomain = "dpcalc-ledger-chain\n"

// runIDLen is the length of a run id: 128 random bits in hex.
const runIDLen = 32

// MaxChainEntries is the most entries a chained ledger holds: computing a
// head from scratch (as decoding a ledger does) costs one SHA-256 per entry
// (about 0.15–0.7 s per million), and no training run comes near this many
// steps.
const MaxChainEntries = 1 << 26

// NewRunID returns a fresh run id: 128 bits from crypto/rand in
// lower-case hex.
func NewRunID() (string, error) {
	var b [runIDLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("accounting: run id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// ValidRunID reports whether id has the form [NewRunID] returns.
func ValidRunID(id string) bool { return validRunID(id) }

func validRunID(id string) bool {
	if len(id) != runIDLen {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Mark is the state of a chained ledger that an output was released at
// (or a checkpoint written at): its length and its chain head then. Head is
// empty for a state of an unchained ledger, whose length alone is known.
type Mark struct {
	Len  int    `json:"ledger_len"`
	Head string `json:"ledger_head,omitempty"`
}

// Head returns the chain head of the whole ledger (see HeadAt); "" for an
// unchained ledger (no RunID).
func (l *Ledger) Head() (string, error) {
	return l.HeadAt(l.Len())
}

// Mark returns the ledger's current [Mark].
func (l *Ledger) Mark() (Mark, error) {
	h, err := l.Head()
	return Mark{Len: l.Len(), Head: h}, err
}

// HeadAt returns the chain head of the ledger's first n entries, 0 ≤ n ≤
// [Ledger.Len]; "" for an unchained ledger. It costs one SHA-256 per entry
// past the longest prefix whose head the ledger has computed before (kept
// by Head, HeadAt, Record, Clone and decoding; see [Ledger]), so the head
// of a ledger extended by k entries costs k, not its length; an n before
// that prefix costs n.
func (l *Ledger) HeadAt(n int) (string, error) {
	if l.RunID == "" {
		return "", nil
	}
	if !validRunID(l.RunID) {
		return "", fmt.Errorf("accounting: ledger run id %q, want %d lower-case hex digits", l.RunID, runIDLen)
	}
	if n < 0 || n > l.Len() {
		return "", &ParamError{Name: "n", Value: float64(n), Want: fmt.Sprintf("in [0, %d] (the ledger's length)", l.Len())}
	}
	if n > MaxChainEntries {
		return "", &ParamError{Name: "n", Value: float64(n), Want: fmt.Sprintf("<= %d (the most entries a chained ledger holds)", MaxChainEntries)}
	}
	// Start from the kept head if it is of a prefix of the first n entries.
	m := l.memoFor()
	var h [sha256.Size]byte
	var tip ledgerMemo // the chain fields of the new tip
	i, pos, before, skip := 0, 0, 0, 0
	if m.chainTip(l.Segments, l.RunID) && n >= m.before+m.within {
		tip.setChain(m)
		h, i, before, skip = m.head, m.seg, m.before, m.within
		pos = before + skip
	} else {
		h = sha256.Sum256([]byte(chainDomain + l.RunID))
		chainHashes.Add(1)
	}
	var buf [2 * sha256.Size]byte
	for ; pos < n; i++ {
		s := l.Segments[i]
		var e [sha256.Size]byte
		if tip.chain && i == tip.seg {
			e = tip.evHash
		} else {
			b, err := MarshalEvent(s.Event)
			if err != nil {
				return "", fmt.Errorf("accounting: ledger segment %d: %w", i, err)
			}
			e = sha256.Sum256(b)
		}
		copy(buf[sha256.Size:], e[:])
		k := min(s.Count-skip, n-pos)
		for range k {
			copy(buf[:sha256.Size], h[:])
			h = sha256.Sum256(buf[:])
		}
		chainHashes.Add(int64(k))
		pos += k
		if k > 0 {
			tip = ledgerMemo{chain: true, runID: l.RunID, seg: i, before: before, within: skip + k, tipEv: s.Event, evHash: e, head: h}
		}
		before += s.Count
		skip = 0
	}
	if tip.chain && (m == nil || !m.chainTip(l.Segments, l.RunID) || tip.before+tip.within > m.before+m.within) {
		nm := &ledgerMemo{base: &l.Segments[0]}
		if m != nil {
			nm.nValid, nm.total, nm.vTip = m.nValid, m.total, m.vTip
		}
		nm.setChain(&tip)
		l.memo = nm
	}
	return hex.EncodeToString(h[:]), nil
}

// Covers returns nil if the ledger holds the state m: at least m.Len
// entries and, if m has a head, the head of its first m.Len entries equal
// to it. Otherwise the error says which part failed (the ledger is behind
// m, or it differs from it: rolled back and redone, replaced, or another
// run's). A mark with a head is never covered by an unchained ledger.
func (l *Ledger) Covers(m Mark) error {
	n := l.Len()
	if n < m.Len {
		return fmt.Errorf("accounting: the ledger holds %d entries, fewer than the %d of the state it must hold (it was rolled back or replaced)", n, m.Len)
	}
	if m.Head == "" {
		return nil
	}
	if l.RunID == "" {
		return fmt.Errorf("accounting: the ledger is unchained (no run id), the state it must hold is of chained run at %d entries, head %.12s…", m.Len, m.Head)
	}
	h, err := l.HeadAt(m.Len)
	if err != nil {
		return err
	}
	if h != m.Head {
		return fmt.Errorf("accounting: the ledger's first %d entries have head %.12s…, not the %.12s… of the state it must hold (it was rolled back and redone, replaced, or belongs to another run)", m.Len, h, m.Head)
	}
	return nil
}
