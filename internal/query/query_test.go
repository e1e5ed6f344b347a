package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dpcalc/dpcalc/internal/testenv"
	"github.com/dpcalc/dpcalc/internal/work"
)

// cliBin is the dpcalc binary TestMain builds, the reference every Result
// is compared with.
var cliBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dpcalc-query-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cliBin = filepath.Join(dir, "dpcalc")
	out, err := exec.Command("go", "build", "-o", cliBin, "github.com/dpcalc/dpcalc/cmd/dpcalc").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building dpcalc: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// CLI runs the binary with args and --json and returns its stdout decoded
// (without "version" fields) and its exit code.
func CLI(t *testing.T, args []string) (any, int) {
	t.Helper()
	cmd := exec.Command(cliBin, append(append([]string{}, args...), "--json")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running dpcalc %v: %v", args, err)
	}
	var v any
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatalf("dpcalc %v: stdout is not JSON: %v\n%s\nstderr: %s", args, err, stdout.Bytes(), stderr.Bytes())
	}
	return stripVersion(v), code
}

// cliForm is what the CLI prints with --json for res.
func cliForm(t *testing.T, res Result) any {
	t.Helper()
	var v any
	switch {
	case res.Error != "":
		v = map[string]string{"error": res.Error}
	case res.Audit != nil:
		v = res.Audit
	case res.Curve != nil:
		v = res.Curve
	case res.All:
		v = res.Rows
	case len(res.Rows) == 1:
		v = res.Rows[0]
	default:
		t.Fatalf("result has %d rows and no --accountant all", len(res.Rows))
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return stripVersion(out)
}

// stripVersion drops "version" keys: the test binary and the CLI binary
// carry different build information.
func stripVersion(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "version")
		for k, e := range x {
			x[k] = stripVersion(e)
		}
	case []any:
		for i, e := range x {
			x[i] = stripVersion(e)
		}
	}
	return v
}

// queries cover every command, every accountant, the certified interval,
// procedures' caveats, per-row errors and bad input of every kind the
// page can send. Numbers are compared exactly (JSON floats round-trip).
var queries = []string{
	// The example and the web calculators' favourite setting.
	"cmd=eps&sigma=4&q=0.01&epochs=100&delta=1e-5&accountant=all",
	"cmd=eps&sigma=1.2&q=0.00256&epochs=50&delta=1e-10&accountant=all",
	"cmd=eps&sigma=1.1&q=0.01&steps=1000",
	"cmd=eps&sigma=1.1&q=0.01&steps=1000&accountant=pld&pld-grid=0.01",
	"cmd=eps&sigma=4&q=0.01&epochs=100&accountant=ac&ac-sampling=linear",
	"cmd=eps&sigma=0.01&q=1&steps=1&accountant=all",
	"cmd=delta&sigma=4&eps=1.2&q=0.01&epochs=100&accountant=all",
	"cmd=delta&sigma=2&eps=0.5&q=0.05&steps=300&accountant=pld",
	"cmd=sigma&eps=2&delta=1e-5&q=0.01&epochs=50&accountant=all",
	"cmd=sigma&eps=1&q=0.004&epochs=10&tol=1e-3",
	"cmd=epochs&sigma=1.1&q=0.01&eps=2&delta=1e-5&accountant=all",
	"cmd=epochs&sigma=4&q=0.01&eps=8&max-steps=100",
	"cmd=epochs&sigma=0.3&q=0.5&eps=0.01",
	"cmd=audit&sigma=1.2&q=0.00256&epochs=50&delta=1e-10&eps=2.5",
	"cmd=audit&sigma=1.1&q=0.01&steps=2000&eps=0.5",
	"cmd=curve-epochs&sigma=4&q=0.01&from=1&to=50&points=12",
	"cmd=curve-epochs&sigma=1.1&q=0.01&to=20&points=5&accountant=all",
	"cmd=curve-sigma&q=0.01&epochs=10&eps=0.5:8&points=6",
	"cmd=curve-sigma&q=0.01&steps=500&eps=1,2,4&accountant=rdp,pld",
	// The CLI's edge reproductions: extreme σ answers, never panics.
	"cmd=eps&sigma=1e308&q=0.01&epochs=10&accountant=all",
	"cmd=delta&sigma=1e308&q=0.01&epochs=10&eps=1&accountant=all",
	"cmd=epochs&sigma=1e308&q=0.01&eps=1&max-steps=1000000&accountant=all",
	"cmd=audit&sigma=1.7976931348623157e308&q=0.01&epochs=10&eps=1",
	"cmd=curve-epochs&sigma=1e308&q=0.01&to=10&points=3&accountant=ma,rdp,pld",
	"cmd=eps&sigma=1e-160&q=0.01&steps=1000&accountant=pld",
	"cmd=epochs&sigma=1e-200&q=0.01&eps=0.1&accountant=all",
	// Bad input: the CLI's messages, exit code 2.
	"cmd=eps&sigma=-1&q=0.01&epochs=10",
	"cmd=eps&sigma=abc&q=0.01&epochs=10",
	"cmd=eps&sigma=NaN&q=0.01&epochs=10",
	"cmd=eps&sigma=Inf&q=0.01&epochs=10",
	"cmd=eps&q=0.01&epochs=10",
	"cmd=delta&q=0.01&epochs=10",
	"cmd=eps&sigma=1&q=0&epochs=10",
	"cmd=eps&sigma=1&q=1.5&epochs=10",
	"cmd=eps&sigma=1&q=x&epochs=10",
	"cmd=eps&sigma=1&q=0.01",
	"cmd=eps&sigma=1&q=0.01&epochs=10&steps=5",
	"cmd=eps&sigma=1&q=0.01&steps=-3",
	"cmd=eps&sigma=1&q=0.01&steps=2.5",
	"cmd=eps&sigma=1&q=0.01&epochs=Inf",
	"cmd=eps&sigma=1&q=1e-9&epochs=1e300",
	"cmd=eps&sigma=1&q=0.01&epochs=10&delta=1",
	"cmd=eps&sigma=1&q=0.01&epochs=10&delta=0",
	"cmd=eps&sigma=1&q=0.01&epochs=10&accountant=foo",
	"cmd=eps&sigma=1&q=0.01&epochs=10&ac-sampling=cubic",
	"cmd=eps&sigma=1&q=0.01&epochs=10&pld-grid=-1",
	"cmd=eps&sigma=1&q=0.01&epochs=10&pld-grid=2",
	"cmd=eps&sigma=-1&q=7&epochs=10",
	"cmd=delta&sigma=1&eps=-2&q=0.01&epochs=10",
	"cmd=delta&sigma=1&eps=nan&q=0.01&epochs=10",
	"cmd=sigma&eps=-2&q=0.01&epochs=3",
	"cmd=sigma&q=0.01&epochs=3",
	"cmd=sigma&eps=1&q=0.1&epochs=1&tol=2",
	"cmd=sigma&eps=1&q=0.1&epochs=1&delta=0",
	"cmd=epochs&sigma=1&q=7&eps=1",
	"cmd=epochs&sigma=1&q=0.1&eps=1&max-steps=0",
	"cmd=epochs&sigma=1&q=0.1&eps=1&max-steps=abc",
	"cmd=epochs&sigma=1&eps=1",
	"cmd=audit&sigma=1&q=0.01&epochs=10",
	"cmd=audit&sigma=1&q=0.01&epochs=10&eps=0",
	"cmd=audit&sigma=1&q=0.01&epochs=10&eps=1&pld-grid=3",
	"cmd=curve-epochs&sigma=1&q=0.01&from=5&to=2",
	"cmd=curve-epochs&sigma=1&q=0.01&points=1",
	"cmd=curve-epochs&sigma=1&q=0.01&points=5&accountant=rdp,foo",
	"cmd=curve-sigma&q=0.01&epochs=10&eps=3:1",
	"cmd=curve-sigma&q=0.01&epochs=10&eps=a,b",
	"cmd=eps&sigma=1&q=0.01&steps=1e3",
	"cmd=eps&sigma=1&q=0.01&steps=0x10",
	"cmd=eps&sigma=1&q=0.01&steps=0",
	"cmd=eps&sigma=1&q=0.01&steps=Inf",
	"cmd=eps&sigma=1&q=0.01&epochs=0",
	"cmd=eps&q=0.01",
	"cmd=audit&q=0.01",
	"cmd=curve-epochs&sigma=1&q=0.01&points=3&accountant=rdp,all",
	"cmd=curve-epochs&sigma=1&q=0.01&points=3&accountant=rdp,,pld",
	"cmd=curve-epochs&sigma=1&q=0.01&points=3&accountant=+rdp",
	"cmd=curve-sigma&q=0.01&epochs=10&eps=1:4&points=3", // the default points: longQueries
	// Issue 12: schedules, batch and n, sampling, adjacency.
	"cmd=eps&schedule=sigma%3D1,q%3D0.01,steps%3D5000%3Bsigma%3D2,q%3D0.02,steps%3D3000&accountant=all",
	"cmd=delta&eps=5&schedule=sigma%3D1,q%3D0.01,steps%3D5000%3Bsigma%3D2,q%3D0.02,steps%3D3000&accountant=pld",
	"cmd=sigma&eps=3&schedule=sigma%3D%3F,q%3D0.01,steps%3D5000%3Bsigma%3D2,q%3D0.02,steps%3D3000&accountant=all",
	"cmd=epochs&eps=8&schedule=sigma%3D1,q%3D0.01,steps%3D5000%3Bsigma%3D2,q%3D0.02,epochs%3D%3F",
	"cmd=eps&sigma=1.1&batch=256&n=60000&epochs=3&accountant=all",
	"cmd=sigma&eps=1&batch=256&n=60000&epochs=3",
	"cmd=epochs&sigma=1.1&batch=256&n=60000&eps=1",
	"cmd=eps&sigma=1&batch=256&n=60000&epochs=2&sampling=shuffle&accountant=all",
	"cmd=eps&sigma=1&batch=256&n=60000&epochs=2&sampling=fixed&adjacency=replace-one",
	"cmd=eps&sigma=1&q=0.01&steps=100&adjacency=replace-one&accountant=all",
	"cmd=eps&sigma=1&batch=256&n=60000&epochs=2&sampling=fixed",
	"cmd=eps&sigma=1&q=0.01&batch=256&n=60000&epochs=2",
	"cmd=eps&sigma=1&batch=256&epochs=2",
	"cmd=eps&sigma=1&batch=256&n=100&epochs=2",
	"cmd=eps&sigma=1&batch=0&n=100&epochs=2",
	"cmd=eps&sigma=1&q=0.1&n=-5&epochs=2",
	"cmd=eps&sigma=1&q=0.1&epochs=2&sampling=shuffle",
	"cmd=eps&sigma=1&q=0.1&epochs=2&sampling=bogus",
	"cmd=eps&sigma=1&q=0.1&epochs=2&adjacency=bogus",
	"cmd=eps&sigma=1&schedule=sigma%3D1,q%3D0.01,steps%3D5",
	"cmd=eps&schedule=sigma%3D1,q%3D0.01,foo%3D5",
	"cmd=eps&schedule=sigma%3D1,q%3D0.01",
	"cmd=eps&schedule=sigma%3D1,q%3D0.01,batch%3D2,steps%3D3",
	"cmd=eps&schedule=sigma%3D%3F,q%3D0.01,steps%3D3",
	"cmd=sigma&eps=1&schedule=sigma%3D1,q%3D0.01,steps%3D3",
	"cmd=epochs&eps=1&schedule=sigma%3D1,q%3D0.01,steps%3D3",
	"cmd=eps&schedule=sigma%3D1,batch%3D100,steps%3D15&n=1000&sampling=shuffle",
}

// longQueries are checked against the CLI in the long test step only
// (internal/testenv): each takes tens of seconds, and queries has a cheaper
// one of the same form.
var longQueries = []string{
	"cmd=curve-sigma&q=0.01&epochs=10&eps=1:4",
}

func TestMatchesCLI(t *testing.T) {
	qss := queries
	if testenv.Long() {
		qss = append(qss[:len(qss):len(qss)], longQueries...)
	}
	for _, qs := range qss {
		t.Run(qs, func(t *testing.T) {
			t.Parallel()
			req, err := Parse(qs)
			if err != nil {
				t.Fatal(err)
			}
			res := Run(t.Context(), req)
			want, code := CLI(t, req.Args())
			if got := cliForm(t, res); !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Errorf("dpcalc %v:\nquery: %s\nCLI:   %s", req.Args(), g, w)
			}
			if res.Exit != code {
				t.Errorf("exit code %d, CLI's %d", res.Exit, code)
			}
			if res.Error != "" && res.Flag == "" {
				t.Errorf("error %q names no flag", res.Error)
			}
		})
	}
}

// FuzzParseRun: any query string gets a Result that encodes as JSON (no
// panic, no NaN or Inf) and an error names a flag. Runs are bounded by a
// work limit (internal/work), the same on every machine; a run cut short
// reports an error.
func FuzzParseRun(f *testing.F) {
	for _, qs := range queries {
		f.Add(qs)
	}
	f.Fuzz(func(t *testing.T, qs string) {
		req, err := Parse(qs)
		if err != nil {
			return
		}
		res := Run(work.With(t.Context(), work.NewMeter(fuzzWork)), req)
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("%s: %v", qs, err)
		}
		if res.Exit == 2 && (res.Error == "" || res.Flag == "") {
			t.Fatalf("%s: exit 2 with error %q about flag %q", qs, res.Error, res.Flag)
		}
	})
}

// fuzzWork bounds the work of one FuzzParseRun run, in units of
// internal/work: a few seconds of pld on an idle core.
const fuzzWork = 20000

func TestParseAndCommandLine(t *testing.T) {
	tests := []struct {
		qs, cmdline string
	}{
		{"cmd=eps&sigma=4&q=0.01&epochs=100&delta=1e-5&accountant=all", "dpcalc eps --sigma 4 --delta 1e-5 --q 0.01 --epochs 100 --accountant all"},
		{"?sigma=4&q=0.01&steps=10&bogus=1&eps=3", "dpcalc eps --sigma 4 --q 0.01 --steps 10"},
		{"cmd=curve-sigma&eps=1,2&q=0.1&epochs=&steps=5&points=7", "dpcalc curve sigma --eps 1,2 --points 7 --q 0.1 --steps 5"},
		{"cmd=eps&sigma=1+2&q=a'b", `dpcalc eps --sigma '1 2' --q 'a'\''b'`},
		{"cmd=audit&sigma=1&accountant=all&pld-grid=0.1", "dpcalc audit --sigma 1 --pld-grid 0.1"},
	}
	for _, tt := range tests {
		r, err := Parse(tt.qs)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.qs, err)
		}
		if got := r.CommandLine(); got != tt.cmdline {
			t.Errorf("Parse(%q).CommandLine() = %q, want %q", tt.qs, got, tt.cmdline)
		}
	}
	if _, err := Parse("a=%zz"); err == nil {
		t.Error("Parse accepted a malformed query string")
	}
	res := Run(t.Context(), Request{Cmd: "train"})
	if res.Exit != 2 || res.Flag != "cmd" {
		t.Errorf("unknown command: exit %d flag %q (%s), want 2, cmd", res.Exit, res.Flag, res.Error)
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r, _ := Parse("cmd=sigma&eps=1&q=0.01&epochs=100&accountant=pld")
	res := Run(ctx, r)
	if res.Exit != 130 || res.Rows != nil {
		t.Errorf("canceled run: exit %d, %d rows, error %q; want 130, none", res.Exit, len(res.Rows), res.Error)
	}
}
