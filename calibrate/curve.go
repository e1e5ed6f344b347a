package calibrate

import (
	"context"
	"fmt"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
)

// EpsilonCurve returns ε(δ) after steps[i] steps of the Poisson-subsampled
// Gaussian (σ, q), for steps sorted ascending (Abadi et al. 2016 Figure 2).
// It composes incrementally into one accountant and queries Epsilon at each
// point, so every value is exactly what Epsilon (and the CLI's eps) returns
// for that composition: one answer per question. An accountant's faster
// curve ([accounting.CurveReporter], pld's shared-grid curve) is not used,
// because its values may differ from Epsilon's in the last digits (pld:
// about 1e-6 relative, more where Epsilon refines a coarse grid).
func EpsilonCurve(ctx context.Context, newAcc Factory, sigma, q float64, steps []int, delta float64) ([]float64, error) {
	if err := accounting.CheckNoiseMultiplier(sigma); err != nil {
		return nil, err
	}
	if err := accounting.CheckSamplingRate(q); err != nil {
		return nil, err
	}
	if err := accounting.CheckDelta(delta); err != nil {
		return nil, err
	}
	if !sort.IntsAreSorted(steps) {
		return nil, fmt.Errorf("calibrate: steps must be sorted ascending")
	}
	for _, s := range steps {
		if err := accounting.CheckSteps(s); err != nil {
			return nil, err
		}
	}
	acc, err := newAcc()
	if err != nil {
		return nil, err
	}
	step := accounting.PoissonSampled{SamplingRate: q, Event: accounting.Gaussian{NoiseMultiplier: sigma}}
	out := make([]float64, len(steps))
	done := 0
	for i, s := range steps {
		if s > done {
			if err := acc.Compose(step, s-done); err != nil {
				return nil, err
			}
			done = s
		}
		if out[i], err = acc.Epsilon(ctx, delta); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SigmaCurve returns the calibrated σ (safe side, see [Sigma]) for each
// target ε in eps, for training t at δ (DPD Figure 1(c),(f); DPVD Figure 3).
// Each search starts from the previous answer.
func SigmaCurve(ctx context.Context, newAcc Factory, t Training, eps []float64, delta float64, opt Options) ([]Result, error) {
	out := make([]Result, len(eps))
	guess := 1.0
	for i, e := range eps {
		if err := t.check(); err != nil {
			return nil, err
		}
		if err := accounting.CheckEpsilon(e); err != nil {
			return nil, err
		}
		if err := accounting.CheckDelta(delta); err != nil {
			return nil, err
		}
		o := opt
		if o.Min <= 0 {
			o.Min = 1e-3
		}
		f := func(sigma float64) (float64, error) { return Epsilon(ctx, newAcc, t.Event(sigma), delta) }
		r, err := Smallest(f, e, guess, o)
		if err != nil {
			return nil, fmt.Errorf("calibrate: ε = %g: %w", e, err)
		}
		out[i] = r
		guess = r.X
	}
	return out, nil
}
