package reproduce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/internal/atomicfile"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// Profile says how much training a reproduction does. Accounting tables
// and figures are always complete.
type Profile string

// The profiles.
const (
	// ProfileTiny: DIGITS only, one epoch, one run per cell. Seconds; for CI.
	ProfileTiny Profile = "tiny"
	// ProfileQuick: every table filled within QuickBudget on 2 cores: DIGITS
	// cells at the papers' settings, MNIST cells with 1 epoch (marked in
	// the tables), 1 run per cell. The profile is fixed, not adapted to the
	// machine, so its tables are the same everywhere. Budget, from step
	// times measured on the 2-core development machine while other jobs
	// shared it (per run): DIGITS dpd/sgld 500 hidden, 100 epochs ≈ 5–10 s
	// (21 runs); DIGITS dpvd/dpd 1000 hidden ≈ 10–20 s (21 runs); MNIST
	// 784-1000-10, 1 epoch ≈ 7–12 s (42 runs); Abadi MNIST with DP-PCA, 1
	// epoch ≈ 25–30 s (3 runs); accounting ≈ 20 s: 11–19 min shared, about
	// half that on 2 idle cores. A second DIGITS run per cell would add
	// 5–10 min. Run prints its own measured estimate (Plan.Estimate).
	ProfileQuick Profile = "quick"
	// ProfileFull: the papers' epochs and 10 runs per cell.
	ProfileFull Profile = "full"
)

// Profiles lists the profiles.
var Profiles = []Profile{ProfileTiny, ProfileQuick, ProfileFull}

// QuickBudget is the wall-time budget of ProfileQuick.
const QuickBudget = 15 * time.Minute

// Options configure a reproduction.
type Options struct {
	// Papers to reproduce; nil means all.
	Papers  []Paper
	Profile Profile
	// OutDir receives the tables (Markdown and CSV), figures (PNG) and the
	// cache of finished cells (OutDir/cache). Required.
	OutDir string
	// DataDir holds MNIST: either the idx files themselves or a parent with
	// an mnist/ subdirectory (the layout of $DPCALC_DATA_DIR). "" means
	// data.DefaultDir("mnist").
	DataDir string
	// Seed is the first run's seed; run r of every cell uses Seed+r. Zero
	// means 1.
	Seed uint64
	// Accounting configures every accountant (e.g. the PLD grid).
	Accounting registry.Options
	// PlanOnly computes only the plan (Report.Plan says what a real run
	// would do): no accounting tables, no training, and nothing is written
	// (not even OutDir); the cache is read, not filled. Step costs are
	// measured on synthetic data of each data set's shape, so MNIST need not
	// be present.
	PlanOnly bool
	// Shard and Shards, if Shards > 0, make this process train only the
	// runs of shard Shard (1-based) of Shards: a run belongs to shard
	// 1 + (FNV-1a of its cache key mod Shards), so every process that is
	// given the same options and a different Shard agrees on the split
	// without talking to the others. A shard writes its runs to
	// OutDir/cache and no tables; [Merge] builds the tables from the
	// shards' caches.
	Shard, Shards int
	// Datasets, if set, restricts training to runs on these data sets
	// ("digits", "mnist"); cells of the others show "-" in the tables.
	Datasets []string
	// Workers is the number of runs trained at once; 0 means 1. Runs are
	// independent and a DIGITS-sized run keeps about one core busy.
	Workers int
	// MergeFrom lists output directories of shards whose cached runs are
	// copied into OutDir/cache before the plan; with it, Run trains
	// nothing and fails if any run is in no shard's cache. See [Merge].
	MergeFrom []string
	// NewAccountant makes accounting methods; nil means registry.New. Tests
	// inject closed-form accountants here.
	NewAccountant func(accounting.Kind, registry.Options) (accounting.Method, error)
	// OnPlan, if set, is called once the training plan and its estimated
	// wall time are known, before any training starts.
	OnPlan func(Plan)
	// Progress, if set, is called as work proceeds (on the calling
	// goroutine).
	Progress func(Progress)
}

// Progress reports work done.
type Progress struct {
	Stage string `json:"stage"` // "accounting", "calibrate", "train", "tables"
	Item  string `json:"item"`
	// Run numbers the run starting (stage "train", 1-based, cached runs
	// counted first: run Cached+k is the k-th run trained); 0 on other
	// events. Done and Total count training runs finished and planned;
	// Cached counts those found in the cache.
	Run    int `json:"run,omitempty"`
	Done   int `json:"done"`
	Total  int `json:"total"`
	Cached int `json:"cached"`
	// Elapsed since Run started; Remaining is the estimate for the runs not
	// yet done (stage "train").
	Elapsed   time.Duration `json:"elapsed_ns"`
	Remaining time.Duration `json:"remaining_ns"`
}

// Plan is the training work a reproduction will do.
type Plan struct {
	Profile Profile `json:"profile"`
	// Runs is the number of training runs; Cached of them are finished
	// already (in OutDir/cache) and cost nothing.
	Runs   int `json:"runs"`
	Cached int `json:"cached"`
	// DatasetRuns splits Runs by data set ("digits", "mnist").
	DatasetRuns map[string]int `json:"dataset_runs"`
	// DigitsRuns and MNISTRuns are runs per cell; MNISTEpochs, if > 0,
	// replaces the papers' MNIST epochs (quick profile).
	DigitsRuns  int `json:"digits_runs"`
	MNISTRuns   int `json:"mnist_runs"`
	MNISTEpochs int `json:"mnist_epochs,omitempty"`
	// Estimate is the expected wall time of training the runs not cached
	// (the accounting tables, computed before them, are not included):
	// per-run times from step times measured on this machine with as many
	// runs at once as will train (StepSeconds, per data set at its shape),
	// laid out on the workers in the order the runs start. The progress
	// lines' time left comes from the same estimator.
	Estimate time.Duration `json:"estimate_ns"`
	// Shard is "i/n" when Options.Shards is set; Runs, Cached and
	// Estimate then count this shard's runs only.
	Shard       string             `json:"shard,omitempty"`
	StepSeconds map[string]float64 `json:"step_seconds"`
	Notes       []string           `json:"notes,omitempty"`
	// Missing lists the inputs that are not on disk, one line each naming
	// the files and the command that fetches them. Run refuses to start
	// without them; a plan (Options.PlanOnly) reports them here.
	Missing []string `json:"missing,omitempty"`
}

// Report is what Run produced.
type Report struct {
	Plan   Plan     `json:"plan"`
	Tables []*Table `json:"tables"`
	// Files lists every file written (absolute or relative to the working
	// directory, as OutDir was given).
	Files    []string      `json:"files"`
	WallTime time.Duration `json:"wall_time_ns"`
	// Merged counts the cached runs copied from Options.MergeFrom.
	Merged int `json:"merged,omitempty"`
}

// Merge builds the tables of opt from the caches of shards (output
// directories of runs with Options.Shard set): Run with MergeFrom = shards.
func Merge(ctx context.Context, opt Options, shards ...string) (*Report, error) {
	if len(shards) == 0 {
		return nil, inputErr("merge: no shard directories")
	}
	opt.MergeFrom = shards
	return Run(ctx, opt)
}

// Table returns the table with the given name, or nil.
func (r *Report) Table(name string) *Table {
	for _, t := range r.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// InputError reports bad options or missing input data; the CLI maps it to
// exit code 2.
type InputError struct{ Err error }

func (e *InputError) Error() string { return "reproduce: " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(format string, args ...any) error {
	return &InputError{fmt.Errorf(format, args...)}
}

// ParsePaper returns the paper named s ("abadi", "dpd", "dpvd").
func ParsePaper(s string) (Paper, error) {
	for _, p := range Papers {
		if string(p) == s {
			return p, nil
		}
	}
	return "", inputErr("unknown paper %q, want abadi, dpd, dpvd or all", s)
}

func (o *Options) check() error {
	if o.OutDir == "" {
		return inputErr("no output directory")
	}
	if !slices.Contains(Profiles, o.Profile) {
		return inputErr("unknown profile %q, want tiny, quick or full", o.Profile)
	}
	if len(o.Papers) == 0 {
		o.Papers = Papers
	}
	for _, p := range o.Papers {
		if !slices.Contains(Papers, p) {
			return inputErr("unknown paper %q, want abadi, dpd or dpvd", p)
		}
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Shards < 0 || o.Shards > 0 && (o.Shard < 1 || o.Shard > o.Shards) || o.Shards == 0 && o.Shard != 0 {
		return inputErr("invalid shard %d/%d, want i/n with 1 <= i <= n", o.Shard, o.Shards)
	}
	for _, d := range o.Datasets {
		if _, ok := trainSizes[d]; !ok {
			return inputErr("unknown data set %q, want digits or mnist", d)
		}
	}
	if o.Workers < 0 || o.Workers > 256 {
		return inputErr("invalid workers %d, want 1..256", o.Workers)
	}
	if o.Shards > 0 && len(o.MergeFrom) > 0 {
		return inputErr("a shard cannot merge")
	}
	return nil
}

// runner holds one reproduction's state.
type runner struct {
	// ctx is Run's context: a runner lives for one call of Run.
	ctx   context.Context
	opt   Options
	acc   *accountants
	cache cache
	start time.Time
	// data sets, loaded on first use
	digitsTrain, digitsTest *data.Dataset
	mnistTrain, mnistTest   *data.Dataset
	plan                    Plan
	jobs                    []*job
}

// Run reproduces the selected papers' tables into opt.OutDir. It is
// resumable: every finished training run and accounting value is cached in
// OutDir/cache and reused, so an interrupted run continues where it
// stopped, and a second run with the same options recomputes nothing
// (same seeds give the same tables). On ctx cancellation it returns ctx's
// error; runs finished so far stay cached.
func Run(ctx context.Context, opt Options) (*Report, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	// Every input is checked before any work: a missing data set fails
	// here, in milliseconds, rather than after the accounting tables; a
	// plan reports it instead.
	missing := opt.missingInputs()
	if len(missing) > 0 && !opt.PlanOnly {
		return nil, &InputError{errors.New(strings.Join(missing, "; "))}
	}
	if !opt.PlanOnly {
		if err := os.MkdirAll(opt.OutDir, 0o755); err != nil {
			return nil, inputErr("%v", err)
		}
	}
	r := &runner{ctx: ctx, opt: opt, acc: newAccountants(opt.Accounting, opt.NewAccountant), start: time.Now(),
		cache: cache{dir: filepath.Join(opt.OutDir, "cache"), readOnly: opt.PlanOnly}}
	rep := &Report{}
	if len(opt.MergeFrom) > 0 {
		n, err := r.cache.importRuns(opt.MergeFrom)
		if err != nil {
			return nil, err
		}
		rep.Merged = n
	}

	// 1. Plan the training runs (calibrates every σ) and estimate them, so
	// that the plan is known before the long stages start.
	specs, err := r.trainingSpecs(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.estimate(ctx); err != nil {
		return nil, err
	}
	r.plan.Missing = missing
	if opt.OnPlan != nil {
		opt.OnPlan(r.plan)
	}
	if opt.PlanOnly {
		rep.Plan = r.plan
		rep.WallTime = time.Since(r.start)
		return rep, nil
	}
	if len(opt.MergeFrom) > 0 {
		if missing := r.uncached(); len(missing) > 0 {
			return nil, inputErr("merge: %d of %d runs are in no shard's cache (first: %s); run the shards that hold them first", len(missing), len(r.jobs), describeJob(missing[0]))
		}
	}
	// 2. Accounting tables and figures (no training).
	var acct []*Table
	for _, p := range opt.Papers {
		r.progress(Progress{Stage: "accounting", Item: string(p)})
		ts, err := r.accountingTables(p)
		if err != nil {
			return nil, err
		}
		acct = append(acct, ts...)
	}
	// 3. Train.
	if err := r.train(ctx); err != nil {
		return nil, err
	}
	if opt.Shards > 0 {
		// A shard's product is its cache; the tables need every shard.
		rep.Plan = r.plan
		rep.Tables = acct
		rep.WallTime = time.Since(r.start)
		return rep, nil
	}
	// 4. Training tables from the cached runs.
	r.progress(Progress{Stage: "tables"})
	var trained []*Table
	for _, s := range specs {
		trained = append(trained, s.table(r))
	}
	// Order: per paper, accounting first.
	for _, p := range opt.Papers {
		for _, t := range append(acct, trained...) {
			if tablePaper(t) == p {
				rep.Tables = append(rep.Tables, t)
			}
		}
	}
	for _, t := range rep.Tables {
		files, err := t.save(opt.OutDir)
		if err != nil {
			return nil, err
		}
		rep.Files = append(rep.Files, files...)
		for _, f := range t.Figures {
			rep.Files = append(rep.Files, filepath.Join(opt.OutDir, f))
		}
	}
	rep.Plan = r.plan
	rep.WallTime = time.Since(r.start)
	idx := filepath.Join(opt.OutDir, "README.md")
	if err := atomicfile.WriteFile(idx, r.index(rep), 0o644); err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, idx)
	return rep, nil
}

// tablePaper reads the paper from a table name ("dpd-table1" → dpd).
func tablePaper(t *Table) Paper {
	for _, p := range Papers {
		if len(t.Name) > len(p) && t.Name[:len(p)+1] == string(p)+"-" {
			return p
		}
	}
	return ""
}

func (r *runner) progress(p Progress) {
	if r.opt.Progress != nil {
		p.Elapsed = time.Since(r.start)
		r.opt.Progress(p)
	}
}

// index is OutDir/README.md: every table, in order, with the profile and
// wall time.
func (r *runner) index(rep *Report) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Paper reproduction (profile %s)\n\n", r.opt.Profile)
	b.WriteString("<!-- Generated by dpcalc reproduce; edit reproduce/, not this file. -->\n\n")
	fmt.Fprintf(&b, "Generated by `dpcalc reproduce --profile %s`; wall time %s (training runs: %d, of which %d were cached). ",
		r.opt.Profile, rep.WallTime.Round(time.Second), r.plan.Runs, r.plan.Cached)
	fmt.Fprintf(&b, "Accountants built: ")
	first := true
	for _, k := range registry.Kinds() {
		if r.acc.built[k] {
			if !first {
				b.WriteString(", ")
			}
			b.WriteString(string(k))
			first = false
		}
	}
	if first {
		b.WriteString("none")
	}
	b.WriteString(".\n\n")
	for _, n := range r.plan.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	if len(r.plan.Notes) > 0 {
		b.WriteString("\n")
	}
	for _, t := range rep.Tables {
		b.Write(t.Markdown())
		b.WriteString("\n")
	}
	return b.Bytes()
}

// mnistDir is the directory MNIST is read from: Options.DataDir, or its
// mnist/ subdirectory if it has one, or data.DefaultDir("mnist").
func (o *Options) mnistDir() string {
	dir := o.DataDir
	if dir == "" {
		return data.DefaultDir("mnist")
	}
	if fi, err := os.Stat(filepath.Join(dir, "mnist")); err == nil && fi.IsDir() {
		return filepath.Join(dir, "mnist")
	}
	return dir
}

// needsMNIST reports whether the options train on MNIST: every paper has
// MNIST cells, trained by the quick and full profiles unless --datasets
// leaves MNIST out; a merge trains nothing.
func (o *Options) needsMNIST() bool {
	if o.Profile == ProfileTiny || len(o.MergeFrom) > 0 {
		return false
	}
	return len(o.Datasets) == 0 || slices.Contains(o.Datasets, "mnist")
}

// missingInputs checks, by stat calls only, that every input the options
// train on is present, and returns one line per missing input naming its
// files and the command that fetches them (nil when nothing is missing).
// A shard is checked for the whole profile's inputs: which runs fall in
// it is known only once every σ is calibrated.
func (o *Options) missingInputs() []string {
	if !o.needsMNIST() {
		return nil
	}
	err := data.Missing("mnist", o.mnistDir())
	if err == nil {
		return nil
	}
	how := fmt.Sprintf("give --data-dir DIR or set $%s to where it is", data.DataDirEnv)
	return []string{fmt.Sprintf("profile %s trains on MNIST: %s (or %s; --datasets digits trains only the DIGITS cells; --profile tiny needs no download)",
		o.Profile, strings.TrimPrefix(err.Error(), "data: "), how)}
}

// loadData returns the named data set's splits, loading it once.
func (r *runner) loadData(name string) (train, test *data.Dataset, err error) {
	switch name {
	case "digits":
		if r.digitsTrain == nil {
			if r.digitsTrain, r.digitsTest, err = data.Digits(); err != nil {
				return nil, nil, err
			}
		}
		return r.digitsTrain, r.digitsTest, nil
	case "mnist":
		if r.mnistTrain == nil {
			r.mnistTrain, r.mnistTest, err = data.Load("mnist", r.opt.mnistDir())
			if err != nil {
				return nil, nil, &InputError{fmt.Errorf("MNIST is needed for profile %s (set --data-dir or $%s): %w", r.opt.Profile, data.DataDirEnv, err)}
			}
		}
		return r.mnistTrain, r.mnistTest, nil
	}
	return nil, nil, errors.New("reproduce: unknown data set " + name)
}
