package calibrate

import (
	"testing"
	"time"

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

// BenchmarkSigmaPLDSeeded measures pld's σ calibration seeded by rdp
// (SigmaSeeded, what dpcalc sigma runs) against, in the same run, the
// plain search from σ = 1 on the same accountant (SigmaFor) and rdp's own
// calibration: ns/op is the seeded search; x-plain and x-rdp are the
// ratios of its time to theirs, evals/op and plain-evals/op their pld
// queries. Settings: the headline (ε 1, δ 1e-5, q 0.01, 200 epochs) and a
// small δ (ε 7.78807, δ 1e-10, q 1e-3, T 1000: σ ≈ 0.5; at a σ of 1 or
// 4 the plain search would start on the root).
func BenchmarkSigmaPLDSeeded(b *testing.B) {
	for _, c := range []struct {
		name          string
		eps, delta, q float64
		steps         int
	}{
		{"headline", 1, 1e-5, 0.01, 20000},
		{"delta1e-10", 7.78807, 1e-10, 1e-3, 1000},
	} {
		b.Run(c.name, func(b *testing.B) {
			tr := Training{SamplingRate: c.q, Steps: c.steps}
			newPLD := func() (accounting.Method, error) { return registry.New(accounting.KindPLD, registry.Options{}) }
			newRDP := func() (accounting.Method, error) { return registry.New(accounting.KindRDP, registry.Options{}) }
			var seeded, plain, rdp time.Duration
			var evals, plainEvals int
			for b.Loop() {
				t0 := time.Now()
				r, _, err := SigmaSeeded(b.Context(), newPLD, newRDP, tr.Event, c.eps, c.delta, Options{})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				p, err := SigmaFor(b.Context(), newPLD, tr.Event, c.eps, c.delta, Options{})
				if err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if _, err := SigmaFor(b.Context(), newRDP, tr.Event, c.eps, c.delta, Options{}); err != nil {
					b.Fatal(err)
				}
				seeded, plain, rdp = seeded+t1.Sub(t0), plain+t2.Sub(t1), rdp+time.Since(t2)
				benchSink, evals, plainEvals = r.X, r.Evaluations, p.Evaluations
			}
			b.ReportMetric(float64(seeded.Nanoseconds())/float64(b.N), "ns/op")
			b.ReportMetric(float64(seeded)/float64(plain), "x-plain")
			b.ReportMetric(float64(seeded)/float64(rdp), "x-rdp")
			b.ReportMetric(float64(evals), "evals/op")
			b.ReportMetric(float64(plainEvals), "plain-evals/op")
		})
	}
}
