// Package atomicfile replaces files atomically: readers see either the old
// content or the complete new content, never a partial file, even if the
// writing process is killed or the machine loses power.
//
// A write goes to a temporary file in the destination's directory (so the
// final rename stays within one file system), which is fsynced, renamed over
// the destination, and followed by an fsync of the directory so the rename
// itself is durable. On any error the destination is untouched and the
// temporary file is removed.
//
// A process killed between Create and Commit cannot remove its temporary
// file. Such leftovers are named ".<base>.tmp-<random digits>" next to the
// destination <base> (see [IsTemp]); they are never read by this package and
// may be deleted at any time by anyone who knows no writer is running.
//
// A [File] is not safe for concurrent use.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// tempSep separates the destination's base name from the random suffix of a
// temporary file: ".<base>" + tempSep + "<digits>".
const tempSep = ".tmp-"

// File is a pending atomic replacement of a destination path. Write to it,
// then call Commit to publish the content or Abort to discard it. Calling
// Abort after Commit is a no-op, so `defer f.Abort()` is the usual pattern.
type File struct {
	f    *os.File
	path string
	perm os.FileMode
	done bool
}

// Create starts an atomic write of path. The content becomes visible at path
// only when Commit returns nil. perm is applied exactly (the umask is not
// consulted) when the file is committed.
func Create(path string, perm os.FileMode) (*File, error) {
	dir, base := filepath.Split(path)
	if base == "" {
		return nil, fmt.Errorf("atomicfile: %q names a directory, not a file", path)
	}
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+tempSep+"*")
	if err != nil {
		return nil, fmt.Errorf("atomicfile: create temporary file for %s: %w", path, err)
	}
	return &File{f: f, path: path, perm: perm}, nil
}

// Write writes to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, fmt.Errorf("atomicfile: write to %s after Commit or Abort", f.path)
	}
	return f.f.Write(p)
}

// TempName returns the name of the temporary file being written.
func (f *File) TempName() string { return f.f.Name() }

// Commit flushes the content to stable storage and renames it over the
// destination, then syncs the directory. On error the destination is
// unchanged and the temporary file has been removed.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("atomicfile: %s already committed or aborted", f.path)
	}
	f.done = true
	tmp := f.f.Name()
	err := f.f.Chmod(f.perm)
	if err == nil {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("atomicfile: commit %s: %w", f.path, err)
	}
	if err := SyncDir(filepath.Dir(f.path)); err != nil {
		// The rename happened; only its durability is in doubt.
		return fmt.Errorf("atomicfile: commit %s: %w", f.path, err)
	}
	return nil
}

// Abort discards the temporary file. It is a no-op after Commit or Abort.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	tmp := f.f.Name()
	err := f.f.Close()
	if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("atomicfile: abort %s: %w", f.path, err)
	}
	return nil
}

// Write atomically replaces path with whatever fn writes. If fn returns an
// error, nothing is published and that error is returned.
func Write(path string, perm os.FileMode, fn func(w io.Writer) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := fn(f); err != nil {
		return err
	}
	return f.Commit()
}

// WriteFile atomically replaces path with data, like [os.WriteFile] but
// never leaving a partial file.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Publish makes an already written file tmp durable and renames it to path,
// then syncs path's directory. tmp must be in the same directory as path.
// It is for callers that keep a partial file across runs (such as a resumable
// download) and so cannot use Create.
func Publish(tmp, path string) error {
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("atomicfile: publish %s: %w", path, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = SyncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("atomicfile: publish %s: %w", path, err)
	}
	return nil
}

// SyncDir fsyncs a directory so that renames and creations in it are durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// IsTemp reports whether name (a base name or a path) has the form of a
// temporary file left behind by a writer of this package that was killed
// before Commit or Abort: ".<base>.tmp-<digits>".
func IsTemp(name string) bool {
	name = filepath.Base(name)
	if !strings.HasPrefix(name, ".") {
		return false
	}
	i := strings.LastIndex(name, tempSep)
	if i <= 1 {
		return false
	}
	digits := name[i+len(tempSep):]
	if digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
