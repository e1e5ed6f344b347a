package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/query"
	"github.com/dpcalc/dpcalc/internal/sysmem"
)

// lengthFlags give the training length, as epochs or steps. Exactly one is
// required; kong enforces that (a required xor group).
type lengthFlags struct {
	Q      float64  `name:"q" required:"" help:"Sampling rate q = L/N: each record's inclusion probability per step, in (0, 1]."`
	Epochs *float64 `name:"epochs" xor:"length" required:"" help:"Expected passes over the data E; steps T = ⌈E/q⌉."`
	Steps  *count   `name:"steps" xor:"length" required:"" help:"Number of steps T, instead of --epochs; 1e6 is accepted."`
}

// steps validates q and returns T.
func (l *lengthFlags) steps() (int, error) {
	if err := flagErr(accounting.CheckSamplingRate(l.Q)); err != nil {
		return 0, err
	}
	switch {
	case l.Steps != nil:
		if *l.Steps < 1 {
			return 0, usageError("invalid --steps: %d, want an integer >= 1", *l.Steps)
		}
		return int(*l.Steps), nil
	case l.Epochs != nil:
		t, err := calibrate.StepsForEpochs(*l.Epochs, l.Q)
		return t, flagErr(err)
	}
	return 0, usageError("missing --epochs or --steps: give the training length")
}

// count is an integer flag that also accepts exponent notation with an
// integral value (--steps 1e6).
type count int

// Decode implements kong.MapperValue.
func (c *count) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("value", &s); err != nil {
		return err
	}
	n, err := query.ParseCount(s)
	if err != nil {
		return fmt.Errorf("invalid %s", err)
	}
	*c = count(n)
	return nil
}

// accountantFlags choose the accountant(s).
type accountantFlags struct {
	Accountant string  `name:"accountant" default:"rdp" enum:"ma,rdp,zcdp,ac,dpd-ac,dpd-zcdp,pld,all" help:"Accountant: ma, rdp, zcdp, ac, dpd-ac, dpd-zcdp, pld, or all."`
	PLDGrid    float64 `name:"pld-grid" placeholder:"WIDTH" help:"Discretisation width of the pld accountant's privacy loss grid (default: adaptive)."`
	ACSampling string  `name:"ac-sampling" default:"log" enum:"log,linear" help:"How ac amplifies by sampling: log (proven, default) or linear (Abadi §3.1's (qε, qδ) reading; reproduces Abadi §5.1, not a proven bound)."`
}

// q is the flags as internal/query takes them; the CLI and the web page
// share its logic.
func (a *accountantFlags) q() query.Accountants {
	return query.Accountants{Name: a.Accountant, PLDGrid: a.PLDGrid, ACSampling: a.ACSampling}
}

func (a *accountantFlags) kinds() ([]accounting.Kind, error) {
	k, err := a.q().Kinds()
	if err != nil {
		return nil, usageError("%v", err)
	}
	return k, nil
}

func (a *accountantFlags) factory(k accounting.Kind) calibrate.Factory { return a.q().Factory(k) }

func (a *accountantFlags) newRow(k accounting.Kind, q float64, steps int) row {
	return a.q().NewRow(k, q, steps)
}

func (a *accountantFlags) check() error {
	if err := a.q().Check(); err != nil {
		return usageError("%v", err)
	}
	return nil
}

// flagErr turns a library ParamError into a usage error that names the flag.
func flagErr(err error) error {
	if err == nil {
		return nil
	}
	var pe *accounting.ParamError
	if errors.As(err, &pe) {
		return usageError("invalid --%s: %s, want %s", pe.Name, pe.ValueText(), pe.Want)
	}
	return err
}

func checkFlag(name string, err error) error {
	var pe *accounting.ParamError
	if errors.As(err, &pe) {
		return usageError("invalid --%s: %s, want %s", name, pe.ValueText(), pe.Want)
	}
	return err
}

// trainingFlags describe the training of eps, delta, sigma and epochs: one
// phase (--sigma, --q or --batch with --n, --epochs or --steps), a
// --schedule of phases, or (eps, delta) an --events file. None is required
// by kong: internal/query checks what is missing with kong's message.
type trainingFlags struct {
	Q         *float64 `name:"q" help:"Sampling rate q = L/N: each record's inclusion probability per step, in (0, 1]."`
	Epochs    *float64 `name:"epochs" xor:"length" help:"Expected passes over the data E; steps T = ⌈E/q⌉."`
	Steps     *count   `name:"steps" xor:"length" help:"Number of steps T, instead of --epochs; 1e6 is accepted."`
	Batch     *count   `name:"batch" help:"Batch size B, instead of --q (with --n: q = B/N); needed by --sampling fixed and shuffle."`
	N         *count   `name:"n" help:"Dataset size N (with --batch; the default n of --schedule phases)."`
	Schedule  *string  `name:"schedule" placeholder:"PHASES" help:"Phases run one after the other, instead of --sigma/--q/--batch/--epochs/--steps: \"sigma=1,q=0.01,steps=5000; sigma=2,batch=256,n=60000,epochs=3\" (keys sigma, q, batch, n, steps, epochs; one of sigma=?, steps=?, epochs=? for dpcalc sigma and epochs)."`
	Sampling  string   `name:"sampling" default:"poisson" enum:"poisson,fixed,shuffle" help:"How batches are drawn: poisson (each record with probability q), fixed (B of N without replacement; needs --adjacency replace-one) or shuffle (an epoch of shuffled batches)."`
	Adjacency string   `name:"adjacency" default:"add-remove" enum:"add-remove,replace-one" help:"Neighbouring datasets: add or remove one record, or replace one (σ stays the noise over the clipping norm C; the events get σ/2, the sensitivity being 2C)."`
}

// request is the query.Request of cmd with the training flags and the
// command's own flags (fl: name → value, already formatted; nil values are
// absent).
func (t *trainingFlags) request(cmd string, fl map[string]*string) query.Request {
	r := query.Request{Cmd: cmd, Flags: map[string]string{}}
	f := func(x *float64) *string {
		if x == nil {
			return nil
		}
		s := strconv.FormatFloat(*x, 'g', -1, 64)
		return &s
	}
	c := func(x *count) *string {
		if x == nil {
			return nil
		}
		s := strconv.Itoa(int(*x))
		return &s
	}
	for k, v := range map[string]*string{
		"q": f(t.Q), "epochs": f(t.Epochs), "steps": c(t.Steps), "batch": c(t.Batch), "n": c(t.N),
		"schedule": t.Schedule, "sampling": &t.Sampling, "adjacency": &t.Adjacency,
	} {
		if v != nil {
			r.Flags[k] = *v
		}
	}
	for k, v := range fl {
		if v != nil {
			r.Flags[k] = *v
		}
	}
	if t.Schedule != nil && *t.Schedule == "" {
		r.Flags["schedule"] = " " // given but empty: ParseSchedule's message
	}
	return r
}

func fstr(x float64) *string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	return &s
}

func fptr(x *float64) *string {
	if x == nil {
		return nil
	}
	return fstr(*x)
}

func (a *accountantFlags) flags(fl map[string]*string) map[string]*string {
	fl["accountant"], fl["ac-sampling"] = &a.Accountant, &a.ACSampling
	if a.PLDGrid != 0 {
		fl["pld-grid"] = fstr(a.PLDGrid)
	}
	return fl
}

// runQuery runs r through internal/query (the web calculator's code) and
// prints its rows; --emit-events writes the event of the question.
func (e *env) runQuery(r query.Request, emit string) error {
	if emit == "-" && e.json {
		return usageError("--emit-events - and --json both write to stdout; give --emit-events a file")
	}
	res := query.Run(e.ctx, r)
	if res.Error != "" {
		if res.Exit == 130 {
			return e.ctx.Err()
		}
		if res.Exit == 2 {
			return usageError("%s", res.Error)
		}
		return &exitError{code: res.Exit, err: errors.New(res.Error)}
	}
	if emit != "" && res.Event != nil {
		// The event is written only when the command succeeds: a failed
		// row (exit 1) leaves FILE as it was, and "-" prints nothing.
		if err := rowsExit(res.Rows); err != nil {
			var ee *exitError
			if errors.As(err, &ee) {
				err = &exitError{code: ee.code, err: fmt.Errorf("%w (--emit-events %s not written)", ee.err, emit)}
			}
			if emit == "-" {
				return err
			}
			if perr := e.print(res.Rows, res.All, r.Cmd); perr != nil && !errors.As(perr, &ee) {
				return perr
			}
			return err
		}
		if err := emitEvent(e, emit, res.Event); err != nil {
			return err
		}
		if emit == "-" {
			return nil
		}
	}
	return e.print(res.Rows, res.All, r.Cmd)
}

// SigmaCmd calibrates σ.
type SigmaCmd struct {
	Eps   *float64 `name:"eps" help:"Target ε, > 0 (required)."`
	Delta float64  `name:"delta" default:"1e-5" help:"Target δ, in (0, 1)."`
	trainingFlags
	accountantFlags
	Tol        float64 `name:"tol" default:"1e-6" help:"Relative tolerance of σ; σ is always rounded up."`
	EmitEvents string  `name:"emit-events" placeholder:"FILE" help:"Write the training at the calibrated σ (of the first accountant that finds one) as dp_accounting DpEvent JSON to FILE (- for stdout, instead of the table), only if the command succeeds."`
}

// Run implements the command.
func (c *SigmaCmd) Run(e *env) error {
	r := c.request("sigma", c.flags(map[string]*string{"eps": fptr(c.Eps), "delta": fstr(c.Delta), "tol": fstr(c.Tol)}))
	return e.runQuery(r, c.EmitEvents)
}

// EpsCmd computes ε(δ).
type EpsCmd struct {
	Sigma *float64 `name:"sigma" help:"Noise multiplier σ (noise std / L2 sensitivity, the clipping norm), > 0."`
	Delta float64  `name:"delta" default:"1e-5" help:"δ, in (0, 1)."`
	trainingFlags
	accountantFlags
	eventFlags
}

// eventFlags read and write the training as dp_accounting DpEvent JSON.
type eventFlags struct {
	Events     string `name:"events" placeholder:"FILE" help:"Read the training from FILE (- for stdin): dp_accounting DpEvent JSON (docs/events.md), instead of the training flags."`
	EmitEvents string `name:"emit-events" placeholder:"FILE" help:"Write the training as dp_accounting DpEvent JSON to FILE (- for stdout, instead of the table), only if the command succeeds."`
}

// request adds the --events file's event to r.
func (f *eventFlags) request(e *env, r query.Request) (query.Request, error) {
	if f.Events == "" {
		return r, nil
	}
	b, err := readEvents(f.Events, e.stdin)
	if err != nil {
		return r, err
	}
	ev, err := accounting.UnmarshalEventContext(e.ctx, b)
	if err != nil && e.ctx.Err() != nil && errors.Is(err, e.ctx.Err()) {
		return r, err // interrupted (exit 130)
	}
	if err != nil {
		return r, usageError("--events %s: %s", f.Events, strings.TrimPrefix(err.Error(), "accounting: "))
	}
	adj, err := accounting.ParseAdjacency(r.Flags["adjacency"])
	if err != nil {
		return r, usageError("%v", err)
	}
	if _, err := accounting.NormalizeUnder(adj, ev, 1); err != nil {
		return r, usageError("--events %s: %s", f.Events, strings.TrimPrefix(err.Error(), "accounting: "))
	}
	r.Event = ev
	return r, nil
}

// readEvents reads the --events file (stdin for "-"), refusing one larger
// than accounting.MaxEventJSONBytes (64 MiB) before reading it when its
// size is known, else as soon as the limit is passed.
func readEvents(name string, stdin io.Reader) ([]byte, error) {
	const max = accounting.MaxEventJSONBytes
	tooBig := func(what string) error {
		return usageError("--events %s: %s; --events reads at most 64 MiB (%d bytes)", name, what, max)
	}
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usageError("--events: %v", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if fi.Size() > max {
				return nil, tooBig(fmt.Sprintf("%d bytes", fi.Size()))
			}
			// The decoded events and their plan take about 8 bytes per
			// byte of JSON (100,000 phases: 23 MB of JSON, 170 MB).
			if err := sysmem.Check(8*float64(fi.Size()), "--events "+name+": decoding it",
				"the number of events in the file (repeated phases can be one SelfComposedDpEvent with a count)"); err != nil {
				return nil, usageError("%v", err)
			}
		}
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, usageError("--events: %v", err)
	}
	if len(b) > max {
		return nil, tooBig(fmt.Sprintf("more than %d bytes", max))
	}
	return b, nil
}

// Run implements the command.
func (c *EpsCmd) Run(e *env) error {
	r, err := c.eventFlags.request(e, c.trainingFlags.request("eps", c.flags(map[string]*string{"sigma": fptr(c.Sigma), "delta": fstr(c.Delta)})))
	if err != nil {
		return err
	}
	return e.runQuery(r, c.EmitEvents)
}

// DeltaCmd computes δ(ε).
type DeltaCmd struct {
	Sigma *float64 `name:"sigma" help:"Noise multiplier σ, > 0."`
	Eps   *float64 `name:"eps" help:"ε, > 0 (required)."`
	trainingFlags
	accountantFlags
	eventFlags
}

// Run implements the command.
func (c *DeltaCmd) Run(e *env) error {
	r, err := c.eventFlags.request(e, c.trainingFlags.request("delta", c.flags(map[string]*string{"sigma": fptr(c.Sigma), "eps": fptr(c.Eps)})))
	if err != nil {
		return err
	}
	return e.runQuery(r, c.EmitEvents)
}

// EpochsCmd finds the longest training a budget allows.
type EpochsCmd struct {
	Sigma     *float64 `name:"sigma" help:"Noise multiplier σ, > 0."`
	Q         *float64 `name:"q" help:"Sampling rate q, in (0, 1]."`
	Eps       *float64 `name:"eps" help:"Budget ε, > 0 (required)."`
	Delta     float64  `name:"delta" default:"1e-5" help:"Budget δ, in (0, 1)."`
	Batch     *count   `name:"batch" help:"Batch size B, instead of --q (with --n: q = B/N)."`
	N         *count   `name:"n" help:"Dataset size N (with --batch)."`
	Schedule  *string  `name:"schedule" placeholder:"PHASES" help:"Phases, one with steps=? or epochs=? (see dpcalc eps --help)."`
	Sampling  string   `name:"sampling" default:"poisson" enum:"poisson,fixed,shuffle" help:"How batches are drawn: poisson, fixed or shuffle."`
	Adjacency string   `name:"adjacency" default:"add-remove" enum:"add-remove,replace-one" help:"Neighbouring datasets: add-remove or replace-one."`
	accountantFlags
	MaxSteps int `name:"max-steps" default:"1000000000" help:"Search limit on steps."`
}

// Run implements the command.
func (c *EpochsCmd) Run(e *env) error {
	t := trainingFlags{Q: c.Q, Batch: c.Batch, N: c.N, Schedule: c.Schedule, Sampling: c.Sampling, Adjacency: c.Adjacency}
	r := t.request("epochs", c.flags(map[string]*string{"sigma": fptr(c.Sigma), "eps": fptr(c.Eps), "delta": fstr(c.Delta), "max-steps": ptrStr(strconv.Itoa(c.MaxSteps))}))
	return e.runQuery(r, "")
}

func ptrStr(s string) *string { return &s }

// orderHelp explains the λ column of the result table; it is the detailed
// help (kong.HelpProvider) of every command that prints that table.
const orderHelp = "The table has one row per accountant. λ is the order at which the bound was attained: for ma and rdp, the moment order λ (Rényi order λ+1) that gives the smallest bound (JSON field lambda); - for accountants without orders (zcdp, ac, pld, dpd-ac, dpd-zcdp)."

// Help implements kong.HelpProvider.
func (c *SigmaCmd) Help() string { return orderHelp }

// Help implements kong.HelpProvider.
func (c *EpsCmd) Help() string { return orderHelp }

// Help implements kong.HelpProvider.
func (c *DeltaCmd) Help() string { return orderHelp }

// Help implements kong.HelpProvider.
func (c *EpochsCmd) Help() string { return orderHelp }

// Help implements kong.HelpProvider.
func (c *AuditCmd) Help() string { return orderHelp }
