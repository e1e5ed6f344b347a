package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainMissingDataNamesFetch: `train --dataset mnist` without the data
// exits 2 and names the command that fetches it, with the data set filled
// in (it used to say `dpcalc data fetch NAME`).
func TestTrainMissingDataNamesFetch(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("DPCALC_DATA_DIR", empty)
	_, stderr, code := runCLI("train", "--dataset", "mnist", "--epochs", "1", "--eps", "1")
	want := "download it with `dpcalc data fetch mnist`"
	if code != 2 || !strings.Contains(stderr, want) || strings.Contains(stderr, "NAME") || !strings.Contains(stderr, filepath.Join(empty, "mnist")) {
		t.Errorf("exit %d, stderr %q; want exit 2 naming %s and %q", code, stderr, filepath.Join(empty, "mnist"), want)
	}
}

// TestEmitEventsOnlyOnSuccess: --emit-events writes its file only when the
// command succeeds. A failed accountant (here pld at a grid width too fine
// for the composition: exit 1) leaves an existing file as it was and
// creates none, and --emit-events - prints nothing on stdout; the same
// question answerable writes the event.
func TestEmitEventsOnlyOnSuccess(t *testing.T) {
	dir := t.TempDir()
	base := []string{"eps", "--sigma", "1", "--q", "0.01", "--steps", "1000"}
	for _, acc := range [][]string{{"--accountant", "pld", "--pld-grid", "1e-9"}, {"--accountant", "all", "--pld-grid", "1e-9"}} {
		fresh := filepath.Join(dir, "fresh.json")
		args := append(append(append([]string(nil), base...), acc...), "--emit-events", fresh)
		_, stderr, code := runCLI(args...)
		if code != 1 || !strings.Contains(stderr, "not written") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 saying the file is not written", acc, code, stderr)
		}
		if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: failed command left %s (stat: %v)", acc, fresh, err)
		}
		old := filepath.Join(dir, "old.json")
		if err := os.WriteFile(old, []byte("previous\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		runCLI(append(args[:len(args)-1:len(args)-1], old)...)
		if b, _ := os.ReadFile(old); string(b) != "previous\n" {
			t.Errorf("%v: failed command rewrote %s: %q", acc, old, b)
		}
		stdout, _, code := runCLI(append(args[:len(args)-1:len(args)-1], "-")...)
		if code != 1 || stdout != "" {
			t.Errorf("%v --emit-events -: exit %d, stdout %q; want 1 and nothing", acc, code, stdout)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%v: %s holds %d entries, want only old.json (no temporary files)", acc, dir, len(ents))
		}
	}
	ok := filepath.Join(dir, "ok.json")
	if _, stderr, code := runCLI(append(base, "--emit-events", ok)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(ok); err != nil || !strings.Contains(string(b), `"PoissonSampledDpEvent"`) {
		t.Errorf("success wrote %q (%v), want the PoissonSampledDpEvent", b, err)
	}
}

// TestHelpExplainsOrder: every command whose table has a λ column says in
// its help what λ is.
func TestHelpExplainsOrder(t *testing.T) {
	for _, cmd := range []string{"sigma", "eps", "delta", "epochs", "audit"} {
		stdout, _, code := runCLI(cmd, "--help")
		flat := strings.Join(strings.Fields(stdout), " ")
		if code != 0 || !strings.Contains(flat, "λ is the order at which the bound was attained") || !strings.Contains(flat, "Rényi order λ+1") {
			t.Errorf("%s --help (exit %d) does not explain λ:\n%s", cmd, code, stdout)
		}
	}
}

// TestReproduceMissingDataExits2: every reproduction profile that trains
// on MNIST exits 2 at once when it is missing, naming the files and the
// fetch command, with no progress line (nothing calibrated, accounted or
// trained; the reproduce package's test counts the trainer runs) and no
// output directory; --plan succeeds and says what is missing.
func TestReproduceMissingDataExits2(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("DPCALC_DATA_DIR", empty)
	for _, args := range [][]string{
		{"--profile", "quick"},
		{"--profile", "full"},
		{"--profile", "quick", "--paper", "abadi"},
		{"--profile", "full", "--shard", "1/2"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		// The binary, so that the progress lines (on the process's stderr)
		// are seen too.
		cmd := exec.Command(binPath, append([]string{"reproduce", "--out", out}, args...)...)
		cmd.Env = append(os.Environ(), "DPCALC_DATA_DIR="+empty)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		code := 0
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		stdout, stderr := o.String(), e.String()
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, filepath.Join(empty, "mnist")+": train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz") ||
			!strings.Contains(stderr, "`dpcalc data fetch mnist`") {
			t.Errorf("reproduce %v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the files and `dpcalc data fetch mnist`", args, code, stdout, stderr)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("reproduce %v created %s", args, out)
		}
	}
}
