package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
)

const twoPhase = "sigma=1,q=0.01,steps=5000; sigma=2,q=0.02,steps=3000"

func epsOf(t *testing.T, args ...string) float64 {
	t.Helper()
	stdout, stderr, code := runCLI(append(args, "--json")...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	out := decodeOutput(t, stdout)
	if len(out.Rows) == 0 || out.Rows[0].Epsilon == nil || out.Rows[0].Value == nil || *out.Rows[0].Value != *out.Rows[0].Epsilon {
		t.Fatalf("%v: no ε\n%s", args, stdout)
	}
	return *out.Rows[0].Epsilon
}

// TestScheduleEventsAPI: the two-phase example gives one ε from
// --schedule, from dp_accounting's JSON (--events), from the JSON dpcalc
// emits (--emit-events, read back with --events, also from stdin), and from
// the Go API.
func TestScheduleEventsAPI(t *testing.T) {
	// The command line's default accountant.
	newAcc := func() (accounting.Method, error) { return registry.New(registry.Default, registry.Options{}) }
	api, err := calibrate.Epsilon(t.Context(), newAcc, accounting.Composed{Events: []accounting.Event{
		accounting.SubsampledGaussian(1, 0.01, 5000), accounting.SubsampledGaussian(2, 0.02, 3000)}}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	emitted := filepath.Join(t.TempDir(), "two.json")
	got := map[string]float64{
		"schedule":           epsOf(t, "eps", "--schedule", twoPhase, "--emit-events", emitted),
		"dp_accounting JSON": epsOf(t, "eps", "--events", filepath.Join("..", "..", "testdata", "dpevent", "py", "two_phase.json")),
		"emitted JSON":       epsOf(t, "eps", "--events", emitted),
	}
	b, err := os.ReadFile(emitted)
	if err != nil {
		t.Fatal(err)
	}
	stdin = strings.NewReader(string(b))
	got["stdin"] = epsOf(t, "eps", "--events", "-")
	stdin = os.Stdin
	for name, e := range got {
		if e != api {
			t.Errorf("%s: ε = %v, Go API %v", name, e, api)
		}
	}
	// The emitted file is dp_accounting's JSON of the same training, byte
	// for byte the golden file gen.py --check reads with dp_accounting
	// (up to indentation).
	golden, err := os.ReadFile(filepath.Join("..", "..", "testdata", "dpevent", "go", "two_phase.json"))
	if err != nil {
		t.Fatal(err)
	}
	var a, g any
	if json.Unmarshal(b, &a) != nil || json.Unmarshal(golden, &g) != nil || !jsonEqual(a, g) {
		t.Errorf("emitted %s, golden %s", b, golden)
	}
	// --emit-events - prints the event instead of the table.
	stdout, _, code := runCLI("sigma", "--eps", "1", "--q", "0.01", "--steps", "1000", "--emit-events", "-")
	if code != 0 || !strings.Contains(stdout, `"class_name": "PoissonSampledDpEvent"`) || strings.Contains(stdout, "accountant") {
		t.Errorf("sigma --emit-events -: exit %d\n%s", code, stdout)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestSingleFlagsAreOnePhase: the single-phase flags, the same phase as a
// schedule, and batch/n with q = batch/n give identical ε.
func TestSingleFlagsAreOnePhase(t *testing.T) {
	flags := epsOf(t, "eps", "--sigma", "1.1", "--q", "0.25", "--steps", "300", "--accountant", "pld")
	for _, args := range [][]string{
		{"eps", "--schedule", "sigma=1.1,q=0.25,steps=300", "--accountant", "pld"},
		{"eps", "--sigma", "1.1", "--batch", "250", "--n", "1000", "--steps", "300", "--accountant", "pld"},
		{"eps", "--schedule", "sigma=1.1,batch=250,steps=300", "--n", "1000", "--accountant", "pld"},
		{"eps", "--schedule", "sigma=1.1,batch=250,n=1000,epochs=75", "--accountant", "pld"},
	} {
		if e := epsOf(t, args...); e != flags {
			t.Errorf("%v: ε = %v, flags %v", args, e, flags)
		}
	}
}

func TestEventsBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknown := write("unknown.json", `{"module_name":"dp_accounting.dp_event","class_name":"SampledWithReplacementDpEvent","source_dataset_size":10,"sample_size":2,"event":{"class_name":"NoOpDpEvent"}}`)
	field := write("field.json", `{"class_name":"GaussianDpEvent","noise_multiplier":1,"sensitivity":2}`)
	negative := write("negative.json", `{"class_name":"SelfComposedDpEvent","event":{"class_name":"GaussianDpEvent","noise_multiplier":1},"count":-2}`)
	truncated := write("truncated.json", `{"class_name":"GaussianDpEv`)
	good := write("good.json", `{"class_name":"GaussianDpEvent","noise_multiplier":1}`)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown class", []string{"eps", "--events", unknown}, `unknown class_name "SampledWithReplacementDpEvent"`},
		{"unknown field", []string{"delta", "--eps", "1", "--events", field}, `unknown field "sensitivity"`},
		{"negative count", []string{"eps", "--events", negative}, "count = -2 at SelfComposed, want >= 1"},
		{"truncated", []string{"eps", "--events", truncated}, "truncated"},
		{"missing file", []string{"eps", "--events", filepath.Join(dir, "nope.json")}, "nope.json"},
		{"events and flags", []string{"eps", "--events", good, "--sigma", "1"}, "--events replaces --sigma"},
		{"events and schedule", []string{"eps", "--events", good, "--schedule", twoPhase}, "--events and --schedule can't be used together"},
		{"schedule and sigma", []string{"eps", "--schedule", twoPhase, "--sigma", "1"}, "--schedule replaces --sigma"},
		{"schedule syntax", []string{"eps", "--schedule", "sigma=1,q=0.1,steps=5; sigma=1,foo=2"}, `--schedule phase 2: unknown key "foo"`},
		{"schedule duplicate", []string{"delta", "--eps", "1", "--schedule", "sigma=1,sigma=2,q=0.1,steps=5"}, "--schedule phase 1: sigma given twice"},
		{"schedule q and batch", []string{"eps", "--schedule", "sigma=1,q=0.1,batch=5,n=50,steps=5"}, "--schedule phase 1: give q or batch (with n), not both"},
		{"schedule no length", []string{"eps", "--schedule", "sigma=1,q=0.1"}, "--schedule phase 1: missing steps or epochs"},
		{"schedule bad sigma", []string{"eps", "--schedule", "sigma=1,q=0.1,steps=5; sigma=-1,q=0.1,steps=5"}, "--schedule phase 2: invalid sigma: -1"},
		{"schedule unknown in eps", []string{"eps", "--schedule", "sigma=?,q=0.1,steps=5"}, "sigma=? is only for dpcalc sigma"},
		{"sigma needs one unknown", []string{"sigma", "--eps", "1", "--schedule", "sigma=1,q=0.1,steps=5"}, "exactly one phase with sigma=?"},
		{"epochs needs one unknown", []string{"epochs", "--eps", "1", "--schedule", "sigma=1,q=0.1,steps=5"}, "exactly one phase with steps=? or epochs=?"},
		{"fixed under add-remove", []string{"eps", "--sigma", "1", "--batch", "10", "--n", "100", "--steps", "5", "--sampling", "fixed"}, "--sampling fixed needs --adjacency replace-one"},
		{"shuffle with q", []string{"eps", "--sigma", "1", "--q", "0.1", "--steps", "5", "--sampling", "shuffle"}, "--sampling shuffle needs --batch and --n"},
		{"batch without n", []string{"eps", "--sigma", "1", "--batch", "10", "--steps", "5"}, "--batch needs --n"},
		{"q and batch", []string{"eps", "--sigma", "1", "--q", "0.1", "--batch", "10", "--n", "100", "--steps", "5"}, "--q and --batch can't be used together"},
		{"schedule past 2^53", []string{"eps", "--schedule", "sigma=1,q=0.5,steps=9e15; sigma=1,q=0.5,steps=9e15"}, "--schedule total of the phases: count = 18000000000000000 at Composed[1]/SelfComposed/PoissonSampled/Gaussian, want a total of at most 9007199254740992 (2^53) steps"},
		// Plain decimal numbers only, conflicting keys named, and the key
		// the user wrote: sigma=1_0 read as 10, 0x1p-3 as 0.125, n= after
		// q= was ignored and steps=0 was reported as "invalid epochs: 0".
		{"schedule underscore", []string{"eps", "--schedule", "sigma=1_0,q=0.01,steps=10"}, `--schedule phase 1: sigma: invalid value "1_0"; want a plain decimal number`},
		{"schedule hex", []string{"eps", "--schedule", "sigma=0x1p-3,q=0.01,steps=10"}, `--schedule phase 1: sigma: invalid value "0x1p-3"`},
		{"schedule inf", []string{"eps", "--schedule", "sigma=inf,q=0.01,steps=10"}, `--schedule phase 1: sigma: not a finite number`},
		{"schedule n with q", []string{"eps", "--schedule", "sigma=1,q=0.01,n=5,steps=10"}, "--schedule phase 1: q and n conflict"},
		{"schedule steps 0", []string{"eps", "--schedule", "sigma=1,q=0.01,steps=0"}, `--schedule phase 1: steps: invalid value "0", want a whole number >= 1`},
		{"events count past 2^53", []string{"eps", "--events", write("big.json", `{"class_name":"SelfComposedDpEvent","event":{"class_name":"GaussianDpEvent","noise_multiplier":1},"count":9007199254740993}`)}, "9007199254740993 is too large: want at most 9007199254740992 (2^53)"},
		{"emit to stdout with json", []string{"eps", "--sigma", "1", "--q", "0.1", "--steps", "5", "--emit-events", "-", "--json"}, "--emit-events - and --json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, asJSON := range []bool{false, true} {
				args := tt.args
				if asJSON && !strings.Contains(strings.Join(args, " "), "--json") {
					args = append(append([]string{}, args...), "--json")
				}
				stdout, stderr, code := runCLI(args...)
				if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
					t.Errorf("%v: exit %d, stderr %q; want 2 and %q", args, code, stderr, tt.want)
				}
				if strings.Contains(strings.Join(args, " "), "--json") {
					var obj map[string]string
					if err := json.Unmarshal([]byte(stdout), &obj); err != nil || !strings.Contains(obj["error"], tt.want) {
						t.Errorf("%v: stdout %q is not {\"error\": ...}", args, stdout)
					}
				}
			}
		})
	}
}
