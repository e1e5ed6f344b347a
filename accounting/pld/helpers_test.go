package pld

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// Shorthands for the events of the tests.

func gauss(sigma float64) accounting.Event { return accounting.Gaussian{NoiseMultiplier: sigma} }

func sampled(q float64, e accounting.Event) accounting.Event {
	return accounting.PoissonSampled{SamplingRate: q, Event: e}
}

func self(e accounting.Event, n int) accounting.Event {
	return accounting.SelfComposed{Event: e, Count: n}
}

func composed(es ...accounting.Event) accounting.Event { return accounting.Composed{Events: es} }

func epsDelta(eps, delta float64) accounting.Event {
	return accounting.EpsilonDelta{Epsilon: eps, Delta: delta}
}

// res0 returns the composition on the first grid with the default
// truncation (the one every query uses unless the tails are cut at its δ).
func (a *Accountant) res0(t testing.TB) *pldResult {
	t.Helper()
	r, err := a.result(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return r
}
