package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInvariantsRegressions replays command lines that broke the CLI's
// output invariants (see checkRun), whatever the accountants answer.
func TestInvariantsRegressions(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		// A row error (e.g. an accountant that cannot answer) used to print
		// the rows' JSON and then an {"error": …} object: two JSON values.
		{"row error json", []string{"eps", "--sigma", "1", "--q", "0.01", "--epochs", "3", "--accountant", "all", "--json"}},
		{"row error json one", []string{"sigma", "--eps", "1", "--q", "0.01", "--steps", "30", "--json"}},
		{"curve row error json", []string{"curve", "epochs", "--sigma", "1", "--q", "0.1", "--to", "3", "--points", "3", "--accountant", "ma,pld", "--json"}},
		// The certified upper bound is +Inf below pld's δ floor (~1e-13):
		// audit --json failed with "json: unsupported value: +Inf".
		{"audit infinite upper json", []string{"audit", "--sigma", "1", "--eps", "1", "--q", "0.01", "--steps", "1000", "--delta", "1e-20", "--json"}},
		// --json=1 turns JSON mode on in kong; errors must then be JSON too.
		{"json=1 bad input", []string{"eps", "--sigma", "-1", "--q", "0.01", "--epochs", "3", "--json=1"}},
		// gonum/plot panics on a log axis when a curve has no drawable
		// point (every accountant failed) or a single one (one target ε).
		{"plot without points", []string{"curve", "epochs", "--sigma", "1e-3", "--q", "1", "--to", "2", "--points", "2", "--accountant", "ma", "--plot", filepath.Join(dir, "a.svg")}},
		{"plot single target", []string{"curve", "sigma", "--eps", "0.5", "--q", "0.01", "--steps", "10", "--accountant", "rdp", "--plot", filepath.Join(dir, "b.png")}},
		{"plot single target json", []string{"curve", "sigma", "--eps", "2,2", "--q", "0.01", "--steps", "10", "--accountant", "zcdp", "--plot", filepath.Join(dir, "c.svg"), "--json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asJSON := false
			for _, a := range tc.args {
				asJSON = asJSON || strings.HasPrefix(a, "--json")
			}
			if msg, code, stdout, stderr := checkRun(tc.args, asJSON); msg != "" {
				t.Errorf("%s\nexit %d\nstdout: %s\nstderr: %s", msg, code, stdout, stderr)
			}
		})
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}
