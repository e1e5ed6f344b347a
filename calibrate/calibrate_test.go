package calibrate

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// gaussAcc is a closed-form test accountant: it treats every
// PoissonSampled{q, Gaussian{σ}} step as a Gaussian with ρ = 1/(2σ²)
// (ignoring sampling) and converts with ε = ρ + 2√(ρ log 1/δ)
// (Bun–Steinke 2016, Prop. 1.3). Only what calibration needs.
type gaussAcc struct{ rho float64 }

func (a *gaussAcc) Kind() accounting.Kind { return "test" }
func (a *gaussAcc) Compose(e accounting.Event, count int) error {
	n := 1
	if sc, ok := e.(accounting.SelfComposed); ok {
		e, n = sc.Event, sc.Count
	}
	ps, ok := e.(accounting.PoissonSampled)
	if !ok {
		return errors.New("test accountant: want PoissonSampled")
	}
	g := ps.Event.(accounting.Gaussian)
	a.rho += float64(count*n) / (2 * g.NoiseMultiplier * g.NoiseMultiplier)
	return nil
}
func (a *gaussAcc) Supports(accounting.Step) error { return nil }
func (a *gaussAcc) Epsilon(_ context.Context, delta float64) (float64, error) {
	return a.rho + 2*math.Sqrt(a.rho*math.Log(1/delta)), nil
}
func (a *gaussAcc) Delta(_ context.Context, eps float64) (float64, error) {
	if eps < a.rho {
		return 1, nil
	}
	return math.Exp(-(eps - a.rho) * (eps - a.rho) / (4 * a.rho)), nil
}

func newGauss() (accounting.Method, error) { return &gaussAcc{}, nil }

// sigmaExact inverts ε = ρ + 2√(ρL), L = log 1/δ, ρ = T/(2σ²):
// √ρ = −√L + √(L + ε), so σ = √(T/2) / √ρ.
func sigmaExact(eps, delta float64, steps int) float64 {
	l := math.Log(1 / delta)
	sr := -math.Sqrt(l) + math.Sqrt(l+eps)
	return math.Sqrt(float64(steps)/2) / sr
}

func TestSigmaClosedForm(t *testing.T) {
	tests := []struct {
		name       string
		eps, delta float64
		steps      int
	}{
		{"one step", 1, 1e-5, 1},
		{"dpsgd", 1, 1e-5, 20000},
		{"small eps", 0.01, 1e-10, 100},
		{"large eps", 50, 1e-3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := sigmaExact(tt.eps, tt.delta, tt.steps)
			r, err := Sigma(t.Context(), newGauss, Training{SamplingRate: 0.5, Steps: tt.steps}, tt.eps, tt.delta, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The closed-form inverse itself carries rounding error of a
			// few ulps; the guarantee that matters is r.Value ≤ eps below.
			if r.X < want*(1-1e-12) {
				t.Errorf("σ = %.15g below the exact %.15g: unsafe", r.X, want)
			}
			if rel := (r.X - want) / want; rel > 1e-6 {
				t.Errorf("σ = %.12g, exact %.12g, relative excess %g > 1e-6", r.X, want, rel)
			}
			if r.Value > tt.eps {
				t.Errorf("ε(σ) = %g > target %g", r.Value, tt.eps)
			}
			if r.Evaluations > 40 {
				t.Errorf("%d evaluations, want ≤ 40", r.Evaluations)
			}
		})
	}
}

func TestSigmaUnreachable(t *testing.T) {
	// ε ≥ ρ for every σ, so with ρ ≥ T/(2·1e12) a tiny ε at huge T is
	// unreachable within σ ≤ 1e6.
	_, err := Sigma(t.Context(), newGauss, Training{SamplingRate: 1, Steps: 1 << 40}, 1e-3, 1e-5, Options{})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
}

func TestSigmaBadInput(t *testing.T) {
	for _, tc := range []struct {
		name       string
		tr         Training
		eps, delta float64
		param      string
	}{
		{"q zero", Training{0, 10}, 1, 1e-5, "q"},
		{"q nan", Training{math.NaN(), 10}, 1, 1e-5, "q"},
		{"steps", Training{0.1, 0}, 1, 1e-5, "steps"},
		{"eps", Training{0.1, 10}, -1, 1e-5, "eps"},
		{"delta", Training{0.1, 10}, 1, 1, "delta"},
	} {
		_, err := Sigma(t.Context(), newGauss, tc.tr, tc.eps, tc.delta, Options{})
		var pe *accounting.ParamError
		if !errors.As(err, &pe) || pe.Name != tc.param {
			t.Errorf("%s: err = %v, want ParamError for %s", tc.name, err, tc.param)
		}
	}
}

func TestMaxSteps(t *testing.T) {
	// ε(T) = T/(2σ²) + 2√(T/(2σ²)·L); the largest T with ε ≤ target is
	// ⌊2σ²ρ*⌋ with √ρ* = −√L + √(L+ε).
	sigma, eps, delta := 3.0, 2.0, 1e-5
	l := math.Log(1 / delta)
	sr := -math.Sqrt(l) + math.Sqrt(l+eps)
	want := int(math.Floor(2 * sigma * sigma * sr * sr))
	got, err := MaxSteps(t.Context(), newGauss, sigma, 0.1, eps, delta, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("MaxSteps = %d, want %d", got, want)
	}
	if got, _ := MaxSteps(t.Context(), newGauss, 0.01, 0.1, 0.1, delta, 100); got != 0 {
		t.Errorf("MaxSteps with tiny σ = %d, want 0", got)
	}
}

func TestStepsForEpochs(t *testing.T) {
	tests := []struct {
		epochs, q float64
		want      int
	}{
		{200, 0.01, 20000},
		{100, 0.05, 2000},
		{7, 0.07, 100}, // Opacus' int(7/0.07) gives 99
		{90, 0.04, 2250},
		{1, 0.3, 4}, // 3.33 rounds up
		{0.001, 1, 1},
	}
	for _, tt := range tests {
		got, err := StepsForEpochs(tt.epochs, tt.q)
		if err != nil || got != tt.want {
			t.Errorf("StepsForEpochs(%g, %g) = %d, %v; want %d", tt.epochs, tt.q, got, err, tt.want)
		}
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1), 1e300} {
		if _, err := StepsForEpochs(bad, 0.01); err == nil {
			t.Errorf("StepsForEpochs(%g) accepted", bad)
		}
	}
}

func TestEpsilonCurveMatchesPointwise(t *testing.T) {
	steps := []int{1, 10, 10, 300, 4000}
	got, err := EpsilonCurve(t.Context(), newGauss, 2, 0.1, steps, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		want, _ := Epsilon(t.Context(), newGauss, accounting.SubsampledGaussian(2, 0.1, s), 1e-5)
		if math.Abs(got[i]-want) > 1e-12*want {
			t.Errorf("steps %d: curve %g, pointwise %g", s, got[i], want)
		}
	}
	if _, err := EpsilonCurve(t.Context(), newGauss, 2, 0.1, []int{5, 3}, 1e-5); err == nil {
		t.Error("unsorted steps accepted")
	}
}

func TestSigmaCurve(t *testing.T) {
	eps := []float64{0.1, 0.5, 1, 5, 10}
	rs, err := SigmaCurve(t.Context(), newGauss, Training{SamplingRate: 0.01, Steps: 20000}, eps, 1e-4, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		want := sigmaExact(eps[i], 1e-4, 20000)
		if r.X < want*(1-1e-12) || r.X > want*(1+1e-6) {
			t.Errorf("ε = %g: σ = %.10g, want %.10g", eps[i], r.X, want)
		}
	}
}
