package cli

import (
	"math"
	"reflect"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestCyclicPlan checks the cyclic reduction: T steps over b bands are
// ⌈T/b⌉ Poisson-sampled steps at q for every record; epochs count a
// record's expected passes (T = b·⌈E/q⌉).
func TestCyclicPlan(t *testing.T) {
	for _, c := range []struct {
		args       []string
		steps, per int
	}{
		{[]string{"--q", "0.01", "--bands", "4", "--steps", "40001"}, 40001, 10001},
		{[]string{"--q", "0.01", "--bands", "4", "--epochs", "100"}, 40000, 10000},
	} {
		g := &given{trainingFlags: trainingFlags{Sampling: "cyclic", Adjacency: "add-remove"}, sigma: ptrOf(4.0)}
		for i := 0; i < len(c.args); i += 2 {
			switch c.args[i] {
			case "--q":
				g.Q = ptrOf(0.01)
			case "--bands":
				b := Count(4)
				g.Bands = &b
			case "--steps":
				s := Count(40001)
				g.Steps = &s
			case "--epochs":
				g.Epochs = ptrOf(100.0)
			}
		}
		p, err := g.plan("")
		if err != nil {
			t.Fatal(err)
		}
		want := accounting.SubsampledGaussian(4, 0.01, c.per)
		if got := p.Event(0); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: event %#v, want %#v", c.args, got, want)
		}
		if p.steps[0] != c.steps {
			t.Errorf("%v: steps %d, want %d", c.args, p.steps[0], c.steps)
		}
	}
}

// TestRandomAllocationCommand runs the public check through the command
// line: one epoch of k = 10 of t = 100 steps at σ 2, δ 1e-6, one pld row
// whose bracket bounds the run (its lower end that of the sum of the cells
// of the epoch's outputs, 2.39053, above the sum of the outputs' 2.25408;
// the reduction pair's own lower end 2.42158 kept apart); and balls-in-bins
// from --batch and --n (t = N/B).
func TestRandomAllocationCommand(t *testing.T) {
	rows, o := runRows(t, "eps", "--sigma", "2", "--sampling", "random-allocation", "--k", "10", "--steps", "100", "--delta", "1e-6", "--accountant", "pld")
	if o.Err != nil || len(rows.Rows) != 1 {
		t.Fatalf("%v, %+v", o.Err, rows.Rows)
	}
	up := rows.Rows[0]
	if up.Epsilon == nil || *up.Epsilon < 2.4235 || *up.Epsilon > 2.4275 {
		t.Errorf("upper %v, want 2.4265 within 3e-3 (dp_accounting's, an upper bound from a coarser rounding)", up.Epsilon)
	}
	if up.EpsilonLower == nil || up.PairEpsilonLower == nil || *up.EpsilonLower < 2.39053 || *up.EpsilonLower > 2.39054 ||
		*up.PairEpsilonLower < 2.4215 || *up.PairEpsilonLower > *up.Epsilon {
		t.Errorf("bracket %v, pair's lower %v: want the run's lower end 2.39053, the pair's 2.42158", up.EpsilonLower, up.PairEpsilonLower)
	}
	rows, o = runRows(t, "eps", "--sigma", "2", "--sampling", "balls-in-bins", "--batch", "100", "--n", "1000", "--epochs", "1", "--delta", "1e-6", "--accountant", "pld")
	if o.Err != nil || len(rows.Rows) != 1 || rows.Rows[0].Steps != 10 {
		t.Fatalf("%v, %+v", o.Err, rows.Rows)
	}
	// The same training read back from its events: 100 steps.
	f := eventFile(t, accounting.RandomAllocation{NumSelected: 10, NumSteps: 100, Event: accounting.Gaussian{NoiseMultiplier: 2}})
	rows, o = runRows(t, "eps", "--events", f, "--delta", "1e-6", "--accountant", "pld")
	if o.Err != nil || len(rows.Rows) != 1 || rows.Rows[0].Steps != 100 || *rows.Rows[0].Epsilon != *up.Epsilon || *rows.Rows[0].EpsilonLower != *up.EpsilonLower {
		t.Errorf("events: %v, %+v", o.Err, rows.Rows)
	}
	// rdp: the balls-in-bins curve of each of the 10 groups (without
	// amplification it was 8.85); at least the certified lower 2.39053.
	rows, o = runRows(t, "eps", "--sigma", "2", "--sampling", "random-allocation", "--k", "10", "--steps", "100", "--delta", "1e-6", "--accountant", "rdp")
	if o.Err != nil || rows.Rows[0].Epsilon == nil || *rows.Rows[0].Epsilon < 2.39053 || *rows.Rows[0].Epsilon > 2.62 {
		t.Errorf("rdp: %v, %+v", o.Err, rows.Rows)
	}
	// zcdp: each group as one unsampled Gaussian, 10 of them.
	rows, o = runRows(t, "eps", "--sigma", "2", "--sampling", "random-allocation", "--k", "10", "--steps", "100", "--delta", "1e-6", "--accountant", "zcdp")
	ref, _ := runRows(t, "eps", "--sigma", "2", "--q", "1", "--steps", "10", "--delta", "1e-6", "--accountant", "zcdp")
	if o.Err != nil || rows.Rows[0].Epsilon == nil || ref.Rows[0].Epsilon == nil || *rows.Rows[0].Epsilon != *ref.Rows[0].Epsilon {
		t.Errorf("zcdp: %v, %+v, want %+v", o.Err, rows.Rows, ref.Rows)
	}
	// sigma: calibrating back to the rdp ε of σ 2 finds σ 2.
	rows, o = runRows(t, "sigma", "--eps", "2.6064729099902086", "--sampling", "random-allocation", "--k", "10", "--steps", "100", "--delta", "1e-6", "--accountant", "rdp")
	if o.Err != nil || !(math.Abs(rows.Rows[0].Sigma-2) < 1e-5) {
		t.Errorf("sigma: %v, %+v", o.Err, rows.Rows)
	}
	// A fixed-size run under replace-one has no allocation: no lower row
	// (it printed an error row from normalising under add-remove).
	rows, o = runRows(t, "eps", "--sigma", "2", "--batch", "100", "--n", "1000", "--steps", "10", "--sampling", "fixed", "--adjacency", "replace-one", "--accountant", "pld")
	if o.Err != nil || len(rows.Rows) != 1 || rows.Rows[0].Error != "" {
		t.Errorf("fixed: %v, %+v", o.Err, rows.Rows)
	}
	for _, bad := range [][]string{
		{"--sampling", "random-allocation", "--k", "10", "--steps", "100", "--adjacency", "replace-one"},
		{"--sampling", "random-allocation", "--k", "101", "--steps", "100"},
		{"--sampling", "cyclic", "--q", "0.1", "--steps", "100"},
		{"--sampling", "poisson", "--q", "0.1", "--steps", "100", "--k", "2"},
		{"--sampling", "balls-in-bins", "--batch", "100", "--n", "1000", "--epochs", "1.5"},
		{"--sampling", "balls-in-bins", "--batch", "100", "--n", "1000", "--steps", "15"},
	} {
		_, o := runRows(t, append([]string{"eps", "--sigma", "2"}, bad...)...)
		if o.Err == nil || o.Code != 2 {
			t.Errorf("%v: %v (exit %d), want a usage error", bad, o.Err, o.Code)
		}
	}
}

func ptrOf[T any](v T) *T { return &v }
