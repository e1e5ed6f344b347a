package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testenv"
)

// groupTrainings are the trainings --group-size refused before it had the
// group privacy lemma: every sampling but Poisson, replace-one, and
// truncated Poisson under both relations.
var groupTrainings = []struct {
	name string
	args []string
}{
	{"poisson replace-one", []string{"--q", "0.01", "--steps", "200", "--adjacency", "replace-one"}},
	{"fixed", []string{"--batch", "64", "--n", "10000", "--steps", "200", "--sampling", "fixed", "--adjacency", "replace-one"}},
	{"shuffle", []string{"--batch", "100", "--n", "10000", "--epochs", "2", "--sampling", "shuffle", "--adjacency", "replace-one"}},
	{"truncated-poisson add-remove", []string{"--q", "0.01", "--n", "10000", "--max-batch", "150", "--steps", "200", "--sampling", "truncated-poisson"}},
	{"truncated-poisson replace-one", []string{"--q", "0.01", "--n", "10000", "--max-batch", "150", "--steps", "200", "--sampling", "truncated-poisson", "--adjacency", "replace-one"}},
	{"random-allocation", []string{"--steps", "50", "--sampling", "random-allocation", "--k", "2"}},
	{"balls-in-bins", []string{"--steps", "50", "--sampling", "balls-in-bins"}},
	{"cyclic", []string{"--q", "0.01", "--steps", "200", "--sampling", "cyclic", "--bands", "4"}},
}

func withArgs(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

// checkGroupRows checks the rows of a --group-size 2 run against those of
// the same run for one record: each accountant that bounds the single
// record bounds the group (no refusal, no error), with an ε at least the
// single record's (or no finite ε at this δ, said in the note), and the
// note says which bound it is; one that cannot bound the single record is
// refused for the training, not for the group. pld, when asked, answers
// finitely.
func checkGroupRows(t *testing.T, name string, one, group *Rows) {
	t.Helper()
	if len(one.Rows) != len(group.Rows) {
		t.Fatalf("%s: %d rows, %d with the group", name, len(one.Rows), len(group.Rows))
	}
	pld := true
	for _, r := range one.Rows {
		pld = pld && r.Accountant != "pld" // false when pld is asked
	}
	for i, r := range one.Rows {
		g := group.Rows[i]
		if r.Procedure && r.Accountant == "pld" {
			continue // the Poisson reading of shuffling
		}
		if g.GroupSize != 2 || g.Error != "" {
			t.Errorf("%s %s: group size %d, error %q", name, g.Accountant, g.GroupSize, g.Error)
		}
		if r.Unsupported != "" || r.Epsilon == nil {
			if r.Unsupported != "" && g.Unsupported != r.Unsupported {
				t.Errorf("%s %s: refused %q for the group, %q for one record", name, g.Accountant, g.Unsupported, r.Unsupported)
			}
			continue
		}
		if !strings.Contains(g.Note, "group privacy lemma") && !strings.Contains(g.Note, "exact for unsampled noise") {
			t.Errorf("%s %s: note %q names no group bound", name, g.Accountant, g.Note)
		}
		switch {
		case g.Unsupported != "":
			t.Errorf("%s %s: refused %q; one record: %v", name, g.Accountant, g.Unsupported, *r.Epsilon)
		case g.Epsilon == nil:
			if !strings.Contains(g.Note, "no finite ε bound") {
				t.Errorf("%s %s: no ε and no note saying why: %+v", name, g.Accountant, g.Output("epsilon"))
			}
		case !(*g.Epsilon >= *r.Epsilon) || math.IsInf(*g.Epsilon, 0):
			t.Errorf("%s %s: group ε %v below one record's %v", name, g.Accountant, *g.Epsilon, *r.Epsilon)
		default:
			if g.Accountant == "pld" {
				pld = true
				// The lower end is the single record's.
				if g.EpsilonLower == nil || r.EpsilonLower == nil || *g.EpsilonLower != *r.EpsilonLower {
					t.Errorf("%s pld: lower end %v, one record's %v", name, g.EpsilonLower, r.EpsilonLower)
				}
			}
		}
	}
	if !pld {
		t.Errorf("%s: pld has no finite group ε", name)
	}
}

// TestGroupSizeGeneral: every training --group-size refused now answers,
// with every accountant, by the group privacy lemma; --group-size 1 is the
// training itself, bit for bit. Random allocation, whose pld answer takes
// seconds a run, has every accountant in the long test step and rdp in
// the default one.
func TestGroupSizeGeneral(t *testing.T) {
	for _, tc := range groupTrainings {
		t.Run(tc.name, func(t *testing.T) {
			base := withArgs([]string{"eps", "--sigma", "1.5"}, tc.args...)
			allocated := strings.Contains(tc.name, "allocation") || tc.name == "balls-in-bins"
			if allocated && !testenv.Long() {
				base = append(base, "--accountant", "rdp")
			} else {
				base = append(base, "--accountant", "all")
			}
			one, o1 := runRows(t, base...)
			group, o2 := runRows(t, withArgs(base, "--group-size", "2")...)
			if o1.Code != 0 || o2.Code != 0 {
				t.Fatalf("exit %d, %d (group): %v", o1.Code, o2.Code, o2.Err)
			}
			checkGroupRows(t, tc.name, one, group)
			same, o3 := runRows(t, withArgs(base, "--group-size", "1")...)
			if o3.Code != 0 {
				t.Fatalf("group of 1: exit %d, %v", o3.Code, o3.Err)
			}
			for i := range one.Rows {
				if a, b := one.Rows[i].Output("epsilon"), same.Rows[i].Output("epsilon"); !reflect.DeepEqual(a, b) {
					t.Errorf("group of 1, row %d:\n%+v\n%+v", i, a, b)
				}
			}
		})
	}
}

// TestGroupSizePoissonAccountants: under Poisson sampling and add-remove
// the accountants that bound the group mixture keep the exact answer, and
// ma and ac, which refused it, answer by the lemma on their own
// single-record bound, above pld's exact group ε.
func TestGroupSizePoissonAccountants(t *testing.T) {
	base := []string{"eps", "--sigma", "1", "--q", "0.01", "--steps", "300", "--accountant", "all"}
	one, _ := runRows(t, base...)
	group, o := runRows(t, withArgs(base, "--group-size", "2")...)
	if o.Code != 0 {
		t.Fatal(o.Err)
	}
	var exact float64
	for _, g := range group.Rows {
		if g.Accountant == "pld" {
			exact = *g.Epsilon
		}
	}
	for i, g := range group.Rows {
		switch g.Accountant {
		case "pld", "rdp", "zcdp":
			if !strings.Contains(g.Note, "exact under Poisson sampling") {
				t.Errorf("%s: note %q, want the exact mixture", g.Accountant, g.Note)
			}
		case "ma", "ac":
			if g.Epsilon == nil && g.Accountant == "ac" && g.Unsupported == "" && strings.Contains(g.Note, "no finite ε bound") {
				continue // ac's single record: ε 210, whose δ falls too slowly for the lemma
			}
			if g.Unsupported != "" || g.Epsilon == nil || !strings.Contains(g.Note, "group privacy lemma") ||
				!(*g.Epsilon >= *one.Rows[i].Epsilon) || !(*g.Epsilon >= exact) {
				t.Errorf("%s: %+v; one record %v, pld's exact group ε %v", g.Accountant, g.Output("epsilon"), *one.Rows[i].Epsilon, exact)
			}
		}
	}
}

// TestGroupSizeDeltaByHand: delta at ε = 2 for a group of 2 is the
// lemma's δ₁(1)·(1 + e) from the single record's δ at ε = 1, for an
// accountant answered by the lemma (fixed-size batches, pld and rdp).
func TestGroupSizeDeltaByHand(t *testing.T) {
	base := []string{"delta", "--sigma", "1.5", "--batch", "64", "--n", "10000", "--steps", "200", "--sampling", "fixed", "--adjacency", "replace-one"}
	for _, k := range []string{"pld", "rdp"} {
		one, _ := runRows(t, withArgs(base, "--eps", "1", "--accountant", k)...)
		group, o := runRows(t, withArgs(base, "--eps", "2", "--group-size", "2", "--accountant", k)...)
		if o.Code != 0 {
			t.Fatal(o.Err)
		}
		d1, dg := one.Rows[0].Delta, group.Rows[0].Delta
		byHand := d1 * (1 + math.E)
		if !(dg >= byHand && dg <= byHand*(1+1e-9)) || dg != accounting.GroupDelta(1, d1, 2) {
			t.Errorf("%s: group δ(2) = %g; δ₁(1)·(1+e) = %g (δ₁(1) = %g)", k, dg, byHand, d1)
		}
	}
}

// TestGroupSizeFiles: --group-size applies to a training read from a
// ledger or an events file (refused before): a group of 1 is the file's
// answer, a group of 2 answers above it; an unsampled file is exact at σ/G.
func TestGroupSizeFiles(t *testing.T) {
	for _, f := range []string{
		filepath.Join("..", "..", "testdata", "ledger", "dpcalc_two_phase.ledger"),
		filepath.Join("..", "..", "testdata", "ledger", "opacus_two_phase.json"),
		eventFile(t, accounting.SelfComposed{Event: accounting.SampledWithoutReplacement{SourceDatasetSize: 1000, SampleSize: 10, Event: accounting.Gaussian{NoiseMultiplier: 1.5}}, Count: 100}),
	} {
		base := []string{"eps", "--ledger", f, "--accountant", "all"}
		if strings.HasSuffix(f, "event.json") {
			base = []string{"eps", "--events", f, "--adjacency", "replace-one", "--accountant", "all"}
		}
		one, o1 := runRows(t, base...)
		group, o2 := runRows(t, withArgs(base, "--group-size", "2")...)
		same, _ := runRows(t, withArgs(base, "--group-size", "1")...)
		if o1.Code != 0 || o2.Code != 0 {
			t.Fatalf("%s: exit %d, %d: %v", f, o1.Code, o2.Code, o2.Err)
		}
		checkGroupRows(t, filepath.Base(f), one, group)
		for i := range one.Rows {
			if a, b := one.Rows[i].Output("epsilon"), same.Rows[i].Output("epsilon"); !reflect.DeepEqual(a, b) {
				t.Errorf("%s group of 1, row %d:\n%+v\n%+v", f, i, a, b)
			}
		}
	}
	f := eventFile(t, accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: 6}, Count: 4})
	g3, _ := runRows(t, "eps", "--events", f, "--group-size", "3")
	s3, _ := runRows(t, "eps", "--events", eventFile(t, accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: 2}, Count: 4}))
	if r := g3.Rows[0]; r.Epsilon == nil || *r.Epsilon != *s3.Rows[0].Epsilon || !strings.Contains(r.Note, "exact for unsampled noise") {
		t.Errorf("unsampled file, group of 3: %+v; σ/3: %v", r.Output("epsilon"), *s3.Rows[0].Epsilon)
	}
}

// TestGroupSizeCalibrate: sigma and epochs calibrate under the lemma: the
// σ found for a group of 2 is above one record's and meets the target,
// and fewer steps fit the budget.
func TestGroupSizeCalibrate(t *testing.T) {
	train := []string{"--batch", "64", "--n", "10000", "--sampling", "fixed", "--adjacency", "replace-one", "--accountant", "rdp"}
	s1, _ := runRows(t, withArgs([]string{"sigma", "--eps", "4", "--steps", "100"}, train...)...)
	s2, o := runRows(t, withArgs([]string{"sigma", "--eps", "4", "--steps", "100", "--group-size", "2"}, train...)...)
	if o.Code != 0 || !(s2.Rows[0].x > s1.Rows[0].x) || s2.Rows[0].Epsilon == nil || *s2.Rows[0].Epsilon > 4 {
		t.Fatalf("sigma: group %+v, one record σ %v (%v)", s2.Rows[0].Output("sigma"), s1.Rows[0].x, o.Err)
	}
	sigma := s2.Rows[0].x
	e, _ := runRows(t, withArgs([]string{"eps", "--sigma", fmtFloat(sigma), "--steps", "100", "--group-size", "2"}, train...)...)
	if e.Rows[0].Epsilon == nil || *e.Rows[0].Epsilon > 4 {
		t.Errorf("eps at the calibrated σ %v: %+v", sigma, e.Rows[0].Output("epsilon"))
	}
	ep1, _ := runRows(t, withArgs([]string{"epochs", "--sigma", "2", "--eps", "4", "--max-steps", "100000"}, train...)...)
	ep2, o := runRows(t, withArgs([]string{"epochs", "--sigma", "2", "--eps", "4", "--max-steps", "100000", "--group-size", "2"}, train...)...)
	if o.Code != 0 || !(ep2.Rows[0].Steps >= 1 && ep2.Rows[0].Steps < ep1.Rows[0].Steps) || *ep2.Rows[0].Epsilon > 4 {
		t.Errorf("epochs: group %+v, one record %d steps", ep2.Rows[0].Output("steps"), ep1.Rows[0].Steps)
	}
}

func fmtFloat(x float64) string {
	b, _ := json.Marshal(x)
	return string(b)
}

// TestGroupSizeEdges: a group of 2^53 has no finite lemma bound (a row
// saying so, no Inf or NaN in the JSON; zcdp's ρ·G² is finite, about
// 1e34), one more is a usage error naming
// the flag, for the training flags and for a file; --emit-events, which
// would write a single record's events, is refused with the lemma.
func TestGroupSizeEdges(t *testing.T) {
	base := []string{"eps", "--sigma", "1", "--batch", "64", "--n", "10000", "--steps", "100", "--sampling", "fixed", "--adjacency", "replace-one", "--accountant", "all"}
	rows, o := runRows(t, withArgs(base, "--group-size", "9007199254740992")...)
	if o.Code != 0 {
		t.Fatal(o.Err)
	}
	for _, r := range rows.Rows {
		if r.Accountant == "zcdp" {
			if r.Epsilon == nil || !(*r.Epsilon > 1e30) || math.IsInf(*r.Epsilon, 0) {
				t.Errorf("zcdp: %+v", r.Output("epsilon"))
			}
			continue
		}
		if r.Unsupported == "" && (r.Epsilon != nil || !strings.Contains(r.Note, "no finite ε bound")) {
			t.Errorf("%s: %+v", r.Accountant, r.Output("epsilon"))
		}
	}
	f := filepath.Join("..", "..", "testdata", "ledger", "opacus_two_phase.json")
	for _, args := range [][]string{
		withArgs(base, "--group-size", "9007199254740993"),
		withArgs(base, "--group-size", "0"),
		{"eps", "--ledger", f, "--group-size", "9007199254740993"},
		{"eps", "--ledger", f, "--group-size", "0"},
	} {
		_, o := runRows(t, args...)
		if o.Code != 2 || o.Flag != "group-size" || !strings.Contains(o.Err.Error(), "invalid --group-size") {
			t.Errorf("%v: exit %d, flag %q, %v", args[len(args)-2:], o.Code, o.Flag, o.Err)
		}
	}
	_, o = runRows(t, withArgs(base[:len(base)-2], "--group-size", "2", "--emit-events", filepath.Join(t.TempDir(), "ev.json"))...)
	if o.Code != 2 || o.Flag != "emit-events" {
		t.Errorf("--emit-events with the lemma: exit %d, flag %q, %v", o.Code, o.Flag, o.Err)
	}
}

// TestGroupSizeOne: --group-size 1 is the training itself, bit for bit,
// on delta, sigma and epochs too, where it was refused (fixed-size lots,
// replace-one).
func TestGroupSizeOne(t *testing.T) {
	train := []string{"--batch", "64", "--n", "10000", "--sampling", "fixed", "--adjacency", "replace-one", "--accountant", "all"}
	for _, args := range [][]string{
		withArgs([]string{"delta", "--sigma", "1.5", "--steps", "100", "--eps", "2"}, train...),
		withArgs([]string{"sigma", "--eps", "3", "--steps", "100"}, train[:len(train)-2]...),
		withArgs([]string{"epochs", "--sigma", "2", "--eps", "3", "--max-steps", "3000"}, train[:len(train)-2]...),
	} {
		plain, o1 := runRows(t, args...)
		one, o2 := runRows(t, withArgs(args, "--group-size", "1")...)
		if o1.Code != 0 || o2.Code != 0 || len(plain.Rows) == 0 || len(plain.Rows) != len(one.Rows) {
			t.Fatalf("%v: exit %d, %d: %v", args[:3], o1.Code, o2.Code, o2.Err)
		}
		for i := range plain.Rows {
			if a, b := plain.Rows[i].Output(plain.Quantity), one.Rows[i].Output(one.Quantity); !reflect.DeepEqual(a, b) {
				t.Errorf("%v row %d:\n%+v\n%+v", args[:3], i, a, b)
			}
		}
	}
}

// TestGroupSizeProfile: profile answers a group by the lemma where it
// refused it (fixed-size lots, replace-one): each ε above one record's
// (rdp: pld's profile of this training takes seconds).
func TestGroupSizeProfile(t *testing.T) {
	run := func(extra ...string) *Profile {
		var stdout, stderr bytes.Buffer
		args := withArgs([]string{"profile", "--sigma", "1.5", "--batch", "64", "--n", "10000", "--steps", "100", "--sampling", "fixed", "--adjacency", "replace-one", "--deltas", "1e-3,1e-6", "--accountant", "rdp", "--json"}, extra...)
		o := Execute(t.Context(), args, IO{Stdout: &stdout, Stderr: &stderr}, Hooks{})
		p, ok := o.Result.(*Profile)
		if o.Code != 0 || !ok {
			t.Fatalf("%v: exit %d, %v", extra, o.Code, o.Err)
		}
		return p
	}
	one, group := run(), run("--group-size", "2")
	if group.GroupSize != 2 || !group.Certified || len(group.Epsilons) != len(one.Epsilons) {
		t.Fatalf("%+v", group)
	}
	for i, e := range group.Epsilons {
		if !(e.Epsilon > one.Epsilons[i].Epsilon) || e.Lower != one.Epsilons[i].Lower {
			t.Errorf("δ %g: group ε %v [%v], one record %v [%v]", e.Delta, e.Epsilon, e.Lower, one.Epsilons[i].Epsilon, one.Epsilons[i].Lower)
		}
	}
}

// TestGroupSizePoissonReading: beside shuffled batches' rows for a group,
// the Poisson reading (the usual, unproven number) is the group's under
// Poisson sampling, as dpcalc eps answers it at q = B/N, not one record's
// (σ 1.5, q 0.01, 200 steps, a group of 2: 0.871 against one record's
// 0.406).
func TestGroupSizePoissonReading(t *testing.T) {
	shuffle := []string{"eps", "--sigma", "1.5", "--batch", "100", "--n", "10000", "--epochs", "2", "--sampling", "shuffle", "--adjacency", "replace-one", "--group-size", "2"}
	poisson := []string{"eps", "--sigma", "1.5", "--q", "0.01", "--steps", "200", "--group-size", "2"}
	got, o1 := runRows(t, shuffle...)
	want, o2 := runRows(t, poisson...)
	one, o3 := runRows(t, poisson[:len(poisson)-2]...)
	if o1.Code != 0 || o2.Code != 0 || o3.Code != 0 || len(got.Rows) != 2 || len(want.Rows) != 1 {
		t.Fatalf("exit %d, %d, %d; %d and %d rows: %v %v", o1.Code, o2.Code, o3.Code, len(got.Rows), len(want.Rows), o1.Err, o2.Err)
	}
	r, w := got.Rows[1], want.Rows[0]
	if !r.Procedure || r.Sampling != "poisson" || r.Epsilon == nil || w.Epsilon == nil {
		t.Fatalf("second row %+v is not the Poisson reading, or no ε (want %+v)", r.Output("epsilon"), w.Output("epsilon"))
	}
	if r.GroupSize != 2 || *r.Epsilon != *w.Epsilon || !(*r.Epsilon > *one.Rows[0].Epsilon) {
		t.Errorf("Poisson reading: group %d, ε %v; want group 2, ε %v (one record's %v)", r.GroupSize, *r.Epsilon, *w.Epsilon, *one.Rows[0].Epsilon)
	}
	if !strings.Contains(r.Note, "NOT proven") || !strings.Contains(r.Note, "up to 2 records") {
		t.Errorf("Poisson reading note %q", r.Note)
	}
}
