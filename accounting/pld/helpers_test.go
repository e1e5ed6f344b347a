package pld

import (
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
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
func (a *Accountant) res0(t testing.TB) *result {
	t.Helper()
	r, err := a.result(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// pairsOf returns the privacy-loss pairs of the one step e normalises to
// under adj.
func pairsOf(t testing.TB, e accounting.Event, adj accounting.Adjacency) *mechanism.PLD {
	t.Helper()
	p, err := accounting.NormalizeUnder(adj, e, 1)
	if err != nil || len(p.Steps) != 1 {
		t.Fatalf("%v: %d steps, %v", e, len(p.Steps), err)
	}
	m, err := mechanism.Of(p.Steps[0])
	if err != nil {
		t.Fatal(err)
	}
	pl, err := m.PLD()
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// gaussRemove returns the remove pair of a Gaussian with noise sigma
// Poisson-sampled at q.
func gaussRemove(t testing.TB, sigma, q float64) mechanism.Pair {
	t.Helper()
	if q == 1 {
		return pairsOf(t, gauss(sigma), accounting.AddRemove).Remove
	}
	return pairsOf(t, sampled(q, gauss(sigma)), accounting.AddRemove).Remove
}
