package trainer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

func walConfig() Config {
	return Config{Method: MethodDPSGD, Hidden: []int{6}, LotSize: 20, Epochs: 4, NoiseMultiplier: 1.1, Seed: u64(3)}
}

// TestReleaseFollowsLedgerAndCheckpoint: when an epoch's progress is
// released, the write-ahead ledger on disk already holds its steps and, at a
// checkpoint epoch, the checkpoint on disk is already at that step. The old
// trainer called Progress before writing the checkpoint, so a failed
// checkpoint write left a released epoch that the resume redid.
func TestReleaseFollowsLedgerAndCheckpoint(t *testing.T) {
	train := blobs(60, 4, 2, 0.1, 5)
	dir := t.TempDir()
	ck, wal := filepath.Join(dir, "run.ckpt"), filepath.Join(dir, "run.ckpt.ledger")
	dc := walConfig().WithDefaults(train.N)
	spe := dc.StepsPerEpoch(train.N)
	released := 0
	check := func(p Progress) error {
		released++
		led, err := accounting.LoadLedger(wal)
		if err != nil {
			return err
		}
		if led.Len() != p.Step || p.LedgerLen != p.Step {
			t.Errorf("epoch %d released with %d steps taken, ledger file %d, LedgerLen %d", p.Epoch, p.Step, led.Len(), p.LedgerLen)
		}
		if p.Epoch%2 == 0 {
			tr, err := LoadCheckpoint(ck, train, Options{})
			if err != nil {
				return err
			}
			if tr.Step() != p.Step {
				t.Errorf("epoch %d (step %d) released before its checkpoint: the file is at step %d", p.Epoch, p.Step, tr.Step())
			}
		}
		return nil
	}
	opts := Options{CheckpointPath: ck, CheckpointEvery: 2, LedgerPath: wal, Release: check}
	res, err := Train(context.Background(), walConfig(), train, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if released != 4 || res.Steps != 4*spe {
		t.Fatalf("%d releases, %d steps; want 4, %d", released, res.Steps, 4*spe)
	}
}

// TestCheckpointFailureReleasesNothing: a checkpoint that cannot be written
// stops the run before the epoch's progress is released. /proc/self
// exists but takes no new files, even for root.
func TestCheckpointFailureReleasesNothing(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	train := blobs(60, 4, 2, 0.1, 5)
	calls := 0
	opts := Options{CheckpointPath: "/proc/self/run.ckpt", CheckpointEvery: 1, Progress: func(Progress) { calls++ }}
	_, err := Train(context.Background(), walConfig(), train, nil, opts)
	if err == nil {
		t.Fatal("run with an unwritable checkpoint succeeded")
	}
	if calls != 0 {
		t.Errorf("%d epochs released although their checkpoint failed", calls)
	}
}

// TestResumePaysForReleasedSteps: a run that released epoch 3 and stopped
// (here its Release fails, as a log on a full disk would) with its last
// checkpoint at epoch 2 redoes epoch 3 on resume. The resumed ledger
// counts epoch 3 twice: 5 epochs of steps for a 4-epoch model. The old
// resume started from the checkpoint's ledger and counted 4.
func TestResumePaysForReleasedSteps(t *testing.T) {
	train := blobs(60, 4, 2, 0.1, 5)
	dir := t.TempDir()
	ck, wal := filepath.Join(dir, "run.ckpt"), filepath.Join(dir, "run.ckpt.ledger")
	dc := walConfig().WithDefaults(train.N)
	spe := dc.StepsPerEpoch(train.N)
	full := newTestAccountant
	diskFull := errors.New("disk full")
	opts := Options{CheckpointPath: ck, CheckpointEvery: 2, LedgerPath: wal, NewAccountant: full,
		Release: func(p Progress) error {
			if p.Epoch == 3 {
				return diskFull
			}
			return nil
		}}
	if _, err := Train(context.Background(), walConfig(), train, nil, opts); !errors.Is(err, diskFull) {
		t.Fatalf("err = %v, want the Release error", err)
	}
	opts.Release = nil
	res, err := Resume(context.Background(), ck, train, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 4*spe || res.Ledger.Len() != 5*spe {
		t.Errorf("resumed: model at step %d, ledger %d; want %d and %d (epoch 3 paid twice)", res.Steps, res.Ledger.Len(), 4*spe, 5*spe)
	}
	led, err := accounting.LoadLedger(wal)
	if err != nil || led.Len() != 5*spe {
		t.Errorf("ledger file after the resume: %v entries, err %v; want %d", led.Len(), err, 5*spe)
	}
}

func TestResumeLedgerFileChecks(t *testing.T) {
	train := blobs(60, 4, 2, 0.1, 5)
	dir := t.TempDir()
	ck, wal := filepath.Join(dir, "run.ckpt"), filepath.Join(dir, "run.ckpt.ledger")
	cfg := walConfig()
	cfg.Epochs = 1
	if _, err := Train(context.Background(), cfg, train, nil, Options{CheckpointPath: ck, CheckpointEvery: 1, LedgerPath: wal}); err != nil {
		t.Fatal(err)
	}
	other := new(accounting.Ledger)
	if err := other.Record(accounting.Gaussian{NoiseMultiplier: 3}, 5); err != nil {
		t.Fatal(err)
	}
	short := new(accounting.Ledger)
	if err := short.Record(accounting.Gaussian{NoiseMultiplier: 3}, 2); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		setup func()
		want  string
	}{
		{"missing", func() { os.Remove(wal) }, "is missing"},
		{"other run", func() { accounting.SaveLedger(wal, other) }, "does not extend"},
		{"behind", func() { accounting.SaveLedger(wal, short) }, "is behind the ledger of checkpoint"},
		{"corrupt", func() { os.WriteFile(wal, []byte("{"), 0o600) }, "write-ahead ledger"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup()
			_, err := LoadCheckpoint(ck, train, Options{LedgerPath: wal})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLockOutput(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "run.ckpt")
	stale := filepath.Join(dir, ".run.ckpt.tmp-123456")
	staleWAL := filepath.Join(dir, ".run.ckpt.ledger.tmp-42")
	keep := filepath.Join(dir, ".other.tmp-1")
	for _, p := range []string{stale, staleWAL, keep} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := LockOutput(ck, ck+".ledger")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{stale, staleWAL} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale temporary %s not removed", filepath.Base(p))
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("another file's temporary was removed: %v", err)
	}
	if _, err := LockOutput(ck); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: err = %v, want ErrLocked", err)
	} else if !strings.Contains(err.Error(), "pid") {
		t.Errorf("lock error %q does not name the holder", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := LockOutput(ck)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
}

func TestMemoryRefusedBeforeAllocation(t *testing.T) {
	train := blobs(60, 64, 2, 0.1, 5)
	cfg := Config{Method: MethodDPSGD, Hidden: []int{65536, 65536}, LotSize: 20, Epochs: 1, NoiseMultiplier: 1}
	_, err := New(cfg, train, Options{})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "hidden" {
		t.Fatalf("err = %v, want a FieldError on hidden", err)
	}
}

func TestSetEpochs(t *testing.T) {
	train := blobs(60, 4, 2, 0.1, 5)
	path := filepath.Join(t.TempDir(), "run.ckpt")
	cfg := walConfig()
	cfg.Epochs = 2
	if _, err := Train(context.Background(), cfg, train, nil, Options{CheckpointPath: path, CheckpointEvery: 1}); err != nil {
		t.Fatal(err)
	}
	tr, err := LoadCheckpoint(path, train, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var fe *FieldError
	if err := tr.SetEpochs(1); !errors.As(err, &fe) || fe.Field != "epochs" {
		t.Errorf("SetEpochs(1) after 2 epochs: %v, want a FieldError on epochs", err)
	}
	if err := tr.SetEpochs(3); err != nil {
		t.Fatal(err)
	}
	res, err := tr.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dc := cfg.WithDefaults(train.N)
	spe := dc.StepsPerEpoch(train.N)
	if res.Steps != 3*spe || res.EpochsCompleted != 3 {
		t.Errorf("after SetEpochs(3): %d steps, %d epochs; want %d, 3", res.Steps, res.EpochsCompleted, 3*spe)
	}
}

// TestResumeCheckpointWithoutLedgerFile: a checkpoint written without a
// ledger file (older versions, or a library caller without LedgerPath)
// resumes from its own ledger, and the ledger file is kept from then on.
func TestResumeCheckpointWithoutLedgerFile(t *testing.T) {
	train := blobs(60, 4, 2, 0.1, 5)
	dir := t.TempDir()
	ck, wal := filepath.Join(dir, "run.ckpt"), filepath.Join(dir, "run.ckpt.ledger")
	cfg := walConfig()
	cfg.Epochs = 2
	if _, err := Train(context.Background(), cfg, train, nil, Options{CheckpointPath: ck, CheckpointEvery: 1}); err != nil {
		t.Fatal(err)
	}
	tr, err := LoadCheckpoint(ck, train, Options{LedgerPath: wal, CheckpointPath: ck, CheckpointEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetEpochs(3); err != nil {
		t.Fatal(err)
	}
	res, err := tr.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	led, err := accounting.LoadLedger(wal)
	if err != nil || led.Len() != res.Steps {
		t.Fatalf("ledger file after the resume: err %v; want %d entries", err, res.Steps)
	}
}

// TestCheckpointNeverWithoutLedger: a run interrupted before its first
// step writes no ledger file (nothing was spent), and a checkpoint saved
// then writes its (empty) ledger file first, so it resumes. The old
// trainer wrote the checkpoint alone, marked as kept with a ledger file,
// and every resume refused it as missing its ledger.
func TestCheckpointNeverWithoutLedger(t *testing.T) {
	train := blobs(60, 4, 2, 0.1, 5)
	dir := t.TempDir()
	ck, wal := filepath.Join(dir, "run.ckpt"), filepath.Join(dir, "run.ckpt.ledger")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr, err := New(walConfig(), train, Options{CheckpointPath: ck, CheckpointEvery: 1, LedgerPath: wal})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(wal); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run stopped before its first step wrote a ledger file (%v)", err)
	}
	if err := tr.SaveCheckpoint(ck); err != nil {
		t.Fatal(err)
	}
	res, err := Resume(context.Background(), ck, train, nil, Options{CheckpointPath: ck, CheckpointEvery: 1, LedgerPath: wal})
	if err != nil {
		t.Fatalf("resume of the checkpoint saved at step 0: %v", err)
	}
	if res.Steps != res.TotalSteps || res.Ledger.Len() != res.Steps {
		t.Errorf("resumed run: %d of %d steps, ledger %d", res.Steps, res.TotalSteps, res.Ledger.Len())
	}
}

// TestLockRun: the run registry's lock is per key, wherever the run's
// files are, and keeps the last mark recorded.
func TestLockRun(t *testing.T) {
	dir := t.TempDir()
	id, err := accounting.NewRunID()
	if err != nil {
		t.Fatal(err)
	}
	l, err := LockRun(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockRun(dir, id); !errors.Is(err, ErrLocked) {
		t.Errorf("second lock of run %s: err = %v, want ErrLocked", id, err)
	}
	if _, err := LockRun(dir, "../"+id); err == nil {
		t.Error("a key that is not a run id was accepted")
	}
	want := RunMark{RunID: id, Mark: accounting.Mark{Len: 12, Head: "ab"}, Ledger: "/x/run.ckpt.ledger"}
	if err := l.SetMark(want); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	l2, err := LockRun(dir, id)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	defer l2.Unlock()
	if got, ok, err := l2.Mark(); err != nil || !ok || got != want {
		t.Errorf("mark = %+v, %v, %v; want %+v", got, ok, err, want)
	}
}
