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
//     the largest loss, a lower bound for repetitions). A pair whose tails
//     are another direction's mirrored (add at l is remove at −l, P and Q
//     swapped, bit for bit) says so with [Mirrored], and pld then takes
//     one direction's grid from the other's; one whose two tails above a
//     loss cost less than all four offers them with [AboveTails].
//   - [Mechanism.RDP], for rdp and ma: the Rényi curve as log moments at
//     real orders, each an upper bound (where it is a bound on a bound, the
//     mechanism's doc says which).
//   - [Mechanism.ZCDP], for zcdp: (ρ, ξ).
//
// Mechanisms here: the Gaussian (unsampled, Poisson-sampled or on capped
// Poisson lots under either relation, sampled without replacement under
// replace-one), the Laplace (unsampled, Poisson-sampled), the discrete
// Gaussian and the discrete Laplace (unsampled, Poisson-sampled), the
// mixture of Gaussians, the exponential mechanism (ε-DP and ε-bounded
// range), and the guarantees zCDP and (ε, δ), with (ε, 0) bounded through
// binary randomized response (pure.go); and the custom mechanisms a user
// describes by a Rényi curve, a PLD PMF or a privacy profile (custom.go:
// the pair of a privacy profile, and what each accountant may use of a
// description and no more). The pairs of an ε-DP step (an
// (ε, 0) guarantee, randomized response and permute-and-flip read as one,
// the exponential mechanism) are those of the worst ε-DP mechanism, not the
// step's own: a lower bound computed from them bounds that worst mechanism
// only ([WorstCase]). The pair of the shuffled-batches lower-bound
// construction is [ShuffledMaxPairs]; the Gaussian on a 1-out-of-t random
// allocation (balls-in-bins) states discrete pairs that bound it from above
// and below ([AllocationPairs]).
//
// Shared constructions a mechanism can build on: an additive mechanism on
// integers states its noise (log tails and mass function) and gets the
// shift pair of its unsampled release, whose tails are values of the
// noise's distribution function (shift.go); any unsampled pair gives the
// Poisson-sampled pairs of both directions (poissonPair, sampled.go). The
// Gaussian and the Laplace keep their own closed forms in x.
//
// To add a mechanism:
//
//   - accounting/event.go: its event type, a struct of numbers (events are
//     compared and used as map keys; one that holds slices, as the mixture
//     of Gaussians does, also has a key method giving a comparable
//     stand-in, and one whose definition fixes its sampling or relation a
//     stepUnder method), with isEvent and the two methods of
//     the unexported mechanismEvent interface: step (validate the
//     parameters by the boundary table of accounting.Normalize and return
//     the step, free or unbounded) and pureEpsilon. Normalize, the plan's
//     pure ε and the events' paths then need nothing more.
//   - accounting/dpevent.go: its JSON class in eventClasses, and its case in
//     writeEvent and decodeEvent (dp_accounting's class and field names).
//   - here, one file: its type (comparable: accountants key steps by it)
//     with Name, Event, order (a rank of its own), PLD, RDP and ZCDP, each
//     stating what it can and an error saying why for the rest; and its
//     case in [Of].
//
// The pld, rdp and zcdp accountants then bound it with no change. The
// advanced-composition accountant bounds it when the event states a pure
// ε (its pureEpsilon); ma tracks Gaussian curves only (RDP.AbadiMoments).
package mechanism
