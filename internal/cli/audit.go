package cli

import (
	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/render"
)

// AuditCmd checks a published (σ, q, T) against its claimed (ε, δ).
type AuditCmd struct {
	Sigma float64 `name:"sigma" required:"" help:"Published noise multiplier σ, > 0."`
	Eps   float64 `name:"eps" required:"" help:"Claimed ε, > 0."`
	Delta float64 `name:"delta" default:"1e-5" help:"Claimed δ, in (0, 1)."`
	lengthFlags
	PLDGrid float64 `name:"pld-grid" placeholder:"WIDTH" help:"Discretisation width of the pld accountant (default: adaptive)."`
}

// Help implements kong.HelpProvider.
func (c *AuditCmd) Help() string { return orderHelp() }

// Audit is the answer of dpcalc audit: the claim, pld's certified interval
// for the true ε, the verdict, and every accountant's row.
type Audit struct {
	Sigma        float64           `json:"sigma"`
	Q            float64           `json:"q"`
	Steps        int               `json:"steps"`
	Epochs       float64           `json:"epochs"`
	Claimed      float64           `json:"claimed_epsilon"`
	Delta        float64           `json:"delta"`
	EpsilonLower *float64          `json:"epsilon_lower"` // null when not finite
	EpsilonUpper *float64          `json:"epsilon_upper"` // null when not finite (no finite ε bound at this δ)
	Verdict      calibrate.Verdict `json:"verdict"`
	Accountants  []Row             `json:"accountants"`
	Version      string            `json:"version"`

	lower, upper float64 // the interval, with infinities
}

// Run implements the command. Exit code 0: the claim holds; 1: violated or
// undetermined; 2: bad input.
func (c *AuditCmd) Run(e *Env) error {
	steps, err := c.steps()
	if err != nil {
		return err
	}
	a := Accountants{PLDGrid: c.PLDGrid}
	if err := firstErr(
		checkFlag("sigma", accounting.CheckNoiseMultiplier(c.Sigma)),
		checkFlag("eps", accounting.CheckEpsilon(c.Eps)),
		checkFlag("delta", accounting.CheckDelta(c.Delta)),
		a.Check(),
	); err != nil {
		return err
	}
	res, err := calibrate.Audit(e.Ctx, accounting.SubsampledGaussian(c.Sigma, c.Q, steps), calibrate.Epsilons{Epsilon: c.Eps, Delta: c.Delta}, c.PLDGrid)
	if err != nil {
		return err
	}
	out := &Audit{
		Sigma: c.Sigma, Q: c.Q, Steps: steps, Epochs: float64(steps) * c.Q,
		Claimed: c.Eps, Delta: c.Delta, EpsilonLower: FinitePtr(res.Lower), EpsilonUpper: FinitePtr(res.Upper),
		Verdict: res.Verdict, Version: Version(),
		lower: res.Lower, upper: res.Upper,
	}
	for _, k := range registry.Kinds() {
		r := a.NewRow(k, c.Q, steps)
		r.Sigma = c.Sigma
		r.Fill(e.Ctx, a.Factory(k), c.Delta, 0)
		out.Accountants = append(out.Accountants, r)
	}
	e.Print(out)
	return nil
}

// Fail is the exit-1 error of a claim that does not hold.
func (a *Audit) Fail() error {
	if a.Verdict != calibrate.Holds {
		return Failed("audit: claim %s: true ε %s, claimed %s", a.Verdict, interval(a.lower, a.upper), render.Exact(a.Claimed))
	}
	return nil
}
