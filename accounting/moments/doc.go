// Package moments computes the log moments α(λ) of the Poisson-subsampled
// Gaussian mechanism (Abadi et al. 2016, §3.2) and bounds compositions with
// them two ways: [MA], the moments accountant's tail bound (Theorem 2.2),
// and [RDP], the same moments read as Rényi divergences (Mironov 2017) with
// the improved conversion to (ε, δ). RDP is never above MA on the same
// ledger. Both implement [accounting.Accountant].
package moments
