package main

import "errors"

// MomentsCmd prints the log moments of the subsampled Gaussian.
type MomentsCmd struct {
	Sigma   float64   `name:"sigma" required:"" help:"Noise multiplier σ, > 0."`
	Q       float64   `name:"q" required:"" help:"Sampling rate q, in (0, 1]."`
	Lambdas []float64 `name:"lambdas" default:"1,2,4,8,16,32" help:"Moment orders λ ≥ 1, comma-separated (default: ${default})."`
}

// Run implements the command.
func (c *MomentsCmd) Run(e *env) error { return errors.New("moments: not yet available") }
