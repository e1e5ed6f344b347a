package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/internal/cli"
)

// TestCurvesAround: the curves proposed around an eps answer are ε against
// epochs from E/50 to 2E at the row's σ and σ against the target ε from
// ε/10 to 10ε at its length, with pld beside the chosen accountant, each
// marked at the answer; none for a training the curves cannot draw.
func TestCurvesAround(t *testing.T) {
	a := Run(t.Context(), []string{"eps", "--sigma", "4", "--q", "0.01", "--epochs", "100"}, nil)
	if a.Exit != 0 || len(a.Curves) != 2 {
		t.Fatalf("answer %+v", a)
	}
	var out cli.Output
	if err := json.Unmarshal([]byte(a.JSON), &out); err != nil || len(out.Rows) != 1 || out.Rows[0].Epsilon == nil {
		t.Fatal(err, a.JSON)
	}
	row := out.Rows[0]
	want := []string{"curve", "epochs", "--sigma", "4", "--q", "0.01", "--delta", "1e-5", "--from", "2", "--to", "200", "--points", "60", "--accountant", "pld"}
	if c := a.Curves[0]; !slices.Equal(c.Args, want) || c.Command != "dpcalc "+strings.Join(want, " ") || c.Mark == nil || *c.Mark != [2]float64{100, *row.Epsilon} {
		t.Errorf("ε curve %+v, want %q marked at (100, %v)", c, want, *row.Epsilon)
	}
	lo, hi := round3(*row.Epsilon/10), round3(*row.Epsilon*10)
	want = []string{"curve", "sigma", "--delta", "1e-5", "--eps", lo + ":" + hi, "--points", "16", "--q", "0.01", "--steps", "10000", "--accountant", "pld"}
	if c := a.Curves[1]; !slices.Equal(c.Args, want) || c.Mark == nil || *c.Mark != [2]float64{*row.Epsilon, 4} {
		t.Errorf("σ curve %+v, want %q", c, want)
	}
	// The curve itself: its plot, one polyline per accountant (pld alone).
	c := Run(t.Context(), a.Curves[0].Args, a.Curves[0].Mark)
	if c.Exit != 0 || strings.Count(c.SVG, `class="series"`) != 1 || !strings.Contains(c.SVG, `data-accountant="pld"`) || !strings.Contains(c.SVG, "<circle") {
		t.Errorf("curve answer: exit %d, svg %.300s", c.Exit, c.SVG)
	}
	if a := Run(t.Context(), []string{"eps", "--schedule", "sigma=1,q=0.01,steps=50; sigma=2,q=0.02,steps=30"}, nil); a.Exit != 0 || a.Curves != nil {
		t.Errorf("schedule: exit %d, curves %+v", a.Exit, a.Curves)
	}
}

// TestErrorAnswer: bad input is the command line's message, about its flag,
// and its --json output; no result.
func TestErrorAnswer(t *testing.T) {
	a := Run(t.Context(), []string{"eps", "--sigma", "-1", "--q", "0.01", "--epochs", "3"}, nil)
	if a.Exit != 2 || a.Flag != "sigma" || a.Error != "invalid --sigma: -1, want finite and > 0" || a.Doc != nil ||
		a.JSON != "{\n  \"error\": \"invalid --sigma: -1, want finite and > 0\"\n}\n" {
		t.Errorf("answer %+v", a)
	}
	// A command the page cannot run.
	if a := Run(t.Context(), []string{"train", "--method", "np"}, nil); a.Exit != 2 || !strings.Contains(a.Error, "only on the command line") {
		t.Errorf("train: %+v", a)
	}
}

// TestDescribe: the model lists each command's flags in command-line order
// with their defaults and choices, and the registry's accountants.
func TestDescribe(t *testing.T) {
	m, err := Describe()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var acc Flag
	for _, f := range m.Commands["eps"].Flags {
		names = append(names, f.Name)
		if f.Name == "accountant" {
			acc = f
		}
	}
	if want := []string{"sigma", "delta", "q", "epochs", "steps", "batch", "n", "schedule", "sampling", "max-batch", "k", "bands", "adjacency", "group-size", "examples-per-user", "accountant", "pld-grid", "ac-sampling", "events", "ledger", "emit-events", "emit-format"}; !slices.Equal(names, want) {
		t.Errorf("eps flags %v, want %v", names, want)
	}
	if want := append(registry.Names(), "all"); acc.Default != "pld" || !slices.Equal(acc.Enum, want) {
		t.Errorf("--accountant default %q, choices %v; want pld, %v", acc.Default, acc.Enum, want)
	}
	if len(m.Accountants) != len(registry.Kinds()) || m.Accountants[0].Title == "" || m.Commands["curve epochs"].Help == "" {
		t.Errorf("model %+v", m)
	}
}

// TestCommandLine: arguments are quoted for a POSIX shell only when they
// need it.
func TestCommandLine(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"eps", "--sigma", "4", "--delta", "1e-5", "--accountant", "all"}, "dpcalc eps --sigma 4 --delta 1e-5 --accountant all"},
		{[]string{"curve", "sigma", "--eps", "1,2", "--points", "7"}, "dpcalc curve sigma --eps 1,2 --points 7"},
		{[]string{"eps", "--sigma", "1 2", "--q", "a'b"}, `dpcalc eps --sigma '1 2' --q 'a'\''b'`},
		{[]string{"eps", "--schedule", "sigma=1,q=0.01,steps=5; sigma=?,q=0.02,steps=3", "--sigma", ""}, `dpcalc eps --schedule 'sigma=1,q=0.01,steps=5; sigma=?,q=0.02,steps=3' --sigma ''`},
	} {
		if got := CommandLine(tt.args); got != tt.want {
			t.Errorf("CommandLine(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestCanceled: a command line whose context is cancelled answers exit
// code 130, "interrupted", and no result.
func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	a := Run(ctx, []string{"sigma", "--eps", "1", "--q", "0.01", "--epochs", "100", "--accountant", "pld"}, nil)
	if a.Exit != 130 || a.Doc != nil || !strings.HasPrefix(a.Error, "interrupted: ") {
		t.Errorf("canceled run: exit %d, doc %v, error %q; want 130, none, interrupted", a.Exit, a.Doc, a.Error)
	}
}

// FuzzRun: any command line gets an answer that encodes as JSON, whose
// --json output is one JSON value (or usage, for help), and whose bad input (exit 2) carries
// the command line's message. Runs are bounded by a context deadline; a
// run cut short answers "interrupted" (exit 130).
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		"eps --sigma 4 --q 0.01 --epochs 100 --accountant all",
		"delta --sigma 2 --eps 0.5 --q 0.05 --steps 300 --accountant pld",
		"sigma --eps 1 --q 0.004 --epochs 10 --tol 1e-3",
		"epochs --sigma 4 --q 0.01 --eps 8 --max-steps 100",
		"audit --sigma 1.1 --q 0.01 --steps 2000 --eps 0.5",
		"curve epochs --sigma 4 --q 0.01 --from 1 --to 50 --points 12",
		"curve sigma --q 0.01 --steps 500 --eps 1,2,4 --accountant rdp,pld",
		"eps --schedule sigma=1,q=0.01,steps=5000;sigma=2,q=0.02,steps=3000 --accountant all",
		"eps --sigma 1 --batch 256 --n 60000 --epochs 2 --sampling shuffle --adjacency replace-one",
		"eps --sigma -1 --q 7 --epochs 10",
		"curve epochs --sigma 1 --q 0.01 --points 3 --accountant rdp,,pld",
		"train --method np",
		"help eps",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		a := Run(ctx, strings.Fields(line), nil)
		if _, err := json.Marshal(a); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if a.JSON != "" && !strings.HasPrefix(a.JSON, "Usage: ") { // help is text, --json or not
			var v any
			dec := json.NewDecoder(strings.NewReader(a.JSON))
			if err := dec.Decode(&v); err != nil || dec.More() {
				t.Fatalf("%q: --json output is not one JSON value: %v\n%s", line, err, a.JSON)
			}
		}
		if a.Exit == 2 && a.Error == "" {
			t.Fatalf("%q: exit 2 without an error", line)
		}
	})
}
