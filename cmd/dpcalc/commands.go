package main

import (
	"errors"
	"fmt"

	"github.com/alecthomas/kong"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/query"
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
		return usageError("invalid --%s: %g, want %s", pe.Name, pe.Value, pe.Want)
	}
	return err
}

func checkFlag(name string, err error) error {
	var pe *accounting.ParamError
	if errors.As(err, &pe) {
		return usageError("invalid --%s: %g, want %s", name, pe.Value, pe.Want)
	}
	return err
}

// SigmaCmd calibrates σ.
type SigmaCmd struct {
	Eps   float64 `name:"eps" required:"" help:"Target ε, > 0."`
	Delta float64 `name:"delta" default:"1e-5" help:"Target δ, in (0, 1)."`
	lengthFlags
	accountantFlags
	Tol float64 `name:"tol" default:"1e-6" help:"Relative tolerance of σ; σ is always rounded up."`
}

// Run implements the command.
func (c *SigmaCmd) Run(e *env) error {
	steps, err := c.steps()
	if err != nil {
		return err
	}
	if err := checkFlag("eps", accounting.CheckEpsilon(c.Eps)); err != nil {
		return err
	}
	if err := checkFlag("delta", accounting.CheckDelta(c.Delta)); err != nil {
		return err
	}
	if !(c.Tol > 0 && c.Tol < 0.1) {
		return usageError("invalid --tol: %g, want in (0, 0.1)", c.Tol)
	}
	if err := c.check(); err != nil {
		return err
	}
	kinds, err := c.kinds()
	if err != nil {
		return err
	}
	rows := make([]row, 0, len(kinds))
	for _, k := range kinds {
		r := c.newRow(k, c.Q, steps)
		res, err := calibrate.Sigma(e.ctx, c.factory(k), calibrate.Training{SamplingRate: c.Q, Steps: steps}, c.Eps, c.Delta, calibrate.Options{RelTol: c.Tol})
		if err != nil {
			r.Error = err.Error()
			rows = append(rows, r)
			continue
		}
		r.Sigma = res.X
		r.Fill(e.ctx, c.factory(k), c.Delta, 0)
		rows = append(rows, r)
	}
	return e.print(rows, c.Accountant == "all", "sigma")
}

// runFlags describe the training run whose privacy eps and profile report:
// σ and the length at rate q. A flag that describes the run (its event)
// belongs here, so that both commands take it.
type runFlags struct {
	Sigma float64 `name:"sigma" required:"" help:"Noise multiplier σ (noise std / L2 sensitivity), > 0."`
	lengthFlags
}

// event validates the flags and returns the run as an event, with its
// number of steps.
func (r *runFlags) event() (accounting.Event, int, error) {
	steps, err := r.steps()
	if err != nil {
		return nil, 0, err
	}
	if err := checkFlag("sigma", accounting.CheckNoiseMultiplier(r.Sigma)); err != nil {
		return nil, 0, err
	}
	return calibrate.Training{SamplingRate: r.Q, Steps: steps}.Event(r.Sigma), steps, nil
}

// EpsCmd computes ε(δ).
type EpsCmd struct {
	runFlags
	Delta float64 `name:"delta" default:"1e-5" help:"δ, in (0, 1)."`
	accountantFlags
}

// Run implements the command.
func (c *EpsCmd) Run(e *env) error {
	return privacyAt(e, c.Sigma, &c.lengthFlags, &c.accountantFlags, "eps",
		checkFlag("delta", accounting.CheckDelta(c.Delta)), c.Delta, 0)
}

// privacyAt validates σ and the other flags (extra is the command's own
// check), then prints one row per accountant: ε at delta when delta > 0,
// otherwise δ at eps.
func privacyAt(e *env, sigma float64, l *lengthFlags, a *accountantFlags, cmd string, extra error, delta, eps float64) error {
	steps, err := l.steps()
	if err != nil {
		return err
	}
	for _, chk := range []error{checkFlag("sigma", accounting.CheckNoiseMultiplier(sigma)), extra, a.check()} {
		if chk != nil {
			return chk
		}
	}
	kinds, err := a.kinds()
	if err != nil {
		return err
	}
	rows := make([]row, 0, len(kinds))
	for _, k := range kinds {
		r := a.newRow(k, l.Q, steps)
		r.Sigma = sigma
		r.Fill(e.ctx, a.factory(k), delta, eps)
		rows = append(rows, r)
	}
	return e.print(rows, a.Accountant == "all", cmd)
}

// DeltaCmd computes δ(ε).
type DeltaCmd struct {
	Sigma float64 `name:"sigma" required:"" help:"Noise multiplier σ, > 0."`
	Eps   float64 `name:"eps" required:"" help:"ε, > 0."`
	lengthFlags
	accountantFlags
}

// Run implements the command.
func (c *DeltaCmd) Run(e *env) error {
	return privacyAt(e, c.Sigma, &c.lengthFlags, &c.accountantFlags, "delta",
		checkFlag("eps", accounting.CheckEpsilon(c.Eps)), 0, c.Eps)
}

// EpochsCmd finds the longest training a budget allows.
type EpochsCmd struct {
	Sigma float64 `name:"sigma" required:"" help:"Noise multiplier σ, > 0."`
	Q     float64 `name:"q" required:"" help:"Sampling rate q, in (0, 1]."`
	Eps   float64 `name:"eps" required:"" help:"Budget ε, > 0."`
	Delta float64 `name:"delta" default:"1e-5" help:"Budget δ, in (0, 1)."`
	accountantFlags
	MaxSteps int `name:"max-steps" default:"1000000000" help:"Search limit on steps."`
}

// Run implements the command.
func (c *EpochsCmd) Run(e *env) error {
	for _, chk := range []error{
		checkFlag("sigma", accounting.CheckNoiseMultiplier(c.Sigma)),
		checkFlag("q", accounting.CheckSamplingRate(c.Q)),
		checkFlag("eps", accounting.CheckEpsilon(c.Eps)),
		checkFlag("delta", accounting.CheckDelta(c.Delta)),
		c.check(),
	} {
		if chk != nil {
			return chk
		}
	}
	if c.MaxSteps < 1 {
		return usageError("invalid --max-steps: %d, want >= 1", c.MaxSteps)
	}
	kinds, err := c.kinds()
	if err != nil {
		return err
	}
	rows := make([]row, 0, len(kinds))
	for _, k := range kinds {
		n, err := calibrate.MaxSteps(e.ctx, c.factory(k), c.Sigma, c.Q, c.Eps, c.Delta, c.MaxSteps)
		r := c.newRow(k, c.Q, n)
		r.Sigma = c.Sigma
		if err != nil {
			r.Error = err.Error()
		} else if n == 0 {
			r.Note = "not even one step fits the budget"
			r.Delta = c.Delta
		} else {
			r.Fill(e.ctx, c.factory(k), c.Delta, 0)
			if n == c.MaxSteps {
				r.Note = "search limit reached: more steps may fit (raise --max-steps)"
			}
		}
		rows = append(rows, r)
	}
	return e.print(rows, c.Accountant == "all", "epochs")
}
