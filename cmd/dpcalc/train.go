package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/atomicfile"
	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/internal/render"
	"github.com/dpcalc/dpcalc/internal/work"
	"github.com/dpcalc/dpcalc/trainer"
	"github.com/dpcalc/dpcalc/trainer/data"
	"github.com/dpcalc/dpcalc/trainer/gemm"
)

// trainCmd is cli.TrainCmd with what the command line does: train an MLP
// with one of the private (or the non-private) methods and report accuracy
// and privacy spent.
//
// Flags whose default depends on the data set (lot, hidden, clip, epochs)
// or that a resumed run must not change are pointers: nil means "not
// given", so an explicit 0 can be refused rather than read as "default",
// and --resume can tell a changed setting from an omitted one.
type trainCmd cli.TrainCmd

// trainOutput is what train prints: the run, and its privacy under every
// accountant.
type trainOutput struct {
	Calibrated bool
	Result     *trainer.Result
	// Rows are ε at the report's δ under every accountant, pld's with the
	// interval that contains the run's true ε (for shuffled lots and
	// random allocation its lower end is certified by neighbours that
	// attain part of the run, and the row says so).
	Rows []cli.Row
	// Audit is the one-run audit of a run with --canaries.
	Audit  *auditRunOutput
	Kernel string

	view render.Doc // the table
}

// View implements cli.Result.
func (o *trainOutput) View() render.Doc { return o.view }

// ledgerPath is the write-ahead ledger kept beside a checkpoint.
func ledgerPath(checkpoint string) string { return checkpoint + ".ledger" }

// checkOutputPath checks before any training that path can be written:
// it is not a directory and its directory exists and takes a new file (an
// unwritable directory used to fail the run at its first checkpoint, after
// privacy was spent).
func checkOutputPath(flag, path string) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return usageError("invalid --%s: %q is not a regular file", flag, path)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageError("invalid --%s: %q, its directory %s does not exist", flag, path, dir)
	}
	// The probe is the temporary file an atomic write starts with, aborted.
	f, err := atomicfile.Create(path, 0o600)
	if err != nil {
		return usageError("invalid --%s: %q, its directory %s is not writable: %v", flag, path, dir, errors.Unwrap(err))
	}
	return f.Abort()
}

// positive refuses an explicit flag value ≤ 0 (0 used to mean "default").
func positiveInt(flag string, v *int) error {
	if v != nil && *v < 1 {
		return usageError("invalid --%s: %d, want >= 1", flag, *v)
	}
	return nil
}

func positiveFloat(flag string, v *float64) error {
	if v != nil && (!(*v > 0) || math.IsInf(*v, 0)) {
		return usageError("invalid --%s: %s, want a finite value > 0", flag, accounting.FormatValue(*v))
	}
	return nil
}

func derefI(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func derefF(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// config builds the run's configuration from the data set's defaults and
// the flags given.
func (c *trainCmd) config(n int) trainer.Config {
	m := trainer.Method(c.Method)
	if m == "" {
		m = trainer.MethodDPSGD
	}
	cfg := trainer.DatasetDefaults(c.Dataset, m)
	cfg.Method = m
	if c.Hidden != nil {
		cfg.Hidden = c.Hidden
	}
	if c.Lot != nil {
		cfg.LotSize = *c.Lot
	}
	if c.Epochs != nil {
		cfg.Epochs = *c.Epochs
	}
	if c.Clip != nil {
		cfg.ClipNorm = *c.Clip
	}
	cfg.PCADim, cfg.PCANoiseMultiplier, cfg.PCASamplingRate = derefI(c.PCA), derefF(c.PCASigma), derefF(c.PCAQ)
	cfg.BatchSize, cfg.Sampling, cfg.AllocationK = derefI(c.Batch), trainer.Sampling(c.Sampling), derefI(c.K)
	cfg.ExamplesPerUser = derefI(c.ExamplesPerUser)
	cfg.MaxLotSize = derefI(c.MaxBatch)
	if c.LR != nil {
		if cfg.LearningRateFinal == cfg.LearningRate && cfg.LearningRateFinal != 0 {
			cfg.LearningRateFinal = *c.LR // a constant default stays constant
		}
		cfg.LearningRate = *c.LR
	}
	if c.LRFinal != nil {
		cfg.LearningRateFinal = *c.LRFinal
	}
	cfg.DecayEpochs, cfg.Gamma = derefI(c.Decay), derefF(c.Gamma)
	cfg.PerLayerClip, cfg.NoiseMultiplier, cfg.Seed = c.LayerClip, derefF(c.Sigma), c.Seed
	c.applyCanaries(&cfg)
	if cfg.Method.Private() {
		cfg.Accountant = c.accountant()
		if c.Eps != nil {
			cfg.TargetEpsilon, cfg.TargetDelta = *c.Eps, c.delta()
		}
	}
	return cfg.WithDefaults(n)
}

func (c *trainCmd) accountant() string {
	if c.Acct == "" {
		return string(registry.Default)
	}
	return c.Acct
}

func (c *trainCmd) delta() float64 {
	if c.Delta == nil {
		return 1e-5
	}
	return *c.Delta
}

// resumeConflict returns the first flag given with --resume whose value
// differs from the checkpoint's setting, as "--flag value" and the
// checkpoint's value; "" if there is none. --epochs is not a conflict (it
// is honoured); the output and data-location flags are not settings.
func (c *trainCmd) resumeConflict(ck trainer.Config, n int) (flag, ours, theirs string) {
	type check struct {
		name     string
		given    bool
		mine, ck any
	}
	acct := ck.Accountant
	if acct == "" && ck.Method.Private() {
		acct = string(accounting.KindRDP) // checkpoints from before the field: the CLI default then
	}
	lot := derefI(c.Lot)
	if lot > n {
		lot = n // WithDefaults clamps the lot to N
	}
	checks := []check{
		{"method", c.Method != "", trainer.Method(c.Method), ck.Method},
		{"hidden", c.Hidden != nil, fmt.Sprint(c.Hidden), fmt.Sprint(ck.Hidden)},
		{"pca", c.PCA != nil, derefI(c.PCA), ck.PCADim},
		{"pca-sigma", c.PCASigma != nil, derefF(c.PCASigma), ck.PCANoiseMultiplier},
		{"pca-q", c.PCAQ != nil, derefF(c.PCAQ), ck.PCASamplingRate},
		{"lot", c.Lot != nil, lot, ck.LotSize},
		{"batch", c.Batch != nil, derefI(c.Batch), ck.BatchSize},
		{"clip", c.Clip != nil, derefF(c.Clip), ck.ClipNorm},
		{"layer-clip", c.LayerClip != nil, fmt.Sprint(c.LayerClip), fmt.Sprint(ck.PerLayerClip)},
		{"sigma", c.Sigma != nil, derefF(c.Sigma), ck.NoiseMultiplier},
		{"eps", c.Eps != nil, derefF(c.Eps), ck.TargetEpsilon},
		{"delta", c.Delta != nil && ck.TargetEpsilon > 0, c.delta(), ck.TargetDelta},
		{"accountant", c.Acct != "", c.Acct, acct},
		{"lr", c.LR != nil, derefF(c.LR), ck.LearningRate},
		{"lr-final", c.LRFinal != nil, derefF(c.LRFinal), ck.LearningRateFinal},
		{"decay-epochs", c.Decay != nil, derefI(c.Decay), ck.DecayEpochs},
		{"gamma", c.Gamma != nil, derefF(c.Gamma), ck.Gamma},
		{"sampling", c.Sampling != "", trainer.Sampling(c.Sampling), ck.Sampling},
		{"k", c.K != nil, derefI(c.K), ck.AllocationK},
		{"examples-per-user", c.ExamplesPerUser != nil, max(1, derefI(c.ExamplesPerUser)), max(1, ck.ExamplesPerUser)},
		{"max-batch", c.MaxBatch != nil, derefI(c.MaxBatch), ck.MaxLotSize},
	}
	seed := func(p *uint64) string {
		if p == nil {
			return "none (seeded from crypto/rand)"
		}
		return fmt.Sprint(*p)
	}
	checks = append(checks, check{"seed", c.Seed != nil, seed(c.Seed), seed(ck.Seed)})
	for _, k := range checks {
		if k.given && fmt.Sprint(k.mine) != fmt.Sprint(k.ck) {
			return "--" + k.name, fmt.Sprint(k.mine), fmt.Sprint(k.ck)
		}
	}
	return "", "", ""
}

// Run implements the command.
func (c *trainCmd) Run(e *cli.Env) error {
	stderr := e.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	if c.Resume && c.Checkpoint == "" {
		return usageError("--resume needs --checkpoint FILE")
	}
	if c.Eps != nil {
		if err := cli.CheckFlag("eps", accounting.CheckEpsilon(*c.Eps)); err != nil {
			return err
		}
	}
	if c.Sigma != nil {
		if err := cli.CheckFlag("sigma", accounting.CheckNoiseMultiplier(*c.Sigma)); err != nil {
			return err
		}
	}
	if err := cli.CheckFlag("delta", accounting.CheckDelta(c.delta())); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"lot", c.Lot}, {"batch", c.Batch}, {"epochs", c.Epochs}, {"decay-epochs", c.Decay}, {"k", c.K}, {"examples-per-user", c.ExamplesPerUser}, {"max-batch", c.MaxBatch}} {
		if err := positiveInt(f.name, f.v); err != nil {
			return err
		}
	}
	if c.K != nil && c.Sampling != "random-allocation" {
		return usageError("--k is for --sampling random-allocation (balls-in-bins is k = 1)")
	}
	if c.MaxBatch != nil && c.Sampling != "truncated-poisson" {
		return usageError("--max-batch is for --sampling truncated-poisson")
	}
	if c.MaxBatch == nil && c.Sampling == "truncated-poisson" && !c.Resume {
		return usageError("--sampling truncated-poisson needs --max-batch B, the largest lot")
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"clip", c.Clip}, {"pca-q", c.PCAQ}, {"pca-sigma", c.PCASigma}, {"lr", c.LR}, {"lr-final", c.LRFinal}, {"gamma", c.Gamma}} {
		if err := positiveFloat(f.name, f.v); err != nil {
			return err
		}
	}
	if c.PCA != nil && *c.PCA < 0 {
		return usageError("invalid --pca: %d, want >= 0 (0 = no projection)", *c.PCA)
	}
	if c.Method != "np" && c.Sigma == nil && c.Eps == nil && !c.Resume {
		m := c.Method
		if m == "" {
			m = "dpsgd"
		}
		return usageError("--method %s needs --sigma or --eps (a noise multiplier, or a privacy budget to calibrate σ for); e.g. dpcalc train --dataset %s --method %s --eps 1", m, c.Dataset, m)
	}
	if err := c.checkCanaries(); err != nil {
		return err
	}
	if c.CheckpointEvery < 1 {
		return usageError("invalid --checkpoint-every: %d, want >= 1", c.CheckpointEvery)
	}
	// Output paths are checked before training, not after the first epoch.
	outs := []struct{ flag, path string }{{"log-json", c.LogJSON}, {"checkpoint", c.Checkpoint}}
	if c.Checkpoint != "" {
		outs = append(outs, struct{ flag, path string }{"checkpoint", ledgerPath(c.Checkpoint)})
	}
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if err := checkOutputPath(o.flag, o.path); err != nil {
			return err
		}
	}
	if err := c.checkDistinctFiles(); err != nil {
		return err
	}
	// After a first interrupt (e.Ctx done), the privacy statement is
	// computed under hard, which a second one cancels.
	hard, release := afterInterrupt(e.Ctx)
	defer release()
	// Lock the outputs for the whole run: two runs resuming one checkpoint
	// would each spend its remaining steps while reporting only their own.
	if c.Checkpoint != "" {
		l, err := trainer.LockOutput(c.Checkpoint, ledgerPath(c.Checkpoint))
		if err != nil {
			return lockError("checkpoint", err)
		}
		defer l.Unlock()
	}
	if c.LogJSON != "" {
		l, err := trainer.LockOutput(c.LogJSON)
		if err != nil {
			return lockError("log-json", err)
		}
		defer l.Unlock()
	}
	// Under the path locks: what the files hold, the run id's lock, and
	// whether the ledger holds everything released before.
	bk, err := c.openBooks()
	if err != nil {
		return err
	}
	defer bk.unlock()
	resumeCk := bk.checkpoint != nil
	if bk.spent != nil && c.Method != "np" && c.Sigma == nil && c.Eps == nil {
		return usageError("--resume without the checkpoint %s trains a fresh model that continues its ledger, and needs the run's settings: --sigma or --eps (a budget then counts the %d entries already spent)", c.Checkpoint, bk.spent.Len())
	}
	if bk.spent != nil {
		h, _ := bk.spent.Head()
		fmt.Fprintf(stderr, "dpcalc: note: %s does not exist, but its ledger %s records %d entries (head %s) of privacy already spent: a fresh model is trained and the ledger continues\n",
			c.Checkpoint, ledgerPath(c.Checkpoint), bk.spent.Len(), shortHead(h))
	}
	dir := c.DataDir
	if dir == "" {
		dir = data.DefaultDir(c.Dataset)
	}
	train, test, err := data.Load(c.Dataset, dir)
	if err != nil {
		return exitErr(cli.ExitUsage, err)
	}

	n := train.N + c.canaryCount() // canary slots count as data
	cfg := c.config(n)
	reportDelta := c.delta()
	if resumeCk {
		// The checkpoint's settings are the run's; a flag may only repeat
		// them (or, for --epochs, extend the run).
		ck := bk.checkpoint.Config
		if fl, ours, theirs := c.resumeConflict(ck, train.N); fl != "" {
			return usageError("--resume: %s %s differs from the checkpoint's %s; a resumed run keeps its settings (start a new run to change them)", fl, ours, theirs)
		}
		cfg = ck
		if cfg.Method.Private() && cfg.Accountant == "" {
			cfg.Accountant = string(accounting.KindRDP)
		}
		if c.Delta == nil && ck.TargetDelta > 0 {
			reportDelta = ck.TargetDelta
		}
	}
	kind := accounting.Kind(cfg.Accountant)
	newAcc := func() (accounting.Method, error) {
		return registry.New(kind, registry.Options{Adjacency: cfg.Adjacency()})
	}
	if cfg.Method.Private() {
		if _, err := newAcc(); err != nil {
			return exitErr(cli.ExitUsage, err)
		}
	}
	calibrated := false
	if cfg.Method.Private() && c.Sigma == nil && !resumeCk {
		// Calibrate σ so the whole run (DP-PCA + every step) fits (ε, δ),
		// after what a continued ledger already spent.
		base := cfg
		base.NoiseMultiplier = 1
		if err := base.Validate(n, train.D); err != nil {
			return fieldError(err)
		}
		run := func(s float64) accounting.Event {
			b := base
			b.NoiseMultiplier = s
			if bk.spent != nil {
				return accounting.Composed{Events: []accounting.Event{bk.spent.Event(), b.RunEvent(n)}}
			}
			return b.RunEvent(n)
		}
		var res calibrate.Result
		var err error
		if kind == accounting.KindPLD {
			// As the sigma command does: pld's search seeded by rdp's σ
			// (fewer pld queries, the same contract and the same σ).
			rdp := func() (accounting.Method, error) {
				return registry.New(accounting.KindRDP, registry.Options{Adjacency: cfg.Adjacency()})
			}
			res, _, err = calibrate.SigmaSeeded(e.Ctx, newAcc, rdp, run, *c.Eps, c.delta(), calibrate.Options{})
		} else {
			res, err = calibrate.SigmaFor(e.Ctx, newAcc, run, *c.Eps, c.delta(), calibrate.Options{})
		}
		if err != nil {
			if e.Ctx.Err() != nil {
				return c.interruptedBeforeStart(e, hard, fmt.Sprintf("stopped while calibrating σ for ε = %g", *c.Eps), bk.spent, cfg, n, err)
			}
			return fmt.Errorf("calibrating σ for ε = %g: %w", *c.Eps, err)
		}
		cfg.NoiseMultiplier = res.X
		calibrated = true
	}

	// The log: one JSON line per epoch, rewritten whole and atomically each
	// epoch (never half a line). A resume appends to what the interrupted
	// sessions released (a trailing partial line, which an atomic writer
	// cannot leave, is dropped all the same).
	var logLines bytes.Buffer
	if c.Resume && c.LogJSON != "" {
		old, err := os.ReadFile(c.LogJSON)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return usageError("invalid --log-json: %v", err)
		}
		if i := bytes.LastIndexByte(old, '\n'); i >= 0 {
			logLines.Write(old[:i+1])
		}
	}
	bar := newProgressBar(stderr, c.Quiet)
	opts := trainer.Options{
		ReportDelta:    reportDelta,
		CheckpointPath: c.Checkpoint, CheckpointEvery: c.CheckpointEvery,
		Progress: bar.update,
		RunID:    bk.runID,
		Spent:    bk.spent,
	}
	if c.Checkpoint != "" {
		opts.LedgerPath = ledgerPath(c.Checkpoint)
		opts.Committed = func(m accounting.Mark) error {
			// The registry records each state written, before it is
			// released: a later resume of an older copy is refused.
			for _, l := range bk.locks {
				if err := l.SetMark(trainer.RunMark{RunID: bk.runID, Mark: m, Ledger: bk.ledgerAbs}); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if c.LogJSON != "" {
		opts.Release = func(p trainer.Progress) error {
			// marshalFinite: a diverged loss (NaN) or an infinite ε is
			// logged as null; json.Marshal would fail and leave a blank line.
			b, err := render.MarshalFinite(p)
			if err != nil {
				return fmt.Errorf("--log-json: %w", err)
			}
			n := logLines.Len()
			logLines.Write(b)
			logLines.WriteByte('\n')
			if err := atomicfile.WriteFile(c.LogJSON, logLines.Bytes(), 0o644); err != nil {
				logLines.Truncate(n)
				return fmt.Errorf("--log-json: %w", err)
			}
			return nil
		}
	}
	if cfg.Method.Private() {
		opts.NewAccountant = newAcc
	}
	var tr *trainer.Trainer
	if resumeCk {
		tr, err = trainer.LoadCheckpoint(c.Checkpoint, train, opts)
		if err == nil && c.Epochs != nil {
			err = tr.SetEpochs(*c.Epochs)
		}
	} else {
		if c.Seed != nil {
			fmt.Fprintf(stderr, "dpcalc: warning: --seed makes the noise reproducible and predictable: not for production use\n")
		}
		if cfg.Sampling == trainer.SamplingShuffle && cfg.Method.Private() {
			fmt.Fprintf(stderr, "dpcalc: note: shuffled lots are accounted under replace-one adjacency without amplification by sampling (a certified but larger ε than Poisson's); see dpcalc eps --sampling shuffle\n")
		}
		tr, err = trainer.New(cfg, train, opts)
	}
	if err != nil {
		bar.done()
		var fe *trainer.FieldError
		if errors.As(err, &fe) {
			return fieldError(err)
		}
		return exitErr(cli.ExitUsage, err)
	}
	if rc := tr.Config(); !resumeCk && (rc.Sampling == trainer.SamplingRandomAllocation || rc.Sampling == trainer.SamplingBallsInBins) && rc.Method.Private() {
		fmt.Fprintf(stderr, "dpcalc: note: each example is in %d of the %d steps of an epoch; the ledger pays one random-allocation event per epoch; see dpcalc eps --sampling %s\n", max(1, rc.AllocationK), rc.StepsPerEpoch(n), rc.Sampling)
	}
	res, err := tr.Run(e.Ctx, test)
	bar.done()
	if err != nil {
		if e.Ctx.Err() != nil {
			return c.interrupted(e, hard, tr, n, reportDelta, e.Ctx.Err())
		}
		return c.failed(err)
	}
	if c.Checkpoint != "" {
		h, _ := res.Ledger.Head()
		fmt.Fprintf(stderr, "dpcalc: note: ledger %s: %d entries, head %s\n", ledgerPath(c.Checkpoint), res.Ledger.Len(), h)
	}
	rc := res.Config
	out := &trainOutput{Calibrated: calibrated, Result: res, Kernel: gemm.Kernel()}
	if rc.Method.Private() {
		accts := cli.Accountants{Adjacency: rc.Adjacency()}
		ev := res.Ledger.Event()
		for _, k := range registry.Kinds() {
			r := accts.NewEventRow(k, ev)
			r.Sigma, r.Q, r.Steps = res.NoiseMultiplier, res.SamplingRate, res.Steps
			r.Epochs = float64(res.EpochsCompleted)
			if rc.ExamplesPerUser > 1 {
				r.ExamplesPerUser, r.Sampling = rc.ExamplesPerUser, "poisson" // the mixture states the sampling
				r.Note = cli.JoinNotes(r.Note, fmt.Sprintf("user-level: ε for adding or removing one user with at most %d examples", rc.ExamplesPerUser))
			}
			r.Fill(e.Ctx, accts.Factory(k), reportDelta, 0)
			if r.Error != "" || r.Unsupported != "" {
				continue // as before: every accountant that bounds the run
			}
			out.Rows = append(out.Rows, r)
		}
		if err := e.Ctx.Err(); err != nil {
			// Every step ran; the report of them was interrupted.
			return c.interrupted(e, hard, tr, n, reportDelta, err)
		}
	}
	if out.Audit, err = c.canaryReport(e.Ctx, res, reportDelta); err != nil {
		if e.Ctx.Err() != nil {
			return c.interrupted(e, hard, tr, n, reportDelta, e.Ctx.Err())
		}
		return err
	}
	t := out.view.Table("quantity", "value")
	t.Append("dataset / method", fmt.Sprintf("%s / %s", c.Dataset, rc.Method))
	t.Append("σ (noise multiplier)", fmt.Sprintf("%s%s", render.Up(res.NoiseMultiplier), map[bool]string{true: " (calibrated)"}[calibrated]))
	t.Append("σ_eff reported to the accountant", render.G(res.EffectiveNoiseMultiplier))
	t.Append("q, steps", fmt.Sprintf("%s, %d of %d", render.G(res.SamplingRate), res.Steps, res.TotalSteps))
	if rc.ExamplesPerUser > 1 && rc.Method.Private() {
		t.Append("privacy unit", fmt.Sprintf("a user with at most %d examples (user-level ε)", rc.ExamplesPerUser))
	}
	if rc.Adjacency() == accounting.ReplaceOne {
		t.Append("adjacency", "replace-one (shuffled lots: one Shuffled epoch per ledger entry, σ_eff/2 per epoch, no amplification)")
	}
	unit := rc.LedgerUnit(n)
	if n, paid := res.Ledger.Len(), (res.Steps+unit-1)/unit; rc.PCADim == 0 && n != paid || rc.PCADim > 0 && n != paid+1 {
		why := "steps redone after a resume are paid again"
		if bk.spent != nil {
			why = "the ledger continued holds the entries of a model lost before its first checkpoint"
		}
		t.Append("ledger entries", fmt.Sprintf("%d (%s)", n, why))
	}
	t.Append("epochs completed", fmt.Sprint(res.EpochsCompleted))
	t.Append("train accuracy (not private)", fmt.Sprintf("%.4f", res.TrainAccuracy))
	if res.TestAccuracy != nil {
		t.Append("test accuracy", fmt.Sprintf("%.4f", *res.TestAccuracy))
	}
	starred := false
	for _, r := range out.Rows {
		eps := render.Ptr(r.Epsilon, render.Up)
		if r.EpsilonLower != nil && r.EpsilonUpper != nil {
			// A lower end marked * is certified for the run by neighbours
			// that attain part of it (shuffled lots, random allocation);
			// the dominating pair's own lower end bounds only the pair.
			mark := ""
			if r.PairEpsilonLower != nil {
				mark, starred = "*", true
			}
			eps += fmt.Sprintf(" [%s%s, %s]", render.Down(*r.EpsilonLower), mark, render.Up(*r.EpsilonUpper))
		}
		t.Append(fmt.Sprintf("ε at δ=%g (%s)", reportDelta, r.Accountant), eps)
	}
	if starred {
		t.Append("*", "lower end certified for the run by neighbours that attain part of it")
	}
	if res.StoppedByBudget {
		t.Append("stopped", "before a step would exceed the budget")
	}
	if out.Audit != nil {
		appendAuditRows(t, out.Audit)
	}
	t.Append("wall time", res.WallTime.Round(time.Millisecond).String())
	t.Append("matmul kernel", out.Kernel)
	e.Print(out)
	return nil
}

// interrupted handles a run stopped by SIGINT or SIGTERM: it leaves either
// nothing (no privacy was spent and no file of the run exists) or a
// checkpoint with its ledger that --resume continues, and says which; and
// it states the privacy the run has spent (see [spentOf]), on stderr and
// on stdout (a table, or with --json an object with the usual "error"),
// with or without a checkpoint. hard is the context a second interrupt
// cancels (see [afterInterrupt]).
func (c *trainCmd) interrupted(e *cli.Env, hard context.Context, tr *trainer.Trainer, n int, delta float64, cause error) error {
	cfg := tr.Config()
	led := tr.Ledger()
	out := interruptOutput{Dataset: c.Dataset, Step: tr.Step(), TotalSteps: cfg.TotalSteps(n), Ledger: led}
	msg := fmt.Sprintf("stopped after step %d of %d", out.Step, out.TotalSteps)
	files := ""
	if c.Checkpoint != "" {
		lp := ledgerPath(c.Checkpoint)
		switch {
		case led.Len() == 0 && !exists(c.Checkpoint) && !exists(lp):
			msg += ", before any privacy was spent: no checkpoint or ledger was written (start the run again)"
		default:
			if err := tr.SaveCheckpoint(c.Checkpoint); err != nil {
				files = fmt.Sprintf("; saving the checkpoint failed: %v%s", err, c.advice())
				break
			}
			h, _ := led.Head()
			out.Checkpoint, out.LedgerFile = c.Checkpoint, lp
			files = fmt.Sprintf("; checkpoint saved to %s with its ledger %s (%d entries, head %s): continue with --resume", c.Checkpoint, lp, led.Len(), shortHead(h))
		}
	}
	out.Spent = spentOf(hard, led, cfg, delta)
	return c.reportInterrupt(e, &out, fmt.Errorf("%s; %s%s: %w", msg, out.Spent.sentence(), files, cause))
}

// interruptedBeforeStart handles a run stopped by SIGINT or SIGTERM before
// its trainer was built (during σ calibration): this session spent nothing
// and wrote no file, and the message says so, as [trainCmd.interrupted]
// does. spent is the ledger the run continues (nil for a new run): the
// privacy spent is its.
func (c *trainCmd) interruptedBeforeStart(e *cli.Env, hard context.Context, msg string, spent *accounting.Ledger, cfg trainer.Config, n int, cause error) error {
	led := spent
	if led == nil {
		led = &accounting.Ledger{}
	}
	out := interruptOutput{Dataset: c.Dataset, TotalSteps: cfg.TotalSteps(n), Ledger: led}
	switch {
	case c.Checkpoint == "":
	case !exists(c.Checkpoint) && !exists(ledgerPath(c.Checkpoint)):
		msg += ", before any privacy was spent: no checkpoint or ledger was written (start the run again)"
	default:
		msg += ", before this session spent any privacy: its files are as they were" + c.advice()
		if exists(ledgerPath(c.Checkpoint)) {
			out.LedgerFile = ledgerPath(c.Checkpoint)
		}
	}
	out.Spent = spentOf(hard, led, cfg, c.delta())
	return c.reportInterrupt(e, &out, fmt.Errorf("%s; %s: %w", msg, out.Spent.sentence(), cause))
}

// reportInterrupt makes what an interrupted run spent the command's output
// (printed on stdout after it returns: with --json the object with err's
// message as its "error", else a table) and returns err, which cli.Execute
// prints on stderr (exit 130).
func (c *trainCmd) reportInterrupt(e *cli.Env, out *interruptOutput, err error) error {
	out.Interrupted = true
	t := out.view.Table("quantity", "value")
	t.Append("interrupted", fmt.Sprintf("after step %d of %d", out.Step, out.TotalSteps))
	sp := &out.Spent
	t.Append("ledger entries", fmt.Sprint(sp.LedgerLen))
	t.Append(fmt.Sprintf("ε spent at δ=%g", sp.Delta), sp.value())
	if sp.Note != "" {
		t.Append("note", sp.Note)
	}
	if out.Checkpoint != "" {
		t.Append("checkpoint (continue with --resume)", out.Checkpoint)
	}
	e.Print(out)
	return err
}

// interruptOutput is what train prints on stdout when SIGINT or SIGTERM
// stopped it (exit 130 all the same): a table, or with --json the one
// object whose row is the privacy spent and whose "training" is an
// [interruptRun].
type interruptOutput struct {
	Interrupted bool
	Dataset     string
	// Step is the steps taken over all sessions, of TotalSteps.
	Step       int
	TotalSteps int
	Spent      spentReport
	// Checkpoint and LedgerFile are the files the run can be resumed
	// from, when they exist.
	Checkpoint string
	LedgerFile string
	// Ledger is every mechanism the run applied (what Spent accounts).
	Ledger *accounting.Ledger

	view render.Doc // the table
}

// interruptRun is the "training" object of an interrupted run's --json
// output.
type interruptRun struct {
	Interrupted bool `json:"interrupted"`
	// Accountant is the run's accountant (absent for --method np).
	Accountant string `json:"accountant,omitempty"`
	Step       int    `json:"step"`
	TotalSteps int    `json:"total_steps"`
	Checkpoint string `json:"checkpoint,omitempty"`
	LedgerFile string `json:"ledger_file,omitempty"`
	// LedgerLen and LedgerHead are the ledger's state the row accounts.
	LedgerLen  int                `json:"ledger_len"`
	LedgerHead string             `json:"ledger_head,omitempty"`
	Ledger     *accounting.Ledger `json:"ledger"`
}

// FillOutput implements cli.Outputter: one row, the ε spent (by the
// accountant whose bound it is), and the run's state.
func (o *interruptOutput) FillOutput(out *cli.Output) {
	sp := &o.Spent
	r := cli.OutputRow{Accountant: sp.From, Quantity: "epsilon", Value: sp.Epsilon, Epsilon: sp.Epsilon, Delta: &sp.Delta, Steps: &o.Step, Note: sp.Note}
	if r.Accountant == "" {
		r.Accountant = sp.Accountant
	}
	if sp.EpsilonLower != nil {
		r.EpsilonLower, r.EpsilonUpper = sp.EpsilonLower, sp.Epsilon
	}
	if sp.From != "" && sp.From != sp.Accountant {
		r.Note = cli.JoinNotes(r.Note, "the run's accountant is "+sp.Accountant)
	}
	out.Rows = append(out.Rows, r)
	b, err := render.MarshalFinite(interruptRun{Interrupted: o.Interrupted, Accountant: sp.Accountant, Step: o.Step, TotalSteps: o.TotalSteps,
		Checkpoint: o.Checkpoint, LedgerFile: o.LedgerFile, LedgerLen: sp.LedgerLen, LedgerHead: sp.LedgerHead, Ledger: o.Ledger})
	if err == nil {
		out.Training = b
	}
}

// View implements cli.Result.
func (o *interruptOutput) View() render.Doc { return o.view }

// spentReport is the privacy an interrupted run has spent: ε at the run's
// δ of its whole ledger.
type spentReport struct {
	// Accountant is the run's accountant; From the one whose bound
	// Epsilon is (pld's certificate may be its RDP bound; rdp when the
	// run's accountant gave no answer within bounded work, see Note).
	Accountant string `json:"accountant,omitempty"`
	From       string `json:"bound_from,omitempty"`
	// Epsilon is the upper bound on ε at Delta (null when it could not
	// be computed or is unbounded, see Note); EpsilonLower the certified
	// lower bound where the accountant gives one (pld).
	Epsilon      *float64 `json:"epsilon"`
	EpsilonLower *float64 `json:"epsilon_lower,omitempty"`
	Delta        float64  `json:"delta"`
	// LedgerLen and LedgerHead are the ledger's state accounted.
	LedgerLen  int    `json:"ledger_len"`
	LedgerHead string `json:"ledger_head,omitempty"`
	Note       string `json:"note,omitempty"`
}

// bound formats the ε, "≤ hi" or "in [lo, hi]" for a certified interval
// (hi rounded up, lo down: render.Up, render.Down), and says whose bound it
// is.
func (s *spentReport) bound() (eps, source string) {
	switch {
	case s.Epsilon == nil:
		return "", ""
	case s.LedgerLen == 0:
		return "0", "nothing spent"
	case s.EpsilonLower != nil:
		return fmt.Sprintf("in [%s, %s]", render.Down(*s.EpsilonLower), render.Up(*s.Epsilon)), s.From + " certified interval"
	}
	return "≤ " + render.Up(*s.Epsilon), s.From + " upper bound"
}

// value is the table's cell: the bound and its source.
func (s *spentReport) value() string {
	eps, source := s.bound()
	if eps == "" {
		return "not known (see the note)"
	}
	return eps + " (" + source + ")"
}

// sentence says what was spent, for the error line.
func (s *spentReport) sentence() string {
	eps, source := s.bound()
	switch {
	case s.LedgerLen == 0 && eps != "":
		return "privacy spent: none (the ledger is empty)"
	case eps == "":
		return fmt.Sprintf("privacy spent: %s (ledger of %d entries)", s.Note, s.LedgerLen)
	}
	note := ""
	if s.Note != "" {
		note = "; " + s.Note
	}
	return fmt.Sprintf("privacy spent: ε %s at δ = %g (%s; ledger of %d entries%s)", eps, s.Delta, source, s.LedgerLen, note)
}

// spentWorkLimit bounds the work (internal/work units) of the ε computed
// after an interrupt with the run's accountant: past it, rdp's upper bound
// is reported instead. pld answers DP-SGD runs of 1e5 steps in about 2000
// units, 1e6 steps in about 6400 (1.6 s); rdp in about 160 whatever the
// length.
var spentWorkLimit int64 = 10000

// spentFallbackWorkLimit bounds rdp's work when it stands in.
var spentFallbackWorkLimit int64 = 10000

// spentHook, if set, runs before that computation (tests: a second
// interrupt arrives during it).
var spentHook func(ctx context.Context)

// spentOf returns what the ledger led of a run with configuration cfg has
// spent at δ = delta: the run's accountant's certified interval where it
// gives one (pld's EpsilonBounds), else its upper bound; rdp's upper bound
// if the run's accountant gives no answer within spentWorkLimit units of
// work. ctx is not the run's (cancelled by then) but one a second
// interrupt cancels: then ε is not known and Note says so.
func spentOf(ctx context.Context, led *accounting.Ledger, cfg trainer.Config, delta float64) spentReport {
	r := spentReport{Accountant: cfg.Accountant, Delta: delta, LedgerLen: led.Len()}
	r.LedgerHead, _ = led.Head()
	if !cfg.Method.Private() {
		r.Accountant = ""
		r.Note = "the method np adds no noise: no privacy guarantee"
		return r
	}
	if r.Accountant == "" {
		r.Accountant = string(accounting.KindRDP)
	}
	if r.LedgerLen == 0 {
		zero := 0.0
		r.Epsilon, r.From = &zero, r.Accountant
		return r
	}
	if spentHook != nil {
		spentHook(ctx)
	}
	kind := accounting.Kind(r.Accountant)
	lo, hi, from, err := boundedEpsilon(ctx, kind, cfg.Adjacency(), led, delta, spentWorkLimit)
	if err != nil && ctx.Err() == nil && kind != accounting.KindRDP {
		why := fmt.Sprintf("%s gave no answer within %d units of work", kind, spentWorkLimit)
		if !errors.Is(err, work.ErrLimit) {
			why = fmt.Sprintf("%s failed (%v)", kind, err)
		}
		r.Note = why + "; ε is rdp's upper bound"
		lo, hi, from, err = boundedEpsilon(ctx, accounting.KindRDP, cfg.Adjacency(), led, delta, spentFallbackWorkLimit)
	}
	switch {
	case ctx.Err() != nil:
		r.Note = "ε could not be computed: interrupted again while computing it"
		return r
	case err != nil:
		r.Note = fmt.Sprintf("ε could not be computed: %v", err)
		return r
	}
	r.From, r.Epsilon, r.EpsilonLower = string(from), cli.FinitePtr(hi), lo
	if r.Epsilon == nil {
		r.Note = strings.TrimPrefix(r.Note+"; ", "; ") + "no finite bound"
	}
	return r
}

// boundedEpsilon replays led into a fresh accountant of kind and returns
// its bound on ε(delta) (with the certified lower bound where it gives
// one, and the accountant whose certificate the upper bound is), giving up
// with an error wrapping work.ErrLimit past limit units of work.
func boundedEpsilon(ctx context.Context, kind accounting.Kind, adj accounting.Adjacency, led *accounting.Ledger, delta float64, limit int64) (lower *float64, upper float64, from accounting.Kind, err error) {
	acc, err := registry.New(kind, registry.Options{Adjacency: adj})
	if err != nil {
		return nil, 0, "", err
	}
	if err := led.Replay(acc); err != nil {
		return nil, 0, "", err
	}
	wctx := work.With(ctx, work.NewMeter(limit))
	if b, ok := acc.(interface {
		EpsilonBoundsFrom(context.Context, float64) (float64, float64, accounting.Kind, error)
	}); ok {
		lo, hi, from, err := b.EpsilonBoundsFrom(wctx, delta)
		if err != nil {
			return nil, 0, "", err
		}
		return cli.FinitePtr(lo), hi, from, nil
	}
	hi, err := acc.Epsilon(wctx, delta)
	return nil, hi, kind, err
}

// afterInterrupt returns a context that a SIGINT or SIGTERM arriving after
// ctx is done cancels (the second interrupt of a command whose ctx the
// first one cancelled: the work that follows the first, such as the
// privacy statement, stops at it), and the function that releases it.
var afterInterrupt = func(ctx context.Context) (context.Context, context.CancelFunc) {
	hard, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-ctx.Done():
		case <-hard.Done():
			return
		}
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(ch)
		select {
		case <-ch:
			cancel()
		case <-hard.Done():
		}
	}()
	return hard, cancel
}

// failed adds to a run's error what its files allow: the advice matches
// the files that exist.
func (c *trainCmd) failed(err error) error {
	if c.Checkpoint == "" {
		return err
	}
	return fmt.Errorf("%w%s", err, c.advice())
}

// advice says what the run's files on disk allow.
func (c *trainCmd) advice() string {
	lp := ledgerPath(c.Checkpoint)
	led, lerr := accounting.LoadLedger(lp)
	switch {
	case lerr != nil && exists(c.Checkpoint):
		return fmt.Sprintf(" (the checkpoint %s is there; continue with --resume)", c.Checkpoint)
	case lerr != nil:
		return " (no ledger was written, so nothing was released)"
	case exists(c.Checkpoint):
		return fmt.Sprintf(" (every step released so far is in the ledger %s, %d entries; continue with --resume)", lp, led.Len())
	}
	return fmt.Sprintf(" (every step released so far is in the ledger %s, %d entries; no checkpoint was written: --resume trains a fresh model that continues this ledger)", lp, led.Len())
}

// fieldError turns a trainer.FieldError into a usage error naming the flag.
func fieldError(err error) error {
	var fe *trainer.FieldError
	if errors.As(err, &fe) {
		return usageError("invalid %s: %v, want %s", flagForField(fe.Field), fe.Value, fe.Want)
	}
	return exitErr(cli.ExitUsage, err)
}

func lockError(flag string, err error) error {
	if errors.Is(err, trainer.ErrLocked) {
		return usageError("--%s: %v; another run is using it (wait for it, or use another file)", flag, err)
	}
	return exitErr(cli.ExitUsage, err)
}

// flagForField maps a trainer config field to its flag.
func flagForField(f string) string {
	m := map[string]string{
		"lot_size": "--lot", "batch_size": "--batch", "epochs": "--epochs", "clip_norm": "--clip",
		"per_layer_clip": "--layer-clip", "noise_multiplier": "--sigma", "learning_rate": "--lr",
		"learning_rate_final": "--lr-final", "decay_epochs": "--decay-epochs", "gamma": "--gamma",
		"pca_dim": "--pca", "pca_noise_multiplier": "--pca-sigma", "pca_sampling_rate": "--pca-q",
		"hidden": "--hidden", "method": "--method", "sampling": "--sampling", "allocation_k": "--k", "examples_per_user": "--examples-per-user", "max_lot_size": "--max-batch",
		"target_epsilon": "--eps", "target_delta": "--delta",
	}
	if fl, ok := m[f]; ok {
		return fl
	}
	return f
}

// progressBar prints one updating line on a terminal, nothing otherwise.
type progressBar struct {
	w       io.Writer
	enabled bool
	last    int
}

func newProgressBar(w io.Writer, quiet bool) *progressBar {
	enabled := false
	if f, ok := w.(*os.File); ok && !quiet {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			enabled = true
		}
	}
	return &progressBar{w: w, enabled: enabled}
}

func (b *progressBar) update(p trainer.Progress) {
	if b == nil || !b.enabled {
		return
	}
	frac := float64(p.Step) / math.Max(1, float64(p.MaxSteps))
	n := int(frac * 20)
	eta := "-"
	if p.Step > 0 && p.MaxSteps > p.Step {
		eta = (time.Duration(float64(p.Elapsed) / float64(p.Step) * float64(p.MaxSteps-p.Step))).Round(time.Second).String()
	}
	test, eps := "-", "-"
	if p.TestAccuracy != nil {
		test = fmt.Sprintf("%.4f", *p.TestAccuracy)
	}
	if p.Epsilon != nil {
		eps = render.Up(*p.Epsilon)
	}
	line := fmt.Sprintf("\r[%s%s] epoch %d/%d step %d/%d loss %.4f train %.4f test %s ε %s ETA %s",
		strings.Repeat("#", n), strings.Repeat(".", 20-n), p.Epoch, p.Epochs, p.Step, p.MaxSteps, p.Loss, p.TrainAccuracy, test, eps, eta)
	if pad := b.last - len(line); pad > 0 {
		line += strings.Repeat(" ", pad)
	}
	b.last = len(line)
	fmt.Fprint(b.w, line)
}

func (b *progressBar) done() {
	if b.enabled && b.last > 0 {
		fmt.Fprintln(b.w)
	}
}
