//go:build !unix

package trainer

import (
	"errors"
	"fmt"
	"os"
	"strconv"
)

func lockFile(path string) (*OutputLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		holder, _ := os.ReadFile(path)
		return nil, lockedError(path, holder, "; if no run is active, it was killed: delete the lock file")
	}
	if err != nil {
		return nil, fmt.Errorf("trainer: lock: %w", err)
	}
	f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	return &OutputLock{f: f, path: path}, nil
}

// unlock releases this lock by removing its lock file.
func (l *OutputLock) unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Close()
	l.f = nil
	return os.Remove(l.path)
}

// checkPrivateDir checks nothing here: there is no owner or mode to check.
func checkPrivateDir(dir string) error { return nil }
