package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/internal/cli"
)

// docTable returns the rows (cells trimmed) of the first Markdown table
// after the line that starts with after in docs/events.md.
func docTable(t *testing.T, after string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "events.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, after)
	if i < 0 {
		t.Fatalf("docs/events.md has no %q", after)
	}
	var rows [][]string
	started := false
	for _, l := range strings.Split(doc[i:], "\n") {
		if !strings.HasPrefix(l, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		if strings.HasPrefix(l, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		rows = append(rows, cells)
	}
	if len(rows) < 2 {
		t.Fatalf("docs/events.md: no table after %q", after)
	}
	return rows[1:] // the header
}

// accountantsIn returns the accountant names listed in a cell ("ma, rdp,
// zcdp (under replace-one)"), and the adjacency it names.
func accountantsIn(cell string) ([]string, string) {
	adj := "add-remove"
	if c, ok := strings.CutSuffix(cell, "(under replace-one)"); ok {
		cell, adj = strings.TrimSpace(c), "replace-one"
	}
	var out []string
	for _, f := range strings.Split(cell, ",") {
		f = strings.TrimSpace(f)
		if f != "" {
			out = append(out, f)
		}
	}
	return out, adj
}

// TestEventClassesDoc: every row of docs/events.md's table of
// dp_accounting event classes holds for the class's example in
// testdata/dpevent/classes: a class read is decoded and written back as
// read (when written), every accountant named under "bounded by" gives a
// finite ε for it, every certified accountant not named refuses it in its
// row naming the event, and a class not read is refused when read, naming
// the class; "none: ε = ∞" means every accountant answers ε = ∞.
func TestEventClassesDoc(t *testing.T) {
	certified := []string{"ma", "rdp", "zcdp", "ac", "pld"}
	for _, k := range certified {
		if _, err := registry.ParseKind(k); err != nil {
			t.Fatal(err)
		}
	}
	rows := docTable(t, "## Every dp_accounting event")
	seen := map[string]bool{}
	for _, row := range rows {
		if len(row) != 5 {
			t.Fatalf("row %v: want 5 cells", row)
		}
		class := strings.Trim(row[0], "`")
		seen[class] = true
		t.Run(class, func(t *testing.T) {
			file := filepath.Join("..", "..", "testdata", "dpevent", "classes", class+".json")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := accounting.UnmarshalEvent(data)
			if row[1] == "no" {
				if err == nil || !strings.Contains(err.Error(), class) || !strings.Contains(err.Error(), "refused") {
					t.Fatalf("read: %v, want a refusal naming %s", err, class)
				}
				_, stderr, code := runCLI("eps", "--events", file)
				if code != 2 || !strings.Contains(stderr, class) || strings.Count(stderr, "\n") != 1 {
					t.Errorf("eps --events: exit %d, %q", code, stderr)
				}
				return
			}
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if row[2] == "yes" {
				out, err := accounting.MarshalEvent(ev)
				if err != nil {
					t.Fatal(err)
				}
				var a, b any
				if json.Unmarshal(out, &a) != nil || json.Unmarshal(data, &b) != nil || !jsonEqual(a, b) {
					t.Errorf("written as %s, read from %s", out, data)
				}
			}
			if strings.Contains(row[4], "with δ > 0 all but ac") {
				approx := filepath.Join(t.TempDir(), "approx.json")
				if err := os.WriteFile(approx, []byte(`{"class_name":"EpsilonDeltaDpEvent","epsilon":0.5,"delta":1e-6}`), 0o600); err != nil {
					t.Fatal(err)
				}
				stdout, _, _ := runCLI("eps", "--events", approx, "--accountant", "all", "--json")
				got := decodeOutput(t, stdout).Rows
				for _, r := range got {
					if contains(certified, r.Accountant) && (r.Accountant == "ac") != (r.Epsilon != nil) {
						t.Errorf("δ > 0: %s gives ε %v (%s)", r.Accountant, r.Epsilon, r.Unsupported)
					}
				}
			}
			bounded, adj := accountantsIn(row[3])
			infinite := row[3] == "none: ε = ∞"
			if infinite {
				bounded = certified
			}
			stdout, stderr, code := runCLI("eps", "--events", file, "--accountant", "all", "--adjacency", adj, "--json")
			o, err := parseOutput(stdout)
			if err != nil {
				t.Fatalf("exit %d: %v\n%s%s", code, err, stdout, stderr)
			}
			got := o.Rows
			byName := map[string]cli.OutputRow{}
			for _, r := range got {
				if !r.LowerBound {
					byName[r.Accountant] = r
				}
			}
			for _, k := range certified {
				r, ok := byName[k]
				if !ok {
					t.Fatalf("no row for %s", k)
				}
				switch {
				case infinite:
					if r.Epsilon != nil || r.Unsupported != "" || !strings.Contains(r.Note, "no finite ε") {
						t.Errorf("%s: ε %v, unsupported %q, note %q; want ε = ∞", k, r.Epsilon, r.Unsupported, r.Note)
					}
				case contains(bounded, k):
					if r.Epsilon == nil || r.Unsupported != "" || r.Error != "" {
						t.Errorf("%s: ε %v, unsupported %q, error %q; want a finite bound", k, r.Epsilon, r.Unsupported, r.Error)
					}
				default:
					if r.Unsupported == "" || r.Epsilon != nil {
						t.Errorf("%s: ε %v, want it refused", k, r.Epsilon)
					}
				}
			}
		})
	}
	// Every class dp_accounting has (its dp_event.py, 2026) has a row.
	for _, c := range []string{"NoOpDpEvent", "NonPrivateDpEvent", "UnsupportedDpEvent", "RandomizedResponseDpEvent",
		"EpsilonDeltaDpEvent", "GaussianDpEvent", "LaplaceDpEvent", "DiscreteGaussianDpEvent", "DiscreteLaplaceDpEvent",
		"SelfComposedDpEvent", "ComposedDpEvent",
		"PoissonSampledDpEvent", "SampledWithReplacementDpEvent", "SampledWithoutReplacementDpEvent",
		"SingleEpochTreeAggregationDpEvent", "RepeatAndSelectDpEvent", "MixtureOfGaussiansDpEvent", "ZCDpEvent",
		"ExponentialMechanismDpEvent", "PermuteAndFlipDpEvent", "TruncatedSubsampledGaussianDpEvent"} {
		if !seen[c] {
			t.Errorf("docs/events.md has no row for %s", c)
		}
	}
}

// TestWorstCasePairNote: pld bounds an ε-DP step (randomized response,
// permute-and-flip, the exponential mechanism, an (ε, 0) guarantee)
// through the worst ε-DP pair, so the lower end of its interval bounds
// that pair, not the mechanism: its row says so, beside the interval;
// rows of mechanisms bounded by their own pairs, and rows without a lower
// end (δ(ε)), do not.
func TestWorstCasePairNote(t *testing.T) {
	classes := filepath.Join("..", "..", "testdata", "dpevent", "classes")
	rr3 := filepath.Join(t.TempDir(), "rr3.json")
	if err := os.WriteFile(rr3, []byte(`{"class_name":"SelfComposedDpEvent","count":10,"event":`+
		`{"class_name":"RandomizedResponseDpEvent","noise_parameter":0.5,"num_buckets":3}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file string
		want bool
	}{
		{rr3, true},
		{filepath.Join(classes, "RandomizedResponseDpEvent.json"), true},
		{filepath.Join(classes, "PermuteAndFlipDpEvent.json"), true},
		{filepath.Join(classes, "ExponentialMechanismDpEvent.json"), true},
		{filepath.Join(classes, "EpsilonDeltaDpEvent.json"), true},
		{filepath.Join(classes, "GaussianDpEvent.json"), false},
		{filepath.Join(classes, "LaplaceDpEvent.json"), false},
		{filepath.Join(classes, "DiscreteLaplaceDpEvent.json"), false},
		{filepath.Join(classes, "MixtureOfGaussiansDpEvent.json"), false},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			stdout, stderr, code := runCLI("eps", "--events", c.file, "--accountant", "pld", "--json")
			o, err := parseOutput(stdout)
			if code != 0 || err != nil || len(o.Rows) != 1 {
				t.Fatalf("exit %d: %v %s%s", code, err, stdout, stderr)
			}
			r := o.Rows[0]
			if r.EpsilonLower == nil || r.Epsilon == nil {
				t.Fatalf("ε %v, lower %v; want an interval", r.Epsilon, r.EpsilonLower)
			}
			if got := strings.Contains(r.Note, "the lower end bounds that pair, not their true ε"); got != c.want {
				t.Errorf("note %q: worst-case caveat %v, want %v", r.Note, got, c.want)
			}
			stdout, stderr, code = runCLI("delta", "--eps", "1", "--events", c.file, "--accountant", "pld", "--json")
			od, err := parseOutput(stdout)
			if code != 0 || err != nil || len(od.Rows) != 1 {
				t.Fatalf("delta: exit %d: %v %s%s", code, err, stdout, stderr)
			}
			d := od.Rows[0]
			if strings.Contains(d.Note, "lower end") {
				t.Errorf("delta: note %q; no lower end is printed", d.Note)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestLedgerFormatsDoc: every row of docs/events.md's table of ledger
// formats holds: a format read is read by --ledger (and bounded by the
// accountants named, or as its events), a format written is what the
// named writer writes, and a format not read is refused.
func TestLedgerFormatsDoc(t *testing.T) {
	ledger := filepath.Join("..", "..", "testdata", "ledger")
	files := map[string]string{
		"dpcalc training ledger":  filepath.Join(ledger, "dpcalc_two_phase.ledger"),
		"Opacus accountant state": filepath.Join(ledger, "opacus_two_phase.json"),
		"dp_accounting DpEvent":   filepath.Join("..", "..", "testdata", "dpevent", "py", "two_phase.json"),
		"composition ledger":      filepath.Join(ledger, "compositions_two_phase.json"),
	}
	want := epsOf(t, "eps", "--schedule", twoPhase, "--accountant", "rdp")
	for _, row := range docTable(t, "The ledger formats `--ledger` detects") {
		name := row[0]
		t.Run(name, func(t *testing.T) {
			file, ok := files[name]
			if !ok {
				t.Fatalf("no example file for %q", name)
			}
			if row[1] == "no" {
				_, stderr, code := runCLI("eps", "--ledger", file)
				if code != 2 || !strings.Contains(stderr, "which is no format dpcalc reads") {
					t.Errorf("exit %d, %q; want it refused", code, stderr)
				}
				return
			}
			stdout, stderr, code := runCLI("eps", "--ledger", file, "--accountant", "all", "--json")
			o, err := parseOutput(stdout)
			if code != 0 || err != nil {
				t.Fatalf("exit %d: %v %s%s", code, err, stdout, stderr)
			}
			got := o.Rows
			bounded, _ := accountantsIn(row[3])
			if row[3] == "as its events" {
				bounded = []string{"ma", "rdp", "zcdp", "ac", "pld"} // two Poisson-sampled Gaussian phases
			}
			for _, r := range got {
				if contains(bounded, r.Accountant) && (r.Epsilon == nil || r.LedgerFormat == "") {
					t.Errorf("%s: ε %v, format %q", r.Accountant, r.Epsilon, r.LedgerFormat)
				}
				if r.Accountant == "rdp" && *r.Epsilon != want {
					t.Errorf("rdp ε = %v, --schedule gives %v", *r.Epsilon, want)
				}
			}
			switch row[2] {
			case "by `dpcalc train`":
				// train saves its ledger with SaveLedger: the example file
				// is what SaveLedger writes for the run.
				l, err := accounting.LoadLedger(file)
				if err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(t.TempDir(), "x.ledger")
				if err := accounting.SaveLedger(out, l); err != nil {
					t.Fatal(err)
				}
				a, _ := os.ReadFile(file)
				b, _ := os.ReadFile(out)
				if !bytes.Equal(a, b) {
					t.Errorf("SaveLedger writes\n%s\nthe example is\n%s", b, a)
				}
			case "by `--emit-events`", "by `--emit-format compositions`":
				emitted := filepath.Join(t.TempDir(), "e.json")
				args := []string{"eps", "--schedule", twoPhase, "--emit-events", emitted}
				if row[2] == "by `--emit-format compositions`" {
					args = append(args, "--emit-format", "compositions")
				}
				epsOf(t, args...)
				if e := epsOf(t, "eps", "--ledger", emitted, "--accountant", "rdp"); e != want {
					t.Errorf("emitted file read back: ε = %v, want %v", e, want)
				}
			case "no":
			default:
				t.Errorf("written %q: no test for it", row[2])
			}
		})
	}
}
