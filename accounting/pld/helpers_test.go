package pld

import "github.com/dpcalc/dpcalc/accounting"

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
