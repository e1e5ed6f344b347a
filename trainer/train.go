package trainer

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"slices"
	"time"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/search"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// Options are the non-serialisable parts of a run: callbacks, the
// accountant factory and checkpointing. The zero value is valid.
type Options struct {
	// Progress, if non-nil, is called after every epoch (and once after the
	// final step). It runs on the training goroutine.
	Progress func(Progress)
	// NewAccountant returns a fresh accountant. Required when
	// Config.TargetEpsilon > 0; if set, Progress and Result report ε spent.
	NewAccountant func() (accounting.Method, error)
	// ReportDelta is the δ at which ε spent is reported; default
	// Config.TargetDelta, else 1e-5.
	ReportDelta float64
	// CheckpointPath and CheckpointEvery: if both set, a checkpoint is
	// written atomically after every CheckpointEvery-th epoch and after the
	// last one.
	CheckpointPath  string
	CheckpointEvery int
	// LedgerPath, if set, is the run's write-ahead ledger file. Before
	// anything that depends on a step is released (a Progress or Release
	// call, the Result Run returns) and before every checkpoint, the ledger
	// holding that step is written there with [accounting.SaveLedger]
	// (temporary file, fsync, rename, directory fsync). See [Trainer.Run] for
	// what counts as released and why the checkpoint is not enough.
	LedgerPath string
	// Release, if non-nil, is called after Progress with the same value; an
	// error stops the run (Run returns it). Use it for outputs that must
	// not silently miss an epoch, such as a JSON log.
	Release func(Progress) error
	// RunID, if set, makes the run's ledger a hash chain with this id (see
	// [accounting.Ledger]): [New] starts the ledger with it, and
	// [LoadCheckpoint] gives it to a ledger from before chains (an
	// unchained ledger becomes the first entries of the chain); a chained
	// ledger with another id is refused. Progress then carries the head.
	RunID string
	// Spent, if set, is the ledger of earlier sessions of this run whose
	// model was lost (they stopped before their first checkpoint): [New]
	// continues it instead of starting an empty one, so its entries stay
	// paid and count towards the budget. The new model's DP-PCA and steps
	// are appended. Its RunID, if any, must equal Options.RunID.
	Spent *accounting.Ledger
	// Committed, if non-nil, is called after each write of the ledger file
	// (Options.LedgerPath) with the state written, before the checkpoint
	// and before anything depending on it is released; an error stops the
	// run. Use it to record the state elsewhere (the CLI's run registry).
	Committed func(accounting.Mark) error
	// AuditConfidence is the confidence of a run with canaries' audit
	// bounds (Config.Canaries); 0 means 0.95. The bounds are at
	// ReportDelta.
	AuditConfidence float64
}

// Progress reports a finished epoch. Loss and TrainAccuracy are computed on
// the private training data without noise: they are for the operator's
// monitoring, are not covered by the privacy guarantee, and must not be
// published as part of a private release.
type Progress struct {
	Epoch      int `json:"epoch"` // epochs completed, 1-based
	Epochs     int `json:"epochs"`
	Step       int `json:"step"` // steps completed
	TotalSteps int `json:"total_steps"`
	// MaxSteps is the last step the privacy budget allows (TotalSteps when
	// there is no budget).
	MaxSteps int `json:"max_steps"`
	// Loss is the mean cross-entropy over the epoch's lots; TrainAccuracy the
	// fraction of those examples predicted correctly before each update.
	Loss          float64 `json:"loss"`
	TrainAccuracy float64 `json:"train_accuracy"`
	// TestAccuracy is nil without a test set.
	TestAccuracy *float64 `json:"test_accuracy,omitempty"`
	// LedgerLen is the number of mechanism applications the ledger has
	// recorded (DP-PCA and every step, including steps redone after a
	// resume from a checkpoint older than the last released output); it
	// can exceed Step.
	LedgerLen int `json:"ledger_len"`
	// LedgerHead is the chain head of those LedgerLen entries (see
	// [accounting.Ledger.Head]); empty for an unchained ledger (no
	// Options.RunID). With LedgerLen it is the [accounting.Mark] this
	// output was released at.
	LedgerHead string `json:"ledger_head,omitempty"`
	// Epsilon is ε(Delta) spent so far; nil without an accountant.
	Epsilon *float64 `json:"epsilon,omitempty"`
	Delta   float64  `json:"delta,omitempty"`
	// ClippedFraction is the fraction of the epoch's examples whose gradient
	// was clipped.
	ClippedFraction float64 `json:"clipped_fraction"`
	LearningRate    float64 `json:"learning_rate"`
	// Elapsed is wall time so far over all sessions of the run (resumes
	// included); with Step it is the input of an ETA.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Result is what a finished (or budget-stopped) run returns; the CLI
// serialises it to JSON.
type Result struct {
	Config Config `json:"config"`
	// NoiseMultiplier is σ from the config; EffectiveNoiseMultiplier the σ_eff
	// reported to the ledger per step (see [Config.StepEvent]).
	NoiseMultiplier          float64 `json:"noise_multiplier"`
	EffectiveNoiseMultiplier float64 `json:"effective_noise_multiplier"`
	SamplingRate             float64 `json:"sampling_rate"`
	Sensitivity              float64 `json:"sensitivity"`
	Steps                    int     `json:"steps"`
	TotalSteps               int     `json:"total_steps"`
	EpochsCompleted          int     `json:"epochs_completed"`
	StoppedByBudget          bool    `json:"stopped_by_budget"`
	// TrainAccuracy is measured on the private training set without noise:
	// monitoring only, not covered by the privacy guarantee.
	TrainAccuracy float64            `json:"train_accuracy"`
	TestAccuracy  *float64           `json:"test_accuracy,omitempty"`
	Epsilon       *float64           `json:"epsilon,omitempty"`
	Delta         float64            `json:"delta,omitempty"`
	WallTime      time.Duration      `json:"wall_time_ns"`
	Ledger        *accounting.Ledger `json:"ledger"`
	History       []Progress         `json:"history"`
	// Audit is the one-run audit of a run with canaries (Config.Canaries):
	// empirical lower bounds on ε from the final model. Nil without
	// canaries or when the run was cancelled.
	Audit *AuditReport `json:"audit,omitempty"`
	// Model is the trained network (not serialised).
	Model *MLP `json:"-"`
}

// Trainer holds one run's state. It is not safe for concurrent use.
type Trainer struct {
	cfg     Config
	opts    Options
	train   *data.Dataset
	base    *data.Dataset // train without canary slots
	can     *canarySet    // nil without canaries
	cgrad   []int         // a lot's gradient canaries
	model   *MLP
	src     *mrand.ChaCha8
	rng     *mrand.Rand
	ledger  *accounting.Ledger
	step    int // completed steps
	elapsed time.Duration
	history []Progress
	st      *stepper
	lot     []int
	perm    []int
	// alloc is random allocation's current epoch: example i is in the
	// steps alloc[i·k:(i+1)·k] of the epoch. lotStart/lotIdx are its lots
	// (step s draws lotIdx[lotStart[s]:lotStart[s+1]]), derived from it.
	alloc    []int
	lotStart []int
	lotIdx   []int
	maxStep  int
	stopped  bool
	stopAt   int                       // tests: stop after this many steps (0 = no limit)
	lotHook  func(step int, lot []int) // tests: sees every lot drawn
	// committed is the ledger length last written to Options.LedgerPath,
	// -1 until the file holds this ledger (run id included).
	committed int
}

// Train runs cfg on train and evaluates on test (which may be nil). It is
// New followed by Run.
func Train(ctx context.Context, cfg Config, train, test *data.Dataset, opts Options) (*Result, error) {
	t, err := New(cfg, train, opts)
	if err != nil {
		return nil, err
	}
	return t.Run(ctx, test)
}

// New validates cfg (after [Config.WithDefaults]), seeds the random stream,
// computes the input projection (DP-PCA for private methods, recording its
// event in the ledger) and initialises the network.
func New(cfg Config, train *data.Dataset, opts Options) (*Trainer, error) {
	if train == nil {
		return nil, errors.New("trainer: nil training set")
	}
	n := train.N
	if cfg.Canaries > 0 {
		n += cfg.Canaries // canary slots are data (see Config.Canaries)
	}
	cfg = cfg.WithDefaults(n)
	if err := cfg.Validate(n, train.D); err != nil {
		return nil, err
	}
	if err := checkDataset(train); err != nil {
		return nil, err
	}
	base := train
	var cs *canarySet
	var crng *mrand.Rand
	if cfg.Canaries > 0 {
		var err error
		if train, cs, crng, err = withCanaries(&cfg, train); err != nil {
			return nil, err
		}
	}
	if err := checkOptions(&cfg, &opts); err != nil {
		return nil, err
	}
	if err := checkMemory(&cfg, train.D, train.Classes); err != nil {
		return nil, err
	}
	src, err := newSource(cfg.Seed)
	if err != nil {
		return nil, err
	}
	led := &accounting.Ledger{RunID: opts.RunID}
	if opts.Spent != nil {
		if opts.Spent.RunID != "" && opts.Spent.RunID != opts.RunID {
			return nil, fmt.Errorf("trainer: the ledger to continue is of run %s, Options.RunID is %q", opts.Spent.RunID, opts.RunID)
		}
		if err := opts.Spent.Validate(); err != nil {
			return nil, err
		}
		led = opts.Spent.Clone()
		led.RunID = opts.RunID
	}
	t := &Trainer{cfg: cfg, opts: opts, train: train, base: base, can: cs, src: src, rng: mrand.New(src), ledger: led, committed: -1}
	var proj []float32
	if cfg.PCADim > 0 {
		sigma := cfg.PCANoiseMultiplier
		if !cfg.Method.Private() {
			sigma = 0
		}
		proj, err = dpPCA(train, cfg.PCADim, cfg.PCASamplingRate, sigma, t.rng)
		if err != nil {
			return nil, err
		}
		if err := t.ledger.Record(cfg.PCAEvent(), 1); err != nil {
			return nil, err
		}
	}
	t.model = newMLP(train.D, proj, cfg.PCADim, cfg.Hidden, train.Classes, t.rng)
	if cs != nil && cs.kind == CanaryGradient {
		if err := cs.placeGradientCanaries(t.model, base, &cfg, crng); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func checkDataset(ds *data.Dataset) error {
	if ds.Classes < 2 || ds.Classes > 256 {
		return &FieldError{"dataset classes", ds.Classes, "in [2, 256]"}
	}
	if len(ds.X) != ds.N*ds.D || len(ds.Y) != ds.N {
		return fmt.Errorf("trainer: dataset %q: len(X)=%d, len(Y)=%d, want %d and %d", ds.Name, len(ds.X), len(ds.Y), ds.N*ds.D, ds.N)
	}
	for i, y := range ds.Y {
		if int(y) >= ds.Classes {
			return fmt.Errorf("trainer: dataset %q: label %d of example %d not in [0, %d)", ds.Name, y, i, ds.Classes)
		}
	}
	return nil
}

func checkOptions(cfg *Config, opts *Options) error {
	if cfg.TargetEpsilon > 0 && opts.NewAccountant == nil {
		return &FieldError{"target_epsilon", cfg.TargetEpsilon, "0 unless an accountant factory (Options.NewAccountant) is given"}
	}
	if opts.ReportDelta == 0 {
		opts.ReportDelta = cfg.TargetDelta
		if opts.ReportDelta == 0 {
			opts.ReportDelta = 1e-5
		}
	}
	if !finite(opts.ReportDelta) || opts.ReportDelta <= 0 || opts.ReportDelta >= 1 {
		return &FieldError{"report_delta", opts.ReportDelta, "in (0, 1)"}
	}
	if opts.CheckpointEvery < 0 {
		return &FieldError{"checkpoint_every", opts.CheckpointEvery, ">= 0"}
	}
	if !(opts.AuditConfidence >= 0 && opts.AuditConfidence < 1) {
		return &FieldError{"audit_confidence", opts.AuditConfidence, "in (0, 1) (0 = 0.95)"}
	}
	if opts.RunID != "" && !accounting.ValidRunID(opts.RunID) {
		return fmt.Errorf("trainer: run id %q is not one accounting.NewRunID returns", opts.RunID)
	}
	return nil
}

// newSource returns a ChaCha8 stream: seeded from crypto/rand when seed is
// nil, else from SHA-256("dpcalc/trainer" ‖ seed).
func newSource(seed *uint64) (*mrand.ChaCha8, error) {
	var key [32]byte
	if seed == nil {
		if _, err := rand.Read(key[:]); err != nil {
			return nil, fmt.Errorf("trainer: seeding from crypto/rand: %w", err)
		}
	} else {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], *seed)
		key = sha256.Sum256(append([]byte("dpcalc/trainer"), b[:]...))
	}
	return mrand.NewChaCha8(key), nil
}

// Model returns the network (live; it changes as training proceeds).
func (t *Trainer) Model() *MLP { return t.model }

// Ledger returns a copy of the privacy ledger so far.
func (t *Trainer) Ledger() *accounting.Ledger { return t.ledger.Clone() }

// Config returns the defaulted configuration.
func (t *Trainer) Config() Config { return t.cfg }

// Step returns the number of completed steps.
func (t *Trainer) Step() int { return t.step }

// learningRate returns η for the step with 0-based index step.
//
//   - np: constant η0.
//   - dpsgd: η0 + (η_final − η0)·min(1, step/(DecayEpochs·stepsPerEpoch)),
//     i.e. linear in the epoch over DecayEpochs epochs, then constant (Abadi
//     §5.2: 0.1 → 0.052 over 10 epochs).
//   - dpd, dpvd, sgld: η0/t^γ with t the 1-based epoch (DPD §5, DPVD §5:
//     "update it per round as η_t = η0/t^γ"). We read "round" as a data pass:
//     with γ = 1 per iteration, η would fall below 1% of η0 after 100 of the
//     paper's 1,400–20,000 iterations, freezing training.
func (t *Trainer) learningRate(step int) float64 {
	c := &t.cfg
	spe := c.StepsPerEpoch(t.train.N)
	switch c.Method {
	case MethodDPSGD:
		if c.DecayEpochs == 0 {
			return c.LearningRateFinal
		}
		f := min(1, float64(step)/float64(c.DecayEpochs*spe))
		return c.LearningRate + (c.LearningRateFinal-c.LearningRate)*f
	case MethodDPD, MethodDPVD, MethodSGLD:
		epoch := step/spe + 1
		return c.LearningRate / math.Pow(float64(epoch), c.Gamma)
	}
	return c.LearningRate
}

// epsilonAfter returns ε(δ) of the ledger followed by extra more steps,
// from a fresh accountant. With shuffled lots the ledger pays per epoch: the
// steps left in the current, paid epoch are free and the others cost
// ⌈·/LedgerUnit⌉ epochs.
func (t *Trainer) epsilonAfter(ctx context.Context, extra int, delta float64) (float64, error) {
	if u := t.cfg.LedgerUnit(t.train.N); u > 1 && extra > 0 {
		paid := (u - t.step%u) % u // steps left in an epoch already paid for
		extra = (max(0, extra-paid) + u - 1) / u
	}
	acc, err := t.opts.NewAccountant()
	if err != nil {
		return 0, err
	}
	if err := t.ledger.Replay(acc); err != nil {
		return 0, err
	}
	if extra > 0 {
		if err := acc.Compose(t.cfg.StepEvent(t.train.N), extra); err != nil {
			return 0, err
		}
	}
	return acc.Epsilon(ctx, delta)
}

// budgetSteps returns the largest k ≤ remaining such that the ledger plus k
// more steps keeps ε(TargetDelta) ≤ TargetEpsilon, by bisection over k with
// fresh accountants (O(log remaining) accountant evaluations, not O(T²)).
func (t *Trainer) budgetSteps(ctx context.Context, remaining int) (int, error) {
	c := &t.cfg
	ok := func(k int) (bool, error) {
		e, err := t.epsilonAfter(ctx, k, c.TargetDelta)
		if err != nil {
			return false, err
		}
		return e <= c.TargetEpsilon, nil
	}
	good, err := ok(0)
	if err != nil {
		return 0, err
	}
	if !good {
		e, _ := t.epsilonAfter(ctx, 0, c.TargetDelta)
		return 0, fmt.Errorf("trainer: privacy budget ε=%g at δ=%g already exceeded before training (ε spent %g)", c.TargetEpsilon, c.TargetDelta, e)
	}
	if good, err = ok(remaining); err != nil || good {
		return remaining, err
	}
	return search.LastTrue(ok, 0, remaining) // ok(0) holds, ok(remaining) does not
}

// Run trains until the configured number of epochs is complete or the
// privacy budget would be exceeded by the next step, whichever is first. It
// may be called once per Trainer (or once after [LoadCheckpoint]). If ctx is
// cancelled, Run returns the partial result with ctx's error; every step
// taken is in its ledger.
//
// Write-ahead ledger. An output is released when it leaves the run's
// private state: a Progress or Release call (the CLI turns them into log
// lines and a progress line with test accuracy), and the Result Run
// returns. Each of them depends on every step taken so far, so with
// Options.LedgerPath set the ledger holding those steps is made durable
// first, and an error writing it stops the run before the release. The
// order at the end of an epoch is: ledger file, checkpoint (if due),
// Progress, Release.
//
// A checkpoint is not a release: it is the run's private state (mode 0600;
// for a seeded run it holds the noise stream), and it carries the ledger
// that pays for its own model. It is not enough as the ledger, though:
// with CheckpointEvery > 1, or when a checkpoint write fails, outputs of
// steps newer than the checkpoint have been released, and a resume redoes
// those steps with fresh noise. The ledger file, written before the
// checkpoint and before every release, is never behind either; on resume
// [LoadCheckpoint] continues from the ledger file, so the lost steps stay
// paid for and the redone steps are paid again.
//
// Per step (lot): sample the lot (Poisson with q = L/N, capped at
// MaxLotSize with truncated Poisson, the next slice of the epoch's shuffle,
// or the step's examples in the epoch's random allocation); for every example compute its gradient, its norm
// over all parameters and its clipping factor; sum the clipped gradients;
// add noise; divide by the expected lot size L = qN; update:
//
//   - np: θ ← θ − η·Σ∇_i/|lot| (no clipping, no noise).
//   - dpsgd (Abadi et al. 2016, Algorithm 1): θ ← θ − η_t·(Σ clip(∇_i) + N(0,
//     σ²S²I))/L. Event PoissonSampled{q, Gaussian{σ}}.
//   - dpd (DPD Algorithm 1, eqs. 3–5): θ ← θ − η_t·(Σ clip(∇_i) + ξ)/L with ξ ~
//     N(0, 4σ²S²I). The paper writes ascent on log p with step η_t/2 and the
//     N/S-scaled sum of eq. 5; we write descent on the mean loss and fold the
//     1/2 and N/S into η (the update direction is the same, η's scale
//     differs). The Gaussian-dropout noise of eq. 4 is exactly ξ (η_t·ξ/L in
//     parameter space), so no separate dropout is applied. Event
//     PoissonSampled{q, Gaussian{2σ}} (see [Config.StepEvent]).
//   - dpvd (DPVD Algorithm 1, eqs. 10–12): as dpd, but the gradient is taken
//     at θ = φ + ζε sampled with the local reparameterisation trick, ζ being
//     the per-weight std of the privacy noise in parameter space at this step
//     (ζ_t = η_t·2σS/L, "the amount of noise is chosen to be equal to the ζε
//     in (12)"); ∂θ/∂φ = 1 (eq. 10) so the clipped gradient is applied to φ.
//     We read eq. 12's "θ^{t+1} ← φ^t + ζε − η_t ḡ" with the noise entering
//     the state, φ^{t+1} = θ^{t+1}: if the stored φ were updated without
//     noise (eq. 11) it would be a non-private function of all past
//     gradients. Event PoissonSampled{q, Gaussian{2σ}}.
//   - sgld: the dpd gradient (same noise, same event) in Welling–Teh SGLD
//     form with a N(0, λ⁻¹I) prior and ε = 2η_t/N: θ ← θ − η_t·(ĝ + λθ/N) +
//     N(0, 2η_t·T/N·I), T = SGLDTemperature. The Langevin noise is
//     data-independent, so it is post-processing and costs no privacy.
func (t *Trainer) Run(ctx context.Context, test *data.Dataset) (*Result, error) {
	if t.st != nil {
		return nil, errors.New("trainer: Run called twice")
	}
	c := &t.cfg
	n := t.train.N
	if test != nil {
		if err := checkDataset(test); err != nil {
			return nil, err
		}
		if test.D != t.train.D || test.Classes != t.train.Classes {
			return nil, fmt.Errorf("trainer: test set is %d features × %d classes, training set %d × %d", test.D, test.Classes, t.train.D, t.train.Classes)
		}
	}
	total := c.TotalSteps(n)
	t.maxStep = total
	if c.TargetEpsilon > 0 && t.step < total {
		k, err := t.budgetSteps(ctx, total-t.step)
		if err != nil {
			if ctx.Err() != nil {
				// Interrupted before the first step: nothing new spent.
				return nil, fmt.Errorf("trainer: interrupted before the first step: %w", ctx.Err())
			}
			return nil, err
		}
		t.maxStep = t.step + k
	}
	budgetMax := t.maxStep
	if t.stopAt > 0 {
		t.maxStep = min(t.maxStep, t.stopAt)
	}
	t.st = newStepper(c, t.model, n)
	spe := c.StepsPerEpoch(n)
	q := c.SamplingRate(n)
	event := c.StepEvent(n)
	unit := c.LedgerUnit(n)
	private := c.Method.Private()
	noiseStd := c.Method.noiseFactor() * c.NoiseMultiplier * c.Sensitivity()
	start := time.Now()
	base := t.elapsed
	var runErr error

	var lossSum float64
	var correct, seen, clipped int
	for t.step < t.maxStep {
		if err := ctx.Err(); err != nil {
			runErr = err
			break
		}
		inEpoch := t.step % spe
		if inEpoch == 0 {
			lossSum, correct, seen, clipped = 0, 0, 0, 0
			if c.Sampling == SamplingShuffle {
				t.perm = t.rng.Perm(n)
			}
			if c.allocated() {
				t.alloc = allocate(t.alloc, n, c.allocK(), spe, t.rng)
				t.lotStart, t.lotIdx = nil, nil
			}
		}
		switch {
		case c.Sampling == SamplingPoisson:
			t.lot = poissonLot(t.lot, n, q, t.rng)
		case c.Sampling == SamplingTruncatedPoisson:
			t.lot = truncateLot(poissonLot(t.lot, n, q, t.rng), c.MaxLotSize, t.rng)
		case c.allocated():
			if t.alloc == nil { // defensive: a checkpoint always carries the allocation
				t.alloc = allocate(t.alloc, n, c.allocK(), spe, t.rng)
			}
			if t.lotStart == nil {
				t.lotStart, t.lotIdx = allocationLots(t.alloc, n, c.allocK(), spe)
			}
			t.lot = append(t.lot[:0], t.lotIdx[t.lotStart[inEpoch]:t.lotStart[inEpoch+1]]...)
		default:
			if t.perm == nil { // defensive: a checkpoint always carries the order
				t.perm = t.rng.Perm(n)
			}
			t.lot = append(t.lot[:0], t.perm[inEpoch*c.LotSize:min(n, (inEpoch+1)*c.LotSize)]...)
		}
		if t.lotHook != nil {
			t.lotHook(t.step, t.lot)
		}
		if t.can != nil {
			t.lot, t.cgrad = t.can.filterLot(t.lot, t.cgrad)
		}
		lr := t.learningRate(t.step)
		zeta := 0.0
		if c.Method == MethodDPVD {
			zeta = lr * noiseStd / float64(c.LotSize)
		}
		st := t.st
		st.zero()
		st.accumulate(t.train, t.lot, zeta, t.rng, private)
		if t.can != nil && len(t.cgrad) > 0 {
			st.addCanaries(t.can, t.cgrad)
		}
		denom := float64(c.LotSize)
		if private {
			st.addNoise(noiseStd, t.rng)
		} else if k := len(t.lot) + len(t.cgrad); k > 0 {
			denom = float64(k)
		}
		st.apply(lr, denom, t.rng)
		if t.step%unit == 0 {
			// Paid at the unit's first step (a whole epoch when shuffled),
			// before anything it feeds is released.
			if err := t.ledger.Record(event, 1); err != nil {
				return nil, err
			}
		}
		t.step++
		lossSum += st.lossSum
		correct += st.correct
		seen += st.examples
		clipped += st.clipped

		if t.step%spe == 0 || t.step == t.maxStep {
			t.elapsed = base + time.Since(start)
			p, err := t.progress(ctx, test, lossSum, correct, seen, clipped, lr)
			if err != nil {
				if ctx.Err() != nil {
					// Interrupted while computing ε: the epoch is not
					// released; the caller can checkpoint the step.
					runErr = ctx.Err()
					break
				}
				return nil, err
			}
			t.history = append(t.history, p)
			// Write-ahead: the ledger, then the checkpoint, then the release.
			if err := t.commitLedger(false); err != nil {
				return nil, err
			}
			epochDone := t.step%spe == 0
			if t.opts.CheckpointPath != "" && t.opts.CheckpointEvery > 0 &&
				((epochDone && (t.step/spe)%t.opts.CheckpointEvery == 0) || t.step == t.maxStep) {
				if err := t.SaveCheckpoint(t.opts.CheckpointPath); err != nil {
					return nil, err
				}
			}
			if t.opts.Progress != nil {
				t.opts.Progress(p)
			}
			if t.opts.Release != nil {
				if err := t.opts.Release(p); err != nil {
					return nil, err
				}
			}
		}
	}
	t.elapsed = base + time.Since(start)
	t.stopped = budgetMax < total && t.step == budgetMax
	// The result depends on every step taken, including those after the
	// last epoch boundary when ctx was cancelled.
	if err := t.commitLedger(false); err != nil {
		return nil, err
	}
	res, err := t.result(ctx, test)
	if err != nil {
		return nil, err
	}
	return res, runErr
}

// truncateLot keeps a uniformly random b of lot's examples when it holds
// more than b (a partial Fisher–Yates shuffle from rng), in increasing
// example order; a lot of at most b is returned as it is, and rng is not
// used.
func truncateLot(lot []int, b int, rng *mrand.Rand) []int {
	if len(lot) <= b {
		return lot
	}
	for i := range b {
		j := i + rng.IntN(len(lot)-i)
		lot[i], lot[j] = lot[j], lot[i]
	}
	lot = lot[:b]
	slices.Sort(lot)
	return lot
}

// allocate draws one epoch of random allocation into a (reused): for each
// of the n examples, a uniformly random k-subset of the t steps (Floyd's
// algorithm, k draws), independently of the other examples.
func allocate(a []int, n, k, t int, rng *mrand.Rand) []int {
	a = slices.Grow(a[:0], n*k)[:n*k]
	for i := range n {
		s := a[i*k : (i+1)*k]
		for j := range k {
			// Floyd: pick r in [0, t-k+j]; if taken, take t-k+j instead.
			r, m := rng.IntN(t-k+j+1), t-k+j
			if slices.Contains(s[:j], r) {
				r = m
			}
			s[j] = r
		}
	}
	return a
}

// allocationLots groups an epoch's allocation by step: step s's lot is
// idx[start[s]:start[s+1]], in increasing example order.
func allocationLots(a []int, n, k, t int) (start, idx []int) {
	start = make([]int, t+1)
	for _, s := range a {
		start[s+1]++
	}
	for s := range t {
		start[s+1] += start[s]
	}
	idx = make([]int, len(a))
	next := slices.Clone(start[:t])
	for i := range n {
		for _, s := range a[i*k : (i+1)*k] {
			idx[next[s]] = i
			next[s]++
		}
	}
	return start, idx
}

func (t *Trainer) progress(ctx context.Context, test *data.Dataset, lossSum float64, correct, seen, clipped int, lr float64) (Progress, error) {
	n := t.train.N
	p := Progress{
		Epoch:        (t.step + t.cfg.StepsPerEpoch(n) - 1) / t.cfg.StepsPerEpoch(n),
		Epochs:       t.cfg.Epochs,
		Step:         t.step,
		TotalSteps:   t.cfg.TotalSteps(n),
		MaxSteps:     t.maxStep,
		LearningRate: lr,
		Elapsed:      t.elapsed,
		LedgerLen:    t.ledger.Len(),
	}
	var err error
	if p.LedgerHead, err = t.ledger.Head(); err != nil {
		return p, err
	}
	if seen > 0 {
		p.Loss = lossSum / float64(seen)
		p.TrainAccuracy = float64(correct) / float64(seen)
		p.ClippedFraction = float64(clipped) / float64(seen)
	}
	if test != nil {
		a := Accuracy(t.model, test)
		p.TestAccuracy = &a
	}
	if t.opts.NewAccountant != nil {
		e, err := t.epsilonAfter(ctx, 0, t.opts.ReportDelta)
		if err != nil {
			return p, err
		}
		p.Epsilon, p.Delta = &e, t.opts.ReportDelta
	}
	return p, nil
}

func (t *Trainer) result(ctx context.Context, test *data.Dataset) (*Result, error) {
	c := &t.cfg
	n := t.train.N
	r := &Result{
		Config:                   *c,
		NoiseMultiplier:          c.NoiseMultiplier,
		EffectiveNoiseMultiplier: c.EffectiveNoiseMultiplier(),
		SamplingRate:             c.SamplingRate(n),
		Sensitivity:              c.Sensitivity(),
		Steps:                    t.step,
		TotalSteps:               c.TotalSteps(n),
		EpochsCompleted:          t.step / c.StepsPerEpoch(n),
		StoppedByBudget:          t.stopped,
		TrainAccuracy:            Accuracy(t.model, t.base),
		WallTime:                 t.elapsed,
		Ledger:                   t.ledger.Clone(),
		History:                  append([]Progress(nil), t.history...),
		Model:                    t.model,
	}
	if test != nil {
		a := Accuracy(t.model, test)
		r.TestAccuracy = &a
	}
	if t.can != nil && ctx.Err() == nil {
		// The audit reads the final model, whose steps the ledger paid.
		a, err := t.audit()
		if err != nil {
			return nil, err
		}
		r.Audit = a
	}
	if t.opts.NewAccountant != nil && ctx.Err() == nil {
		// Re-check the whole ledger at the end with a fresh accountant. A
		// cancelled run returns its partial result without ε: the report
		// itself must not outlive the cancellation.
		e, err := t.epsilonAfter(ctx, 0, t.opts.ReportDelta)
		if err != nil {
			return nil, err
		}
		r.Epsilon, r.Delta = &e, t.opts.ReportDelta
		if c.TargetEpsilon > 0 {
			eb, err := t.epsilonAfter(ctx, 0, c.TargetDelta)
			if err != nil {
				return nil, err
			}
			if eb > c.TargetEpsilon {
				return nil, fmt.Errorf("trainer: internal error: ε=%g spent exceeds budget %g", eb, c.TargetEpsilon)
			}
		}
	}
	return r, nil
}

// commitLedger writes the ledger to Options.LedgerPath if it has grown
// since the last write, or was never written by this Trainer (so a
// checkpoint is never without its ledger file), then calls
// Options.Committed.
//
// An empty ledger is written only for a checkpoint (checkpoint true): a
// run stopped before it spent anything leaves no file.
func (t *Trainer) commitLedger(checkpoint bool) error {
	if t.opts.LedgerPath == "" || t.ledger.Len() == t.committed || t.ledger.Len() == 0 && !checkpoint {
		return nil
	}
	if err := accounting.SaveLedger(t.opts.LedgerPath, t.ledger); err != nil {
		return fmt.Errorf("trainer: write-ahead ledger: %w", err)
	}
	t.committed = t.ledger.Len()
	if t.opts.Committed != nil {
		m, err := t.ledger.Mark()
		if err != nil {
			return err
		}
		if err := t.opts.Committed(m); err != nil {
			return err
		}
	}
	return nil
}

// SetEpochs changes the number of epochs of a run that has not started
// Run yet (typically one restored by [LoadCheckpoint]): more epochs continue
// the run (a budget, if set, still stops it), fewer end it earlier. n must
// cover the steps already taken.
func (t *Trainer) SetEpochs(n int) error {
	if t.st != nil {
		return errors.New("trainer: SetEpochs after Run")
	}
	c := t.cfg
	c.Epochs = n
	if err := c.Validate(t.train.N, t.train.D); err != nil {
		return err
	}
	if c.TotalSteps(t.train.N) < t.step {
		done := (t.step + c.StepsPerEpoch(t.train.N) - 1) / c.StepsPerEpoch(t.train.N)
		return &FieldError{"epochs", n, fmt.Sprintf(">= %d (the epochs already run)", done)}
	}
	t.cfg = c
	return nil
}

// Accuracy returns the fraction of ds that m classifies correctly.
func Accuracy(m *MLP, ds *data.Dataset) float64 {
	if ds.N == 0 {
		return 0
	}
	pred := m.Predict(ds.X, ds.N)
	ok := 0
	for i, p := range pred {
		if p == ds.Y[i] {
			ok++
		}
	}
	return float64(ok) / float64(ds.N)
}
