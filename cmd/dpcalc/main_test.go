package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func runCLI(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // substring of the one-line error
	}{
		{"negative sigma", []string{"eps", "--sigma", "-1", "--q", "0.01", "--epochs", "3"}, "invalid --sigma: -1, want finite and > 0"},
		{"zero sigma", []string{"eps", "--sigma=0", "--q", "0.01", "--epochs", "3"}, "invalid --sigma: 0"},
		{"nan sigma", []string{"eps", "--sigma", "NaN", "--q", "0.01", "--epochs", "3"}, "invalid --sigma: NaN"},
		{"inf sigma", []string{"delta", "--sigma", "Inf", "--eps", "1", "--q", "0.01", "--epochs", "3"}, "invalid --sigma: +Inf"},
		{"q zero", []string{"eps", "--sigma", "1", "--q", "0", "--epochs", "3"}, "invalid --q: 0, want in (0, 1]"},
		{"q above one", []string{"sigma", "--eps", "1", "--q", "1.5", "--epochs", "3"}, "invalid --q: 1.5"},
		{"delta one", []string{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "3", "--delta", "1"}, "invalid --delta: 1, want in (0, 1)"},
		{"delta zero", []string{"sigma", "--eps", "1", "--q", "0.1", "--epochs", "3", "--delta", "0"}, "invalid --delta: 0"},
		{"eps negative", []string{"sigma", "--eps", "-2", "--q", "0.1", "--epochs", "3"}, "invalid --eps: -2"},
		{"eps nan", []string{"delta", "--sigma", "1", "--eps", "nan", "--q", "0.1", "--epochs", "3"}, "invalid --eps: NaN"},
		{"steps zero", []string{"eps", "--sigma", "1", "--q", "0.1", "--steps", "-3"}, "invalid --steps: -3"},
		{"epochs inf", []string{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "Inf"}, "invalid --epochs: +Inf"},
		{"absurd epochs", []string{"eps", "--sigma", "1", "--q", "1e-9", "--epochs", "1e300"}, "invalid --epochs"},
		{"no length", []string{"eps", "--sigma", "1", "--q", "0.1"}, "missing --epochs or --steps"},
		{"both lengths", []string{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "1", "--steps", "3"}, "can't be used together"},
		{"unknown accountant", []string{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "1", "--accountant", "foo"}, "--accountant"},
		{"unknown flag", []string{"eps", "--bogus"}, "unknown flag --bogus"},
		{"missing required", []string{"sigma", "--q", "0.1", "--epochs", "1"}, "--eps"},
		{"bad pld grid", []string{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "1", "--pld-grid", "-1"}, "invalid --pld-grid"},
		{"bad tol", []string{"sigma", "--eps", "1", "--q", "0.1", "--epochs", "1", "--tol", "2"}, "invalid --tol"},
		{"epochs cmd q", []string{"epochs", "--sigma", "1", "--q", "7", "--eps", "1"}, "invalid --q: 7"},
		{"unknown command", []string{"frobnicate"}, "frobnicate"},
		{"reproduce profile", []string{"reproduce", "--profile", "bogus"}, "--profile"},
		{"reproduce paper", []string{"reproduce", "--paper", "xyz"}, "--paper"},
		{"train method", []string{"train", "--method", "sgd"}, "--method"},
		{"train needs noise", []string{"train", "--method", "dpsgd"}, "needs --sigma or --eps"},
		{"train bad sigma", []string{"train", "--sigma", "-2"}, "invalid --sigma"},
		{"train resume without file", []string{"train", "--resume"}, "--resume needs --checkpoint"},
		{"train missing data", []string{"train", "--dataset", "mnist", "--data-dir", "/nonexistent", "--method", "np"}, "/nonexistent"},
		{"data fetch http", []string{"data", "fetch", "mnist", "--mirror", "http://example.com"}, "invalid --mirror"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, asJSON := range []bool{false, true} {
				args := tt.args
				if asJSON {
					args = append(append([]string{}, args...), "--json")
				}
				stdout, stderr, code := runCLI(args...)
				if code != 2 {
					t.Errorf("json=%v: exit code %d, want 2 (stderr %q)", asJSON, code, stderr)
				}
				if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "dpcalc: ") {
					t.Errorf("json=%v: stderr %q, want one line starting with \"dpcalc: \"", asJSON, stderr)
				}
				if !strings.Contains(stderr, tt.want) {
					t.Errorf("json=%v: stderr %q does not contain %q", asJSON, stderr, tt.want)
				}
				if asJSON {
					var obj map[string]string
					if err := json.Unmarshal([]byte(stdout), &obj); err != nil || !strings.Contains(obj["error"], tt.want) {
						t.Errorf("stdout %q is not {\"error\": ...%q...} (%v)", stdout, tt.want, err)
					}
				} else if stdout != "" {
					t.Errorf("stdout %q, want empty", stdout)
				}
			}
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	stdout, _, code := runCLI("--version")
	if code != 0 || !strings.HasPrefix(stdout, "dpcalc ") {
		t.Errorf("--version: %q, code %d", stdout, code)
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"sigma", "-h"}, {"eps", "-h"}, {"delta", "-h"}, {"epochs", "-h"}, {"moments", "-h"}} {
		stdout, _, code := runCLI(args...)
		if code != 0 || !strings.Contains(stdout, "Usage: dpcalc") {
			t.Errorf("%v: code %d, output %q", args, code, stdout)
		}
	}
}

// TestJSONOneObject: a command that prints its result and then exits 1
// (a violated audit, an accountant that failed inside --accountant all)
// still prints exactly one JSON document on stdout.
func TestJSONOneObject(t *testing.T) {
	for _, args := range [][]string{
		{"audit", "--sigma", "3.23", "--q", "0.01", "--epochs", "200", "--eps", "0.5", "--delta", "1e-4", "--json"},
		{"sigma", "--eps", "1e-4", "--q", "1", "--steps", "100000", "--accountant", "all", "--json"},
	} {
		stdout, stderr, code := runCLI(args...)
		if code != 1 {
			t.Errorf("%v: exit code %d, want 1 (stderr %q)", args, code, stderr)
		}
		dec := json.NewDecoder(strings.NewReader(stdout))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Errorf("%v: stdout is not JSON: %v", args, err)
		}
		if dec.More() {
			t.Errorf("%v: more than one JSON document on stdout:\n%s", args, stdout)
		}
	}
}
