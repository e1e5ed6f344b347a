//go:build unix

package trainer

import (
	"os"
	"path/filepath"
	"strings"
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
