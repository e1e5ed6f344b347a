package reproduce

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// TestPlanNeedsNoDataWritesNothing: a --plan of the full profile works
// without MNIST on disk and leaves no trace (no output directory, no
// figures, no cache files).
func TestPlanNeedsNoDataWritesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	t.Setenv(data.DataDirEnv, "")
	rep, err := Run(context.Background(), Options{Profile: ProfileFull, OutDir: out, DataDir: "/nonexistent/mnist", PlanOnly: true, NewAccountant: newFake})
	if err != nil {
		t.Fatalf("plan without MNIST: %v", err)
	}
	p := rep.Plan
	if p.Runs == 0 || p.MNISTRuns != 10 || !(p.StepSeconds["mnist"] > 0) || !(p.StepSeconds["digits"] > 0) || !(p.Estimate > 0) {
		t.Errorf("plan %+v: want runs, 10 MNIST runs per cell, measured MNIST and DIGITS step costs and an estimate", p)
	}
	if len(rep.Tables) != 0 || len(rep.Files) != 0 {
		t.Errorf("plan produced %d tables and %d files, want none", len(rep.Tables), len(rep.Files))
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("plan created %s (stat: %v)", out, err)
	}
}

// TestReportHeadings: the report has one level-1 heading and its tables
// are level 2 (it used to jump from # to ###).
func TestReportHeadings(t *testing.T) {
	r := &runner{opt: Options{Profile: ProfileTiny}, acc: newAccountants(registry.Options{}, newFake)}
	md := string(r.index(&Report{Tables: []*Table{
		{Title: "first", Columns: []string{"a"}, Rows: [][]string{{"1"}}},
		{Title: "second", Columns: []string{"b"}, Notes: []string{"n"}},
	}}))
	var levels []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "#") {
			levels = append(levels, l[:strings.IndexByte(l, ' ')])
		}
	}
	if strings.Join(levels, " ") != "# ## ##" {
		t.Errorf("heading levels %v, want # ## ##:\n%s", levels, md)
	}
}
