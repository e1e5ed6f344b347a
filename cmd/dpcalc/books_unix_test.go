//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainRegistryOthersCanWriteRefused: a run registry that other users
// can write (the temporary directory's dpcalc-runs-<uid> without a home
// directory, created beforehand by anyone with mode 0777; or such a
// DPCALC_RUN_DIR) is refused before anything is written. The CLI used it:
// another user deleted the run's record there, and a copy of the run's
// files taken at 15 entries was resumed after the run reached 45 (exit 0,
// each ledger 45 entries, 75 steps spent).
func TestTrainRegistryOthersCanWriteRefused(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	reg := filepath.Join(tmp, fmt.Sprintf("dpcalc-runs-%d", os.Getuid()))
	if err := os.MkdirAll(reg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(reg, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DPCALC_RUN_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	t.Setenv("TMPDIR", tmp)
	ck := filepath.Join(dir, "run.ckpt")
	_, stderr, code := runCLI(booksRun(ck, "1")...)
	if code != 2 || !strings.Contains(stderr, reg) || !strings.Contains(stderr, "other users") {
		t.Errorf("registry of mode 0777 without a home: exit %d, stderr %q; want 2 naming %s and other users", code, stderr, reg)
	}
	t.Setenv("DPCALC_RUN_DIR", reg)
	ck2 := filepath.Join(dir, "run2.ckpt")
	_, stderr, code = runCLI(booksRun(ck2, "1")...)
	if code != 2 || !strings.Contains(stderr, "other users") {
		t.Errorf("DPCALC_RUN_DIR of mode 0777: exit %d, stderr %q; want 2, other users", code, stderr)
	}
	if fileExists(ck) || fileExists(ck+".ledger") || fileExists(ck2+".ledger") {
		t.Error("a refused run wrote its checkpoint or ledger")
	}
}

// TestTrainRegistryUnwritableBeforeFirstStep: a resume whose run registry
// holds the run's lock file but takes no new file (a read-only directory)
// is refused before its first step, naming the registry. The CLI locked
// it, spent an epoch (ledger 29 → 58 entries), failed writing the
// registry's record with exit 1 and advised --resume, which spent another
// epoch the same way each time.
func TestTrainRegistryUnwritableBeforeFirstStep(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "runs")
	t.Setenv("DPCALC_RUN_DIR", reg)
	ck := filepath.Join(dir, "run.ckpt")
	mustRun(t, booksRun(ck, "1")...)
	if os.Geteuid() == 0 {
		// Root writes any directory whatever its mode; an immutable one
		// takes no new file.
		if out, err := exec.Command("chattr", "+i", reg).CombinedOutput(); err != nil {
			t.Fatalf("chattr +i (root needs an immutable directory for this test): %v: %s", err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", reg).Run() })
	} else {
		if err := os.Chmod(reg, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(reg, 0o700) })
	}
	_, stderr, code := runCLI(resumeArgs(ck, "3")...)
	if code != 2 || !strings.Contains(stderr, "run registry") {
		t.Errorf("resume with an unwritable run registry: exit %d, stderr %q; want 2 naming the run registry", code, stderr)
	}
	if n := ledgerEntries(t, ck+".ledger"); n != 29 {
		t.Errorf("ledger after the refused resume: %d entries, want 29 (nothing spent)", n)
	}
}
