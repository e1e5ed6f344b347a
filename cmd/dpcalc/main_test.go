package main

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/internal/cli"
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
		{"nan sigma", []string{"eps", "--sigma", "NaN", "--q", "0.01", "--epochs", "3"}, "invalid --sigma: not a number, want finite and > 0"},
		// strconv.ParseFloat (kong's float decoder) read "1_0" as 10 and
		// "0x1p-3" as 0.125.
		{"underscore sigma", []string{"eps", "--sigma", "1_0", "--q", "0.01", "--epochs", "3"}, `--sigma: expected a plain decimal number such as 0.5 or 2e-3 but got "1_0" (no underscores or hex)`},
		{"hex q", []string{"eps", "--sigma", "1", "--q", "0x1p-3", "--epochs", "3"}, `--q: expected a plain decimal number such as 0.5 or 2e-3 but got "0x1p-3"`},
		{"underscore lambdas", []string{"moments", "--sigma", "1", "--q", "0.5", "--lambdas", "2,1_0"}, `--lambdas: expected a plain decimal number such as 0.5 or 2e-3 but got "1_0"`},
		{"inf sigma", []string{"delta", "--sigma", "Inf", "--eps", "1", "--q", "0.01", "--epochs", "3"}, "invalid --sigma: infinite, want finite and > 0"},
		{"q zero", []string{"eps", "--sigma", "1", "--q", "0", "--epochs", "3"}, "invalid --q: 0, want in (0, 1]"},
		{"q above one", []string{"sigma", "--eps", "1", "--q", "1.5", "--epochs", "3"}, "invalid --q: 1.5"},
		{"delta one", []string{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "3", "--delta", "1"}, "invalid --delta: 1, want in (0, 1)"},
		{"delta zero", []string{"sigma", "--eps", "1", "--q", "0.1", "--epochs", "3", "--delta", "0"}, "invalid --delta: 0"},
		{"eps negative", []string{"sigma", "--eps", "-2", "--q", "0.1", "--epochs", "3"}, "invalid --eps: -2"},
		{"eps nan", []string{"delta", "--sigma", "1", "--eps", "nan", "--q", "0.1", "--epochs", "3"}, "invalid --eps: not a number"},
		{"steps zero", []string{"eps", "--sigma", "1", "--q", "0.1", "--steps", "-3"}, "invalid --steps: -3"},
		{"epochs inf", []string{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "Inf"}, "invalid --epochs: infinite"},
		{"absurd epochs", []string{"eps", "--sigma", "1", "--q", "1e-9", "--epochs", "1e300"}, "invalid --epochs"},
		{"no length", []string{"eps", "--sigma", "1", "--q", "0.1"}, "missing flags: --epochs=EPOCHS or --steps=STEPS"},
		{"epochs zero", []string{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "0"}, "invalid --epochs: 0, want finite and > 0"},
		{"steps fraction", []string{"eps", "--sigma", "1", "--q", "0.1", "--steps", "1.5"}, `--steps: invalid value "1.5", want a whole number`},
		{"steps word", []string{"eps", "--sigma", "1", "--q", "0.1", "--steps", "many"}, `--steps: invalid value "many"`},
		{"repeated flag", []string{"eps", "--sigma", "1", "--q", "0.1", "--steps", "5", "--steps=7"}, "--steps given more than once"},
		{"repeated enum", []string{"sigma", "--eps", "1", "--q", "0.1", "--epochs", "1", "--accountant", "ma", "--accountant", "rdp"}, "--accountant given more than once"},
		{"help unknown", []string{"help", "frobnicate"}, "help: unexpected argument frobnicate"},
		{"curve accountant", []string{"curve", "epochs", "--sigma", "1", "--q", "0.1", "--accountant", "ma,foo"}, `--accountant must be one of`},
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
	if code != 0 || stdout != "dpcalc "+versionString()+"\n" {
		t.Errorf("--version: %q, code %d", stdout, code)
	}
	// `dpcalc version` prints the same, and --json makes it JSON.
	if got, stderr, code := runCLI("version"); code != 0 || got != stdout {
		t.Errorf("version: %q (stderr %q), code %d; --version printed %q", got, stderr, code, stdout)
	}
	if got, _, code := runCLI("version", "--json"); code != 0 || got != "{\n  \"command\": \"version\",\n  \"inputs\": {},\n  \"rows\": [],\n  \"version\": \""+versionString()+"\"\n}\n" {
		t.Errorf("version --json: %q, code %d", got, code)
	}
	for _, args := range [][]string{{}, {"help"}, {"--help"}, {"sigma", "-h"}, {"eps", "-h"}, {"delta", "-h"}, {"epochs", "-h"}, {"moments", "-h"}} {
		stdout, _, code := runCLI(args...)
		if code != 0 || !strings.Contains(stdout, "Usage: dpcalc") {
			t.Errorf("%v: code %d, output %q", args, code, stdout)
		}
	}
	// dpcalc help CMD prints exactly what dpcalc CMD --help prints.
	for _, cmd := range [][]string{{"sigma"}, {"curve", "sigma"}, {"data", "fetch"}, {"reproduce"}} {
		viaHelp, _, code1 := runCLI(append([]string{"help"}, cmd...)...)
		viaFlag, _, code2 := runCLI(append(append([]string{}, cmd...), "--help")...)
		if code1 != 0 || code2 != 0 || viaHelp != viaFlag {
			t.Errorf("help %v (code %d) differs from %v --help (code %d):\n%s\n---\n%s", cmd, code1, cmd, code2, viaHelp, viaFlag)
		}
	}
	// Help shows each default once, never kong's type placeholders, and the
	// usage line says a length is required.
	stdout, _, _ = runCLI("help", "curve", "sigma")
	for _, bad := range []string{"FLOAT-64", "=INT", "LAYER-CLIP", "default: 400", "--eps=\"0.1:10\""} {
		if strings.Contains(stdout, bad) {
			t.Errorf("curve sigma help contains %q:\n%s", bad, stdout)
		}
	}
	for _, want := range []string{"(--epochs=EPOCHS | --steps=STEPS)", "(default: 40)", "(default: 0.1:10)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("curve sigma help lacks %q:\n%s", want, stdout)
		}
	}
}

func TestStepsExponent(t *testing.T) {
	a, _, c1 := runCLI("eps", "--sigma", "1", "--q", "0.01", "--steps", "1e4", "--json")
	b, _, c2 := runCLI("eps", "--sigma", "1", "--q", "0.01", "--steps", "10000", "--json")
	if c1 != 0 || c2 != 0 || a != b || !strings.Contains(a, `"steps": 10000`) {
		t.Errorf("--steps 1e4 (code %d):\n%s\n--steps 10000 (code %d):\n%s", c1, a, c2, b)
	}
}

func TestVersionFrom(t *testing.T) {
	set := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install @v", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"pseudo-version from git", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261123201458-4043dbbd3d01+dirty"}}, "v0.0.0-20261123201458-4043dbbd3d01+dirty"},
		{"revision only", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: set("vcs.revision", "4043dbbd3d01fb7b7f2869c33f50a525f65ee586", "vcs.modified", "false")}, "devel-4043dbbd3d01"},
		{"revision, modified", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: set("vcs.revision", "4043dbbd3d01fb7b", "vcs.modified", "true")}, "devel-4043dbbd3d01+dirty"},
		{"nothing stamped", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
	}
	for _, tt := range tests {
		if got := cli.VersionFrom(&tt.bi); got != tt.want {
			t.Errorf("%s: versionFrom = %q, want %q", tt.name, got, tt.want)
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
