package main

import (
	"fmt"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/moments"
	"github.com/dpcalc/dpcalc/internal/query"
)

// MomentsCmd prints the log moments of the subsampled Gaussian.
type MomentsCmd struct {
	Sigma   float64   `name:"sigma" required:"" help:"Noise multiplier σ, > 0."`
	Q       float64   `name:"q" required:"" help:"Sampling rate q, in (0, 1]."`
	Lambdas []float64 `name:"lambdas" placeholder:"LAMBDA" default:"1,2,4,8,16,32" help:"Moment orders λ ≥ 2^-10 (Rényi orders λ+1 > 1), comma-separated."`
}

type momentsOutput struct {
	Sigma   float64         `json:"sigma"`
	Q       float64         `json:"q"`
	Moments []momentsRecord `json:"moments"`
	Version string          `json:"version"`
}

type momentsRecord struct {
	Lambda   float64  `json:"lambda"`
	LogE1    *float64 `json:"log_e1"`
	LogE2    *float64 `json:"log_e2"`
	Alpha    *float64 `json:"alpha"`
	AbsError *float64 `json:"abs_error"`
	Bound    *float64 `json:"asymptotic_bound,omitempty"`
}

// Run implements the command.
func (c *MomentsCmd) Run(e *env) error {
	if err := checkFlag("sigma", accounting.CheckNoiseMultiplier(c.Sigma)); err != nil {
		return err
	}
	if err := checkFlag("q", accounting.CheckSamplingRate(c.Q)); err != nil {
		return err
	}
	if len(c.Lambdas) == 0 || len(c.Lambdas) > 10000 {
		return usageError("invalid --lambdas: %d values, want 1..10000", len(c.Lambdas))
	}
	for _, l := range c.Lambdas {
		if err := checkFlag("lambdas", accounting.CheckOrder(l, moments.MinOrder)); err != nil {
			return err
		}
	}
	ms, err := moments.LogMoments(c.Sigma, c.Q, c.Lambdas)
	if err != nil {
		return flagErr(err)
	}
	out := momentsOutput{Sigma: c.Sigma, Q: c.Q, Version: versionString()}
	for _, m := range ms {
		r := momentsRecord{Lambda: m.Lambda, LogE1: query.FinitePtr(m.LogE1), LogE2: query.FinitePtr(m.LogE2), Alpha: query.FinitePtr(m.Alpha), AbsError: query.FinitePtr(m.AbsError)}
		if c.Q < 1 {
			r.Bound = query.FinitePtr(moments.MomentBound(c.Sigma, c.Q, m.Lambda))
		}
		out.Moments = append(out.Moments, r)
	}
	if e.json {
		return writeJSON(e.stdout, out)
	}
	t := newTable(e.stdout)
	t.Header("λ", "log E1", "log E2", "α(λ)", "abs error", "q²λ(λ+1)/((1−q)σ²)")
	for _, r := range out.Moments {
		t.Append(fmtG(r.Lambda), fmtPtr(r.LogE1), fmtPtr(r.LogE2), fmtPtr(r.Alpha), fmtPtr(r.AbsError), fmtPtr(r.Bound))
	}
	if err := t.Render(); err != nil {
		return err
	}
	if c.Q == 1 {
		fmt.Fprintln(e.stdout, "q = 1: α(λ) = λ(λ+1)/(2σ²) exactly")
	}
	return nil
}
