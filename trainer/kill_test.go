package trainer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpcalc/dpcalc/internal/killtest"
	"github.com/dpcalc/dpcalc/internal/testenv"
	"github.com/dpcalc/dpcalc/trainer/data"
)

const killHelperEnv = "DPCALC_KILL_CHECKPOINT"

// killTrain is the data set of the kill test: 64 features, so that a model
// with a 4000-unit hidden layer makes a checkpoint of about 2 MB.
func killTrain() *data.Dataset { return blobs(60, 64, 2, 0.1, 9) }

// killTrainers returns two different seeded trainers whose checkpoints are
// deterministic (no Run, so no elapsed time is recorded).
func killTrainers(tb testing.TB) [2]*Trainer {
	tb.Helper()
	var out [2]*Trainer
	for i := range out {
		cfg := Config{Method: MethodDPSGD, Hidden: []int{4000}, LotSize: 20, Epochs: 3, NoiseMultiplier: 1, Seed: u64(uint64(11 + i))}
		tr, err := New(cfg, killTrain(), Options{})
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = tr
	}
	return out
}

// TestKillDuringCheckpointWrite re-executes the test binary as a process
// that saves two different checkpoints to one path over and over through
// SaveCheckpoint, SIGKILLs it at a random moment, and checks that the file
// at the path is always byte-identical to one of the two complete
// checkpoints and loads. Kills that land between the temporary file's
// creation and the rename leave a temporary file, which shows the kill
// really interrupted a write.
func TestKillDuringCheckpointWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	trs := killTrainers(t)
	dir := t.TempDir()
	var want [2][]byte
	for i, tr := range trs {
		p := filepath.Join(dir, "ref"+string(rune('a'+i)))
		if err := tr.SaveCheckpoint(p); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = b
	}
	if bytes.Equal(want[0], want[1]) {
		t.Fatal("the two checkpoints are identical")
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(work, "run.ckpt")
	if err := os.WriteFile(path, want[0], 0o600); err != nil {
		t.Fatal(err)
	}
	rounds, midWrite := testenv.Size(4, 40), 0
	for r := 0; r < rounds; r++ {
		// Even rounds kill after a delay; odd rounds as soon as a
		// temporary file appears, i.e. during the write itself.
		var when func() bool
		if r%2 == 1 {
			when = func() bool { return killtest.TempExists(work, ".run.ckpt.tmp-") }
		}
		saves := killtest.KillChild(t, "^TestKillHelperCheckpoint$", killHelperEnv, path, time.Duration(r%6)*7*time.Millisecond, when)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		if !bytes.Equal(got, want[0]) && !bytes.Equal(got, want[1]) {
			t.Fatalf("round %d (after %d saves): the checkpoint is neither complete version (%d bytes)", r, saves, len(got))
		}
		if _, err := LoadCheckpoint(path, killTrain(), Options{}); err != nil {
			t.Fatalf("round %d: checkpoint does not load after the kill: %v", r, err)
		}
		ents, _ := os.ReadDir(work)
		for _, e := range ents {
			if e.Name() == "run.ckpt" {
				continue
			}
			if !strings.HasPrefix(e.Name(), ".run.ckpt.tmp-") {
				t.Fatalf("round %d: unexpected file %s", r, e.Name())
			}
			midWrite++
			os.Remove(filepath.Join(work, e.Name()))
		}
	}
	t.Logf("%d kills, %d of them mid-write (left a temporary file); the checkpoint was intact and loaded every time", rounds, midWrite)
}

// TestKillHelperCheckpoint is the child process of
// TestKillDuringCheckpointWrite: it alternates the two checkpoints until
// killed, printing a line after each save.
func TestKillHelperCheckpoint(t *testing.T) {
	path := os.Getenv(killHelperEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	trs := killTrainers(t)
	os.Stdout.WriteString("ready\n")
	for i := 0; ; i++ {
		if err := trs[i%2].SaveCheckpoint(path); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("saved\n")
	}
}
