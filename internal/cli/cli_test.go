package cli

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
)

func execute(args ...string) (stdout, stderr string, o Outcome) {
	var out, errb bytes.Buffer
	o = Execute(context.Background(), args, IO{Stdout: &out, Stderr: &errb}, Hooks{})
	return out.String(), errb.String(), o
}

// TestNothingCarriesOver: Execute reuses parsed command trees; no value of
// an earlier command line reaches a later one, whether the later one
// parses or not.
func TestNothingCarriesOver(t *testing.T) {
	for i := 0; i < 3; i++ {
		if _, _, o := execute("eps", "--sigma", "4", "--q", "0.01", "--epochs", "10", "--accountant", "pld", "--json"); o.Code != 0 {
			t.Fatalf("eps: %+v", o)
		}
		// --json of the first line must not make this error JSON.
		if stdout, stderr, o := execute("eps", "--bogus"); o.Code != 2 || stdout != "" || !strings.Contains(stderr, "unknown flag --bogus") {
			t.Errorf("eps --bogus after eps --json: exit %d, stdout %q, stderr %q", o.Code, stdout, stderr)
		}
		// Nor its --sigma and --accountant this one's.
		stdout, _, o := execute("eps", "--q", "0.01", "--epochs", "10")
		if o.Code != 2 || !strings.Contains(o.Err.Error(), "missing flags: --sigma=SIGMA") || stdout != "" {
			t.Errorf("eps without --sigma: exit %d, %v, stdout %q", o.Code, o.Err, stdout)
		}
		if _, _, o := execute("eps", "--sigma", "4", "--q", "0.01", "--epochs", "10"); o.Code != 0 || o.Result.(*Rows).Rows[0].Accountant != "pld" {
			t.Errorf("eps with the default accountant: %+v", o)
		}
	}
}

// TestConcurrentExecute: Execute may run concurrently; each command line
// gets its own answer.
func TestConcurrentExecute(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := []string{"4", "0.1"}[i%2]
			stdout, _, o := execute("eps", "--sigma", want, "--q", "0.01", "--steps", "100")
			if o.Code != 0 || !strings.Contains(stdout, "│ pld        │ "+want+" ") {
				t.Errorf("σ %s: exit %d\n%s", want, o.Code, stdout)
			}
		}()
	}
	wg.Wait()
}

// TestPooledParserIsFresh: a sequence of command lines, good and bad, of
// every kind of flag (pointers, enums, xor groups, slices, required
// flags, positional arguments, subcommands, help), prints the same with
// parsers reused from the pool as with a new parser for each.
func TestPooledParserIsFresh(t *testing.T) {
	lines := [][]string{
		{"eps", "--sigma", "4", "--q", "0.01", "--steps", "100", "--json"},
		{"eps", "--sigma", "4", "--q", "0.01", "--epochs", "3"},
		{"eps", "--sigma", "4", "--q", "0.01", "--epochs", "3", "--steps", "5"},
		{"eps", "--sigma", "1", "--q", "0.01"},
		{"eps", "--q", "0.01", "--epochs", "3", "--accountant", "zcdp"},
		{"eps", "--sigma", "1", "--q", "0.01", "--epochs", "3", "--accountant", "foo"},
		{"eps", "--sigma", "1", "--q", "0.01", "--steps", "5", "--steps=7"},
		{"eps", "--schedule", "sigma=1,q=0.01,steps=50; sigma=2,q=0.02,steps=30", "--accountant", "all"},
		{"eps", "--sigma", "1", "--batch", "256", "--n", "60000", "--epochs", "1", "--sampling", "fixed", "--adjacency", "replace-one", "--json"},
		{"eps", "--sigma", "1", "--batch", "256", "--epochs", "1"},
		{"delta", "--sigma", "2", "--eps", "0.5", "--q", "0.05", "--steps", "30"},
		{"delta", "--sigma", "2", "--q", "0.05", "--steps", "30"},
		{"sigma", "--eps", "2", "--q", "0.01", "--epochs", "5", "--tol", "1e-3"},
		{"sigma", "--q", "0.01", "--epochs", "5"},
		{"epochs", "--sigma", "4", "--q", "0.01", "--eps", "8", "--max-steps", "100"},
		{"epochs", "--sigma", "4", "--eps", "8"},
		{"audit", "--sigma", "1.1", "--q", "0.01", "--steps", "200", "--eps", "0.5"},
		{"audit", "--sigma", "1.1", "--q", "0.01", "--steps", "200"},
		{"gaussian", "--eps", "1", "--json"},
		{"gaussian", "--eps", "0.5", "--sensitivity", "2"},
		{"moments", "--sigma", "1", "--q", "0.5", "--lambdas", "1,2"},
		{"moments", "--sigma", "1", "--q", "0.5"},
		{"curve", "epochs", "--sigma", "4", "--q", "0.01", "--to", "5", "--points", "3", "--accountant", "rdp,zcdp", "--csv"},
		{"curve", "epochs", "--sigma", "4", "--q", "0.01", "--to", "5", "--points", "3", "--accountant", "rdp"},
		{"curve", "sigma", "--q", "0.01", "--steps", "50", "--eps", "1,2", "--accountant", "rdp"},
		{"profile", "--sigma", "4", "--q", "0.01", "--steps", "100", "--accountant", "rdp", "--deltas", "1e-5", "--fpr", "0.1", "--format", "csv"},
		{"profile", "--sigma", "4", "--q", "0.01", "--steps", "100", "--accountant", "rdp", "--deltas", "1e-5", "--fpr", "0.1"},
		{"help", "eps"},
		{"help", "curve", "sigma"},
		{"eps", "--help"},
		{"version", "--json"},
		{"version"},
		{"--version"},
		{"frobnicate"},
		{"eps", "--bogus"},
		{},
	}
	run := func() []string {
		var out []string
		for _, args := range lines {
			stdout, stderr, o := execute(args...)
			out = append(out, stdout+"\x00"+stderr+"\x00"+string(rune('0'+o.Code)))
		}
		return out
	}
	pooled := run()
	freshParsers = true
	fresh := run()
	freshParsers = false
	for i := range lines {
		if pooled[i] != fresh[i] {
			t.Errorf("%q: reused parser printed\n%s\na new one\n%s", lines[i], pooled[i], fresh[i])
		}
	}
}
