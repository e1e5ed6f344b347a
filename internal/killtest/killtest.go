// Package killtest holds the subprocess harness of the kill tests: a test
// re-executes its own binary as a writer, SIGKILLs it at a chosen moment
// (after a delay, or as soon as a temporary file appears, i.e. mid-write),
// and then checks that the file on disk is intact. The accounting (ledger)
// and trainer (checkpoint) kill tests share it.
package killtest

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The child must print "ready" once set up and "saved" after each write.

// TempExists reports whether dir holds a file whose name starts with prefix.
func TempExists(dir, prefix string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			return true
		}
	}
	return false
}

// KillChild starts the test binary running only test run with env=path,
// waits for its "ready" line and its first save, then for delay, or, if
// when is not nil, until when() reports true (polled continuously, for at
// most 10 s); SIGKILLs it and returns how many saves it reported.
func KillChild(t *testing.T, run, env, path string, delay time.Duration, when func() bool) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.v")
	cmd.Env = append(os.Environ(), env+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	saves := 0
	wait := func(prefix string) {
		// No timer: how long the helper takes to get there is no verdict
		// (a helper that hangs is caught by the test binary's -timeout).
		for l := range lines {
			if l == "saved" {
				saves++
			}
			if strings.HasPrefix(l, prefix) {
				return
			}
		}
		t.Fatalf("helper exited before %q", prefix)
	}
	wait("ready")
	wait("saved")
	if when == nil {
		time.Sleep(delay)
	} else {
		for deadline := time.Now().Add(10 * time.Second); !when() && time.Now().Before(deadline); {
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	go func() {
		for l := range lines {
			_ = l
		}
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper wait = %v, want killed by SIGKILL", err)
	}
	return saves
}

// Helper is the test binary re-executed as a helper process by [Start].
type Helper struct {
	cmd    *exec.Cmd
	stderr strings.Builder
}

// Start re-executes the test binary running only test run, with env=value
// added to its environment, and returns without waiting for it.
func Start(t *testing.T, run, env, value string) *Helper {
	t.Helper()
	h := &Helper{cmd: exec.Command(os.Args[0], "-test.run="+run)}
	h.cmd.Env = append(os.Environ(), env+"="+value)
	h.cmd.Stderr = &h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return h
}

// Signal sends sig to the helper.
func (h *Helper) Signal(sig os.Signal) error { return h.cmd.Process.Signal(sig) }

// Wait waits for the helper to exit and returns its exit code (-1 if a
// signal ended it, then named by signal) and what it wrote to stderr.
func (h *Helper) Wait() (code int, signal syscall.Signal, stderr string) {
	err := h.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, ws.Signal(), h.stderr.String()
		}
		return ee.ExitCode(), 0, h.stderr.String()
	}
	if err != nil {
		return -1, 0, h.stderr.String() + err.Error()
	}
	return 0, 0, h.stderr.String()
}
