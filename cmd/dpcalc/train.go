package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/atomicfile"
	"github.com/dpcalc/dpcalc/internal/query"
	"github.com/dpcalc/dpcalc/trainer"
	"github.com/dpcalc/dpcalc/trainer/data"
	"github.com/dpcalc/dpcalc/trainer/gemm"
)

// TrainCmd trains an MLP with one of the private (or the non-private)
// methods and reports accuracy and privacy spent.
type TrainCmd struct {
	Dataset         string    `name:"dataset" default:"digits" enum:"digits,mnist,fashion-mnist" help:"Data set: digits (embedded), mnist, fashion-mnist."`
	DataDir         string    `name:"data-dir" placeholder:"DIR" help:"Directory with the idx files (default: $DPCALC_DATA_DIR/<dataset>, or Debian's path for fashion-mnist)."`
	Method          string    `name:"method" default:"dpsgd" enum:"np,dpsgd,dpd,dpvd,sgld" help:"np, dpsgd (Abadi), dpd (DP dropout), dpvd (DP variational dropout), sgld."`
	Hidden          []int     `name:"hidden" default:"1000" placeholder:"WIDTH" help:"Hidden layer widths, comma-separated."`
	PCA             int       `name:"pca" placeholder:"K" help:"Project inputs on the top k principal directions (DP-PCA for private methods; Abadi §4)."`
	PCASigma        float64   `name:"pca-sigma" placeholder:"SIGMA" help:"Noise multiplier σ_p of DP-PCA (Abadi §5.2 uses 7 or 4)."`
	PCAQ            float64   `name:"pca-q" placeholder:"Q" help:"Sampling rate of the DP-PCA sample (default 0.1 private, 1 np)."`
	Lot             int       `name:"lot" placeholder:"L" default:"600" help:"Expected lot size L; q = L/N."`
	Batch           int       `name:"batch" placeholder:"B" help:"Examples per forward/backward pass, to bound memory (default: the lot)."`
	Epochs          int       `name:"epochs" default:"10" help:"Epochs; steps = epochs·⌈N/L⌉."`
	Clip            float64   `name:"clip" placeholder:"C" default:"4" help:"Per-example gradient clipping norm C."`
	LayerClip       []float64 `name:"layer-clip" placeholder:"C" help:"Per-layer clipping norms, one per dense layer (sensitivity √Σ C_l²)."`
	Sigma           float64   `name:"sigma" help:"Noise multiplier σ; with --eps, the run stops at the budget."`
	Eps             float64   `name:"eps" help:"Privacy budget ε: σ is calibrated so all epochs fit, unless --sigma is given."`
	Delta           float64   `name:"delta" default:"1e-5" help:"Budget δ."`
	Acct            string    `name:"accountant" default:"rdp" enum:"ma,rdp,zcdp,ac,dpd-ac,dpd-zcdp,pld" help:"Accountant for calibration, budget and reporting."`
	LR              float64   `name:"lr" placeholder:"ETA" help:"Initial learning rate (method default if 0)."`
	LRFinal         float64   `name:"lr-final" placeholder:"ETA" help:"dpsgd: final learning rate of the linear decay (default 0.052)."`
	Decay           int       `name:"decay-epochs" placeholder:"E" help:"dpsgd: epochs of linear decay (default 10)."`
	Gamma           float64   `name:"gamma" placeholder:"GAMMA" help:"dpd/dpvd/sgld: learning-rate decay exponent in η0/t^γ (default 1)."`
	Sampling        string    `name:"sampling" enum:"poisson,shuffle," default:"" help:"poisson (what the accountants assume; default for private methods) or shuffle (fixed-size lots; NOT what the accountants assume)."`
	Seed            *uint64   `name:"seed" placeholder:"N" help:"Make the run reproducible. The noise is then predictable: not for production."`
	Quiet           bool      `name:"quiet" help:"No progress output on stderr."`
	LogJSON         string    `name:"log-json" placeholder:"FILE" help:"Write one JSON line per epoch to FILE."`
	Checkpoint      string    `name:"checkpoint" placeholder:"FILE" help:"Save model, optimiser and ledger to FILE atomically."`
	CheckpointEvery int       `name:"checkpoint-every" placeholder:"EPOCHS" default:"1" help:"Epochs between checkpoints."`
	Resume          bool      `name:"resume" help:"Continue the run saved in --checkpoint; its ledger keeps every step already spent."`

	stderr io.Writer
}

type trainOutput struct {
	Dataset    string              `json:"dataset"`
	Accountant string              `json:"accountant"`
	Calibrated bool                `json:"sigma_calibrated"`
	Result     *trainer.Result     `json:"result"`
	Epsilons   map[string]*float64 `json:"epsilon_by_accountant"`
	Kernel     string              `json:"matmul_kernel,omitempty"`
	Version    string              `json:"version"`
}

// Run implements the command.
func (c *TrainCmd) Run(e *env) error {
	stderr := c.stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	if c.Resume && c.Checkpoint == "" {
		return usageError("--resume needs --checkpoint FILE")
	}
	if c.Eps != 0 {
		if err := checkFlag("eps", accounting.CheckEpsilon(c.Eps)); err != nil {
			return err
		}
	}
	if c.Sigma != 0 {
		if err := checkFlag("sigma", accounting.CheckNoiseMultiplier(c.Sigma)); err != nil {
			return err
		}
	}
	if err := checkFlag("delta", accounting.CheckDelta(c.Delta)); err != nil {
		return err
	}
	if c.Method != "np" && c.Sigma == 0 && c.Eps == 0 && !c.Resume {
		return usageError("--method %s needs --sigma or --eps", c.Method)
	}
	if c.CheckpointEvery < 1 {
		return usageError("invalid --checkpoint-every: %d, want >= 1", c.CheckpointEvery)
	}
	// Output paths are checked before training, not after the first epoch
	// (a --log-json into a missing directory used to be only a warning per
	// epoch, and a --checkpoint there failed the run after an epoch's work).
	for _, o := range []struct{ flag, path string }{{"log-json", c.LogJSON}, {"checkpoint", c.Checkpoint}} {
		if o.path == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Dir(o.path)); err != nil || !fi.IsDir() {
			return usageError("invalid --%s: %q, its directory %s does not exist", o.flag, o.path, filepath.Dir(o.path))
		}
	}
	if c.Resume {
		if fi, err := os.Stat(c.Checkpoint); err != nil || !fi.Mode().IsRegular() {
			return usageError("invalid --checkpoint: %q, want an existing checkpoint file to --resume", c.Checkpoint)
		}
	}
	dir := c.DataDir
	if dir == "" {
		dir = data.DefaultDir(c.Dataset)
	}
	train, test, err := data.Load(c.Dataset, dir)
	if err != nil {
		return &exitError{code: 2, err: err}
	}

	kind := accounting.Kind(c.Acct)
	newAcc := func() (accounting.Method, error) { return registry.New(kind, registry.Options{}) }
	if c.Method != "np" {
		if _, err := registry.New(kind, registry.Options{}); err != nil {
			return err
		}
	}
	cfg := trainer.Config{
		Method: trainer.Method(c.Method), Hidden: c.Hidden, PCADim: c.PCA,
		PCANoiseMultiplier: c.PCASigma, PCASamplingRate: c.PCAQ,
		LotSize: c.Lot, BatchSize: c.Batch, Epochs: c.Epochs, Sampling: trainer.Sampling(c.Sampling),
		LearningRate: c.LR, LearningRateFinal: c.LRFinal, DecayEpochs: c.Decay, Gamma: c.Gamma,
		ClipNorm: c.Clip, PerLayerClip: c.LayerClip, NoiseMultiplier: c.Sigma, Seed: c.Seed,
	}
	if c.Eps != 0 && cfg.Method.Private() {
		cfg.TargetEpsilon, cfg.TargetDelta = c.Eps, c.Delta
	}
	calibrated := false
	if cfg.Method.Private() && c.Sigma == 0 && !c.Resume {
		// Calibrate σ so the whole run (DP-PCA + every step) fits (ε, δ).
		base := cfg.WithDefaults(train.N)
		base.NoiseMultiplier = 1
		if err := base.Validate(train.N, train.D); err != nil {
			return &exitError{code: 2, err: err}
		}
		res, err := calibrate.SigmaFor(e.ctx,
			newAcc,
			func(s float64) accounting.Event { b := base; b.NoiseMultiplier = s; return b.RunEvent(train.N) },
			c.Eps, c.Delta, calibrate.Options{})

		if err != nil {
			return fmt.Errorf("calibrating σ for ε = %g: %w", c.Eps, err)
		}
		cfg.NoiseMultiplier = res.X
		calibrated = true
	}
	if c.Seed != nil {
		fmt.Fprintf(stderr, "dpcalc: warning: --seed makes the noise reproducible and predictable: not for production use\n")
	}
	if cfg.Sampling == trainer.SamplingShuffle && cfg.Method.Private() {
		fmt.Fprintf(stderr, "dpcalc: warning: --sampling shuffle is not the Poisson sampling the accountants assume; the reported ε is a heuristic\n")
	}

	var logLines bytes.Buffer
	bar := newProgressBar(stderr, c.Quiet)
	opts := trainer.Options{
		ReportDelta:    c.Delta,
		CheckpointPath: c.Checkpoint, CheckpointEvery: c.CheckpointEvery,
		Progress: func(p trainer.Progress) {
			bar.update(p)
			if c.LogJSON != "" {
				// marshalFinite: a diverged loss (NaN) or an infinite ε is
				// logged as null; json.Marshal would fail and leave a blank line.
				b, err := marshalFinite(p)
				if err != nil {
					fmt.Fprintf(stderr, "dpcalc: warning: --log-json: %v\n", err)
					return
				}
				logLines.Write(b)
				logLines.WriteByte('\n')
				// Rewritten whole each epoch, atomically: never half a line.
				if err := atomicfile.WriteFile(c.LogJSON, logLines.Bytes(), 0o644); err != nil {
					fmt.Fprintf(stderr, "dpcalc: warning: --log-json: %v\n", err)
				}
			}
		},
	}
	if c.Method != "np" {
		opts.NewAccountant = newAcc
	}
	var tr *trainer.Trainer
	if c.Resume {
		tr, err = trainer.LoadCheckpoint(c.Checkpoint, train, opts)
	} else {
		tr, err = trainer.New(cfg, train, opts)
	}
	if err != nil {
		bar.done()
		var fe *trainer.FieldError
		if errors.As(err, &fe) {
			return usageError("invalid %s: %v, want %s", flagForField(fe.Field), fe.Value, fe.Want)
		}
		return &exitError{code: 2, err: err}
	}
	res, err := tr.Run(e.ctx, test)
	bar.done()
	if err != nil {
		if e.ctx.Err() != nil && res != nil {
			// Interrupted: keep every step already spent.
			msg := fmt.Sprintf("interrupted after step %d of %d", res.Steps, res.TotalSteps)
			if c.Checkpoint != "" {
				if serr := tr.SaveCheckpoint(c.Checkpoint); serr != nil {
					return fmt.Errorf("%s; saving the checkpoint failed: %w", msg, serr)
				}
				msg += fmt.Sprintf("; checkpoint with its ledger saved to %s (continue with --resume)", c.Checkpoint)
			}
			return errors.New(msg)
		}
		return err
	}
	out := trainOutput{Dataset: c.Dataset, Accountant: c.Acct, Calibrated: calibrated, Result: res, Epsilons: map[string]*float64{}, Kernel: gemm.Kernel(), Version: versionString()}
	if cfg.Method.Private() || c.Resume {
		for _, k := range accounting.Kinds {
			a, err := registry.New(k, registry.Options{})
			if err != nil {
				continue
			}
			if err := res.Ledger.Replay(a); err != nil {
				continue
			}
			if eps, err := a.Epsilon(e.ctx, c.Delta); err == nil {
				out.Epsilons[string(k)] = query.FinitePtr(eps)
			}
		}
		if err := e.ctx.Err(); err != nil {
			return fmt.Errorf("final privacy report: %w", err)
		}
	}
	if e.json {
		return writeJSON(e.stdout, out)
	}
	t := newTable(e.stdout)
	t.Header("quantity", "value")
	rc := res.Config
	t.Append("dataset / method", fmt.Sprintf("%s / %s", c.Dataset, rc.Method))
	t.Append("σ (noise multiplier)", fmt.Sprintf("%s%s", fmtG(res.NoiseMultiplier), map[bool]string{true: " (calibrated)"}[calibrated]))
	t.Append("σ_eff reported to the accountant", fmtG(res.EffectiveNoiseMultiplier))
	t.Append("q, steps", fmt.Sprintf("%s, %d of %d", fmtG(res.SamplingRate), res.Steps, res.TotalSteps))
	t.Append("epochs completed", fmt.Sprint(res.EpochsCompleted))
	t.Append("train accuracy (not private)", fmt.Sprintf("%.4f", res.TrainAccuracy))
	if res.TestAccuracy != nil {
		t.Append("test accuracy", fmt.Sprintf("%.4f", *res.TestAccuracy))
	}
	for _, k := range accounting.Kinds {
		if v, ok := out.Epsilons[string(k)]; ok {
			t.Append(fmt.Sprintf("ε at δ=%g (%s)", c.Delta, k), fmtPtr(v))
		}
	}
	if res.StoppedByBudget {
		t.Append("stopped", "before a step would exceed the budget")
	}
	t.Append("wall time", res.WallTime.Round(time.Millisecond).String())
	t.Append("matmul kernel", out.Kernel)
	return t.Render()
}

// flagForField maps a trainer config field to its flag.
func flagForField(f string) string {
	m := map[string]string{
		"lot_size": "--lot", "batch_size": "--batch", "epochs": "--epochs", "clip_norm": "--clip",
		"per_layer_clip": "--layer-clip", "noise_multiplier": "--sigma", "learning_rate": "--lr",
		"learning_rate_final": "--lr-final", "decay_epochs": "--decay-epochs", "gamma": "--gamma",
		"pca_dim": "--pca", "pca_noise_multiplier": "--pca-sigma", "pca_sampling_rate": "--pca-q",
		"hidden": "--hidden", "method": "--method", "sampling": "--sampling",
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
	if !b.enabled {
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
		eps = fmtG(*p.Epsilon)
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
