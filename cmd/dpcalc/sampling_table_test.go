package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/internal/render"
)

// samplingRun is the MNIST-sized run of docs/sampling.md's table "One run
// under every scheme"; each row adds its flags.
var samplingRun = []string{"eps", "--json", "--sigma", "4", "--batch", "600", "--n", "60000", "--epochs", "100"}

// samplingRows are the table's rows: every scheme dpcalc eps accounts for,
// under each relation it supports. key and adjacency name the row of
// testdata/sampling/dpaccounting.csv (dp_accounting's answer), if any.
var samplingRows = []struct {
	lots, relation, flags, key string
}{
	{"Poisson, q = 0.01", "add-remove", "--sampling poisson", "poisson"},
	{"Poisson, q = 0.01", "replace-one", "--sampling poisson --adjacency replace-one", "poisson"},
	{"truncated Poisson, cap 650", "add-remove", "--sampling truncated-poisson --max-batch 650", "truncated-poisson-650"},
	{"truncated Poisson, cap 650", "replace-one", "--sampling truncated-poisson --max-batch 650 --adjacency replace-one", "truncated-poisson-650"},
	{"fixed-size, 600 of 60,000", "replace-one", "--sampling fixed --adjacency replace-one", "fixed"},
	{"shuffled epochs", "replace-one", "--sampling shuffle --adjacency replace-one", "shuffle"},
	{"balls-in-bins, t = 100", "add-remove", "--sampling balls-in-bins", "random-allocation-1"},
	{"random allocation, k = 2 of t = 200", "add-remove", "--sampling random-allocation --k 2", "random-allocation-2"},
	{"random allocation, k = 4 of t = 400", "add-remove", "--sampling random-allocation --k 4", "random-allocation-4"},
	{"cyclic, 2 bands (q = 0.02 in a band)", "add-remove", "--sampling cyclic --bands 2", "cyclic-2"},
	{"cyclic, 4 bands (q = 0.04 in a band)", "add-remove", "--sampling cyclic --bands 4", "cyclic-4"},
}

// samplingTableHeader is the first line of the table in docs/sampling.md.
const samplingTableHeader = "| lots | relation | flags | `pld` ε | true ε in | `rdp` | dp_accounting |"

// TestSamplingTable regenerates docs/sampling.md's table of the MNIST-sized
// run under every scheme from dpcalc eps (pld's answer and certified
// interval, rdp's bound or "none") and testdata/sampling/dpaccounting.csv
// (dp_accounting's answers, with their provenance in gen_dpaccounting.py),
// and compares it with the page byte for byte; with -update it rewrites
// the page's table. Every scheme eps accepts has a row.
func TestSamplingTable(t *testing.T) {
	ref := readDPAccounting(t)
	var b strings.Builder
	b.WriteString(samplingTableHeader + "\n| --- | --- | --- | --- | --- | --- | --- |\n")
	seen := map[string]bool{}
	for _, r := range samplingRows {
		args := append(append([]string(nil), samplingRun...), strings.Fields(r.flags)...)
		seen[strings.Fields(r.flags)[1]] = true
		pld := epsRow(t, append(args, "--accountant", "pld"), true)
		if pld.Epsilon == nil || pld.Lower == nil {
			t.Fatalf("%s: pld row %+v without an interval", r.flags, pld)
		}
		mark := ""
		if pld.PairLower != nil {
			mark = "*"
		}
		interval := fmt.Sprintf("[%s%s, %s]", render.Down(*pld.Lower), mark, render.Up(*pld.Epsilon))
		rdp := "none"
		if row := epsRow(t, append(args, "--accountant", "rdp"), false); row.Epsilon != nil {
			rdp = render.Up(*row.Epsilon)
		}
		dpa := "none"
		if e, ok := ref[r.key+","+r.relation]; ok {
			dpa = e
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s | %s |\n", r.lots, r.relation, r.flags, render.Up(*pld.Epsilon), interval, rdp, dpa)
	}
	for _, s := range []string{"poisson", "fixed", "shuffle", "truncated-poisson", "random-allocation", "balls-in-bins", "cyclic"} {
		if !seen[s] {
			t.Errorf("--sampling %s has no row in the table", s)
		}
	}
	const path = "../../docs/sampling.md"
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	start := strings.Index(text, samplingTableHeader+"\n")
	if start < 0 {
		t.Fatalf("%s: no table starting %q", path, samplingTableHeader)
	}
	end := start
	for end < len(text) && text[end] == '|' {
		end += strings.IndexByte(text[end:], '\n') + 1
	}
	if got, want := text[start:end], b.String(); got != want {
		if *updateDocs {
			if err := os.WriteFile(path, []byte(text[:start]+want+text[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s: the table differs from dpcalc eps's answers (go test ./cmd/dpcalc -run TestSamplingTable -update rewrites it)\n--- page\n%s--- dpcalc\n%s", path, got, want)
	}
}

// epsRow runs dpcalc eps with args (--json) and returns its first row, the
// accountant's (shuffled lots add the usual practice's Poisson number as a
// second, a procedure); an unsupported accountant (exit 1, no ε) is an error
// only when must.
func epsRow(t *testing.T, args []string, must bool) allocRow {
	t.Helper()
	out, stderr, code := runCLI(args...)
	var r struct{ Rows []allocRow }
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Rows) == 0 {
		t.Fatalf("%v: exit %d, %q %s", args, code, out, stderr)
	}
	if must && (code != 0 || r.Rows[0].Epsilon == nil) {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return r.Rows[0]
}

// readDPAccounting reads dp_accounting's answers, keyed "scheme,adjacency",
// formatted for the table: ε to 6 digits, its accountant, and ‡ for the
// pull request's rows.
func readDPAccounting(t *testing.T) map[string]string {
	f, err := os.Open("../../testdata/sampling/dpaccounting.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, r := range recs[1:] {
		e, err := strconv.ParseFloat(r[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		mark := ""
		if r[3] != "b5b0286" {
			mark = "‡"
		}
		m[r[0]+","+r[1]] = fmt.Sprintf("%s (%s%s)", render.G(e), r[2], mark)
	}
	return m
}
