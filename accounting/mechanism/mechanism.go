package mechanism

import (
	"context"
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
)

// Mechanism is one step of a plan as the accountants see it: a mechanism,
// the sampling of the records it runs on and the neighbouring relation.
// Each states what an accountant needs to bound it, or why it cannot:
//
//	PLD   its privacy-loss pairs (the pld accountant)
//	RDP   its Rényi curve as log moments (rdp and ma)
//	ZCDP  its zero-concentrated guarantee (zcdp)
//
// Values are comparable (the pld accountant counts steps by them) and
// immutable. The set is closed: [Of] makes them.
type Mechanism interface {
	// Name is the mechanism's short name, as events name it: "Gaussian",
	// "Laplace", "zCDP", ...
	Name() string
	// Event returns one repetition as an event, its sampling included.
	Event() accounting.Event
	// Rate is the share of the records one repetition sees: the Poisson
	// rate, the sample size over the data set size rounded up, or 1.
	Rate() float64
	// PLD returns the mechanism's privacy-loss pairs, or an error saying
	// why it has none under its sampling and relation.
	PLD() (*PLD, error)
	// RDP returns the mechanism's Rényi curve, or an error saying why it
	// has none.
	RDP() (RDP, error)
	// ZCDP returns (ρ, ξ) such that one repetition, unsampled, is
	// (ξ, ρ)-zCDP (Bun and Steinke 2016, Definition 1.1), or an error. It
	// is also a bound for every sampling of it (Rényi divergence is
	// jointly quasi-convex, van Erven and Harremoës 2014, so sampling never
	// raises it); which samplings an accountant accepts is its own rule.
	ZCDP() (rho, xi float64, err error)

	// order is the mechanism's place in the order of [Compare].
	order() []float64
}

// Compare orders mechanisms for reproducible sums: by noise scale, then
// sampling rate, dataset and sample size, then kind and other parameters.
// It returns −1, 0 or +1.
func Compare(a, b Mechanism) int {
	x, y := a.order(), b.order()
	for i := 0; i < len(x) && i < len(y); i++ {
		switch {
		case x[i] < y[i]:
			return -1
		case x[i] > y[i]:
			return 1
		}
	}
	switch {
	case len(x) < len(y):
		return -1
	case len(x) > len(y):
		return 1
	}
	return 0
}

// PLD is what the pld accountant needs of a mechanism: a dominating pair
// for each order of the neighbouring data sets, and what composes faster
// than by discretisation.
type PLD struct {
	// Remove and Add are dominating pairs (Zhu, Dong, Wang 2022,
	// Definition 7) of the two directions: under Remove, P is the output
	// distribution on the data set with the differing record and Q the one
	// without it; under Add the reverse. Under replace-one the two
	// directions are the two orders of the replaced pair of records.
	Remove, Add Pair
	// Symmetric reports that one pair dominates both directions, so that
	// composing Remove alone bounds the composition (Add is then a pair
	// with the same privacy-loss distribution, or Remove itself).
	Symmetric bool
	// GaussianSigma, when positive, says that both pairs are exactly the
	// Gaussian shift pair N(0, σ²) against N(1, σ²) with σ = GaussianSigma:
	// such steps compose in closed form (T Gaussians with σ_i are one
	// with σ = (Σ σ_i^−2)^−1/2; Balle and Wang 2018, Theorem 8).
	GaussianSigma float64
	// MaxLoss is the largest |L| either pair's loss takes (+Inf when it is
	// unbounded): a composition of such steps is pure DP at the sum of
	// their MaxLoss.
	MaxLoss float64
	// Family, when not nil, places the mechanism among those that differ
	// only in noise scale and sampling rate, ordered by dominance; the pld
	// accountant groups many distinct steps by it.
	Family *Family
	// Lower, when not nil, returns a certified lower bound on the privacy
	// of count repetitions that needs no discretisation (ok false when it
	// does not apply to that count).
	Lower func(count int) (l CompositionLower, ok bool)
	// Attained reports that the pairs are the step's own: for some pair of
	// neighbouring data sets, and some query of the step's sensitivity
	// (each step of a run may have its own), the step releases exactly P
	// against Q in each direction. A lower bound on a composition of
	// attained pairs is then one on the true ε of the run, not only on the
	// pairs'. True for the unsampled and Poisson-sampled mechanisms here;
	// false where the pairs only dominate (fixed-size sampling).
	Attained bool
	// Slack, when positive, is an upper bound on η for attained pairs that
	// are the step's own only up to η in total variation (a user mixture's
	// left-out binomial tail, [accounting.MixtureOfGaussians]): over T such
	// steps the pairs' lower bound on δ(ε) is one on the run's less
	// T·η·(2 + e^ε).
	Slack float64
	// Witness, when Attained is false, is a mechanism whose pairs are
	// attained within every run of this one, or are post-processings of
	// pairs that are (nil: none is known), so that the lower bound of its
	// composition is one on the true ε of the run: for fixed-size sampling
	// of γ = m/n under replace-one, the Poisson-sampled mechanism at rate γ
	// under add-remove (a fixed pair of neighbours attains it); for a
	// 1-out-of-t random allocation, the dominated pairs of
	// [AllocationPairs].
	Witness Mechanism
}

// Family places a mechanism among those that differ only in a noise scale
// and a sampling rate (Poisson, or 1 for none), ordered by dominance: a
// member with a smaller scale or a larger rate has dominating pairs for
// every member with a larger scale and a smaller rate, so replacing each
// step of a group by the member with the group's smallest scale and
// largest rate bounds the composition from above, and by the one with the
// largest scale and smallest rate from below.
type Family struct {
	// Name tells families apart ("Gaussian", "Laplace").
	Name string
	// Scale is the noise scale and Rate the sampling rate of this member.
	Scale, Rate float64
	// With returns the member with the given scale and rate.
	With func(scale, rate float64) Mechanism
}

// CompositionLower is a certified lower bound on the privacy loss of a
// composition that costs no discretisation.
type CompositionLower interface {
	// EpsilonLower returns a lower bound on ε(delta) (0 when none is found).
	EpsilonLower(ctx context.Context, delta float64) (float64, error)
	// DeltaLower returns a lower bound on δ(eps).
	DeltaLower(ctx context.Context, eps float64) (float64, error)
}

// TailsRelError is the relative error each log tail of [Pair.Tails] is
// within, as a mass: a few hundred ulps, the rounding of erfc, log and exp
// and of the Euler–Maclaurin and summation tails of lattice pairs.
const TailsRelError = 1e-13

// Tails holds the log masses of a privacy loss L = log dP/dQ on both sides
// of a point l: log P(L > l), log Q(L > l), log P(L ≤ l), log Q(L ≤ l).
type Tails struct {
	PAbove, QAbove, PBelow, QBelow float64
}

// Pair is a dominating pair (P, Q) of one direction, described by its
// privacy loss L = log dP/dQ (+∞ where Q has no mass).
type Pair interface {
	// Tails returns the log masses of L on both sides of l, each within
	// TailsRelError as a mass.
	Tails(l float64) Tails
	// Truncation returns losses lo < hi outside which P has mass at most
	// eta on each side.
	Truncation(eta float64) (lo, hi float64)
	// Moments returns approximations of the mean and variance of L under
	// P: they only steer grids and windows, no bound depends on them.
	Moments() (mean, variance float64)
	// Support describes where L has mass.
	Support() Support
	// TailsCost is the cost of one Tails in evaluations of the Gaussian
	// pair's (about 0.3 µs); accountants weigh their cancellation checks
	// by it.
	TailsCost() int
}

// Support describes where a privacy loss has mass: a density, point masses
// at finitely many losses (Atoms), every value of a countable set
// (Lattice), and an atom at +∞.
type Support struct {
	// Atoms lists the finite losses that carry mass on their own, when
	// they are finitely many (the two ends of the Laplace loss); nil
	// otherwise.
	Atoms []float64
	// Lattice reports that L takes countably many values, each an atom
	// (a mechanism on integers): no density anywhere.
	Lattice bool
	// LogInf is log P(L = +∞): −Inf when Q has mass wherever P has.
	LogInf float64
}

// continuous is the support of a loss with a density and no atoms.
var continuous = Support{LogInf: math.Inf(-1)}

// Of returns the mechanism of one step of a plan (its count aside), or an
// *accounting.UnsupportedEventError for a step it does not know. It is
// the one place that maps events to mechanisms.
func Of(s accounting.Step) (Mechanism, error) {
	smp := samplingOf(s)
	switch e := s.Leaf.(type) {
	case accounting.Gaussian:
		if smp.kind == accounting.SamplingRandomAllocation {
			return allocation{sigma: e.NoiseMultiplier, sampling: smp}, nil
		}
		return gaussian{sigma: e.NoiseMultiplier, sampling: smp}, nil
	case accounting.Laplace:
		return laplace{b: e.NoiseMultiplier, sampling: smp}, nil
	case accounting.DiscreteGaussian:
		return discreteGaussian{sigma: e.Sigma, sens: e.Sensitivity, dim: e.Dimension, sampling: smp}, nil
	case accounting.DiscreteLaplace:
		return discreteLaplace{a: e.NoiseParameter, sens: e.Sensitivity, sampling: smp}, nil
	case accounting.ZCDP:
		return zcdpGuarantee{rho: e.Rho, xi: e.Xi, sampling: smp}, nil
	case accounting.EpsilonDelta:
		return approxDP{eps: e.Epsilon, delta: e.Delta, sampling: smp}, nil
	case accounting.ExponentialMechanism:
		return boundedRange{eps: e.Epsilon, sampling: smp}, nil
	case accounting.MixtureOfGaussians:
		return mixture{sigma: e.StandardDeviation, spec: mixtureSpec(e), binK: e.BinomialCount, binQ: e.BinomialRate, sampling: smp}, nil
	case accounting.RdpCurve:
		return newCustom("RdpCurve", e, smp)
	case accounting.PldPmf:
		return newCustom("PldPmf", e, smp)
	case accounting.PrivacyProfile:
		return newCustom("PrivacyProfile", e, smp)
	}
	return nil, &accounting.UnsupportedEventError{Event: s.Event(), Path: s.Path, Reason: fmt.Sprintf("no mechanism for a %T step", s.Leaf)}
}

// sampling is how the records of a step are chosen, and under which
// neighbouring relation: the step's Sampling, Rate, DatasetSize,
// SampleSize and Adjacency.
type sampling struct {
	kind accounting.Sampling
	rate float64
	n, m int
	adj  accounting.Adjacency
}

func samplingOf(s accounting.Step) sampling {
	return sampling{kind: s.Sampling, rate: s.Rate, n: s.DatasetSize, m: s.SampleSize, adj: s.Adjacency}
}

// Rate is the sampling rate (1: unsampled).
func (s sampling) Rate() float64 { return s.rate }

// poisson returns the sampling of rate q (1: none) under adj.
func poisson(q float64, adj accounting.Adjacency) sampling {
	if q == 1 {
		return sampling{kind: accounting.SamplingNone, rate: 1, adj: adj}
	}
	return sampling{kind: accounting.SamplingPoisson, rate: q, adj: adj}
}

// classic reports whether the sampling is none, or Poisson under
// add-remove: the samplings whose pairs and curves every mechanism here
// states.
func (s sampling) classic() bool {
	return s.kind == accounting.SamplingNone || s.kind == accounting.SamplingPoisson && s.adj == accounting.AddRemove
}

// fixedSize reports whether the sampling is m of n without replacement
// under replace-one.
func (s sampling) fixedSize() bool {
	return s.kind == accounting.SamplingWithoutReplacement && s.adj == accounting.ReplaceOne
}

// wrap returns e under the sampling.
func (s sampling) wrap(e accounting.Event) accounting.Event {
	switch s.kind {
	case accounting.SamplingPoisson:
		return accounting.PoissonSampled{SamplingRate: s.rate, Event: e}
	case accounting.SamplingWithoutReplacement:
		return accounting.SampledWithoutReplacement{SourceDatasetSize: s.n, SampleSize: s.m, Event: e}
	case accounting.SamplingShuffle:
		return accounting.Shuffled{DatasetSize: s.n, BatchSize: s.m, Event: e}
	case accounting.SamplingTruncatedPoisson:
		if g, ok := e.(accounting.Gaussian); ok {
			return accounting.TruncatedSubsampledGaussian{DatasetSize: s.n, SamplingRate: s.rate, TruncatedBatchSize: s.m, NoiseMultiplier: g.NoiseMultiplier}
		}
	case accounting.SamplingRandomAllocation:
		return accounting.RandomAllocation{NumSelected: s.m, NumSteps: s.n, Event: e}
	}
	return e
}

// describe names the sampling for messages: "Poisson-sampled under
// replace-one".
func (s sampling) describe(name string) string {
	var b string
	switch s.kind {
	case accounting.SamplingPoisson:
		b = "Poisson-sampled "
	case accounting.SamplingWithoutReplacement:
		b = "fixed-size-sampled "
	case accounting.SamplingShuffle:
		b = "shuffled "
	case accounting.SamplingTruncatedPoisson:
		b = "truncated-Poisson-sampled "
	case accounting.SamplingRandomAllocation:
		b = "randomly allocated "
	}
	return b + name + " under " + s.adj.String()
}

// order returns the sort key of a mechanism of the given scale and rank.
func (s sampling) order(scale float64, rank int, more ...float64) []float64 {
	return append([]float64{scale, s.rate, float64(s.n), float64(s.m), float64(rank)}, more...)
}

// noBound is the error of a capability a mechanism lacks.
type noBound string

func (e noBound) Error() string { return string(e) }

// errorf returns a noBound error.
func errorf(format string, args ...any) error { return noBound(fmt.Sprintf(format, args...)) }
