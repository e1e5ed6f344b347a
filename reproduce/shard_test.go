package reproduce

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(dir, "cache"))
	out := map[string][]byte{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "run-") {
			b, err := os.ReadFile(filepath.Join(dir, "cache", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = b
		}
	}
	return out
}

// checkShardMerge (TestTinyEndToEnd/ShardMerge) runs the tiny profile as
// two shards and merges them: the shards split the runs without overlap,
// each writes no tables, and the merged tables equal those of the unsharded
// run want in whole (same seeds, same runs), which trains on two workers
// while the shards use one. Merging one shard alone is refused, naming the
// missing runs. (It shares TestTinyEndToEnd's unsharded run, which costs as
// much as the shards together.)
func checkShardMerge(t *testing.T, whole string, want *Report) {
	ctx := context.Background()
	checkPrintedSigma(t, whole)
	var shards []string
	seen := map[string]bool{}
	for i := 1; i <= 2; i++ {
		dir := t.TempDir()
		rep, err := Run(ctx, Options{Profile: ProfileTiny, OutDir: dir, Shard: i, Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "README.md")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("shard %d wrote tables", i)
		}
		runs := runFiles(t, dir)
		if len(runs) != rep.Plan.Runs || len(runs) == 0 {
			t.Errorf("shard %d: %d cached runs, plan %d", i, len(runs), rep.Plan.Runs)
		}
		for name := range runs {
			if seen[name] {
				t.Errorf("run %s trained by both shards", name)
			}
			seen[name] = true
		}
		shards = append(shards, dir)
	}
	if len(seen) != want.Plan.Runs {
		t.Errorf("the shards trained %d runs, the whole profile has %d", len(seen), want.Plan.Runs)
	}
	if _, err := Merge(ctx, Options{Profile: ProfileTiny, OutDir: t.TempDir()}, shards[0]); err == nil || !strings.Contains(err.Error(), "in no shard's cache") {
		t.Errorf("merging one of two shards: err = %v, want missing runs", err)
	}
	merged := t.TempDir()
	got, err := Merge(ctx, Options{Profile: ProfileTiny, OutDir: merged}, shards...)
	if err != nil {
		t.Fatal(err)
	}
	if got.Merged != want.Plan.Runs || got.Plan.Cached != got.Plan.Runs {
		t.Errorf("merge copied %d runs, %d of %d cached; want all %d", got.Merged, got.Plan.Cached, got.Plan.Runs, want.Plan.Runs)
	}
	for _, tw := range want.Tables {
		tg := got.Table(tw.Name)
		if tg == nil || !bytes.Equal(tg.Markdown(), tw.Markdown()) {
			t.Errorf("merged table %s differs from the unsharded run's", tw.Name)
		}
	}
}

// TestPlanWritesNothingAndNeedsNoMNIST: --plan of the quick profile (which
// has MNIST cells) without MNIST estimates them from DIGITS and creates
// no file or directory.
func TestPlanWritesNothingAndNeedsNoMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("calibrates every cell of the quick profile")
	}
	out := filepath.Join(t.TempDir(), "results")
	rep, err := Run(context.Background(), Options{Profile: ProfileQuick, OutDir: out, DataDir: "/nonexistent", PlanOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--plan created %s", out)
	}
	if rep.Plan.Runs == 0 || rep.Plan.Estimate <= 0 || rep.Plan.StepSeconds["mnist"] <= 0 {
		t.Errorf("plan %+v: want runs, an estimate and an MNIST step cost", rep.Plan)
	}
}

// checkPrintedSigma: the DPVD Table 1 trains DIGITS at ε = 1 also at the σ
// the paper prints (9.73 for DPVD-AC, 2.97 for DPVD-zCDP; DPVD §5), with a
// certified ε beside it, and shows "-" for rows the paper prints none for.
func checkPrintedSigma(t *testing.T, dir string) {
	t.Helper()
	header, rows := readCSV(t, dir, "dpvd-table1")
	ds, eps, method := col(t, header, "dataset"), col(t, header, "ε"), col(t, header, "method")
	ps, acc, te := col(t, header, "σ printed"), col(t, header, "acc (printed σ)"), col(t, header, "true ε (printed σ, pld)")
	want := map[string]string{"DPVD-AC": "9.73", "DPVD-zCDP": "2.97"}
	got := 0
	for _, r := range rows {
		if r[ds] != "digits" {
			continue
		}
		w, ok := want[r[method]]
		if !ok || r[eps] != "1" {
			if r[ps] != "-" {
				t.Errorf("%s ε=%s %s: σ printed %q, want -", r[ds], r[eps], r[method], r[ps])
			}
			continue
		}
		got++
		if r[ps] != w || !strings.Contains(r[acc], "(1 run)") || r[te] == "-" {
			t.Errorf("digits ε=1 %s: σ printed %q, acc %q, true ε %q; want %s, a run and an ε", r[method], r[ps], r[acc], r[te], w)
		}
	}
	if got != 2 {
		t.Errorf("%d DIGITS ε=1 rows with a printed σ, want 2", got)
	}
}
