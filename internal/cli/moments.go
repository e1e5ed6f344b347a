package cli

import (
	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/moments"
)

// MomentsCmd prints the log moments of the subsampled Gaussian.
type MomentsCmd struct {
	Sigma   float64   `name:"sigma" required:"" help:"Noise multiplier σ, > 0."`
	Q       float64   `name:"q" required:"" help:"Sampling rate q, in (0, 1]."`
	Lambdas []float64 `name:"lambdas" placeholder:"LAMBDA" default:"1,2,4,8,16,32" help:"Moment orders λ ≥ 2^-10 (Rényi orders λ+1 > 1), comma-separated."`
}

// Moments is the answer of dpcalc moments.
type Moments struct {
	Sigma   float64        `json:"sigma"`
	Q       float64        `json:"q"`
	Moments []MomentRecord `json:"moments"`
	Version string         `json:"version"`
}

// MomentRecord is the log moments at one order λ.
type MomentRecord struct {
	Lambda   float64  `json:"lambda"`
	LogE1    *float64 `json:"log_e1"`
	LogE2    *float64 `json:"log_e2"`
	Alpha    *float64 `json:"alpha"`
	AbsError *float64 `json:"abs_error"`
	Bound    *float64 `json:"asymptotic_bound,omitempty"`
}

// Run implements the command.
func (c *MomentsCmd) Run(e *Env) error {
	if err := checkFlag("sigma", accounting.CheckNoiseMultiplier(c.Sigma)); err != nil {
		return err
	}
	if err := checkFlag("q", accounting.CheckSamplingRate(c.Q)); err != nil {
		return err
	}
	if len(c.Lambdas) == 0 || len(c.Lambdas) > 10000 {
		return usageAt("lambdas", "invalid --lambdas: %d values, want 1..10000", len(c.Lambdas))
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
	out := &Moments{Sigma: c.Sigma, Q: c.Q, Version: Version()}
	for _, m := range ms {
		r := MomentRecord{Lambda: m.Lambda, LogE1: FinitePtr(m.LogE1), LogE2: FinitePtr(m.LogE2), Alpha: FinitePtr(m.Alpha), AbsError: FinitePtr(m.AbsError)}
		if c.Q < 1 {
			r.Bound = FinitePtr(moments.MomentBound(c.Sigma, c.Q, m.Lambda))
		}
		out.Moments = append(out.Moments, r)
	}
	e.Print(out)
	return nil
}
