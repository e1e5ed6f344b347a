package calibrate

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
)

var benchSink float64

// BenchmarkSigma measures a whole σ calibration (bracket + Illinois) per
// accountant for ε = 1, δ = 1e-5, q = 0.01, T = 10,000; the evaluations
// per calibration are reported as evals/op.
func BenchmarkSigma(b *testing.B) {
	tr := Training{SamplingRate: 0.01, Steps: 10000}
	for _, k := range registry.Kinds() {
		b.Run(string(k), func(b *testing.B) {
			newAcc := func() (accounting.Method, error) { return registry.New(k, registry.Options{}) }
			evals := 0
			for b.Loop() {
				r, err := Sigma(b.Context(), newAcc, tr, 1, 1e-5, Options{})
				if err != nil {
					b.Fatal(err)
				}
				benchSink, evals = r.X, r.Evaluations
			}
			b.ReportMetric(float64(evals), "evals/op")
		})
	}
}

// BenchmarkEpsilon measures one ε(δ) query on a fresh accountant (compose
// the run, then query over the accountant's whole order grid or PLD) for
// σ = 4, q = 0.01, T = 10,000, δ = 1e-5.
func BenchmarkEpsilon(b *testing.B) {
	ev := accounting.SubsampledGaussian(4, 0.01, 10000)
	for _, k := range registry.Kinds() {
		b.Run(string(k), func(b *testing.B) {
			newAcc := func() (accounting.Method, error) { return registry.New(k, registry.Options{}) }
			for b.Loop() {
				e, err := Epsilon(b.Context(), newAcc, ev, 1e-5)
				if err != nil {
					b.Fatal(err)
				}
				benchSink = e
			}
		})
	}
}
