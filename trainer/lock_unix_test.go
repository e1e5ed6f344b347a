//go:build unix

package trainer

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLockNeverWritesThroughLink: a lock file that is a symbolic link (a
// checkpoint's FILE.lock, or RUN_ID.lock in the run registry) is refused,
// naming the link, and the file it points to is left as it was. The lock
// followed the link, truncated its target and wrote the pid into it
// ("precious data" became "18293").
func TestLockNeverWritesThroughLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious.txt")
	if err := os.WriteFile(target, []byte("precious data\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "run.ckpt")
	if err := os.Symlink("precious.txt", ck+".lock"); err != nil {
		t.Fatal(err)
	}
	if l, err := LockOutput(ck, ck+".ledger"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		l.Unlock()
		t.Errorf("LockOutput with FILE.lock a symbolic link: err = %v; want an error naming the symbolic link", err)
	}
	reg := filepath.Join(dir, "runs")
	if err := os.Mkdir(reg, 0o700); err != nil {
		t.Fatal(err)
	}
	id := strings.Repeat("ab", 16)
	if err := os.Symlink(target, filepath.Join(reg, id+".lock")); err != nil {
		t.Fatal(err)
	}
	if l, err := LockRun(reg, id); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		l.Unlock()
		t.Errorf("LockRun with RUN_ID.lock a symbolic link: err = %v; want an error naming the symbolic link", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious data\n" {
		t.Errorf("the link's target now holds %q", b)
	}
}

// TestRunMarkNotRegularRefused: a run registry record RUN_ID.json that is
// not a regular file (here a FIFO) is refused as corrupt without reading
// it. It was read: with no writer, the resume hung before its first step,
// and SIGINT and SIGTERM did not stop it (only kill -9); with a writer, it
// took whatever the writer wrote as the run's record.
func TestRunMarkNotRegularRefused(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "runs")
	id := strings.Repeat("cd", 16)
	l, err := LockRun(reg, id)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	fifo := filepath.Join(reg, id+".json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A writer, so that the old reader returned instead of hanging.
	done := make(chan struct{})
	go func() {
		defer close(done)
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.WriteString(`{"run_id":"` + id + `","ledger_len":0,"ledger":"/x"}`)
			f.Close()
		}
	}()
	defer func() {
		// Let the writer finish whether or not Mark opened the FIFO.
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-done
			r.Close()
		}
	}()
	if _, ok, err := l.Mark(); err == nil || ok || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Mark of a FIFO: ok %v, err %v; want an error saying it is not a regular file", ok, err)
	}
}
