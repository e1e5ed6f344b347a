package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/dpcalc/dpcalc/internal/render"
	"github.com/dpcalc/dpcalc/web/engine"
)

// pageArgs are command lines the web page sends: every command it offers,
// every accountant, the certified interval, procedures' caveats, per-row
// errors, schedules, batch sizes, sampling and adjacency, and bad input
// of every kind the page can send.
var pageArgs = [][]string{
	// The example and the web calculators' favourite setting.
	{"eps", "--sigma", "4", "--delta", "1e-5", "--q", "0.01", "--epochs", "100", "--accountant", "all"},
	{"eps", "--sigma", "1.2", "--delta", "1e-10", "--q", "0.00256", "--epochs", "50", "--accountant", "all"},
	{"eps", "--sigma", "1.1", "--q", "0.01", "--steps", "1000"},
	{"eps", "--sigma", "1.1", "--q", "0.01", "--steps", "1000", "--accountant", "pld", "--pld-grid", "0.01"},
	{"eps", "--sigma", "4", "--q", "0.01", "--epochs", "100", "--accountant", "ac", "--ac-sampling", "linear"},
	{"eps", "--sigma", "0.01", "--q", "1", "--steps", "1", "--accountant", "all"},
	{"delta", "--sigma", "4", "--eps", "1.2", "--q", "0.01", "--epochs", "100", "--accountant", "all"},
	{"delta", "--sigma", "2", "--eps", "0.5", "--q", "0.05", "--steps", "300", "--accountant", "pld"},
	{"sigma", "--eps", "2", "--delta", "1e-5", "--q", "0.01", "--epochs", "50", "--accountant", "all"},
	{"sigma", "--eps", "1", "--q", "0.004", "--epochs", "10", "--tol", "1e-3"},
	{"epochs", "--sigma", "1.1", "--q", "0.01", "--eps", "2", "--delta", "1e-5", "--accountant", "all"},
	{"epochs", "--sigma", "4", "--q", "0.01", "--eps", "8", "--max-steps", "100"},
	{"epochs", "--sigma", "0.3", "--q", "0.5", "--eps", "0.01"},
	{"audit", "--sigma", "1.2", "--eps", "2.5", "--delta", "1e-10", "--q", "0.00256", "--epochs", "50"},
	{"audit", "--sigma", "1.1", "--eps", "0.5", "--q", "0.01", "--steps", "2000"},
	{"curve", "epochs", "--sigma", "4", "--q", "0.01", "--from", "1", "--to", "50", "--points", "12"},
	{"curve", "epochs", "--sigma", "1.1", "--q", "0.01", "--to", "20", "--points", "5", "--accountant", "all"},
	{"curve", "sigma", "--eps", "0.5:8", "--points", "6", "--q", "0.01", "--epochs", "10"},
	{"curve", "sigma", "--eps", "1,2,4", "--q", "0.01", "--steps", "500", "--accountant", "rdp,pld"},
	// The CLI's edge reproductions: extreme σ answers, never panics.
	{"eps", "--sigma", "1e308", "--q", "0.01", "--epochs", "10", "--accountant", "all"},
	{"delta", "--sigma", "1e308", "--eps", "1", "--q", "0.01", "--epochs", "10", "--accountant", "all"},
	{"epochs", "--sigma", "1e308", "--q", "0.01", "--eps", "1", "--accountant", "all", "--max-steps", "1000000"},
	{"audit", "--sigma", "1.7976931348623157e308", "--eps", "1", "--q", "0.01", "--epochs", "10"},
	{"curve", "epochs", "--sigma", "1e308", "--q", "0.01", "--to", "10", "--points", "3", "--accountant", "ma,rdp,pld"},
	{"eps", "--sigma", "1e-160", "--q", "0.01", "--steps", "1000", "--accountant", "pld"},
	{"epochs", "--sigma", "1e-200", "--q", "0.01", "--eps", "0.1", "--accountant", "all"},
	// Bad input: the CLI's messages, exit code 2.
	{"eps", "--sigma", "-1", "--q", "0.01", "--epochs", "10"},
	{"eps", "--sigma", "abc", "--q", "0.01", "--epochs", "10"},
	{"eps", "--sigma", "NaN", "--q", "0.01", "--epochs", "10"},
	{"eps", "--sigma", "Inf", "--q", "0.01", "--epochs", "10"},
	{"eps", "--q", "0.01", "--epochs", "10"},
	{"delta", "--q", "0.01", "--epochs", "10"},
	{"eps", "--sigma", "1", "--q", "0", "--epochs", "10"},
	{"eps", "--sigma", "1", "--q", "1.5", "--epochs", "10"},
	{"eps", "--sigma", "1", "--q", "x", "--epochs", "10"},
	{"eps", "--sigma", "1", "--q", "0.01"},
	{"eps", "--sigma", "1", "--q", "0.01", "--epochs", "10", "--steps", "5"},
	{"eps", "--sigma", "1", "--q", "0.01", "--steps", "-3"},
	{"eps", "--sigma", "1", "--q", "0.01", "--steps", "2.5"},
	{"eps", "--sigma", "1", "--q", "0.01", "--epochs", "Inf"},
	{"eps", "--sigma", "1", "--q", "1e-9", "--epochs", "1e300"},
	{"eps", "--sigma", "1", "--delta", "1", "--q", "0.01", "--epochs", "10"},
	{"eps", "--sigma", "1", "--delta", "0", "--q", "0.01", "--epochs", "10"},
	{"eps", "--sigma", "1", "--q", "0.01", "--epochs", "10", "--accountant", "foo"},
	{"eps", "--sigma", "1", "--q", "0.01", "--epochs", "10", "--ac-sampling", "cubic"},
	{"eps", "--sigma", "1", "--q", "0.01", "--epochs", "10", "--pld-grid", "-1"},
	{"eps", "--sigma", "1", "--q", "0.01", "--epochs", "10", "--pld-grid", "2"},
	{"eps", "--sigma", "-1", "--q", "7", "--epochs", "10"},
	{"delta", "--sigma", "1", "--eps", "-2", "--q", "0.01", "--epochs", "10"},
	{"delta", "--sigma", "1", "--eps", "nan", "--q", "0.01", "--epochs", "10"},
	{"sigma", "--eps", "-2", "--q", "0.01", "--epochs", "3"},
	{"sigma", "--q", "0.01", "--epochs", "3"},
	{"sigma", "--eps", "1", "--q", "0.1", "--epochs", "1", "--tol", "2"},
	{"sigma", "--eps", "1", "--delta", "0", "--q", "0.1", "--epochs", "1"},
	{"epochs", "--sigma", "1", "--q", "7", "--eps", "1"},
	{"epochs", "--sigma", "1", "--q", "0.1", "--eps", "1", "--max-steps", "0"},
	{"epochs", "--sigma", "1", "--q", "0.1", "--eps", "1", "--max-steps", "abc"},
	{"epochs", "--sigma", "1", "--eps", "1"},
	{"audit", "--sigma", "1", "--q", "0.01", "--epochs", "10"},
	{"audit", "--sigma", "1", "--eps", "0", "--q", "0.01", "--epochs", "10"},
	{"audit", "--sigma", "1", "--eps", "1", "--q", "0.01", "--epochs", "10", "--pld-grid", "3"},
	{"curve", "epochs", "--sigma", "1", "--q", "0.01", "--from", "5", "--to", "2"},
	{"curve", "epochs", "--sigma", "1", "--q", "0.01", "--points", "1"},
	{"curve", "epochs", "--sigma", "1", "--q", "0.01", "--points", "5", "--accountant", "rdp,foo"},
	{"curve", "sigma", "--eps", "3:1", "--q", "0.01", "--epochs", "10"},
	{"curve", "sigma", "--eps", "a,b", "--q", "0.01", "--epochs", "10"},
	{"eps", "--sigma", "1", "--q", "0.01", "--steps", "1e3"},
	{"eps", "--sigma", "1", "--q", "0.01", "--steps", "0x10"},
	{"eps", "--sigma", "1", "--q", "0.01", "--steps", "0"},
	{"eps", "--sigma", "1", "--q", "0.01", "--steps", "Inf"},
	{"eps", "--sigma", "1", "--q", "0.01", "--epochs", "0"},
	{"eps", "--q", "0.01"},
	{"audit", "--q", "0.01"},
	{"curve", "epochs", "--sigma", "1", "--q", "0.01", "--points", "3", "--accountant", "rdp,all"},
	{"curve", "epochs", "--sigma", "1", "--q", "0.01", "--points", "3", "--accountant", "rdp,,pld"},
	{"curve", "epochs", "--sigma", "1", "--q", "0.01", "--points", "3", "--accountant", " rdp"},
	{"curve", "sigma", "--eps", "1:4", "--q", "0.01", "--epochs", "10"},
	// Issue 12: schedules, batch and n, sampling, adjacency.
	{"eps", "--schedule", "sigma=1,q=0.01,steps=5000;sigma=2,q=0.02,steps=3000", "--accountant", "all"},
	{"delta", "--eps", "5", "--schedule", "sigma=1,q=0.01,steps=5000;sigma=2,q=0.02,steps=3000", "--accountant", "pld"},
	{"sigma", "--eps", "3", "--schedule", "sigma=?,q=0.01,steps=5000;sigma=2,q=0.02,steps=3000", "--accountant", "all"},
	{"epochs", "--eps", "8", "--schedule", "sigma=1,q=0.01,steps=5000;sigma=2,q=0.02,epochs=?"},
	{"eps", "--sigma", "1.1", "--epochs", "3", "--batch", "256", "--n", "60000", "--accountant", "all"},
	{"sigma", "--eps", "1", "--epochs", "3", "--batch", "256", "--n", "60000"},
	{"epochs", "--sigma", "1.1", "--eps", "1", "--batch", "256", "--n", "60000"},
	{"eps", "--sigma", "1", "--epochs", "2", "--batch", "256", "--n", "60000", "--sampling", "shuffle", "--accountant", "all"},
	{"eps", "--sigma", "1", "--epochs", "2", "--batch", "256", "--n", "60000", "--sampling", "fixed", "--adjacency", "replace-one"},
	{"eps", "--sigma", "1", "--q", "0.01", "--steps", "100", "--adjacency", "replace-one", "--accountant", "all"},
	{"eps", "--sigma", "1", "--epochs", "2", "--batch", "256", "--n", "60000", "--sampling", "fixed"},
	{"eps", "--sigma", "1", "--q", "0.01", "--epochs", "2", "--batch", "256", "--n", "60000"},
	{"eps", "--sigma", "1", "--epochs", "2", "--batch", "256"},
	{"eps", "--sigma", "1", "--epochs", "2", "--batch", "256", "--n", "100"},
	{"eps", "--sigma", "1", "--epochs", "2", "--batch", "0", "--n", "100"},
	{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "2", "--n", "-5"},
	{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "2", "--sampling", "shuffle"},
	{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "2", "--sampling", "bogus"},
	{"eps", "--sigma", "1", "--q", "0.1", "--epochs", "2", "--adjacency", "bogus"},
	{"eps", "--sigma", "1", "--schedule", "sigma=1,q=0.01,steps=5"},
	{"eps", "--schedule", "sigma=1,q=0.01,foo=5"},
	{"eps", "--schedule", "sigma=1,q=0.01"},
	{"eps", "--schedule", "sigma=1,q=0.01,batch=2,steps=3"},
	{"eps", "--schedule", "sigma=?,q=0.01,steps=3"},
	{"sigma", "--eps", "1", "--schedule", "sigma=1,q=0.01,steps=3"},
	{"epochs", "--eps", "1", "--schedule", "sigma=1,q=0.01,steps=3"},
	{"eps", "--n", "1000", "--schedule", "sigma=1,batch=100,steps=15", "--sampling", "shuffle"},
}

// slowPageArgs take seconds each (three runs of pld curves, or searches
// at σ = 1e308): only the long test step runs them.
var slowPageArgs = map[string]bool{
	"dpcalc epochs --sigma 1.1 --q 0.01 --eps 2 --delta 1e-5 --accountant all":                               true,
	"dpcalc curve sigma --eps 0.5:8 --points 6 --q 0.01 --epochs 10":                                         true,
	"dpcalc curve sigma --eps 1,2,4 --q 0.01 --steps 500 --accountant rdp,pld":                               true,
	"dpcalc epochs --sigma 1e308 --q 0.01 --eps 1 --accountant all --max-steps 1000000":                      true,
	"dpcalc audit --sigma 1.7976931348623157e308 --eps 1 --q 0.01 --epochs 10":                               true,
	"dpcalc curve epochs --sigma 1e308 --q 0.01 --to 10 --points 3 --accountant ma,rdp,pld":                  true,
	"dpcalc curve sigma --eps 1:4 --q 0.01 --epochs 10":                                                      true,
	"dpcalc sigma --eps 2 --delta 1e-5 --q 0.01 --epochs 50 --accountant all":                                true,
	"dpcalc delta --sigma 1e308 --eps 1 --q 0.01 --epochs 10 --accountant all":                               true,
	"dpcalc curve epochs --sigma 1.1 --q 0.01 --to 20 --points 5 --accountant all":                           true,
	"dpcalc eps --sigma 1.2 --delta 1e-10 --q 0.00256 --epochs 50 --accountant all":                          true,
	"dpcalc delta --sigma 4 --eps 1.2 --q 0.01 --epochs 100 --accountant all":                                true,
	"dpcalc eps --sigma 1e308 --q 0.01 --epochs 10 --accountant all":                                         true,
	"dpcalc sigma --eps 3 --schedule 'sigma=?,q=0.01,steps=5000;sigma=2,q=0.02,steps=3000' --accountant all": true,
}

// TestEngineEqualsCLI: for every command line of pageArgs, the web page's
// engine prints what `dpcalc ARGS --json` prints, byte for byte and with
// the same exit code, and its lines and table cells are what `dpcalc ARGS`
// prints. Both run in this process. The default run takes every second
// command line that is not slow; the long test step (DPCALC_LONG) all.
func TestEngineEqualsCLI(t *testing.T) {
	long := os.Getenv("DPCALC_LONG") != ""
	for i, args := range pageArgs {
		if !long && (i%2 != 0 || slowPageArgs[engine.CommandLine(args)]) {
			continue
		}
		t.Run(engine.CommandLine(args), func(t *testing.T) {
			ctx := context.Background()
			a := engine.Run(ctx, args, nil)
			var stdout, stderr bytes.Buffer
			code := runContext(ctx, append(append([]string(nil), args...), "--json"), &stdout, &stderr)
			if a.JSON != stdout.String() || a.Exit != code {
				t.Fatalf("engine (exit %d):\n%s\nCLI --json (exit %d):\n%s", a.Exit, a.JSON, code, stdout.String())
			}
			if code == 2 {
				if a.Error == "" || a.Doc != nil || stderr.String() != "dpcalc: "+a.Error+"\n" {
					t.Errorf("bad input: engine error %q (doc %v), CLI stderr %q", a.Error, a.Doc, stderr.String())
				}
				return
			}
			stdout.Reset()
			run(args, &stdout, &stderr)
			var page bytes.Buffer
			if err := render.Text(&page, a.Doc); err != nil {
				t.Fatal(err)
			}
			if page.String() != stdout.String() {
				t.Errorf("engine's cells:\n%s\nCLI's table:\n%s", page.String(), stdout.String())
			}
		})
	}
}
