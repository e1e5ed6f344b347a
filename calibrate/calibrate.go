package calibrate

import (
	"context"
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
)

// Factory returns a fresh, empty accounting method (an accountant or a
// procedure). Calibration composes events into methods it makes itself and
// never changes a method's state otherwise.
type Factory func() (accounting.Method, error)

// Training describes T steps of a Poisson-subsampled Gaussian mechanism, the
// event of DP-SGD (Abadi et al. 2016, Algorithm 1).
type Training struct {
	SamplingRate float64 // q ∈ (0, 1]
	Steps        int     // T ≥ 1
}

// Event returns the event of the training run at noise multiplier sigma.
func (t Training) Event(sigma float64) accounting.Event {
	return accounting.SubsampledGaussian(sigma, t.SamplingRate, t.Steps)
}

func (t Training) check() error {
	if err := accounting.CheckSamplingRate(t.SamplingRate); err != nil {
		return err
	}
	return accounting.CheckSteps(t.Steps)
}

// Epsilon returns ε(δ) of e under a fresh accountant from newAcc.
func Epsilon(ctx context.Context, newAcc Factory, e accounting.Event, delta float64) (float64, error) {
	if err := accounting.CheckDelta(delta); err != nil {
		return 0, err
	}
	acc, err := composed(newAcc, e)
	if err != nil {
		return 0, err
	}
	return acc.Epsilon(ctx, delta)
}

// composed returns a fresh accountant from newAcc holding e.
func composed(newAcc Factory, e accounting.Event) (accounting.Method, error) {
	acc, err := newAcc()
	if err != nil {
		return nil, err
	}
	if err := acc.Compose(e, 1); err != nil {
		return nil, err
	}
	return acc, nil
}

// Delta returns δ(ε) of e under a fresh accountant from newAcc.
func Delta(ctx context.Context, newAcc Factory, e accounting.Event, eps float64) (float64, error) {
	if err := accounting.CheckEpsilon(eps); err != nil {
		return 0, err
	}
	acc, err := composed(newAcc, e)
	if err != nil {
		return 0, err
	}
	return acc.Delta(ctx, eps)
}

// Sigma returns the smallest noise multiplier σ (to relative tolerance
// opt.RelTol, default 1e-6) for which training t is (eps, delta)-DP under
// the accountant newAcc makes. The σ returned is on the safe side: it was
// evaluated and its ε is ≤ eps. Result.Value is that ε.
//
// If no σ ≤ opt.Max (default 1e6) meets the budget the error matches
// ErrUnreachable.
func Sigma(ctx context.Context, newAcc Factory, t Training, eps, delta float64, opt Options) (Result, error) {
	if err := t.check(); err != nil {
		return Result{}, err
	}
	return SigmaFor(ctx, newAcc, t.Event, eps, delta, opt)
}

// SigmaFor is [Sigma] for any family of events indexed by a noise
// multiplier, e.g. a training run preceded by a DP-PCA release. event(σ)
// must become more private as σ grows.
func SigmaFor(ctx context.Context, newAcc Factory, event func(sigma float64) accounting.Event, eps, delta float64, opt Options) (Result, error) {
	if err := accounting.CheckEpsilon(eps); err != nil {
		return Result{}, err
	}
	if err := accounting.CheckDelta(delta); err != nil {
		return Result{}, err
	}
	if opt.Min <= 0 {
		opt.Min = 1e-3
	}
	f := func(sigma float64) (float64, error) { return Epsilon(ctx, newAcc, event(sigma), delta) }
	r, err := Smallest(f, eps, 1, opt)
	if err != nil {
		return r, err
	}
	if !(r.Value <= eps) { // defence in depth: Smallest guarantees it
		return r, fmt.Errorf("calibrate: internal error: ε(σ=%g) = %g exceeds the target %g", r.X, r.Value, eps)
	}
	return r, nil
}

// MaxSteps returns the largest number of steps T ≤ limit for which T steps of
// the Poisson-subsampled Gaussian with noise multiplier sigma and sampling
// rate q are (eps, delta)-DP under the accountant newAcc makes. It returns 0
// when not even one step fits.
func MaxSteps(ctx context.Context, newAcc Factory, sigma, q, eps, delta float64, limit int) (int, error) {
	if err := accounting.CheckNoiseMultiplier(sigma); err != nil {
		return 0, err
	}
	if err := accounting.CheckSamplingRate(q); err != nil {
		return 0, err
	}
	if err := accounting.CheckEpsilon(eps); err != nil {
		return 0, err
	}
	if err := accounting.CheckDelta(delta); err != nil {
		return 0, err
	}
	ok := func(steps int) (bool, error) {
		e, err := Epsilon(ctx, newAcc, accounting.SubsampledGaussian(sigma, q, steps), delta)
		return e <= eps, err
	}
	n, _, err := LargestInt(ok, limit)
	return n, err
}

// StepsForEpochs returns T = ⌈epochs/q⌉, the number of Poisson-sampled steps
// whose expected number of passes over the data is epochs (Abadi et al.
// 2016 §5.1: T = E/q). A quotient within 1e-9 (relative) of an integer is
// taken as that integer, so that 200/0.01 gives 20000 and 7/0.07 gives 100
// despite binary rounding of q; otherwise the count is rounded up, the
// conservative direction for privacy accounting of a run that must complete
// its epochs.
func StepsForEpochs(epochs, q float64) (int, error) {
	if err := accounting.CheckSamplingRate(q); err != nil {
		return 0, err
	}
	if math.IsNaN(epochs) || math.IsInf(epochs, 0) || epochs <= 0 {
		return 0, &accounting.ParamError{Name: "epochs", Value: epochs, Want: "finite and > 0"}
	}
	x := epochs / q
	if x > 1<<53 {
		return 0, &accounting.ParamError{Name: "epochs", Value: epochs, Want: fmt.Sprintf("<= %s for q = %g (at most 2^53 steps)", accounting.FormatValue(float64(1<<53)*q), q)}
	}
	r := math.Round(x)
	if math.Abs(x-r) <= 1e-9*r {
		x = r
	}
	t := int(math.Ceil(x))
	if t < 1 {
		t = 1
	}
	return t, nil
}

// EpochsForSteps returns the expected number of passes, steps·q.
func EpochsForSteps(steps int, q float64) float64 { return float64(steps) * q }
