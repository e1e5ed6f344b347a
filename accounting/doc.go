// Package accounting describes differentially private mechanisms as events
// and states what every method that bounds them owes.
//
// An [Event] says what was run (a Gaussian mechanism, a Poisson-subsampled
// mechanism, a composition). [Normalize] turns any event into a flat [Plan]
// of steps and is the one place that says what an event means, including at
// the edges (σ = 0, σ too small or too large for float64, counts that
// overflow). A [Method] composes plans and answers ε(δ) and δ(ε); an
// [Accountant] is a Method that never under-reports, a [Procedure] one that
// evaluates a published procedure whose numbers are not proven bounds. A
// [Ledger] records events for replay under any method.
//
// Where ε is computed:
//
//	accounting/moments    moments integrals; ma (Abadi et al. 2016) and rdp
//	accounting/pld        privacy loss distributions with certified bounds
//	accounting/zcdp       zero-concentrated DP
//	accounting/advcomp    advanced composition
//	accounting/procedure  the DPD paper's procedures (not accountants)
//	accounting/gaussian   the Gaussian mechanism's exact privacy profile
//	accounting/registry   makes any of them by Kind
//
// Glossary, used throughout: NoiseMultiplier σ is the ratio of the noise
// standard deviation to the L2 sensitivity; SamplingRate q is the Poisson
// inclusion probability of each record; Steps T is the number of
// compositions; Orders λ are moment orders in the sense of Abadi et al.
// (2016) §3.2, equal to Rényi orders α = λ+1 (Mironov 2017); Epsilon and
// Delta are the (ε, δ) of approximate differential privacy under add/remove
// adjacency.
package accounting
