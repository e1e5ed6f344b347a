package accounting

import (
	"fmt"
	"math"
)

// Verdict is the outcome of auditing a published privacy claim.
type Verdict string

// The verdicts of Audit.
const (
	// Holds: the certified upper bound on ε is at most the claimed ε.
	Holds Verdict = "holds"
	// Violated: the certified lower bound on ε exceeds the claimed ε, so the
	// mechanism is not (ε, δ)-DP for the claimed pair.
	Violated Verdict = "violated"
	// Undetermined: the claim lies inside the certified interval.
	Undetermined Verdict = "undetermined"
)

// AuditResult is what Audit found.
type AuditResult struct {
	Claimed Epsilons // the claim under audit
	// Lower and Upper bound the true ε(δ) of the event (KindPLD).
	Lower, Upper float64
	Verdict      Verdict
}

// Epsilons is a claimed (ε, δ) pair.
type Epsilons struct{ Epsilon, Delta float64 }

// Audit decides whether e delivers the claimed (ε, δ): it computes the
// certified interval [Lower, Upper] that contains the true ε at δ (the PLD
// accountant's optimistic and pessimistic discretisations) and compares.
// opt configures the PLD accountant.
func Audit(e Event, claimed Epsilons, opt Options) (AuditResult, error) {
	if err := CheckEpsilon(claimed.Epsilon); err != nil {
		return AuditResult{}, err
	}
	if err := CheckDelta(claimed.Delta); err != nil {
		return AuditResult{}, err
	}
	acc, err := New(KindPLD, opt)
	if err != nil {
		return AuditResult{}, err
	}
	b, ok := acc.(BoundsReporter)
	if !ok {
		return AuditResult{}, fmt.Errorf("accounting: %s accountant reports no lower bound", KindPLD)
	}
	if err := acc.Compose(e, 1); err != nil {
		return AuditResult{}, err
	}
	lo, hi, err := b.EpsilonBounds(claimed.Delta)
	if err != nil {
		return AuditResult{}, err
	}
	r := AuditResult{Claimed: claimed, Lower: lo, Upper: hi, Verdict: Undetermined}
	switch {
	case hi <= claimed.Epsilon:
		r.Verdict = Holds
	case lo > claimed.Epsilon && !math.IsNaN(lo):
		r.Verdict = Violated
	}
	return r, nil
}
