package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/trainer"
)

// The privacy books of a training run: the files that record what it spent
// and released (checkpoint, FILE.ledger, the log), the locks that keep one
// run at a time on them, and the run registry's marks. The rules (see
// docs/training.md): a ledger is never replaced or truncated; no file of a
// run is written through another; a resume continues a ledger only if it
// holds every state released before (the log's last line, the checkpoint,
// the registry's mark); a run id is locked wherever its files are.

// runFile is one file a run writes, by the flag that names it.
type runFile struct{ role, flag, path string }

// runFiles lists the files a train run writes.
func (c *trainCmd) runFiles() []runFile {
	var fs []runFile
	if c.Checkpoint != "" {
		fs = append(fs,
			runFile{"the checkpoint", "checkpoint", c.Checkpoint},
			runFile{"the write-ahead ledger", "checkpoint", ledgerPath(c.Checkpoint)},
			runFile{"the checkpoint's lock", "checkpoint", c.Checkpoint + ".lock"},
			runFile{"the ledger's lock", "checkpoint", ledgerPath(c.Checkpoint) + ".lock"})
	}
	if c.LogJSON != "" {
		fs = append(fs,
			runFile{"the log", "log-json", c.LogJSON},
			runFile{"the log's lock", "log-json", c.LogJSON + ".lock"})
	}
	return fs
}

// canonicalPath returns path made absolute with symbolic links resolved,
// as far as they resolve: a link whose target does not exist yet (a file
// the run will create) is followed by name.
func canonicalPath(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	for range 40 { // like the kernel's limit on nested links
		dir, base := filepath.Split(p)
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			dir = d
		}
		p = filepath.Join(dir, base)
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return p
		}
		t, err := os.Readlink(p)
		if err != nil {
			return p
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(dir, t)
		}
		p = filepath.Clean(t)
	}
	return p
}

// checkDistinctFiles refuses a run whose output files are not distinct:
// one flag's path is, or links to (symbolic link, or hard link: the same
// device and inode), another file of the run. A log written over the
// ledger or the checkpoint used to replace it every epoch.
func (c *trainCmd) checkDistinctFiles() error {
	fs := c.runFiles()
	canon := make([]string, len(fs))
	infos := make([]os.FileInfo, len(fs))
	for i, f := range fs {
		canon[i] = canonicalPath(f.path)
		infos[i], _ = os.Stat(f.path)
	}
	for i := range fs {
		for j := i + 1; j < len(fs); j++ {
			if fs[i].flag == fs[j].flag {
				continue // names derived from one path differ by suffix
			}
			how := ""
			switch {
			case filepath.Clean(fs[i].path) == filepath.Clean(fs[j].path):
				how = "the same path"
			case canon[i] == canon[j]:
				how = "the same file through a symbolic link"
			case infos[i] != nil && infos[j] != nil && os.SameFile(infos[i], infos[j]):
				how = "the same file (a hard link: same device and inode)"
			}
			if how != "" {
				return usageError("invalid --%s: %q is %s (%q, %s); a run's files must be distinct, or one is written over the other: use another file",
					fs[j].flag, fs[j].path, fs[i].role, fs[i].path, how)
			}
		}
	}
	return nil
}

// books is the state of a run's files found before training.
type books struct {
	runID string
	locks []*trainer.RunLock
	// checkpoint is the checkpoint to resume (nil for a fresh model).
	checkpoint *trainer.CheckpointInfo
	// spent is the ledger file's ledger when a fresh model continues it
	// (--resume without a checkpoint); nil otherwise.
	spent *accounting.Ledger
	// ledger is the ledger the run continues from (nil for a fresh run).
	ledger *accounting.Ledger
	// marks are the states the resumed ledger must hold, each with where
	// it was found.
	marks []foundMark
	// ledgerAbs is the absolute path of the ledger file (for the registry).
	ledgerAbs string
}

type foundMark struct {
	where string
	m     accounting.Mark
}

func (b *books) unlock() {
	for _, l := range b.locks {
		l.Unlock()
	}
}

// exists reports whether path names anything (a dangling link too).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// openBooks inspects the run's files (under the path locks), decides how
// the run starts, takes the run-id locks and checks that the ledger the
// run continues holds every state released before.
func (c *trainCmd) openBooks() (*books, error) {
	b := &books{}
	var err error
	fail := func(e error) (*books, error) {
		b.unlock()
		return nil, e
	}
	if !c.Resume && c.Checkpoint != "" && (exists(c.Checkpoint) || exists(ledgerPath(c.Checkpoint))) {
		return fail(c.existingRunError(exists(c.Checkpoint), exists(ledgerPath(c.Checkpoint))))
	}
	if !c.Resume && c.LogJSON != "" {
		if fi, err := os.Stat(c.LogJSON); err == nil && fi.Size() > 0 {
			return fail(usageError("--log-json %s already exists (%d bytes: the lines an earlier run released?); a new run does not overwrite it: continue that run with --resume, or log to another file", c.LogJSON, fi.Size()))
		}
	}
	if c.Checkpoint == "" {
		// No resume and no ledger file; the log lines still carry the
		// chain head, to be recorded elsewhere.
		b.runID, err = accounting.NewRunID()
		if err != nil {
			return fail(err)
		}
		return b, nil
	}
	lp := ledgerPath(c.Checkpoint)
	if b.ledgerAbs, err = filepath.Abs(lp); err != nil {
		return fail(err)
	}
	ckExists, ledExists := exists(c.Checkpoint), exists(lp)
	if !c.Resume {
		if b.runID, err = accounting.NewRunID(); err != nil {
			return fail(err)
		}
		if err := c.lockRun(b, b.runID); err != nil {
			return nil, err
		}
		return b, nil
	}
	if !ckExists && !ledExists {
		return fail(usageError("invalid --checkpoint: %q, want an existing checkpoint file (or its ledger %s) to --resume", c.Checkpoint, lp))
	}
	var ledBytes []byte
	var led *accounting.Ledger
	if ledExists {
		if ledBytes, err = os.ReadFile(lp); err == nil {
			led, err = accounting.LoadLedger(lp)
		}
		if err != nil {
			return fail(exitErr(cli.ExitUsage, fmt.Errorf("write-ahead ledger: %w", err)))
		}
	}
	if ckExists {
		if b.checkpoint, err = trainer.ReadCheckpointInfo(c.Checkpoint); err != nil {
			return fail(exitErr(cli.ExitUsage, err))
		}
	} else {
		b.spent = led
	}
	// The run's id: the ledger file's, else the checkpoint's; a run from
	// before run ids gets one now, and is also locked by a key made from
	// its files' contents, so copies of it are still one run.
	b.ledger = led
	if led == nil {
		b.ledger = b.checkpoint.Ledger
	}
	switch {
	case led != nil && led.RunID != "":
		b.runID = led.RunID
	case b.checkpoint != nil && b.checkpoint.Ledger.RunID != "":
		b.runID = b.checkpoint.Ledger.RunID
	default:
		var sum [32]byte
		if ledBytes != nil {
			sum = sha256.Sum256(ledBytes)
		} else {
			sum = b.checkpoint.Checksum
		}
		if err := c.lockRun(b, "legacy-"+hex.EncodeToString(sum[:16])); err != nil {
			return nil, err
		}
		if b.runID, err = accounting.NewRunID(); err != nil {
			return fail(err)
		}
	}
	if err := c.lockRun(b, b.runID); err != nil {
		return nil, err
	}
	var registry []foundMark
	for _, l := range b.locks {
		m, ok, err := l.Mark()
		if err != nil {
			return fail(exitErr(cli.ExitUsage, err))
		}
		if !ok {
			continue
		}
		if m.RunID != b.runID {
			return fail(usageError("--resume: this run was already continued as run %s, whose ledger %s reached %d entries; %s is an older copy of it, and resuming it would spend those steps again: resume %s instead",
				m.RunID, m.Ledger, m.Len, c.Checkpoint, m.Ledger))
		}
		registry = append(registry, foundMark{fmt.Sprintf("the run registry's record of run %s (last written to %s)", m.RunID, m.Ledger), m.Mark})
	}
	if b.checkpoint != nil && led != nil {
		// LoadCheckpoint checks the ledger file against the checkpoint
		// with the model; here only whether it is behind.
		cm, err := b.checkpoint.Ledger.Mark()
		if err != nil {
			return fail(exitErr(cli.ExitUsage, err))
		}
		b.marks = append(b.marks, foundMark{"the checkpoint " + c.Checkpoint, cm})
	}
	if c.LogJSON != "" {
		m, line, ok, err := lastLogMark(c.LogJSON)
		if err != nil {
			return fail(err)
		}
		if ok {
			b.marks = append(b.marks, foundMark{fmt.Sprintf("line %d of the log %s", line, c.LogJSON), m})
		}
	}
	b.marks = append(b.marks, registry...)
	name := "the ledger " + lp
	if led == nil {
		name = "the ledger of " + c.Checkpoint
	}
	for _, f := range b.marks {
		if err := b.ledger.Covers(f.m); err != nil {
			return fail(usageError("--resume: %s does not hold the state of %s (%d entries, head %s): %s. Resuming would release steps it does not count: restore the ledger that does, or start a new run with another --checkpoint (the privacy already spent stays spent)",
				name, f.where, f.m.Len, shortHead(f.m.Head), strings.TrimPrefix(err.Error(), "accounting: ")))
		}
	}
	return b, nil
}

func shortHead(h string) string {
	if h == "" {
		return "none (unchained)"
	}
	return h
}

// lockRun takes the registry lock of key.
func (c *trainCmd) lockRun(b *books, key string) error {
	dir, err := trainer.RunDir()
	if err == nil {
		var l *trainer.RunLock
		if l, err = trainer.LockRun(dir, key); err == nil {
			b.locks = append(b.locks, l)
			return nil
		}
	}
	b.unlock()
	if errors.Is(err, trainer.ErrLocked) {
		return usageError("--checkpoint %s: its run (%s) is in use by another run: %v; a copy, link or rename of one run's files cannot run twice at once (wait for it)", c.Checkpoint, key, err)
	}
	return exitErr(cli.ExitUsage, err)
}

// existingRunError is the refusal of a new run whose --checkpoint path
// already has a checkpoint or a ledger.
func (c *trainCmd) existingRunError(ckExists, ledExists bool) error {
	lp := ledgerPath(c.Checkpoint)
	what := ""
	if ledExists {
		if led, err := accounting.LoadLedger(lp); err == nil {
			what = fmt.Sprintf("%s records %d entries of privacy already spent", lp, led.Len())
		} else {
			what = fmt.Sprintf("%s exists (%v)", lp, err)
		}
	} else {
		what = fmt.Sprintf("%s already exists", c.Checkpoint)
		if info, err := trainer.ReadCheckpointInfo(c.Checkpoint); err == nil {
			what = fmt.Sprintf("%s is a checkpoint whose ledger records %d entries of privacy already spent", c.Checkpoint, info.Ledger.Len())
		}
	}
	return usageError("--checkpoint %s: %s; a new run never replaces a ledger: continue that run with --resume, or give another --checkpoint path", c.Checkpoint, what)
}

// lastLogMark returns the ledger state of the log's released line with the
// most ledger entries (the last, unless the log was tampered with) and its
// 1-based line number; ok is false for an empty log or one from before
// ledger_len.
func lastLogMark(path string) (m accounting.Mark, line int, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, 0, false, nil
	}
	if err != nil {
		return m, 0, false, usageError("invalid --log-json: %v", err)
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	for i, l := range bytes.Split(bytes.TrimSuffix(b, []byte{'\n'}), []byte{'\n'}) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var v struct {
			LedgerLen  *int   `json:"ledger_len"`
			LedgerHead string `json:"ledger_head"`
		}
		if err := json.Unmarshal(l, &v); err != nil {
			return m, 0, false, usageError("invalid --log-json: %s line %d is not a line of a dpcalc train log: %v", path, i+1, err)
		}
		if v.LedgerLen != nil && (!ok || *v.LedgerLen >= m.Len) {
			m, line, ok = accounting.Mark{Len: *v.LedgerLen, Head: v.LedgerHead}, i+1, true
		}
	}
	return m, line, ok, nil
}
