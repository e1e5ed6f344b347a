package calibrate

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/pld"
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
// gridWidth is the PLD grid width (0: adaptive).
func Audit(ctx context.Context, e accounting.Event, claimed Epsilons, gridWidth float64) (AuditResult, error) {
	if err := accounting.CheckEpsilon(claimed.Epsilon); err != nil {
		return AuditResult{}, err
	}
	if err := accounting.CheckDelta(claimed.Delta); err != nil {
		return AuditResult{}, err
	}
	acc, err := pld.New(pld.Options{GridWidth: gridWidth})
	if err != nil {
		return AuditResult{}, err
	}
	if err := acc.Compose(e, 1); err != nil {
		return AuditResult{}, err
	}
	lo, hi, err := acc.EpsilonBounds(ctx, claimed.Delta)
	if err != nil {
		return AuditResult{}, err
	}
	if math.IsNaN(lo) || lo < 0 {
		lo = 0 // 0 is always a valid lower bound
	}
	if math.IsNaN(hi) {
		hi = math.Inf(1) // +Inf is always a valid upper bound
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
