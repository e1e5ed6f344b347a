package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/query"
)

// AuditCmd checks a published (σ, q, T) against its claimed (ε, δ).
type AuditCmd struct {
	Sigma float64 `name:"sigma" required:"" help:"Published noise multiplier σ, > 0."`
	Eps   float64 `name:"eps" required:"" help:"Claimed ε, > 0."`
	Delta float64 `name:"delta" default:"1e-5" help:"Claimed δ, in (0, 1)."`
	lengthFlags
	PLDGrid float64 `name:"pld-grid" placeholder:"WIDTH" help:"Discretisation width of the pld accountant (default: adaptive)."`
}

type auditOutput struct {
	Sigma        float64           `json:"sigma"`
	Q            float64           `json:"q"`
	Steps        int               `json:"steps"`
	Epochs       float64           `json:"epochs"`
	Claimed      float64           `json:"claimed_epsilon"`
	Delta        float64           `json:"delta"`
	EpsilonLower *float64          `json:"epsilon_lower"` // null when not finite
	EpsilonUpper *float64          `json:"epsilon_upper"` // null when not finite (no finite ε bound at this δ)
	Verdict      calibrate.Verdict `json:"verdict"`
	Accountants  []row             `json:"accountants"`
	Version      string            `json:"version"`
}

// Run implements the command. Exit code 0: the claim holds; 1: violated or
// undetermined; 2: bad input.
func (c *AuditCmd) Run(e *env) error {
	steps, err := c.steps()
	if err != nil {
		return err
	}
	for _, chk := range []error{
		checkFlag("sigma", accounting.CheckNoiseMultiplier(c.Sigma)),
		checkFlag("eps", accounting.CheckEpsilon(c.Eps)),
		checkFlag("delta", accounting.CheckDelta(c.Delta)),
		(&accountantFlags{PLDGrid: c.PLDGrid}).check(),
	} {
		if chk != nil {
			return chk
		}
	}
	res, err := calibrate.Audit(e.ctx, accounting.SubsampledGaussian(c.Sigma, c.Q, steps), calibrate.Epsilons{Epsilon: c.Eps, Delta: c.Delta}, c.PLDGrid)
	if err != nil {
		return err
	}
	out := auditOutput{
		Sigma: c.Sigma, Q: c.Q, Steps: steps, Epochs: float64(steps) * c.Q,
		Claimed: c.Eps, Delta: c.Delta, EpsilonLower: query.FinitePtr(res.Lower), EpsilonUpper: query.FinitePtr(res.Upper),
		Verdict: res.Verdict, Version: versionString(),
	}
	af := accountantFlags{PLDGrid: c.PLDGrid}
	for _, k := range registry.Kinds() {
		r := af.newRow(k, c.Q, steps)
		r.Sigma = c.Sigma
		r.Fill(e.ctx, af.factory(k), c.Delta, 0)
		out.Accountants = append(out.Accountants, r)
	}
	if e.json {
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "claim: (ε = %g, δ = %g) for σ = %g, q = %g, T = %d steps (%g epochs)\n", c.Eps, c.Delta, c.Sigma, c.Q, steps, out.Epochs)
		fmt.Fprintf(e.stdout, "true ε at δ %s (pld, certified)\n", fmtInterval(res.Lower, res.Upper))
		fmt.Fprintf(e.stdout, "verdict: %s\n", res.Verdict)
		if err := e.print(out.Accountants, true, "eps"); err != nil {
			return err
		}
	}
	if res.Verdict != calibrate.Holds {
		return &exitError{code: 1, err: fmt.Errorf("audit: claim %s: true ε %s, claimed %g", res.Verdict, fmtInterval(res.Lower, res.Upper), c.Eps)}
	}
	return nil
}

// fmtInterval says where a certified interval [lo, hi] lies: "lies in
// [lo, hi]", with "no finite bound" for an infinite upper end, or "is
// unbounded" when lo is infinite (never "+Inf").
func fmtInterval(lo, hi float64) string {
	if math.IsInf(lo, 1) {
		return "is unbounded"
	}
	end := func(x float64) string {
		if math.IsInf(x, 1) {
			return "no finite bound"
		}
		return strconv.FormatFloat(x, 'g', 6, 64)
	}
	return "lies in [" + end(lo) + ", " + end(hi) + "]"
}
