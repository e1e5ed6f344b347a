package accounting

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testRunID = "00112233445566778899aabbccddeeff"

func chainLedger(t *testing.T, runID string, counts ...int) *Ledger {
	t.Helper()
	l := &Ledger{RunID: runID}
	if err := l.Record(Gaussian{NoiseMultiplier: 7}, 1); err != nil {
		t.Fatal(err)
	}
	for _, c := range counts {
		if err := l.Record(PoissonSampled{SamplingRate: 0.03, Event: Gaussian{NoiseMultiplier: 1.1}}, c); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// TestLedgerChainHeads: a head depends on the entries, not on how they were
// appended; a prefix's head is the head the shorter ledger had; another run
// id gives other heads from the first entry on.
func TestLedgerChainHeads(t *testing.T) {
	a := chainLedger(t, testRunID, 75, 75)
	b := chainLedger(t, testRunID, 150)
	ha, _ := a.Head()
	hb, _ := b.Head()
	if ha == "" || ha != hb {
		t.Fatalf("heads of one ledger appended 75+75 and 150: %q, %q", ha, hb)
	}
	short := chainLedger(t, testRunID, 75)
	hs, _ := short.Head()
	if h, _ := a.HeadAt(76); h != hs {
		t.Errorf("HeadAt(76) = %.12s, the 76-entry ledger's head %.12s", h, hs)
	}
	other := chainLedger(t, "ffeeddccbbaa99887766554433221100", 150)
	for _, n := range []int{0, 1, 151} {
		h1, _ := a.HeadAt(n)
		h2, _ := other.HeadAt(n)
		if h1 == h2 {
			t.Errorf("runs with different ids share the head at %d", n)
		}
	}
	if h, _ := (&Ledger{}).Head(); h != "" {
		t.Errorf("unchained ledger has head %q", h)
	}
}

// TestLedgerCovers: the rolled back ledger of the review (75 entries after
// 150 were released) is refused against the released mark, and so is a
// ledger of the same length redone with other events, while the ledger
// that grew on from the mark is accepted.
func TestLedgerCovers(t *testing.T) {
	released, _ := chainLedger(t, testRunID, 149).Mark()
	if released.Len != 150 {
		t.Fatalf("mark %+v", released)
	}
	if err := chainLedger(t, testRunID, 149, 30).Covers(released); err != nil {
		t.Errorf("a ledger extending the mark: %v", err)
	}
	if err := chainLedger(t, testRunID, 74).Covers(released); err == nil || !strings.Contains(err.Error(), "75 entries, fewer than the 150") {
		t.Errorf("rolled back ledger: err = %v, want fewer than", err)
	}
	redone := chainLedger(t, testRunID, 74)
	if err := redone.Record(Gaussian{NoiseMultiplier: 2}, 80); err != nil {
		t.Fatal(err)
	}
	if err := redone.Covers(released); err == nil || !strings.Contains(err.Error(), "rolled back and redone") {
		t.Errorf("rolled back and regrown ledger: err = %v", err)
	}
	legacy := chainLedger(t, "", 200)
	if err := legacy.Covers(released); err == nil {
		t.Error("an unchained ledger covers a chained mark")
	}
	if err := legacy.Covers(Mark{Len: 150}); err != nil {
		t.Errorf("unchained ledger against a length-only mark: %v", err)
	}
}

// TestLedgerVersion4File: a chained ledger is written as version 4 with its
// run id and head, read back equal, and a file whose head or run id was
// edited (checksum recomputed or not) is refused; an unchained ledger is
// still written as version 3.
func TestLedgerVersion4File(t *testing.T) {
	dir := t.TempDir()
	l := chainLedger(t, testRunID, 10)
	p := filepath.Join(dir, "l.json")
	if err := SaveLedger(p, l); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	head, _ := l.Head()
	if raw["version"] != 4.0 || raw["run_id"] != testRunID || raw["head"] != head {
		t.Fatalf("saved %v %v %v, want 4, the run id and head %s", raw["version"], raw["run_id"], raw["head"], head)
	}
	got, err := LoadLedger(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunID != testRunID || got.Len() != 11 {
		t.Fatalf("loaded run id %q, %d entries", got.RunID, got.Len())
	}
	edited := strings.Replace(string(b), head, strings.Repeat("0", 64), 1)
	if err := os.WriteFile(p, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadLedger(p); err == nil || !strings.Contains(err.Error(), "chain head mismatch") {
		t.Errorf("edited head: err = %v", err)
	}
	u := chainLedger(t, "", 10)
	ub, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ub), `"version":3`) || strings.Contains(string(ub), "run_id") {
		t.Errorf("unchained ledger encoded as %s", ub)
	}
	bad := strings.Replace(string(ub), `"version":3`, `"version":3,"run_id":"`+testRunID+`"`, 1)
	var x Ledger
	if err := json.Unmarshal([]byte(bad), &x); err == nil {
		t.Error("a version 3 ledger with a run id was accepted")
	}
}
