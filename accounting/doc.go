// Package accounting describes differentially private mechanisms as events
// and composes them with privacy accountants that answer ε(δ) and δ(ε).
//
// An [Event] says what was run (a Gaussian mechanism, a Poisson-subsampled
// mechanism, a composition); an [Accountant] says how privacy loss is
// bounded. The two are kept apart, as in Google's dp_accounting, so that one
// ledger of events can be replayed under any accountant.
//
// Every accountant returns upper bounds on the privacy loss. Where a numerical
// approximation has to err, it errs toward more privacy loss and the doc
// comment of the function says so.
//
// Glossary, used throughout: NoiseMultiplier σ is the ratio of the noise
// standard deviation to the L2 sensitivity; SamplingRate q is the Poisson
// inclusion probability of each record; Steps T is the number of
// compositions; Orders λ are moment orders in the sense of Abadi et al.
// (2016) §3.2, equal to Rényi orders α = λ+1 (Mironov 2017); Epsilon and
// Delta are the (ε, δ) of approximate differential privacy under add/remove
// adjacency.
package accounting
