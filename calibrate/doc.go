// Package calibrate inverts privacy accountants: it finds the noise
// multiplier σ that meets a budget (ε, δ) ([Sigma], [SigmaFor],
// [SigmaCurve]), the number of steps a budget allows for a given σ
// ([MaxSteps], [LargestInt]), the σ of a single Gaussian mechanism
// ([AnalyticGaussianSigma], [ClassicGaussianSigma]), and whether a
// published claim holds ([Audit]).
//
// Every root finding and bracketing search of this package and of onerun
// runs in one driver, internal/search's Solve, which ends with a [Status]
// and returns the end of its final bracket where the predicate was
// evaluated and held. (profile's golden-section refinement is a
// maximisation, not a root search; every point it evaluates is a valid
// guarantee.) The callers here:
//
//   - [Smallest] (and so [Sigma], [SigmaFor], [SigmaCurve]) walks from a
//     guess by factors of 4 inside [Options.Min, Options.Max] (defaults
//     1e-6 and 1e6; the σ searches raise Min to 1e-3) until ε crosses the
//     target, then narrows the bracket by Illinois-modified false position
//     on log σ with a bisection fallback, to relative width
//     [Options.RelTol] (default 1e-6) or [Options.MaxEvaluations]
//     (default 200). The σ returned was evaluated and its ε meets the
//     target; Result.Status says whether the bracket converged, the
//     target was met exactly, the domain's lower end already meets it,
//     the evaluations ran out, or no float lies inside the bracket. No σ
//     up to Max meeting the target is an error matching [ErrUnreachable];
//     an error of the accountant ends the search with status Failure.
//   - [LargestInt] (and so [MaxSteps]) checks n = 1 (0 if even that
//     fails), doubles n until the budget fails or n reaches the limit, and
//     bisects to the exact largest n; [LargestIntFrom] starts from a known
//     good n and may stop at a relative tolerance. The n returned was
//     evaluated and holds.
//   - [AnalyticGaussianSigma] halves or doubles σ/Δ from 1 until
//     Balle and Wang's δ(σ) crosses the target, bisects to relative width
//     1e-12 on σ/Δ, and re-checks the product with Δ, stepping up by ulps if
//     its rounding lost the property.
//
// An accountant whose ε is not exactly monotone in σ or in the step count
// (grid effects) therefore never yields an unsafe answer, only, at worst,
// a slightly conservative one. The searches do not check ctx themselves:
// cancellation and work limits reach them as errors of the accountants'
// queries, which end the search with that error.
//
// [Audit] does not search: it compares the claim with the pld
// accountant's certified lower and upper ε. The subpackages onerun
// (lower bounds from a training run's canaries) and profile (ε at several
// δ, δ(ε) and the trade-off curve) have their own package docs.
package calibrate
