// Package mechanism is where each mechanism states what the accountants
// need to bound it, so that they know no mechanism by name.
//
// [Of] maps a step of an [accounting.Plan] (a mechanism, the sampling of
// the records it runs on, the neighbouring relation) to a [Mechanism]. A
// Mechanism states, or says why it cannot:
//
//   - [Mechanism.PLD], for the pld accountant: a dominating pair for each
//     direction (remove: P is the output distribution with the differing
//     record, Q without it; add: the reverse; under replace-one, the two
//     orders of the replaced records), each described by its privacy loss
//     L = log dP/dQ ([Pair]: log tails P(L > l), Q(L > l), P(L ≤ l),
//     Q(L ≤ l) within [TailsRelError], truncation points, moments for
//     steering, its support: a density, atoms, a lattice, mass at +∞);
//     whether one pair serves both directions; and what composes faster
//     than by discretisation (an exact Gaussian pair, a dominance family,
//     the largest loss, a lower bound for repetitions).
//   - [Mechanism.RDP], for rdp and ma: the Rényi curve as log moments at
//     real orders, each an upper bound (where it is a bound on a bound, the
//     mechanism's doc says which).
//   - [Mechanism.ZCDP], for zcdp: (ρ, ξ).
//
// Mechanisms here: the Gaussian (unsampled, Poisson-sampled or on capped
// Poisson lots under either relation, sampled without replacement under
// replace-one), the Laplace
// (unsampled, Poisson-sampled), and the guarantees zCDP and (ε, δ). The
// pair of the shuffled-batches lower-bound construction is
// [ShuffledMaxPairs].
//
// To add a mechanism: its event in accounting/event.go (with its JSON class
// in accounting/dpevent.go), one file here with its type and what it
// states, and its case in [Of].
package mechanism
