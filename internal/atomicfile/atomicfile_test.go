package atomicfile

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const helperEnv = "ATOMICFILE_TEST_SLOW_WRITER"

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.bin")
	if err := WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new content"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "new content" {
		t.Fatalf("content = %q, want %q", got, "new content")
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("perm = %v, want 0600", fi.Mode().Perm())
	}
	assertOnlyFiles(t, dir, "f.bin")
}

func TestWriteErrorKeepsOldAndRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.bin")
	if err := WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, 0o644, func(w io.Writer) error {
		if _, err := w.Write(bytes.Repeat([]byte("x"), 1<<20)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	assertContent(t, p, "old")
	assertOnlyFiles(t, dir, "f.bin")
}

func TestAbortAndCommitOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.bin")
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if !IsTemp(f.TempName()) {
		t.Errorf("IsTemp(%q) = false", f.TempName())
	}
	if _, err := f.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("destination exists after Abort: %v", err)
	}
	if err := f.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("Write after Abort succeeded")
	}
	assertOnlyFiles(t, dir)

	f, err = Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("abc"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := f.Abort(); err != nil {
		t.Errorf("Abort after Commit = %v, want nil", err)
	}
	assertContent(t, p, "abc")
	assertOnlyFiles(t, dir, "f.bin")
}

func TestCreateInMissingDirFails(t *testing.T) {
	_, err := Create(filepath.Join(t.TempDir(), "no", "such", "f"), 0o644)
	if err == nil || !strings.Contains(err.Error(), "atomicfile:") {
		t.Fatalf("err = %v, want atomicfile error", err)
	}
}

func TestIsTemp(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{".f.bin.tmp-123", true},
		{"/a/b/.train.gz.tmp-9", true},
		{"f.bin.tmp-123", false},
		{".f.bin.tmp-", false},
		{".f.bin.tmp-12a", false},
		{".tmp-12", false},
		{"f.bin", false},
	} {
		if got := IsTemp(tc.name); got != tc.want {
			t.Errorf("IsTemp(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPublish(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "x.part")
	if err := os.WriteFile(part, []byte("done"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Publish(part, filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	assertContent(t, filepath.Join(dir, "x"), "done")
	assertOnlyFiles(t, dir, "x")
	if err := Publish(part, filepath.Join(dir, "x")); err == nil {
		t.Error("Publish of a missing file succeeded")
	}
}

// TestKilledWriterLeavesOldFile re-executes the test binary as a writer that
// streams a large file slowly, SIGKILLs it mid-way, and checks that the
// destination still holds the old content and that the only other file is a
// temporary recognised by IsTemp.
func TestKilledWriterLeavesOldFile(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a subprocess")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "big.bin")
	old := "old content that must survive"
	if err := WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSlowWriter$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"="+p)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "written ") {
				lines <- sc.Text()
			}
		}
		close(lines)
	}()
	// Wait until the child has written several MiB, then kill it.
	// No timer: how fast the helper writes is no verdict (a helper that
	// hangs is caught by the test binary's -timeout).
	for n := 0; n < 8; n++ {
		if _, ok := <-lines; !ok {
			t.Fatal("helper exited before writing")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range lines {
		}
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper wait = %v, want killed by SIGKILL", err)
	}
	assertContent(t, p, old)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var temps []string
	for _, e := range ents {
		if e.Name() == "big.bin" {
			continue
		}
		if !IsTemp(e.Name()) || !strings.HasPrefix(e.Name(), ".big.bin.tmp-") {
			t.Errorf("unexpected file %q left behind", e.Name())
		}
		temps = append(temps, e.Name())
		fi, _ := e.Info()
		if fi.Size() < 8<<20 {
			t.Errorf("temp file %s has %d bytes, want ≥ 8 MiB (was the kill mid-write?)", e.Name(), fi.Size())
		}
	}
	if len(temps) != 1 {
		t.Errorf("leftover temp files = %q, want exactly one", temps)
	}
}

// TestHelperSlowWriter is the child of TestKilledWriterLeavesOldFile. It
// writes 1 MiB chunks forever-ish (1 GiB at 5 ms a chunk) and prints progress.
func TestHelperSlowWriter(t *testing.T) {
	p := os.Getenv(helperEnv)
	if p == "" {
		t.Skip("helper process only")
	}
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("new!"), 1<<18)
	for i := 1; i <= 1024; i++ {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("written " + strings.Repeat("#", i%10) + "\n")
		time.Sleep(5 * time.Millisecond)
	}
	// Not killed yet (a parent slow to read, on a busy machine): wait for
	// the kill without committing, so that how fast the parent runs
	// decides nothing.
	time.Sleep(time.Hour)
}

func assertContent(t *testing.T, p, want string) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s = %q, want %q", p, got, want)
	}
}

func assertOnlyFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("files in dir = %q, want %q", got, want)
	}
}

func TestCommitFailureRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "target")
	// A non-empty directory at the destination makes the rename fail.
	if err := os.MkdirAll(filepath.Join(p, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(p, []byte("data"), 0o644)
	if err == nil || !strings.HasPrefix(err.Error(), "atomicfile: commit "+p) {
		t.Fatalf("err = %v, want atomicfile: commit %s: …", err, p)
	}
	assertOnlyFiles(t, dir, "target")
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		t.Errorf("destination changed: %v %v", fi, err)
	}
}
