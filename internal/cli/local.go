package cli

// The commands below run only on the command line: they read and write
// files, use the network or train for minutes. Their flags are described
// here, with every other command's; what they do is the command line's
// ([Hooks.Local]).

// TrainCmd trains an MLP with one of the private (or the non-private)
// methods and reports accuracy and privacy spent.
//
// Flags whose default depends on the data set (lot, hidden, clip, epochs)
// or that a resumed run must not change are pointers: nil means "not
// given", so an explicit 0 can be refused rather than read as "default",
// and --resume can tell a changed setting from an omitted one.
type TrainCmd struct {
	Dataset         string    `name:"dataset" default:"digits" enum:"digits,mnist,fashion-mnist" help:"Data set: digits (embedded), mnist, fashion-mnist."`
	DataDir         string    `name:"data-dir" placeholder:"DIR" help:"Directory with the idx files (default: $DPCALC_DATA_DIR/<dataset>, or Debian's path for fashion-mnist)."`
	Method          string    `name:"method" enum:"np,dpsgd,dpd,dpvd,sgld," default:"" placeholder:"METHOD" help:"np, dpsgd (Abadi), dpd (DP dropout), dpvd (DP variational dropout), sgld (default: dpsgd)."`
	Hidden          []int     `name:"hidden" placeholder:"WIDTH" help:"Hidden layer widths, comma-separated (default: 500 on digits, 1000 otherwise)."`
	PCA             *int      `name:"pca" placeholder:"K" help:"Project inputs on the top k principal directions (DP-PCA for private methods; Abadi §4)."`
	PCASigma        *float64  `name:"pca-sigma" placeholder:"SIGMA" help:"Noise multiplier σ_p of DP-PCA (Abadi §5.2 uses 7 or 4)."`
	PCAQ            *float64  `name:"pca-q" placeholder:"Q" help:"Sampling rate of the DP-PCA sample (default 0.1 private, 1 np)."`
	Lot             *int      `name:"lot" placeholder:"L" help:"Expected lot size L; q = L/N (default: 100 on digits, 600 otherwise)."`
	Batch           *int      `name:"batch" placeholder:"B" help:"Examples per forward/backward pass, to bound memory (default: the lot)."`
	Epochs          *int      `name:"epochs" placeholder:"EPOCHS" help:"Epochs; steps = epochs·⌈N/L⌉, or epochs·⌈k·N/L⌉ with random allocation (default: 100 on digits, 10 otherwise). With --resume: continue to this many epochs."`
	Clip            *float64  `name:"clip" placeholder:"C" help:"Per-example gradient clipping norm C (default: 2 on digits, 4 otherwise)."`
	LayerClip       []float64 `name:"layer-clip" placeholder:"C" help:"Per-layer clipping norms, one per dense layer (sensitivity √Σ C_l²)."`
	Sigma           *float64  `name:"sigma" placeholder:"SIGMA" help:"Noise multiplier σ; with --eps, the run stops at the budget."`
	Eps             *float64  `name:"eps" placeholder:"EPS" help:"Privacy budget ε: σ is calibrated so all epochs fit, unless --sigma is given."`
	Delta           *float64  `name:"delta" placeholder:"DELTA" help:"Budget δ (default: 1e-5)."`
	Acct            string    `name:"accountant" default:"" enum:"${accountants}," placeholder:"KIND" help:"Accountant for calibration, budget and reporting (default: ${default_accountant})."`
	LR              *float64  `name:"lr" placeholder:"ETA" help:"Initial learning rate (default: dpsgd 0.1, on digits 0.02 and constant unless --lr-final is given; dpd/dpvd/sgld 0.5; np 0.1)."`
	LRFinal         *float64  `name:"lr-final" placeholder:"ETA" help:"dpsgd: final learning rate of the linear decay (default 0.052, or 0.02 on digits)."`
	Decay           *int      `name:"decay-epochs" placeholder:"E" help:"dpsgd: epochs of linear decay (default 10)."`
	Gamma           *float64  `name:"gamma" placeholder:"GAMMA" help:"dpd/dpvd/sgld: learning-rate decay exponent in η0/t^γ (default 1)."`
	Sampling        string    `name:"sampling" enum:"poisson,shuffle,truncated-poisson,random-allocation,balls-in-bins," default:"" placeholder:"MODE" help:"poisson (default for private methods), shuffle (fixed-size lots, accounted under replace-one without amplification), truncated-poisson (Poisson lots capped at --max-batch), random-allocation (each example in k random steps of an epoch of ⌈k·N/L⌉ steps) or balls-in-bins (k = 1)."`
	K               *int      `name:"k" placeholder:"K" help:"--sampling random-allocation: the steps of an epoch each example is in (default 1)."`
	ExamplesPerUser *int      `name:"examples-per-user" placeholder:"K" help:"User-level privacy: the ledger pays, each step, the event of a user with at most K examples added or removed with all of them (Poisson sampling; default 1, example level)."`
	MaxBatch        *int      `name:"max-batch" placeholder:"B" help:"--sampling truncated-poisson: the largest lot; a Poisson lot of more examples keeps a uniformly random B of them."`
	Seed            *uint64   `name:"seed" placeholder:"N" help:"Make the run reproducible. The noise is then predictable: not for production."`
	Quiet           bool      `name:"quiet" help:"No progress output on stderr."`
	LogJSON         string    `name:"log-json" placeholder:"FILE" help:"Write one JSON line per epoch to FILE (appended to on --resume)."`
	Checkpoint      string    `name:"checkpoint" placeholder:"FILE" help:"Save model, optimiser and ledger to FILE atomically; the write-ahead ledger goes to FILE.ledger, the locks to FILE.lock and FILE.ledger.lock. A new run refuses a FILE whose ledger exists."`
	CheckpointEvery int       `name:"checkpoint-every" placeholder:"EPOCHS" default:"1" help:"Epochs between checkpoints."`
	Resume          bool      `name:"resume" help:"Continue the run saved in --checkpoint; its ledger keeps every step already spent. With FILE.ledger but no FILE, a fresh model continues the ledger."`
	CanaryFlags
}

// CanaryFlags are train's audit flags: canaries inserted into the run and
// the one-run audit of the trained model (calibrate/onerun).
type CanaryFlags struct {
	Canaries     *int    `name:"canaries" placeholder:"M" help:"Audit the run: insert M canaries, each included with probability ½, and bound ε from the final model (one-run audit). The canaries count as data: q = lot/(N + M)."`
	CanaryKind   string  `name:"canary-kind" enum:"input,gradient," default:"" placeholder:"KIND" help:"input (out-of-distribution examples, scored by their loss: what any data contributor can do) or gradient (a gradient of norm C on one weight, scored by how far it moved: an adversary who can insert gradients) (default: input)."`
	CanarySeed   *uint64 `name:"canary-seed" placeholder:"N" help:"Seed of the canaries' inclusion bits (kept apart from --seed; default crypto/rand)."`
	CanaryScores string  `name:"canary-scores" placeholder:"FILE" help:"Write the canaries' scores and inclusion bits to FILE (CSV score,member; input to dpcalc audit-run)."`
}

// AuditRunCmd turns the canary scores of one training run into lower
// bounds on ε (calibrate/onerun), beside the run's certified interval when
// its parameters or ledger are given.
type AuditRunCmd struct {
	Scores     string   `name:"scores" required:"" placeholder:"FILE" help:"Canary scores and inclusion bits: CSV with the header score,member (member 0 or 1), or a JSON array of {\"score\": S, \"member\": 0|1} objects; - reads standard input. Higher scores mean more likely a member."`
	Guesses    int      `name:"guesses" placeholder:"K" help:"Guess \"member\" for the K highest scores (ties included). Default: try every threshold of the ROC hull, Bonferroni-corrected for their number."`
	Confidence float64  `name:"confidence" default:"0.95" help:"Confidence of the lower bounds, in (0, 1)."`
	Delta      float64  `name:"delta" default:"1e-5" help:"δ at which ε is bounded, in [0, 1) (the f-DP bound needs δ > 0)."`
	Sigma      *float64 `name:"sigma" placeholder:"SIGMA" help:"The run's noise multiplier, for its certified interval (with --q and --steps)."`
	Q          *float64 `name:"q" placeholder:"Q" help:"The run's sampling rate (the canaries count as data: q = lot/(N + canaries))."`
	Steps      *int     `name:"steps" placeholder:"STEPS" help:"The run's number of steps."`
	Ledger     string   `name:"ledger" placeholder:"FILE" help:"The run's ledger (FILE.ledger of train --checkpoint), for its certified interval."`
}

// Run implements the command (on the command line: it reads a file).
func (c *AuditRunCmd) Run(e *Env) error { return e.local(c) }

// Run implements the command (on the command line).
func (c *TrainCmd) Run(e *Env) error { return e.local(c) }

// DataCmd groups the data-set commands.
type DataCmd struct {
	Fetch  DataFetchCmd  `cmd:"" help:"Download a data set from public mirrors, verify its SHA-256 and write it atomically."`
	Verify DataVerifyCmd `cmd:"" help:"Load a data set and check its checksums, shapes and labels."`
}

// DataFetchCmd downloads a data set.
type DataFetchCmd struct {
	Name    string   `arg:"" enum:"mnist,fashion-mnist" help:"mnist or fashion-mnist."`
	Dir     string   `name:"dir" placeholder:"DIR" help:"Destination directory (default: ${datadir})."`
	Mirror  []string `name:"mirror" placeholder:"URL" help:"Base https URL to fetch from, tried in order (default: the usual public mirrors)."`
	Retries int      `name:"retries" default:"3" help:"Retries per mirror for transient failures; 0 tries each mirror once."`
}

// DataVerifyCmd loads a data set and reports its shape.
type DataVerifyCmd struct {
	Name string `arg:"" enum:"digits,mnist,fashion-mnist" help:"digits, mnist or fashion-mnist."`
	Dir  string `name:"dir" placeholder:"DIR" help:"Directory with the files (default: ${datadir})."`
}

// Run implements the command (on the command line).
func (c *DataFetchCmd) Run(e *Env) error { return e.local(c) }

// Run implements the command (on the command line).
func (c *DataVerifyCmd) Run(e *Env) error { return e.local(c) }

// ReproCmd regenerates the papers' tables and figures with our numbers
// beside theirs: `reproduce` (the default subcommand, [ReproRunCmd]) and
// `reproduce merge` ([ReproMergeCmd]).
type ReproCmd struct {
	Run   ReproRunCmd   `cmd:"" name:"run" default:"withargs" help:"Reproduce (the default): all of it, its --plan, or one --shard of its training runs."`
	Merge ReproMergeCmd `cmd:"" name:"merge" help:"Build the tables from the caches of shards run with --shard i/n (same profile, papers and seed)."`
}

// ReproFlags are the flags that decide a reproduction's runs; a shard and
// its merge must be given the same ones.
type ReproFlags struct {
	Paper    string   `name:"paper" default:"all" enum:"abadi,dpd,dpvd,all" help:"Paper: abadi, dpd, dpvd or all."`
	Profile  string   `name:"profile" default:"quick" enum:"tiny,quick,full" help:"tiny (DIGITS, 1 epoch: seconds), quick (every table, ≤ 15 min on 2 cores), full (papers' epochs, 10 runs)."`
	Out      string   `name:"out" default:"results" placeholder:"DIR" help:"Output directory for tables, figures and the cache of finished cells."`
	DataDir  string   `name:"data-dir" placeholder:"DIR" help:"MNIST directory, or a parent with mnist/ (default: $DPCALC_DATA_DIR/mnist)."`
	Seed     uint64   `name:"seed" default:"1" help:"Seed of the first run of every cell; run r uses seed+r."`
	PLDGrid  float64  `name:"pld-grid" placeholder:"WIDTH" help:"Discretisation width of the pld accountant (default: adaptive)."`
	Quiet    bool     `name:"quiet" help:"No plan or progress lines on stderr."`
	Datasets []string `name:"datasets" enum:"digits,mnist" placeholder:"SET,..." help:"Train only the runs on these data sets (digits, mnist); the other cells show -."`
	Jobs     int      `name:"jobs" help:"Runs trained at once (default: the number of CPUs)."`
	Markdown string   `name:"markdown" placeholder:"FILE" help:"Also write the report to FILE (e.g. docs/reproduction.md), its figures into a directory named after FILE beside it."`
}

// ReproRunCmd is `dpcalc reproduce [--plan] [--shard i/n]`.
type ReproRunCmd struct {
	ReproFlags
	Plan  bool   `name:"plan" help:"Print the plan (runs, cached, expected training time, missing data) and stop before training; writes nothing and needs no MNIST."`
	Shard string `name:"shard" placeholder:"I/N" help:"Train only shard I of N (1 <= I <= N) of the runs, into --out's cache, and write no tables; build them with reproduce merge."`
}

// ReproMergeCmd is `dpcalc reproduce merge SHARD_DIR...`.
type ReproMergeCmd struct {
	ReproFlags
	Shards []string `arg:"" name:"shard-dir" help:"Output directories (--out) of the shards."`
}

// Run implements `reproduce` (on the command line).
func (c *ReproRunCmd) Run(e *Env) error { return e.local(c) }

// Run implements `reproduce merge` (on the command line).
func (c *ReproMergeCmd) Run(e *Env) error { return e.local(c) }

// ServeCmd serves the web calculator (the page scripts/build-web.sh builds)
// on a local address. All computation happens in the browser.
type ServeCmd struct {
	Addr string `name:"addr" default:"127.0.0.1:8080" help:"Address to listen on (default: ${default})."`
	Dir  string `name:"dir" placeholder:"DIR" help:"Serve the site scripts/build-web.sh built in DIR instead of the one built into this binary by go generate ./web."`
}

// Run implements the command (on the command line).
func (c *ServeCmd) Run(e *Env) error { return e.local(c) }

// DataDirRule says where the data sets live unless a flag says otherwise
// (trainer/data.DefaultDir): the ${datadir} of the data commands' help.
const DataDirRule = "$DPCALC_DATA_DIR/NAME if set, else the user cache directory's dpcalc/NAME, e.g. ~/.cache/dpcalc/mnist"
