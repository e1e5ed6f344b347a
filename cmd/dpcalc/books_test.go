package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/trainer"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// booksRun is a quick digits run of the books tests: σ 4, 29 steps an
// epoch, no budget (so --epochs extends it), a seed.
func booksRun(ck, epochs string, extra ...string) []string {
	return append([]string{"train", "--dataset", "digits", "--sigma", "4", "--epochs", epochs, "--hidden", "8",
		"--lot", "50", "--seed", "1", "--quiet", "--checkpoint", ck}, extra...)
}

// resumeArgs resumes ck to epochs.
func resumeArgs(ck, epochs string, extra ...string) []string {
	return append([]string{"train", "--dataset", "digits", "--quiet", "--checkpoint", ck, "--resume", "--epochs", epochs}, extra...)
}

// ledgerEntries returns the number of entries of the ledger file at path
// (-1 if it cannot be read), read as JSON so it works on any version.
func ledgerEntries(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	var l struct {
		Segments []struct {
			Count int `json:"count"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	n := 0
	for _, s := range l.Segments {
		n += s.Count
	}
	return n
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, code := runCLI(args...)
	if code != 0 {
		t.Fatalf("dpcalc %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTrainNeverReplacesLedger: a new run on a --checkpoint path whose
// ledger records spent privacy exits 2 naming the ledger and --resume, and
// leaves the checkpoint, the ledger and the log as they were. The old CLI
// exited 0 and replaced the 174-entry ledger by a 29-entry one (the review:
// 4,530 entries became 30).
func TestTrainNeverReplacesLedger(t *testing.T) {
	dir := t.TempDir()
	ck, logp := filepath.Join(dir, "run.ckpt"), filepath.Join(dir, "log.jsonl")
	mustRun(t, booksRun(ck, "6", "--log-json", logp)...)
	if n := ledgerEntries(t, ck+".ledger"); n != 174 {
		t.Fatalf("ledger after 6 epochs: %d entries, want 174", n)
	}
	before := [][]byte{readFile(t, ck), readFile(t, ck+".ledger"), readFile(t, logp)}
	for _, args := range [][]string{
		booksRun(ck, "1"),
		booksRun(ck, "1", "--log-json", logp),
		booksRun(ck, "1", "--log-json", filepath.Join(dir, "other.jsonl")),
	} {
		_, stderr, code := runCLI(args...)
		if code != 2 || !strings.Contains(stderr, ck+".ledger records 174 entries") || !strings.Contains(stderr, "--resume") {
			t.Errorf("new run on a used path: exit %d, stderr %q; want 2 naming the ledger's 174 entries and --resume", code, stderr)
		}
	}
	// Without its ledger file, the checkpoint's own ledger is the record.
	os.Rename(ck+".ledger", ck+".ledger.bak")
	_, stderr, code := runCLI(booksRun(ck, "1")...)
	if code != 2 || !strings.Contains(stderr, "checkpoint whose ledger records 174 entries") {
		t.Errorf("new run on a used checkpoint without ledger file: exit %d, stderr %q", code, stderr)
	}
	os.Rename(ck+".ledger.bak", ck+".ledger")
	// A new run's log must not hold an earlier run's lines either.
	_, stderr, code = runCLI(booksRun(filepath.Join(dir, "new.ckpt"), "1", "--log-json", logp)...)
	if code != 2 || !strings.Contains(stderr, "--log-json") {
		t.Errorf("new run onto a used log: exit %d, stderr %q; want 2 naming --log-json", code, stderr)
	}
	for i, p := range []string{ck, ck + ".ledger", logp} {
		if !bytes.Equal(before[i], readFile(t, p)) {
			t.Errorf("a refused run changed %s", filepath.Base(p))
		}
	}
	// The way out the message names works: --resume continues the ledger.
	mustRun(t, resumeArgs(ck, "7", "--log-json", logp)...)
	if n := ledgerEntries(t, ck+".ledger"); n != 203 {
		t.Errorf("ledger after the resume to 7 epochs: %d entries, want 203", n)
	}
}

// TestTrainResumeWithoutCheckpoint: a run that stopped before its first
// checkpoint (here: the checkpoint deleted after 6 epochs, as a kill
// before it leaves things) left a ledger of 174 entries and 6 released log
// lines. --resume trains a fresh model that continues the ledger and says
// so; with --eps, σ is calibrated for what is left of the budget and the
// run's ε includes the ledger's entries. The old CLI refused --resume
// (no checkpoint), and a new run replaced the ledger.
func TestTrainResumeWithoutCheckpoint(t *testing.T) {
	dir := t.TempDir()
	ck, logp := filepath.Join(dir, "run.ckpt"), filepath.Join(dir, "log.jsonl")
	mustRun(t, booksRun(ck, "6", "--log-json", logp)...)
	os.Remove(ck)
	_, stderr, code := runCLI(resumeArgs(ck, "2", "--log-json", logp)...)
	if code != 2 || !strings.Contains(stderr, "--sigma or --eps") {
		t.Errorf("--resume without a checkpoint nor settings: exit %d, stderr %q; want 2 asking for --sigma or --eps", code, stderr)
	}
	out, stderr, code := runCLI(append(booksRun(ck, "2", "--log-json", logp, "--json"), "--resume")...)
	if code != 0 || !strings.Contains(stderr, "174 entries") || !strings.Contains(stderr, "fresh model") {
		t.Fatalf("--resume without a checkpoint: exit %d, stderr %q; want 0 and a note on the 174 entries continued", code, stderr)
	}
	var r trainJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Result.Steps != 58 || ledgerEntries(t, ck+".ledger") != 174+58 {
		t.Errorf("fresh model: %d steps, ledger %d entries; want 58 and %d", r.Result.Steps, ledgerEntries(t, ck+".ledger"), 174+58)
	}
	if lines := readLog(t, logp); len(lines) != 8 || lines[7].LedgerLen != 232 {
		t.Errorf("log after the resume: %d lines, last %+v; want 8, ledger_len 232", len(lines), lines[len(lines)-1])
	}
	// With a budget: σ fits the remaining budget; the whole ledger is
	// within it.
	ck2 := filepath.Join(dir, "b.ckpt")
	eps := []string{"train", "--dataset", "digits", "--eps", "2", "--epochs", "4", "--hidden", "8", "--lot", "50", "--seed", "1", "--quiet", "--checkpoint", ck2, "--json"}
	out = mustRun(t, eps...)
	var first struct {
		Result struct {
			Sigma   float64  `json:"noise_multiplier"`
			Epsilon *float64 `json:"epsilon"`
		} `json:"training"`
	}
	json.Unmarshal([]byte(out), &first)
	os.Remove(ck2)
	out, stderr, code = runCLI(append(eps, "--resume")...)
	if code != 0 {
		t.Fatalf("--resume --eps without a checkpoint: exit %d: %s", code, stderr)
	}
	var second = first
	json.Unmarshal([]byte(out), &second)
	if second.Result.Epsilon == nil || *second.Result.Epsilon > 2 || second.Result.Sigma <= first.Result.Sigma {
		t.Errorf("continued ledger under --eps 2: σ %g (first session %g), ε %v; want a larger σ and ε <= 2", second.Result.Sigma, first.Result.Sigma, second.Result.Epsilon)
	}
}

// TestTrainRunFilesDistinct: --log-json naming the run's ledger, its
// checkpoint or a lock, directly, through a symbolic link or through a hard
// link, is refused with exit 2 and the files are left as they were. The
// old CLI exited 0 and wrote the log over the ledger every epoch.
func TestTrainRunFilesDistinct(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "run.ckpt")
	mustRun(t, booksRun(ck, "1")...)
	sym, hard, hardCk := filepath.Join(dir, "sym.jsonl"), filepath.Join(dir, "hard.jsonl"), filepath.Join(dir, "hardck.jsonl")
	if err := os.Symlink("run.ckpt.ledger", sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(ck+".ledger", hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(ck, hardCk); err != nil {
		t.Fatal(err)
	}
	ledBefore, ckBefore := readFile(t, ck+".ledger"), readFile(t, ck)
	for _, tc := range []struct{ name, log, want string }{
		{"the ledger", ck + ".ledger", "the same path"},
		{"the checkpoint", ck, "the same path"},
		{"the lock", ck + ".lock", "the same path"},
		{"a symlink to the ledger", sym, "symbolic link"},
		{"a hard link to the ledger", hard, "hard link"},
		{"a hard link to the checkpoint", hardCk, "hard link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(resumeArgs(ck, "2", "--log-json", tc.log)...)
			if code != 2 || !strings.Contains(stderr, "--log-json") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 naming --log-json and %q", code, stderr, tc.want)
			}
		})
	}
	// A new run whose log is a dangling link to the ledger it will create.
	dangling := filepath.Join(dir, "dangling.jsonl")
	os.Symlink("new.ckpt.ledger", dangling)
	if _, stderr, code := runCLI(booksRun(filepath.Join(dir, "new.ckpt"), "1", "--log-json", dangling)...); code != 2 || !strings.Contains(stderr, "symbolic link") {
		t.Errorf("log linked to the ledger to be: exit %d, stderr %q", code, stderr)
	}
	if !bytes.Equal(ledBefore, readFile(t, ck+".ledger")) || !bytes.Equal(ckBefore, readFile(t, ck)) {
		t.Error("a refused run changed the checkpoint or its ledger")
	}
}

// TestTrainRollbackRefused: the review's rollback. Copying back an older
// checkpoint with its older ledger (58 entries) after later epochs were
// released (116) and resuming is refused with exit 2, naming the log line
// it found; with the log rolled back too, the run registry's record still
// refuses it. The old CLI accepted it and reported 174 of 174 steps while
// 232 were run and released.
func TestTrainRollbackRefused(t *testing.T) {
	dir := t.TempDir()
	ck, logp := filepath.Join(dir, "run.ckpt"), filepath.Join(dir, "log.jsonl")
	mustRun(t, booksRun(ck, "2", "--log-json", logp)...)
	old := [][]byte{readFile(t, ck), readFile(t, ck+".ledger"), readFile(t, logp)}
	mustRun(t, resumeArgs(ck, "4", "--log-json", logp)...)
	if n := ledgerEntries(t, ck+".ledger"); n != 116 {
		t.Fatalf("ledger after 4 epochs: %d, want 116", n)
	}
	restore := func(withLog bool) {
		os.WriteFile(ck, old[0], 0o600)
		os.WriteFile(ck+".ledger", old[1], 0o600)
		if withLog {
			os.WriteFile(logp, old[2], 0o644)
		}
	}
	restore(false)
	_, stderr, code := runCLI(resumeArgs(ck, "6", "--log-json", logp)...)
	if code != 2 || !strings.Contains(stderr, "line 4 of the log") || !strings.Contains(stderr, "116 entries") {
		t.Errorf("rolled back checkpoint and ledger: exit %d, stderr %q; want 2 naming line 4 of the log at 116 entries", code, stderr)
	}
	restore(true)
	_, stderr, code = runCLI(resumeArgs(ck, "6", "--log-json", logp)...)
	if code != 2 || !strings.Contains(stderr, "run registry") || !strings.Contains(stderr, "116 entries") {
		t.Errorf("rolled back checkpoint, ledger and log: exit %d, stderr %q; want 2 naming the run registry's 116 entries", code, stderr)
	}
	if n := ledgerEntries(t, ck+".ledger"); n != 58 {
		t.Errorf("a refused resume changed the ledger: %d entries", n)
	}
}

const holdRunEnv = "DPCALC_HOLD_RUN"

// TestTrainLinkedCopiesLocked: while one resume of a run is training, a
// resume of a hard-linked copy of its checkpoint and ledger in another
// directory, and of a renamed copy, exit 2 naming the run in use; after
// it, the copies (now older than the run) are refused as behind the run
// registry's record. The old CLI locked paths: both resumes ran and
// reported 300 steps each (570 steps used).
func TestTrainLinkedCopiesLocked(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a subprocess")
	}
	dir := t.TempDir()
	ck := filepath.Join(dir, "run.ckpt")
	mustRun(t, booksRun(ck, "1")...)
	linked, renamed := filepath.Join(dir, "linked"), filepath.Join(dir, "renamed")
	for _, d := range []string{linked, renamed} {
		os.Mkdir(d, 0o755)
	}
	for _, s := range []string{"", ".ledger"} {
		if err := os.Link(ck+s, filepath.Join(linked, "run.ckpt"+s)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(renamed, "other.ckpt"+s), readFile(t, ck+s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logp := filepath.Join(dir, "hold.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldRunHelper$")
	cmd.Env = append(os.Environ(), holdRunEnv+"="+ck+"\n"+logp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The helper holds the run once it released its first epoch.
	for i := 0; len(readLogQuiet(logp)) == 0; i++ {
		if i == 6000 {
			t.Fatal("the helper released nothing in 60 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range []string{filepath.Join(linked, "run.ckpt"), filepath.Join(renamed, "other.ckpt")} {
		_, stderr, code := runCLI(resumeArgs(c, "3")...)
		if code != 2 || !strings.Contains(stderr, "in use by another run") {
			t.Errorf("resume of %s while the run trains: exit %d, stderr %q; want 2, in use", c, code, stderr)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	for _, c := range []string{filepath.Join(linked, "run.ckpt"), filepath.Join(renamed, "other.ckpt")} {
		_, stderr, code := runCLI(resumeArgs(c, "3")...)
		if code != 2 || !strings.Contains(stderr, "run registry") {
			t.Errorf("resume of the older copy %s after the run went on: exit %d, stderr %q; want 2 naming the run registry", c, code, stderr)
		}
	}
}

// TestHoldRunHelper is the child of TestTrainLinkedCopiesLocked: a long
// resume that holds the run until killed.
func TestHoldRunHelper(t *testing.T) {
	v := os.Getenv(holdRunEnv)
	if v == "" {
		t.Skip("helper process only")
	}
	ck, logp, _ := strings.Cut(v, "\n")
	var o, e bytes.Buffer
	run(resumeArgs(ck, "100000", "--log-json", logp), &o, &e)
	t.Fatalf("the held run ended: %s", e.String())
}

// TestTrainInterruptLeavesNothingOrResumable: a run interrupted before its
// first step (a cancelled context, as SIGINT right after the start) leaves
// no checkpoint and no ledger and says nothing was spent; with DP-PCA
// already recorded it leaves a checkpoint with its ledger that --resume
// continues; interrupted in the first ε computation (the budget check of
// --sigma with --eps), it advises no --resume of files that do not exist.
// The old CLI left a checkpoint without its ledger file that no resume
// accepted (11 of 11 in the review), and advised --resume of a ledger that
// did not exist.
func TestTrainInterruptLeavesNothingOrResumable(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	interrupt := func(args ...string) string {
		var o, e bytes.Buffer
		if code := runContext(cancelled, args, &o, &e); code != 130 {
			t.Fatalf("interrupted %v: exit %d: %s", args, code, e.String())
		}
		return e.String()
	}
	for _, tc := range []struct {
		name  string
		extra []string
	}{{"sigma", nil}, {"budget check", []string{"--eps", "5"}}} {
		t.Run(tc.name, func(t *testing.T) {
			ck := filepath.Join(t.TempDir(), "run.ckpt")
			stderr := interrupt(booksRun(ck, "2", tc.extra...)...)
			if fileExists(ck) || fileExists(ck+".ledger") {
				t.Errorf("an interrupt before the first step left files (checkpoint %v, ledger %v)", fileExists(ck), fileExists(ck+".ledger"))
			}
			if strings.Contains(stderr, "--resume") || !strings.Contains(stderr, "no checkpoint or ledger was written") {
				t.Errorf("advice %q; want no --resume and 'no checkpoint or ledger was written'", stderr)
			}
			// Nothing there: a new run starts.
			mustRun(t, booksRun(ck, "1", tc.extra...)...)
		})
	}
	t.Run("pca", func(t *testing.T) {
		ck := filepath.Join(t.TempDir(), "run.ckpt")
		stderr := interrupt(booksRun(ck, "2", "--pca", "10", "--pca-sigma", "4")...)
		if !strings.Contains(stderr, "continue with --resume") || ledgerEntries(t, ck+".ledger") != 1 {
			t.Fatalf("interrupt after DP-PCA: stderr %q, ledger %d entries; want --resume advice and 1 entry", stderr, ledgerEntries(t, ck+".ledger"))
		}
		mustRun(t, resumeArgs(ck, "2")...)
		if n := ledgerEntries(t, ck+".ledger"); n != 1+58 {
			t.Errorf("resumed after DP-PCA: ledger %d entries, want 59", n)
		}
	})
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// TestTrainResumesLegacyFiles: a checkpoint of format version 1 with an
// unchained (version 3) ledger file, as earlier versions wrote them, is
// resumed: its entries become the first of a chain with a new run id, the
// ledger file is rewritten as version 4 and the log lines carry the head.
// A copy of the old files taken before is then refused: the run was
// continued elsewhere.
func TestTrainResumesLegacyFiles(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "run.ckpt")
	train, _, err := data.Load("digits", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := trainer.DatasetDefaults("digits", trainer.MethodDPSGD)
	cfg.Hidden, cfg.LotSize, cfg.Epochs, cfg.NoiseMultiplier, cfg.Accountant = []int{8}, 50, 2, 4, "rdp"
	if _, err := trainer.Train(context.Background(), cfg, train, nil, trainer.Options{CheckpointPath: ck, CheckpointEvery: 1, LedgerPath: ck + ".ledger"}); err != nil {
		t.Fatal(err)
	}
	b := readFile(t, ck)
	binary.LittleEndian.PutUint32(b[8:12], 1) // the version is outside the payload's checksum
	os.WriteFile(ck, b, 0o600)
	if v := readFile(t, ck+".ledger"); !bytes.Contains(v, []byte(`"version": 3`)) {
		t.Fatalf("the library run without a run id wrote %s", v)
	}
	copyDir := filepath.Join(dir, "copy")
	os.Mkdir(copyDir, 0o755)
	for _, s := range []string{"", ".ledger"} {
		os.WriteFile(filepath.Join(copyDir, "run.ckpt"+s), readFile(t, ck+s), 0o600)
	}
	logp := filepath.Join(dir, "log.jsonl")
	mustRun(t, resumeArgs(ck, "3", "--log-json", logp)...)
	led, err := accounting.LoadLedger(ck + ".ledger")
	if err != nil || led.RunID == "" || led.Len() != 87 {
		t.Fatalf("ledger after resuming the old files: %v, run id %q; want 87 chained entries", err, led.RunID)
	}
	lines := readLogQuiet(logp)
	var last struct {
		LedgerHead string `json:"ledger_head"`
	}
	json.Unmarshal(bytes.TrimSpace(bytes.Split(readFile(t, logp), []byte{'\n'})[len(lines)-1]), &last)
	if h, _ := led.Head(); len(lines) != 1 || last.LedgerHead != h {
		t.Errorf("log: %d lines, head %q; want 1 line with the ledger's head %s", len(lines), last.LedgerHead, h)
	}
	_, stderr, code := runCLI(resumeArgs(filepath.Join(copyDir, "run.ckpt"), "3")...)
	if code != 2 || !strings.Contains(stderr, "already continued as run "+led.RunID) {
		t.Errorf("resume of a copy of the old files: exit %d, stderr %q; want 2, continued as run %s", code, stderr, led.RunID)
	}
}

// TestTrainOtherRunsLedgerLocked: while a run holds --checkpoint FILE (its
// path locks taken as the CLI takes them, before its first ledger write),
// another run whose --log-json or --checkpoint is FILE.ledger, and a run on
// FILE while another run logs to FILE.ledger, exit 2 (another run) and
// write nothing there. The path lock was FILE.lock alone: each of these
// ran, and the log written every epoch replaced the other run's ledger
// (both exit 0; the ledger's resume then failed on `unknown field "epoch"`).
func TestTrainOtherRunsLedgerLocked(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "a.ckpt")
	l, err := trainer.LockOutput(ck, ck+".ledger")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"log onto the ledger", booksRun(filepath.Join(dir, "b.ckpt"), "1", "--log-json", ck+".ledger")},
		{"checkpoint onto the ledger", booksRun(ck+".ledger", "1")},
	} {
		_, stderr, code := runCLI(tc.args...)
		if code != 2 || !strings.Contains(stderr, "another run") {
			t.Errorf("%s of a running run: exit %d, stderr %q; want 2, another run", tc.name, code, stderr)
		}
		if fileExists(ck + ".ledger") {
			t.Fatalf("%s: the running run's ledger path was written", tc.name)
		}
	}
	l.Unlock()
	// The other way round: a run logging to a.ckpt.ledger holds it.
	l, err = trainer.LockOutput(ck + ".ledger")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if _, stderr, code := runCLI(booksRun(ck, "1")...); code != 2 || !strings.Contains(stderr, "another run") {
		t.Errorf("a run on a.ckpt while another logs to a.ckpt.ledger: exit %d, stderr %q; want 2, another run", code, stderr)
	}
	if fileExists(ck) || fileExists(ck+".ledger") {
		t.Error("the refused run wrote its checkpoint or ledger")
	}
	// A run's own log may not be its ledger's lock either.
	if _, stderr, code := runCLI(booksRun(filepath.Join(dir, "c.ckpt"), "1", "--log-json", filepath.Join(dir, "c.ckpt.ledger.lock"))...); code != 2 || !strings.Contains(stderr, "--log-json") {
		t.Errorf("log onto the run's ledger lock: exit %d, stderr %q; want 2 naming --log-json", code, stderr)
	}
}

// TestTrainInterruptDuringCalibration: SIGINT while σ is calibrated for
// --eps (before any step) exits 130, writes no file and says so, as for an
// interrupt in the budget check. The CLI said only "interrupted:
// calibrating σ for ε = 1: accounting: stopped: context canceled".
func TestTrainInterruptDuringCalibration(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	ck := filepath.Join(t.TempDir(), "run.ckpt")
	args := []string{"train", "--dataset", "digits", "--eps", "1", "--epochs", "2", "--hidden", "8", "--lot", "50", "--seed", "1", "--quiet", "--checkpoint", ck}
	var o, e bytes.Buffer
	if code := runContext(cancelled, args, &o, &e); code != 130 {
		t.Fatalf("interrupted calibration: exit %d: %s", code, e.String())
	}
	if fileExists(ck) || fileExists(ck+".ledger") {
		t.Errorf("an interrupt in calibration left files (checkpoint %v, ledger %v)", fileExists(ck), fileExists(ck+".ledger"))
	}
	if s := e.String(); strings.Contains(s, "--resume") || !strings.Contains(s, "no checkpoint or ledger was written") {
		t.Errorf("stderr %q; want no --resume and 'no checkpoint or ledger was written'", s)
	}
}

// TestTrainRelativeRunDirRefused: a relative DPCALC_RUN_DIR names another
// run registry in every working directory, so a copy of a run resumed from
// another directory was neither locked against the run nor checked against
// its record: with DPCALC_RUN_DIR=runs, a copy taken at 29 entries and
// resumed from its own directory after the run reached 87 continued (both
// ledgers at 87 entries, 145 steps spent). It is refused before anything
// is written, naming the variable. A relative home directory (no
// XDG_CACHE_HOME) is not used for the registry either: the temporary
// directory's is.
func TestTrainRelativeRunDirRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("DPCALC_RUN_DIR", "runs")
	_, stderr, code := runCLI(booksRun("run.ckpt", "1")...)
	if code != 2 || !strings.Contains(stderr, "DPCALC_RUN_DIR") {
		t.Errorf("relative DPCALC_RUN_DIR: exit %d, stderr %q; want 2 naming DPCALC_RUN_DIR", code, stderr)
	}
	if fileExists("run.ckpt.ledger") || fileExists("runs") {
		t.Error("the refused run wrote files")
	}
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o700)
	t.Setenv("DPCALC_RUN_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "home")
	t.Setenv("TMPDIR", tmp)
	mustRun(t, booksRun("run2.ckpt", "1")...)
	if fileExists("home") {
		t.Error("the run registry went under the relative home directory")
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "dpcalc-runs-") {
		t.Errorf("temporary directory holds %v; want the run registry dpcalc-runs-<uid>", ents)
	}
}
