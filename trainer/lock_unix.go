//go:build unix

package trainer

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

func lockFile(path string) (*OutputLock, error) {
	// O_NOFOLLOW: the pid is written into the lock file, never through a
	// link into whatever file it names.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) { // EMLINK: FreeBSD
		return nil, fmt.Errorf("trainer: lock %s is a symbolic link; a lock file is never written through a link: remove the link", path)
	}
	if err != nil {
		return nil, fmt.Errorf("trainer: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := make([]byte, 32)
		n, _ := f.ReadAt(holder, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, lockedError(path, holder[:n], "")
		}
		return nil, fmt.Errorf("trainer: lock %s: %w", path, err)
	}
	// The pid is for the error message of a run that finds the lock held.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &OutputLock{f: f, path: path}, nil
}

// unlock releases this lock file's lock (the file stays; see [LockOutput]).
func (l *OutputLock) unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor drops the flock
	l.f = nil
	return err
}

// checkPrivateDir reports whether dir belongs to the effective user and
// no one else can write it.
func checkPrivateDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a directory")
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("owned by uid %d, not by uid %d", st.Uid, os.Geteuid())
	}
	if m := fi.Mode().Perm(); m&0o022 != 0 {
		return fmt.Errorf("other users can write it (mode %#o)", m)
	}
	return nil
}
