package accounting

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dpcalc/dpcalc/internal/killtest"
	"github.com/dpcalc/dpcalc/internal/testenv"
)

const killHelperEnv = "DPCALC_KILL_LEDGER"

// killLedgers returns two different ledgers of 8,000 segments (alternating
// events, so they do not merge): about 1 MB of JSON each. The segments are
// appended directly and validated once: Record validates the whole ledger
// on every call, which made building these take 10–25 s, in the test and in
// every helper process.
func killLedgers() [2]*Ledger {
	var out [2]*Ledger
	for i := range out {
		l := new(Ledger)
		for k := 0; k < 8000; k++ {
			var e Event = PoissonSampled{SamplingRate: 0.01, Event: Gaussian{NoiseMultiplier: float64(1 + i)}}
			if k%2 == 1 {
				e = NoOp{}
			}
			l.Segments = append(l.Segments, Segment{Event: e, Count: 1 + k%7})
		}
		if err := l.Validate(); err != nil {
			panic(err)
		}
		out[i] = l
	}
	return out
}

// TestKillDuringLedgerWrite re-executes the test binary as a process that
// saves two different ledgers to one path over and over through
// SaveLedger, SIGKILLs it (after a delay, or as soon as a temporary file
// appears, i.e. mid-write), and checks that the file is always one of the
// two complete ledgers and loads.
func TestKillDuringLedgerWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	ls := killLedgers()
	dir := t.TempDir()
	var want [2][]byte
	for i, l := range ls {
		p := filepath.Join(dir, "ref"+string(rune('a'+i)))
		if err := SaveLedger(p, l); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = b
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(work, "ledger.json")
	if err := os.WriteFile(path, want[0], 0o600); err != nil {
		t.Fatal(err)
	}
	rounds, midWrite := testenv.Size(4, 40), 0
	for r := 0; r < rounds; r++ {
		var when func() bool
		if r%2 == 1 {
			when = func() bool { return killtest.TempExists(work, ".ledger.json.tmp-") }
		}
		saves := killtest.KillChild(t, "^TestKillHelperLedger$", killHelperEnv, path, time.Duration(r%6)*7*time.Millisecond, when)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		i := 0
		if bytes.Equal(got, want[1]) {
			i = 1
		} else if !bytes.Equal(got, want[0]) {
			t.Fatalf("round %d (after %d saves): the ledger is neither complete version (%d bytes)", r, saves, len(got))
		}
		l, err := LoadLedger(path)
		if err != nil {
			t.Fatalf("round %d: ledger does not load after the kill: %v", r, err)
		}
		if !reflect.DeepEqual(l.Segments, ls[i].Segments) {
			t.Fatalf("round %d: loaded ledger differs from the one written", r)
		}
		ents, _ := os.ReadDir(work)
		for _, e := range ents {
			if e.Name() == "ledger.json" {
				continue
			}
			if !strings.HasPrefix(e.Name(), ".ledger.json.tmp-") {
				t.Fatalf("round %d: unexpected file %s", r, e.Name())
			}
			midWrite++
			os.Remove(filepath.Join(work, e.Name()))
		}
	}
	t.Logf("%d kills, %d of them mid-write (left a temporary file); the ledger was intact and loaded every time", rounds, midWrite)
}

// TestKillHelperLedger is the child process of TestKillDuringLedgerWrite.
func TestKillHelperLedger(t *testing.T) {
	path := os.Getenv(killHelperEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	ls := killLedgers()
	os.Stdout.WriteString("ready\n")
	for i := 0; ; i++ {
		if err := SaveLedger(path, ls[i%2]); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("saved\n")
	}
}
