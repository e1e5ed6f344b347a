package trainer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/atomicfile"
)

// ErrLocked is matched by errors.Is when another run holds an output's lock.
var ErrLocked = errors.New("trainer: locked by another run")

// OutputLock is an exclusive hold on a run's output files; see [LockOutput].
type OutputLock struct {
	f    *os.File
	path string
	more []*OutputLock // the locks of LockOutput's other paths
}

// Unlock releases the lock (on unix the lock files stay; see [LockOutput]).
func (l *OutputLock) Unlock() error {
	if l == nil {
		return nil
	}
	err := l.unlock()
	for _, m := range l.more {
		if e := m.unlock(); err == nil {
			err = e
		}
	}
	l.more = nil
	return err
}

// LockOutput takes the locks of a run's output files paths[0], paths[1], …
// (a checkpoint and its write-ahead ledger, or a log): one lock file per
// path, path + ".lock". It fails with an error matching [ErrLocked] if
// another run (another process, or another LockOutput in this one) holds
// one of them, and then holds none. Every path is locked, not only the
// first: a run whose log or checkpoint is another run's FILE.ledger used to
// take FILE.ledger.lock, which nobody held, and write over that ledger every
// epoch. Once the locks are held, temporary files that killed writers left
// next to paths (".<base>.tmp-<digits>", see internal/atomicfile) are
// removed: no writer of them can still be running.
//
// Two resumes of one checkpoint running at once would both start from its
// ledger and each spend the remaining steps, while each reports only its
// own. On unix the lock is flock(2) on the lock file: the kernel drops it
// when the holder exits, however it exits (kill -9 included), so a stale
// lock cannot outlive its run and no pid has to be checked. The lock file
// itself stays (removing it would let a process that opened it before the
// removal and one that creates a new one hold "the" lock at once). Elsewhere
// the fallback is a lock file created with O_EXCL holding the holder's pid
// and removed by Unlock; a run killed without Unlock leaves it, and the
// error says to delete it if no run is active.
func LockOutput(paths ...string) (*OutputLock, error) {
	if len(paths) == 0 || paths[0] == "" {
		return nil, errors.New("trainer: LockOutput needs a path")
	}
	l, err := lockFile(paths[0] + ".lock")
	if err != nil {
		return nil, err
	}
	for _, p := range paths[1:] {
		m, err := lockFile(p + ".lock")
		if err != nil {
			l.Unlock()
			return nil, err
		}
		l.more = append(l.more, m)
	}
	for _, p := range paths {
		if err := removeStaleTemps(p); err != nil {
			l.Unlock()
			return nil, err
		}
	}
	return l, nil
}

// removeStaleTemps removes the leftover temporary files of path.
func removeStaleTemps(path string) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, "."+base+".tmp-") && atomicfile.IsTemp(n) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("trainer: removing stale temporary file: %w", err)
			}
		}
	}
	return nil
}

func lockedError(path string, holder []byte, hint string) error {
	h := strings.TrimSpace(string(holder))
	if h == "" {
		h = "unknown"
	}
	return fmt.Errorf("%w: %s is held by pid %s%s", ErrLocked, path, h, hint)
}

// RunDirEnv names the environment variable that overrides [RunDir].
const RunDirEnv = "DPCALC_RUN_DIR"

// RunDir returns the directory of the run registry ([LockRun]):
// $DPCALC_RUN_DIR if set, else dpcalc/runs in the user's cache directory
// ($XDG_CACHE_HOME or ~/.cache on Linux), else (no home directory, or a
// relative one) dpcalc-runs-<uid> in the temporary directory.
//
// The registry must be one directory wherever dpcalc runs: a relative
// $DPCALC_RUN_DIR is an error, since from another working directory it
// names another registry, where a copy of a run is neither locked against
// the run nor checked against its record.
func RunDir() (string, error) {
	if d := os.Getenv(RunDirEnv); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("trainer: $%s=%q is a relative path: the run registry must be the same directory whatever the working directory; give an absolute path", RunDirEnv, d)
		}
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(c) {
		return filepath.Join(os.TempDir(), fmt.Sprintf("dpcalc-runs-%d", os.Getuid())), nil
	}
	return filepath.Join(c, "dpcalc", "runs"), nil
}

// RunLock is an exclusive hold on a run's identity in the run registry;
// see [LockRun].
type RunLock struct {
	l    *OutputLock
	mark string
	// Key is the registry key held.
	Key string
}

// RunMark is what the run registry records of a run: the last state of its
// ledger file written, and where.
type RunMark struct {
	// RunID is the run whose ledger reached Mark (for the key of a run from
	// before run ids, the id it was given when it was continued).
	RunID string `json:"run_id"`
	accounting.Mark
	// Ledger is the absolute path of the ledger file written.
	Ledger string `json:"ledger"`
}

// LockRun takes the lock of the run key in the registry directory dir
// (created, mode 0700, if missing; on unix it must be the caller's and
// not writable by group or others, and it must take a new file, checked
// with a probe): the file dir/key.lock, held as
// [LockOutput] holds its lock. A run id names its run wherever its files
// are, so copies, hard links, symlinks and renames of one run's checkpoint
// and ledger all lock the same file, where path locks (FILE.lock) lock one
// per path. key is a run id ([accounting.NewRunID]) or "legacy-" and 32
// hex digits (a run from before run ids, keyed by its files' contents). It
// fails with an error matching [ErrLocked] while another run holds it.
//
// The registry also keeps each key's [RunMark] in dir/key.json (see
// [RunLock.Mark]); the files stay after the run.
func LockRun(dir, key string) (*RunLock, error) {
	k := strings.TrimPrefix(key, "legacy-")
	if !accounting.ValidRunID(k) {
		return nil, fmt.Errorf("trainer: run key %q is not a run id", key)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("trainer: run registry: %w", err)
	}
	if err := checkPrivateDir(dir); err != nil {
		return nil, fmt.Errorf("trainer: run registry %s: %w: another user could delete its records of your runs (or hold their locks); use a directory of your own (chmod 700), or set $%s", dir, err, RunDirEnv)
	}
	l, err := lockFile(filepath.Join(dir, key+".lock"))
	if err != nil {
		return nil, err
	}
	mark := filepath.Join(dir, key+".json")
	// The record is written after each ledger write, once privacy is
	// spent: a directory that takes no new file (read-only, full) is
	// refused now, not after the first epoch.
	probe, err := atomicfile.Create(mark, 0o600)
	if err != nil {
		l.Unlock()
		return nil, fmt.Errorf("trainer: run registry %s cannot record the run: %w", dir, err)
	}
	if err := probe.Abort(); err != nil {
		l.Unlock()
		return nil, fmt.Errorf("trainer: run registry %s: %w", dir, err)
	}
	return &RunLock{l: l, mark: mark, Key: key}, nil
}

// Mark returns the mark recorded for the key, and false if there is none.
func (r *RunLock) Mark() (RunMark, bool, error) {
	// Not read unless it is a regular file: a FIFO blocked the read, and
	// the run with it, beyond the reach of SIGINT.
	if fi, err := os.Lstat(r.mark); err == nil && !fi.Mode().IsRegular() {
		return RunMark{}, false, fmt.Errorf("trainer: run registry file %s is corrupt (not a regular file); delete it to forget what it recorded", r.mark)
	}
	b, err := os.ReadFile(r.mark)
	if errors.Is(err, os.ErrNotExist) {
		return RunMark{}, false, nil
	}
	if err != nil {
		return RunMark{}, false, fmt.Errorf("trainer: run registry: %w", err)
	}
	var m RunMark
	if err := json.Unmarshal(b, &m); err != nil || m.Len < 0 || !accounting.ValidRunID(m.RunID) {
		return RunMark{}, false, fmt.Errorf("trainer: run registry file %s is corrupt (%v); delete it to forget what it recorded", r.mark, err)
	}
	return m, true, nil
}

// SetMark records m for the key (atomically).
func (r *RunLock) SetMark(m RunMark) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(r.mark, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("trainer: run registry: %w", err)
	}
	return nil
}

// Unlock releases the lock.
func (r *RunLock) Unlock() error {
	if r == nil {
		return nil
	}
	return r.l.Unlock()
}
