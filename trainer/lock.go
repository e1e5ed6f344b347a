package trainer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpcalc/dpcalc/internal/atomicfile"
)

// ErrLocked is matched by errors.Is when another run holds an output's lock.
var ErrLocked = errors.New("trainer: locked by another run")

// OutputLock is an exclusive hold on a run's output files; see [LockOutput].
type OutputLock struct {
	f    *os.File
	path string
}

// LockOutput takes the lock of a run's output files paths[0], paths[1], …
// (a checkpoint and its write-ahead ledger, or a log): the lock file is
// paths[0] + ".lock". It fails with an error matching [ErrLocked] if another
// run (another process, or another LockOutput in this one) holds it. Once
// the lock is held, temporary files that killed writers left next to paths
// (".<base>.tmp-<digits>", see internal/atomicfile) are removed: no writer
// of them can still be running.
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
