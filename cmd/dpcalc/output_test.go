package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/reproduce"
)

// decodeOutput decodes a --json output into the one documented type,
// refusing any field the type does not have.
func decodeOutput(t *testing.T, s string) cli.Output {
	t.Helper()
	o, err := parseOutput(s)
	if err != nil {
		t.Fatalf("--json output does not fit cli.Output: %v\n%s", err, s)
	}
	return o
}

// parseOutput is decodeOutput's parsing: exactly one JSON object that
// fits cli.Output, with no unknown field.
func parseOutput(s string) (cli.Output, error) {
	var o cli.Output
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return o, err
	}
	if dec.More() {
		return o, errTrailing
	}
	return o, nil
}

var errTrailing = jsonError("more than one JSON value")

type jsonError string

func (e jsonError) Error() string { return string(e) }

// docCommand is a dpcalc command line shown in docs/cli.md.
type docCommand struct {
	line int
	args []string
}

// docCommands returns every dpcalc command line of docs/cli.md's code
// blocks: the "$ dpcalc …" examples and the plain "dpcalc …" lines of the
// sh blocks (a "# comment" dropped, a trailing backslash continued).
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	var out []docCommand
	inFence := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			continue
		}
		start := i
		cmd := strings.TrimPrefix(l, "$ ")
		if !strings.HasPrefix(cmd, "dpcalc ") && cmd != "dpcalc" {
			continue
		}
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
		}
		if c, _, ok := strings.Cut(cmd, " #"); ok {
			cmd = c
		}
		cmd = strings.ReplaceAll(cmd, " ~/", " home/") // a shell's home directory: here one in the test's
		args, err := splitArgs(strings.TrimSpace(cmd))
		if err != nil {
			t.Fatalf("docs/cli.md:%d: %v", start+1, err)
		}
		out = append(out, docCommand{start + 1, args[1:]})
	}
	return out
}

// TestJSONOneShape: the --json output of every command and flag
// combination docs/cli.md shows (its examples, and the command lines of
// train, data and reproduce) decodes into the one documented type,
// cli.Output, with no unknown field: train's "training" into the run
// object and reproduce's "report" into reproduce's report, as strictly.
// "error" is there exactly when the exit code is not 0, and bad input
// prints only {"error": …}. Usage text (help) is not JSON and is left
// out; reproduce (tens of seconds each) runs in the long test step, and
// data fetch fetches from a refused local mirror unless DPCALC_LONG is
// set (then from the network, as written).
func TestJSONOneShape(t *testing.T) {
	long := os.Getenv("DPCALC_LONG") != ""
	dir := t.TempDir()
	if err := os.Symlink(must(filepath.Abs(filepath.Join("..", "..", "testdata"))), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	// No data set anywhere: a documented MNIST run fails at once.
	env := []string{"DPCALC_DATA_DIR=" + filepath.Join(dir, "nodata"), "XDG_CACHE_HOME=" + filepath.Join(dir, "cache"), "HOME=" + dir}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "DPCALC_DATA_DIR" && k != "XDG_CACHE_HOME" && k != "HOME" && k != "COLUMNS" {
			env = append(env, kv)
		}
	}
	seen := map[string]bool{}
	parsed := 0
	for _, dc := range docCommands(t) {
		args := dc.args
		if len(args) == 0 || args[0] == "help" || args[0] == "serve" || slices.Contains(args, "--help") || slices.Contains(args, "-h") || slices.Contains(args, "--version") {
			continue // usage text, or a server
		}
		if args[0] == "reproduce" && !long {
			seen["reproduce run"] = true // run by the long step
			continue
		}
		args = slices.Clone(args)
		for i, a := range args {
			if strings.HasPrefix(a, "/tmp/") {
				args[i] = filepath.Join(dir, "out", filepath.Base(a))
			}
		}
		if len(args) > 1 && args[0] == "data" && args[1] == "fetch" && !long {
			args = append(args, "--mirror", "https://127.0.0.1:1", "--retries", "0")
		}
		if !slices.Contains(args, "--json") {
			args = append(args, "--json")
		}
		cmd := exec.Command(binPath, args...)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("docs/cli.md:%d: %v", dc.line, err)
		}
		name := fmt.Sprintf("docs/cli.md:%d: dpcalc %s", dc.line, strings.Join(args, " "))
		o, err := parseOutput(stdout.String())
		if err != nil {
			t.Errorf("%s (exit %d): the output does not fit cli.Output: %v\n%s", name, code, err, stdout.String())
			continue
		}
		parsed++
		switch {
		case code == 0 && (o.Error != "" || o.Command == "" || o.Inputs == nil || o.Rows == nil || o.Version == ""):
			t.Errorf("%s: exit 0 but command %q, inputs %v, rows %v, version %q, error %q", name, o.Command, o.Inputs, o.Rows, o.Version, o.Error)
		case code != 0 && o.Error == "":
			t.Errorf("%s: exit %d without \"error\"\n%s", name, code, stdout.String())
		case code == 2 && (o.Command != "" || o.Rows != nil || o.Version != ""):
			t.Errorf("%s: bad input printed more than {\"error\": …}\n%s", name, stdout.String())
		}
		if o.Command != "" {
			seen[o.Command] = true
		} else if args[0] == "curve" || args[0] == "data" {
			seen[args[0]+" "+args[1]] = true
		} else {
			seen[args[0]] = true
		}
		for _, r := range o.Rows {
			if r.Quantity == "" {
				t.Errorf("%s: a row without a quantity: %+v", name, r)
			}
		}
		if o.Training != nil {
			var run trainRun
			var stopped interruptRun
			if code == 130 {
				if err := strictJSON(o.Training, &stopped); err != nil || !stopped.Interrupted {
					t.Errorf("%s: \"training\" is not the interrupted run: %v", name, err)
				}
			} else if err := strictJSON(o.Training, &run); err != nil || run.Result == nil {
				t.Errorf("%s: \"training\" is not the run: %v", name, err)
			}
		}
		if o.Report != nil {
			var rep reproduce.Report
			if err := strictJSON(o.Report, &rep); err != nil {
				t.Errorf("%s: \"report\" is not reproduce's report: %v", name, err)
			}
		}
	}
	t.Logf("%d command lines of docs/cli.md parsed into cli.Output", parsed)
	// Every command of the tree is shown with --json somewhere in the doc.
	for _, c := range []string{"sigma", "eps", "delta", "epochs", "gaussian", "audit", "audit-run", "profile", "statement", "curve epochs", "curve sigma", "moments", "train", "data fetch", "data verify", "reproduce run", "version"} {
		if !seen[c] {
			t.Errorf("docs/cli.md shows no %s command line", c)
		}
	}
	if want := 25 + map[bool]int{true: 4}[long]; parsed < want {
		t.Errorf("parsed %d command lines, want at least %d", parsed, want)
	}
}

func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
