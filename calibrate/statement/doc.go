// Package statement writes the privacy statement of a training run: the
// run's example-level ε at δ with pld's certified interval, rdp's ε beside
// it for reference, the Poisson reading of a sampling without a proven
// amplification bound (labelled not proven), the user-level ε when the run
// is also given at user level, and the Gaussian differential privacy
// (μ-GDP) parameter closest to the run's certified privacy profile, with
// how far the run is from being μ-GDP.
//
// It is the shape of TF Privacy's compute_dp_sgd_privacy_statement, with
// two corrections: the Poisson number is never presented as the run's ε for
// shuffled or fixed-size batches, and every number is a certified bound
// (an interval where pld gives one) rather than a point estimate. The GDP
// parameter is a certified upper bound on [0, EpsilonMax] where
// dp_accounting's get_gdp_parameter_estimate is neither an upper nor a
// lower bound (see [GDP]).
//
// [Compute] computes; the command line's dpcalc statement and anything
// else only render its [Statement].
package statement
