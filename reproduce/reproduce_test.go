package reproduce

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/trainer"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// readCSV returns the header and rows of dir/name.csv.
func readCSV(t *testing.T, dir, name string) ([]string, [][]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("%s.csv: %v", name, err)
	}
	if len(recs) < 2 {
		t.Fatalf("%s.csv: %d records, want a header and rows", name, len(recs))
	}
	return recs[0], recs[1:]
}

func col(t *testing.T, header []string, name string) int {
	t.Helper()
	i := slices.Index(header, name)
	if i < 0 {
		t.Fatalf("no column %q in %q", name, header)
	}
	return i
}

// TestTinyEndToEnd runs the whole pipeline on the tiny profile with the
// accountants of this build (training on two workers), and checks every
// file, the columns, the paper numbers, and that a value whose accountant
// is not built says so; then the same profile sharded and merged against
// it (checkShardMerge).
func TestTinyEndToEnd(t *testing.T) {
	dir := t.TempDir()
	var stages []string
	var plan Plan
	var planAt time.Time
	var firstRemaining, firstAfter time.Duration = -1, 0
	runs := map[int]int{}
	rep, err := Run(context.Background(), Options{Profile: ProfileTiny, OutDir: dir, Workers: 2,
		OnPlan: func(p Plan) { plan, planAt = p, time.Now() },
		Progress: func(p Progress) {
			stages = append(stages, p.Stage)
			if p.Stage == "train" && p.Item != "done" && !strings.Contains(p.Item, ": epoch ") {
				runs[p.Run]++
				if firstRemaining < 0 {
					firstRemaining, firstAfter = p.Remaining, time.Since(planAt)
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	// One estimator for the plan and the progress lines: the first run's
	// time left is the plan's estimate less at most the time since the
	// plan (no run has finished, so nothing rescaled it).
	if firstRemaining > plan.Estimate || firstRemaining < plan.Estimate-firstAfter {
		t.Errorf("first progress: %v left; the plan said %v, %v earlier", firstRemaining, plan.Estimate, firstAfter)
	}
	// Every run is announced once, numbered 1..Runs.
	for k := 1; k <= plan.Runs; k++ {
		if runs[k] != 1 {
			t.Errorf("run %d announced %d times (announcements: %v)", k, runs[k], runs)
			break
		}
	}
	if len(runs) != plan.Runs {
		t.Errorf("%d distinct run numbers announced, want %d", len(runs), plan.Runs)
	}
	for _, s := range []string{"accounting", "calibrate", "train", "tables"} {
		if !slices.Contains(stages, s) {
			t.Errorf("no progress for stage %s (got %v)", s, stages)
		}
	}
	for _, f := range []string{"README.md", "abadi-figure2.png", "dpd-sigma-mnist.png", "dpd-sigma-digits.png", "dpvd-sigma-mnist.png", "dpvd-sigma-digits.png"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(b) == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
			continue
		}
		if strings.HasSuffix(f, ".png") && !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s is not a PNG", f)
		}
		if f == "README.md" && !bytes.Contains(b, []byte("\n## Abadi et al. §5.1")) {
			t.Errorf("README.md does not contain the tables")
		}
	}
	for _, name := range []string{"abadi-5.1-epsilon", "abadi-figure2", "abadi-audit", "abadi-5.2-mnist",
		"dpd-sigma", "dpd-audit", "dpd-sigma-curves", "dpd-table1",
		"dpvd-sigma", "dpvd-audit", "dpvd-sigma-curves", "dpvd-table1"} {
		if rep.Table(name) == nil {
			t.Errorf("table %s not in the report", name)
		}
		md, err := os.ReadFile(filepath.Join(dir, name+".md"))
		if err != nil || !bytes.Contains(md, []byte("Verdict (generated")) {
			t.Errorf("%s.md missing or without a verdict: %v", name, err)
		}
	}
	built := func(k accounting.Kind) bool { _, err := registry.New(k, registry.Options{}); return err == nil }

	// Abadi §5.1: the paper's four numbers, and ours (or n/a).
	h, rows := readCSV(t, dir, "abadi-5.1-epsilon")
	ci, pi, oi := col(t, h, "accountant"), col(t, h, "paper ε"), col(t, h, "ours ε")
	want := map[string]string{"100/ma": "1.26", "100/ac": "9.34", "400/ma": "2.55", "400/ac": "24.22"}
	got := map[string]string{}
	for _, r := range rows {
		kind := strings.Fields(r[ci])[0] // "ac (linear amplification, …)" → ac
		k := r[col(t, h, "E")] + "/" + kind
		if r[pi] != "-" {
			got[k] = r[pi]
		}
		var v float64
		if !built(accounting.Kind(kind)) {
			if r[oi] != NotBuilt {
				t.Errorf("§5.1 %s: ours = %q, want %q", k, r[oi], NotBuilt)
			}
		} else if _, err := fmt.Sscanf(r[oi], "%g", &v); err != nil {
			t.Errorf("§5.1 %s: ours = %q, want a number", k, r[oi])
		} else if p, ok := map[string]float64{"100/ma": 1.26, "100/ac": 9.34, "400/ac": 24.22}[k]; ok && r[pi] != "-" && math.Abs(v-p) > 0.05*p {
			// The moments accountant with Abadi's tail bound, and advanced
			// composition with Abadi's linear amplification, reproduce
			// the paper (which prints 3–4 digits; 5% margin).
			t.Errorf("§5.1 %s: ours %g, paper %g", k, v, p)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("§5.1 paper column = %v, want %v", got, want)
	}

	// σ tables: the published σ values.
	paperSigmas := map[string][]string{"dpd": {"10.88", "3.23"}, "dpvd": {"8.24", "2.68", "9.73", "2.97"}}
	for p, ws := range paperSigmas {
		h, rows := readCSV(t, dir, p+"-sigma")
		var ps []string
		for _, r := range rows {
			if v := r[col(t, h, "paper σ")]; v != "-" {
				ps = append(ps, v)
			}
			if k := accounting.Kind(r[col(t, h, "accountant")]); !built(k) && r[col(t, h, "ours σ")] != NotBuilt {
				t.Errorf("%s-sigma %s: ours σ = %q, want %q", p, k, r[col(t, h, "ours σ")], NotBuilt)
			}
		}
		if fmt.Sprint(ps) != fmt.Sprint(ws) {
			t.Errorf("%s-sigma paper σ = %v, want %v", p, ps, ws)
		}
		// Audit: every published σ in both readings; verdict or n/a.
		h, rows = readCSV(t, dir, p+"-audit")
		if len(rows) != 2*len(ws) {
			t.Errorf("%s-audit has %d rows, want %d", p, len(rows), 2*len(ws))
		}
		for _, r := range rows {
			v := r[col(t, h, "verdict")]
			if !built(accounting.KindPLD) && v != NotBuilt {
				t.Errorf("%s-audit verdict %q without pld, want %q", p, v, NotBuilt)
			}
			if built(accounting.KindPLD) {
				if !slices.Contains([]string{"holds", "violated", "undetermined"}, v) {
					t.Errorf("%s-audit verdict %q", p, v)
				}
				var lo, hi float64
				fmt.Sscanf(r[col(t, h, "true ε lower")], "%g", &lo)
				fmt.Sscanf(r[col(t, h, "true ε upper")], "%g", &hi)
				if !(lo > 0 && lo <= hi && hi <= 1.05*lo) {
					t.Errorf("%s-audit certified interval [%g, %g], want a tight interval", p, lo, hi)
				}
			}
		}
	}

	// Table 1: paper accuracies, MNIST not run in tiny, DIGITS one epoch.
	for _, tc := range []struct {
		name  string
		first string // first row's paper accuracy (MNIST ε = 10, first method)
		n     int
	}{{"dpd-table1", "0.9526", 24}, {"dpvd-table1", "0.9462", 24}} {
		h, rows := readCSV(t, dir, tc.name)
		if len(rows) != tc.n {
			t.Fatalf("%s: %d rows, want %d", tc.name, len(rows), tc.n)
		}
		for _, c := range []string{"σ paper proc.", "acc (paper σ)", "acc (sound σ)", "seeds", "paper acc"} {
			col(t, h, c)
		}
		if rows[0][col(t, h, "paper acc")] != tc.first {
			t.Errorf("%s first paper accuracy %q, want %s", tc.name, rows[0][col(t, h, "paper acc")], tc.first)
		}
		for _, r := range rows {
			acc := r[col(t, h, "acc (paper σ)")]
			switch r[col(t, h, "dataset")] {
			case "mnist":
				if !strings.HasPrefix(acc, "not run (tiny") {
					t.Errorf("%s MNIST cell %q, want not run", tc.name, acc)
				}
			case "digits":
				if r[col(t, h, "epochs")] != "1 of 100 (reduced by profile)" {
					t.Errorf("%s DIGITS epochs %q", tc.name, r[col(t, h, "epochs")])
				}
				// The paper-σ cell needs the paper's accountant, the
				// sound one pld or rdp: a number and one run, or n/a.
				tab := map[string]table1{"dpd-table1": dpdTable1, "dpvd-table1": dpvdTable1}[tc.name]
				var kind accounting.Kind
				for _, mr := range tab.Rows {
					if mr.Name == r[col(t, h, "method")] {
						kind = mr.PaperKind
					}
				}
				sound := built(accounting.KindPLD) || built(accounting.KindRDP)
				for _, cc := range []struct {
					sigma, acc string
					ok         bool
				}{{"σ paper proc.", "acc (paper σ)", built(kind)}, {"σ sound (pld)", "acc (sound σ)", sound}} {
					sc := cc.sigma
					if !built(accounting.KindPLD) {
						sc = strings.Replace(sc, "pld", map[bool]string{true: "rdp", false: "sound accountant"}[built(accounting.KindRDP)], 1)
					}
					sig, acc := r[col(t, h, sc)], r[col(t, h, cc.acc)]
					if !cc.ok {
						if sig != NotBuilt || acc != NotBuilt {
							t.Errorf("%s %s: σ %q, accuracy %q; want %q", tc.name, r[col(t, h, "method")], sig, acc, NotBuilt)
						}
						continue
					}
					var sv, av float64
					if _, err := fmt.Sscanf(sig, "%g", &sv); err != nil || !(sv > 0) {
						t.Errorf("%s %s: σ %q, want > 0", tc.name, r[col(t, h, "method")], sig)
					}
					if _, err := fmt.Sscanf(acc, "%g (1 run)", &av); err != nil || av < 0 || av > 1 {
						t.Errorf("%s %s: accuracy %q, want one run", tc.name, r[col(t, h, "method")], acc)
					}
				}
			}
		}
	}
	h, rows = readCSV(t, dir, "abadi-5.2-mnist")
	if len(rows) != 3 || rows[0][col(t, h, "paper acc")] != "0.90" || rows[2][col(t, h, "σ")] != "2" {
		t.Errorf("abadi-5.2-mnist rows %v", rows)
	}
	t.Run("ShardMerge", func(t *testing.T) { checkShardMerge(t, dir, rep) })
}

// fakeAcc is a closed-form stand-in for every accountant kind, so the
// training path is tested with numbers whatever this build contains. Each
// step PoissonSampled{q, Gaussian{σ}} adds ρ = scale·q²/σ² (a heuristic, not
// a privacy bound); ε = ρ + 2√(ρ log 1/δ). Its pld reports lower = 0.9·ε.
type fakeAcc struct {
	kind  accounting.Kind
	scale float64
	rho   float64
}

func (a *fakeAcc) Kind() accounting.Kind { return a.kind }

func (a *fakeAcc) add(e accounting.Event, mult, q float64) error {
	switch ev := e.(type) {
	case accounting.Gaussian:
		a.rho += mult * a.scale * q * q / (ev.NoiseMultiplier * ev.NoiseMultiplier)
	case accounting.PoissonSampled:
		return a.add(ev.Event, mult, q*ev.SamplingRate)
	case accounting.SelfComposed:
		return a.add(ev.Event, mult*float64(ev.Count), q)
	case accounting.Composed:
		for _, s := range ev.Events {
			if err := a.add(s, mult, q); err != nil {
				return err
			}
		}
	default:
		return errors.New("fake: unsupported event")
	}
	return nil
}

func (a *fakeAcc) Compose(e accounting.Event, count int) error { return a.add(e, float64(count), 1) }
func (a *fakeAcc) Supports(accounting.Step) error              { return nil }
func (a *fakeAcc) Epsilon(_ context.Context, delta float64) (float64, error) {
	return a.rho + 2*math.Sqrt(a.rho*math.Log(1/delta)), nil
}
func (a *fakeAcc) Delta(_ context.Context, eps float64) (float64, error) {
	return 0, errors.New("fake: no delta")
}

type fakePLD struct{ fakeAcc }

func (a *fakePLD) EpsilonBounds(ctx context.Context, delta float64) (float64, float64, error) {
	e, _ := a.Epsilon(ctx, delta)
	return 0.9 * e, e, nil
}
func (a *fakePLD) DeltaBounds(context.Context, float64) (float64, float64, error) {
	return 0, 0, errors.New("fake")
}

func newFake(k accounting.Kind, _ registry.Options) (accounting.Method, error) {
	scale := map[accounting.Kind]float64{
		accounting.KindMA: 2, accounting.KindRDP: 2, accounting.KindZCDP: 2.5, accounting.KindAC: 20,
		accounting.KindDPDAC: 30, accounting.KindDPDZCDP: 3, accounting.KindPLD: 1.8,
	}[k]
	if k == accounting.KindPLD {
		return &fakePLD{fakeAcc{kind: k, scale: scale}}, nil
	}
	return &fakeAcc{kind: k, scale: scale}, nil
}

// TestTinyTrainingResumable exercises the training cells with numbers (an
// injected closed-form accountant for every kind): DIGITS cells are
// trained, the sound σ meets its budget, and a second run into the same
// directory recomputes nothing and writes identical tables.
func TestTinyTrainingResumable(t *testing.T) {
	dir := t.TempDir()
	opt := Options{Profile: ProfileTiny, OutDir: dir, Papers: []Paper{PaperDPD}, NewAccountant: newFake}
	var plan Plan
	opt.OnPlan = func(p Plan) { plan = p }
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	// 3 ε × (dpd AC, dpd zCDP, dpd sound, sgld paper, sgld sound, dpsgd
	// paper, dpsgd sound) = 21 distinct runs; DPD-AC and DPD-zCDP share
	// their sound-σ run.
	if plan.Runs != 21 || plan.Cached != 0 {
		t.Errorf("plan: %d runs, %d cached; want 21, 0", plan.Runs, plan.Cached)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "dpd-table1.csv"))
	h, rows := readCSV(t, dir, "dpd-table1")
	for _, r := range rows {
		if r[col(t, h, "dataset")] != "digits" {
			continue
		}
		for _, c := range []string{"acc (paper σ)", "acc (sound σ)"} {
			var a float64
			if _, err := fmt.Sscanf(r[col(t, h, c)], "%g (1 run)", &a); err != nil || a < 0.05 || a > 1 {
				t.Errorf("%s %s = %q, want an accuracy from one run", r[col(t, h, "method")], c, r[col(t, h, c)])
			}
		}
		var eps, te float64
		fmt.Sscanf(r[col(t, h, "ε")], "%g", &eps)
		fmt.Sscanf(r[col(t, h, "true ε (sound σ, pld)")], "%g", &te)
		if !(te <= eps) || te < 0.99*eps {
			t.Errorf("%s ε = %g: sound σ's true ε = %g, want just below the budget", r[col(t, h, "method")], eps, te)
		}
		if r[col(t, h, "seeds")] != "1" {
			t.Errorf("seeds = %q, want 1", r[col(t, h, "seeds")])
		}
	}
	plan = Plan{}
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	if plan.Cached != plan.Runs || plan.Runs != 21 {
		t.Errorf("second run: %d of %d cached, want all", plan.Cached, plan.Runs)
	}
	second, _ := os.ReadFile(filepath.Join(dir, "dpd-table1.csv"))
	if !bytes.Equal(first, second) {
		t.Error("second run wrote a different dpd-table1.csv")
	}
	// A fresh run (empty cache) with the same seeds gives the same table.
	opt.OutDir = t.TempDir()
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	if plan.Cached != 0 {
		t.Errorf("fresh directory: %d runs cached", plan.Cached)
	}
	fresh, _ := os.ReadFile(filepath.Join(opt.OutDir, "dpd-table1.csv"))
	if !bytes.Equal(first, fresh) {
		t.Error("a fresh run with the same seeds wrote a different dpd-table1.csv")
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Profile: ProfileTiny},
		{Profile: "huge", OutDir: t.TempDir()},
		{Profile: ProfileTiny, OutDir: t.TempDir(), Papers: []Paper{"nope"}},
	} {
		_, err := Run(context.Background(), o)
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%+v: err = %v, want InputError", o, err)
		}
	}
	if _, err := ParsePaper("abadi"); err != nil {
		t.Error(err)
	}
}

// TestInterruptedRunResumes cancels a 25-epoch run after epoch 15 (it has
// checkpointed at epoch 10) and checks that the next run resumes from the
// checkpoint to exactly the uninterrupted result.
func TestInterruptedRunResumes(t *testing.T) {
	mk := func(dir string) *runner {
		return &runner{opt: Options{OutDir: dir, Seed: 1, Profile: ProfileQuick}, cache: cache{dir: filepath.Join(dir, "cache")}}
	}
	cfg := trainer.Config{Method: trainer.MethodDPD, Hidden: []int{100}, LotSize: 100, Epochs: 25, ClipNorm: 2, LearningRate: 0.5, NoiseMultiplier: 1}.WithDefaults(data.DigitsTrainSize)
	a := mk(t.TempDir())
	ja := a.addJobs("digits", cfg, 1)
	if err := a.train(context.Background()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := mk(dir)
	b.addJobs("digits", cfg, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.opt.Progress = func(p Progress) {
		if strings.Contains(p.Item, "epoch 15/") {
			cancel()
		}
	}
	if err := b.train(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: err = %v, want context.Canceled", err)
	}
	ckpts, _ := filepath.Glob(filepath.Join(dir, "cache", "ckpt-*.ckpt"))
	if len(ckpts) != 1 {
		t.Fatalf("checkpoints after the interruption: %v, want one", ckpts)
	}
	c := mk(dir)
	jc := c.addJobs("digits", cfg, 1)
	if err := c.train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ja[0].res.TestAccuracy != jc[0].res.TestAccuracy || ja[0].res.Steps != jc[0].res.Steps {
		t.Errorf("resumed run: accuracy %v after %d steps, uninterrupted %v after %d", jc[0].res.TestAccuracy, jc[0].res.Steps, ja[0].res.TestAccuracy, ja[0].res.Steps)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "cache", "ckpt-*.ckpt")); len(left) != 0 {
		t.Errorf("checkpoint left after the run finished: %v", left)
	}
}

func TestDirectedFormatting(t *testing.T) {
	for _, tc := range []struct {
		x        float64
		up, down string
	}{
		{0.94885, "0.9489", "0.9488"},
		{0.9999994, "1", "0.9999"},
		{2.0374, "2.038", "2.037"},
		{1234.5, "1235", "1234"},
		{3, "3", "3"},
	} {
		if got := fUp(tc.x); got != tc.up {
			t.Errorf("fUp(%g) = %s, want %s", tc.x, got, tc.up)
		}
		if got := fDown(tc.x); got != tc.down {
			t.Errorf("fDown(%g) = %s, want %s", tc.x, got, tc.down)
		}
	}
}
