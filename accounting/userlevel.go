package accounting

import (
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// MaxExamplesPerUser is the largest number of examples per user
// [UserLevel] takes (2^53, so that every shift is an exact float64).
const MaxExamplesPerUser = MaxCount

// UserLevel returns the event of a Poisson-sampled Gaussian sum (noise
// multiplier σ, sampling rate q, steps steps) seen by a user who
// contributes up to k examples, under add-remove of the user with all
// their examples (user-level privacy; group privacy of k records under
// Poisson sampling is the same event). Each example is in a lot
// independently with probability q, so the user's clipped contribution
// to a step is c ~ Binomial(k, q) unit vectors; the worst case puts them
// all along one direction, which makes the step a mixture of Gaussians
// with shifts 0, 1, ..., k and binomial weights (Ganesh 2024, "Tight
// group-level DP guarantees for DP-SGD with sampling",
// https://arxiv.org/abs/2401.10294; dp_accounting's
// MixtureOfGaussiansDpEvent). Giving a user fewer than k examples is
// the case with the rest of their clipped gradients zero, so the
// guarantee covers every user with at most k examples.
//
// k = 1 returns [SubsampledGaussian] (σ, q, steps) itself, the
// example-level event. Otherwise it returns steps self-compositions of
// [UserMixture] (σ, q, k): an error when k is outside [1,
// MaxExamplesPerUser] or the mixture needs more than
// [MaxMixtureComponents] components.
func UserLevel(noiseMultiplier, samplingRate float64, k, steps int) (Event, error) {
	if k == 1 {
		return SubsampledGaussian(noiseMultiplier, samplingRate, steps), nil
	}
	m, err := UserMixture(noiseMultiplier, samplingRate, k)
	if err != nil {
		return nil, err
	}
	return SelfComposed{Event: m, Count: steps}, nil
}

// UserMixture returns one step of [UserLevel] for k ≥ 1 examples: the
// mixture of Gaussians N(c, σ²), c = 0..k, with the Binomial(k, q)
// probabilities, computed in log space with Loader's saddle-point form
// (relative error about 1e-15 for any k up to 2^53). Components whose
// log-probability is −708 or below are not listed, so that every listed
// probability is a normal float64 (at least 2^−1022 ≈ e^−708.4), within
// about 1e-12 of the binomial's: a subnormal one would carry up to half
// its value in rounding (e^−744.9 is stored as e^−744.4), and the listed
// mixture would not be the user's. When some are left out, the
// mixture's BinomialCount and BinomialRate are k and q, so that the
// accountants bound the shifts left out as its tail (their total
// probability η is below 5·e^−708, since the binomial is log-concave and
// its log-probability falls by 708 or more over the at most 1024 shifts
// from the mode to each side's first shift left out, so by at least
// 708/1024 per shift beyond it; but their shifts reach k and dominate
// the Rényi divergences at large orders; see [MixtureOfGaussians] and
// [BinomialTail]). It is an error when more than [MaxMixtureComponents]
// components remain (k·q(1−q) above about 300): the ParamError names
// examples_per_user and says how many the mixture would need.
func UserMixture(noiseMultiplier, samplingRate float64, k int) (MixtureOfGaussians, error) {
	if err := CheckNoiseMultiplier(noiseMultiplier); err != nil {
		return MixtureOfGaussians{}, err
	}
	if err := CheckSamplingRate(samplingRate); err != nil {
		return MixtureOfGaussians{}, err
	}
	if k < 1 || k > MaxExamplesPerUser {
		return MixtureOfGaussians{}, &ParamError{Name: "examples_per_user", Value: float64(k), Want: fmt.Sprintf("an integer in [1, %d] (2^53)", MaxExamplesPerUser)}
	}
	n, q := float64(k), samplingRate
	// The mode and the walk outwards from it while the probability is
	// representable; log-probabilities decrease away from the mode.
	mode := math.Min(math.Floor((n+1)*q), n)
	const floor = -708.0 // above: exp is a normal float64 (see the doc comment)
	lo, hi := mode, mode
	for lo > 0 && logBinomPMF(lo-1, n, q) > floor {
		lo--
		if hi-lo+1 > MaxMixtureComponents {
			break
		}
	}
	for hi < n && logBinomPMF(hi+1, n, q) > floor {
		hi++
		if hi-lo+1 > MaxMixtureComponents {
			break
		}
	}
	if hi-lo+1 > MaxMixtureComponents {
		// Enough components to say how many: about 2·37.6·sd of them.
		sd := math.Sqrt(n * q * (1 - q))
		need := math.Min(n+1, math.Ceil(2*math.Sqrt(2*-floor)*sd))
		return MixtureOfGaussians{}, &ParamError{Name: "examples_per_user", Value: n,
			Want: fmt.Sprintf("a Binomial(k, q) of at most %d values with non-negligible probability (q = %g: about %.0f); lower k or q", MaxMixtureComponents, q, need)}
	}
	m := MixtureOfGaussians{StandardDeviation: noiseMultiplier}
	// Count in integers: at 2^53, c+1 rounds back to c.
	for i := range int(hi-lo) + 1 {
		c := lo + float64(i)
		m.Sensitivities = append(m.Sensitivities, c)
		m.SamplingProbs = append(m.SamplingProbs, math.Exp(logBinomPMF(c, n, q)))
	}
	if (lo > 0 || hi < n) && q < 1 { // at q = 1 the shifts left out have probability 0
		m.BinomialCount, m.BinomialRate = k, q
	}
	return m, nil
}

// logBinomPMF returns log P(X = x) for X ~ Binomial(n, p), x and n whole,
// 0 ≤ x ≤ n, 0 < p ≤ 1, by Loader's saddle-point expansion (C. Loader,
// "Fast and accurate computation of binomial probabilities", 2000; R's
// dbinom_raw): no cancellation between large log-factorials.
func logBinomPMF(x, n, p float64) float64 {
	q := 1 - p
	switch {
	case p == 1:
		if x == n {
			return 0
		}
		return math.Inf(-1)
	case x == 0:
		if p < 0.1 {
			return -bd0(n, n*q) - n*p
		}
		return n * math.Log1p(-p)
	case x == n:
		if q < 0.1 {
			return -bd0(n, n*p) - n*q
		}
		return n * logmath.Log(p)
	}
	lc := stirlerr(n) - stirlerr(x) - stirlerr(n-x) - bd0(x, n*p) - bd0(n-x, n*q)
	lf := math.Log(2*math.Pi) + math.Log(x) + math.Log1p(-x/n)
	return lc - 0.5*lf
}

// stirlerr returns log(n!) − log(√(2πn)·(n/e)^n) for whole n ≥ 1: from
// Lgamma up to 15 (where the terms are small), else Stirling's series.
func stirlerr(n float64) float64 {
	const s0, s1, s2, s3, s4 = 1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188
	if n <= 15 {
		lg, _ := math.Lgamma(n + 1)
		return lg - (n+0.5)*math.Log(n) + n - 0.5*math.Log(2*math.Pi)
	}
	nn := n * n
	switch {
	case n > 500:
		return (s0 - s1/nn) / n
	case n > 80:
		return (s0 - (s1-s2/nn)/nn) / n
	case n > 35:
		return (s0 - (s1-(s2-s3/nn)/nn)/nn) / n
	}
	return (s0 - (s1-(s2-(s3-s4/nn)/nn)/nn)/nn) / n
}

// bd0 returns x·log(x/m) + m − x without cancellation (Loader's deviance
// term): a series in v = (x − m)/(x + m) when x is near m.
func bd0(x, m float64) float64 {
	if math.Abs(x-m) < 0.1*(x+m) {
		v := (x - m) / (x + m)
		s := (x - m) * v
		ej := 2 * x * v
		v *= v
		for j := 1; j < 1000; j++ {
			ej *= v
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	// log x − log m, not log(x/m): x/m overflows for a subnormal m (q =
	// 5e-324), whose logarithm logmath.Log takes (math.Log's is wrong).
	return x*(math.Log(x)-logmath.Log(m)) + m - x
}
