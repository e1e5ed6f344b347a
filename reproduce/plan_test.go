package reproduce

import (
	"context"
	"errors"
	"fmt"
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
	// The plan says what is missing and how to fetch it.
	if len(p.Missing) != 1 || !strings.Contains(p.Missing[0], "/nonexistent/mnist: train-images-idx3-ubyte.gz") || !strings.Contains(p.Missing[0], "`dpcalc data fetch mnist --dir /nonexistent/mnist`") {
		t.Errorf("plan's missing inputs %q, want MNIST's files in /nonexistent/mnist and the fetch command", p.Missing)
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

// TestMissingDataRefusedBeforeWork: with MNIST absent, every reproduction
// that trains on it is refused with an InputError naming the missing files
// and the command that fetches them, before any work: no trainer run (not
// even the step timing), no progress event (no σ calibrated, no accounting
// table), and no output directory. Profiles, papers and a shard; tiny,
// --datasets digits and --plan do not need MNIST.
func TestMissingDataRefusedBeforeWork(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(data.DataDirEnv, empty)
	for _, o := range []Options{
		{Profile: ProfileQuick},
		{Profile: ProfileFull},
		{Profile: ProfileQuick, Papers: []Paper{PaperAbadi}},
		{Profile: ProfileFull, Papers: []Paper{PaperDPD}},
		{Profile: ProfileQuick, Papers: []Paper{PaperDPVD}, Datasets: []string{"mnist", "digits"}},
		{Profile: ProfileQuick, Shard: 2, Shards: 3},
		{Profile: ProfileFull, DataDir: t.TempDir()},
	} {
		name := fmt.Sprintf("%s papers=%v datasets=%v shard=%d/%d", o.Profile, o.Papers, o.Datasets, o.Shard, o.Shards)
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			o.OutDir, o.NewAccountant = out, newFake
			events := 0
			o.Progress = func(Progress) { events++ }
			o.OnPlan = func(Plan) { events++ }
			before := trainCalls.Load()
			_, err := Run(context.Background(), o)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an InputError", err)
			}
			dir, fetch := filepath.Join(empty, "mnist"), "`dpcalc data fetch mnist`"
			if o.DataDir != "" {
				dir, fetch = o.DataDir, "`dpcalc data fetch mnist --dir "+o.DataDir+"`"
			}
			for _, want := range []string{dir + ": train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz", fetch} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if n := trainCalls.Load() - before; n != 0 || events != 0 {
				t.Errorf("refused after %d trainer runs and %d progress events, want none", n, events)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("refused run created %s (stat: %v)", out, err)
			}
		})
	}
	for _, o := range []Options{{Profile: ProfileTiny}, {Profile: ProfileQuick, Datasets: []string{"digits"}}, {Profile: ProfileFull, MergeFrom: []string{"x"}}} {
		if m := o.missingInputs(); m != nil {
			t.Errorf("%s datasets=%v merge=%v: missing %q, want nothing (no MNIST run)", o.Profile, o.Datasets, o.MergeFrom, m)
		}
	}
}

// TestMakespan: the estimator lays runs out on the workers in start order.
func TestMakespan(t *testing.T) {
	for _, tc := range []struct {
		busy, queue []float64
		slots       int
		want        float64
	}{
		{nil, []float64{1, 1, 1, 1}, 2, 2},
		{nil, []float64{3, 1, 1, 1}, 2, 3},
		{nil, []float64{1, 1, 1}, 1, 3},
		{[]float64{2}, []float64{1, 1}, 2, 2},
		{[]float64{0.5, 2}, []float64{4}, 2, 4.5},
		{nil, []float64{5}, 4, 5}, // one run is not sped up by idle workers
		{nil, nil, 2, 0},
	} {
		if got := makespan(tc.busy, tc.queue, tc.slots); got != tc.want {
			t.Errorf("makespan(%v, %v, %d) = %g, want %g", tc.busy, tc.queue, tc.slots, got, tc.want)
		}
	}
}
