package accounting

// CurveReporter is implemented by accountants that answer a whole ε curve
// faster than one Compose and Epsilon per point (KindPLD).
//
// EpsilonCurve returns, for each i, an upper bound on the smallest ε for
// which the accountant's current composition followed by steps[i] adaptive
// repetitions of step is (ε, delta)-DP. steps must be non-decreasing and
// each at least 1. It validates step, steps and delta before any work and
// does not change the accountant's state. Each value is a certified upper
// bound in the sense of [Accountant.Epsilon]; an implementation documents
// how it compares with the value Epsilon would return after the same
// composition.
type CurveReporter interface {
	EpsilonCurve(step Event, steps []int, delta float64) ([]float64, error)
}
