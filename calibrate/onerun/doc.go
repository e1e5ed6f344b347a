// Package onerun turns the outcome of a one-run privacy audit into lower
// bounds on ε: how much privacy a trained model certainly lost, at a stated
// confidence, measured from one training run.
//
// # The game
//
// Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training
// Run" (NeurIPS 2023, arXiv 2305.08846v1), Algorithm 1: m canaries are
// each included in the training data independently with probability ½;
// the model is trained once; an auditor scores every canary and guesses
// "member" or "non-member" for r of them (abstaining on the rest). If the
// training algorithm is (ε, δ)-DP with respect to adding or removing one
// canary, the number W of correct guesses satisfies (their main theorem
// of §3, in the form of Corollary 5.4 of arXiv v1, computed as in their
// Appendix D)
//
//	P[W ≥ v] ≤ β + 2mδ·α,
//	β = P[Binomial(r, p) ≥ v],   p = e^ε/(1 + e^ε),
//	α = max_{1≤i≤v} P[v−i ≤ Binomial(r, p) < v] / i,
//
// and for δ = 0 simply W is stochastically dominated by Binomial(r, p). So
// v correct guesses reject every ε whose p-value is at most 1 − confidence:
// [EpsilonLower] returns the largest such ε. It is a lower bound on the ε
// of the training algorithm (at δ), valid with probability at least the
// confidence over the canaries' coin flips.
//
// # The f-DP refinement
//
// Mahloujifar, Melis and Chaudhuri, "Auditing f-Differential Privacy in One
// Run" (ICML 2025, arXiv 2410.22235) test a whole trade-off curve instead
// of one (ε, δ) pair, which is tighter when the curve is known in shape.
// [EpsilonLowerFDP] tests the Gaussian curves: it returns the largest ε
// such that the μ-GDP curve whose (ε, δ) point is (ε, δ) (μ = 1/σ with σ
// the exact analytic Gaussian calibration of Balle and Wang 2018) is
// rejected. This is a lower bound on ε among mechanisms whose trade-off
// curve is Gaussian (DP-SGD's curve is close to one after many steps, by
// the central limit theorem of Dong, Roth and Su 2019); it is not a bound
// for an arbitrary (ε, δ)-DP mechanism, and it is reported as such.
//
// # The classical many-run audit, for comparison
//
// [ClopperPearsonUpper] and [Audit]'s EpsilonCP give the bound of the
// classical audit (Jagielski, Ullman and Oprea 2020; Nasr et al. 2021):
// true- and false-positive rates bounded by Clopper–Pearson intervals and
// ε ≥ log((TPR − δ)/FPR). It assumes each (score, member) pair comes from
// an independent training run; applied to the canaries of one run it is
// not a proven bound, and is shown only to compare the two audits.
//
// # Guesses from scores
//
// [Audit] takes scores (higher: more likely a member) and guesses
// "member" for every canary whose score is at least a threshold. With a
// fixed number of guesses the threshold is the k-th largest score (ties
// are all guessed, so no order of the input decides); otherwise every
// threshold on the ROC curve's upper concave hull is tried, with a
// Bonferroni correction for their number, as jax_privacy's auditing module
// does by default.
//
// Every bound errs low: bisections return the end that was checked to be
// rejected, and binomial tails are summed with their truncation added.
// Functions are safe for concurrent use.
package onerun
