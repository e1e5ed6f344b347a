package cli

import (
	"errors"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/calibrate"
)

// GaussianCmd calibrates a single release of the Gaussian mechanism.
type GaussianCmd struct {
	Eps         float64 `name:"eps" required:"" help:"Target ε, > 0."`
	Delta       float64 `name:"delta" default:"1e-5" help:"Target δ, in (0, 1)."`
	Sensitivity float64 `name:"sensitivity" default:"1" help:"L2 sensitivity Δ, > 0."`
}

// Gaussian is the answer of dpcalc gaussian.
type Gaussian struct {
	Epsilon      float64  `json:"epsilon"`
	Delta        float64  `json:"delta"`
	Sensitivity  float64  `json:"sensitivity"`
	SigmaExact   float64  `json:"sigma_analytic"`
	SigmaClassic *float64 `json:"sigma_classic"`
	DeltaClassic *float64 `json:"delta_at_sigma_classic"`
	Note         string   `json:"note,omitempty"`
	Version      string   `json:"version"`

	deltaExact float64 // exact δ at SigmaExact (the table's)
}

// Run implements the command.
func (c *GaussianCmd) Run(e *Env) error {
	if err := checkFlag("eps", accounting.CheckEpsilon(c.Eps)); err != nil {
		return err
	}
	if err := checkFlag("delta", accounting.CheckDelta(c.Delta)); err != nil {
		return err
	}
	if !(c.Sensitivity > 0) || math.IsInf(c.Sensitivity, 0) {
		return usageAt("sensitivity", "invalid --sensitivity: %s, want finite and > 0", accounting.FormatValue(c.Sensitivity))
	}
	exact, err := calibrate.AnalyticGaussianSigma(c.Eps, c.Delta, c.Sensitivity)
	if err != nil {
		return flagErr(err)
	}
	r := &Gaussian{Epsilon: c.Eps, Delta: c.Delta, Sensitivity: c.Sensitivity, SigmaExact: exact, Version: Version()}
	classic, err := calibrate.ClassicGaussianSigma(c.Eps, c.Delta, c.Sensitivity)
	switch {
	case errors.Is(err, calibrate.ErrUnreachable):
		r.Note = "classic σ exceeds the largest float64"
	case err != nil:
		return flagErr(err)
	default:
		r.SigmaClassic = ptr(classic)
		if d, err := gaussian.Delta(classic, c.Sensitivity, c.Eps); err == nil {
			r.DeltaClassic = ptr(d)
		}
	}
	if c.Eps >= 1 {
		r.Note = JoinNotes(r.Note, "classic bound proved only for ε < 1 (Dwork–Roth Thm A.1)")
	}
	r.deltaExact, _ = gaussian.Delta(exact, c.Sensitivity, c.Eps)
	e.Print(r)
	return nil
}
