// Package integrate computes definite integrals of positive functions given
// by their logarithm, for integrands whose values span hundreds or thousands
// of orders of magnitude (privacy-loss moments, tail probabilities).
//
// [Log] takes log f and returns log ∫_a^b f together with an error estimate
// on the log value and a [Status]. It uses adaptive Gauss–Kronrod G7/K15
// quadrature (Kronrod 1965; Piessens et al. 1983, QUADPACK §2.2) with
// interval bisection, sums in log space in a deterministic order, and maps
// infinite ends to finite ones by rational substitutions scaled to the
// domain. Unlike gonum's quad.Fixed it estimates its error and reports, with
// an error value, when it cannot reach the requested accuracy within its
// evaluation budget.
//
// The Kronrod nodes and weights are generated at 60 digits by
// testdata/moments/gen_kronrod.py.
package integrate
