package pld

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/internal/logmath"
)

// Steps whose pairs are the step's own only up to a slack η in total
// variation ([mechanism.PLD.Slack]: a user mixture's left-out binomial
// tail) lower the lower ends. Over T such steps the run's δ(ε) is at least
// the pairs' less T·η·(2 + e^ε); the e^ε comes from the add direction
// alone, so the remove direction's pairs, composed on their own, bound the
// run's δ from below less only 2·T·η (see the mixture's PLD in package
// mechanism).

// logSlack returns log Σ n·η over the recorded steps with a slack, −Inf
// when there is none.
func (a *Accountant) logSlack() float64 {
	s := math.Inf(-1)
	for k, n := range a.counts {
		if eta := a.pld(k).Slack; eta > 0 {
			s = logmath.Add(s, logmath.Log(eta)+math.Log(float64(n)))
		}
	}
	if !math.IsInf(s, -1) {
		s += 1e-12 // the sum's rounding, the safe way
	}
	return s
}

// slackAt returns an upper bound on e^logSlack·(2 + e^eps), or with
// remove set on 2·e^logSlack, the remove direction's slack (+Inf when it
// overflows).
func slackAt(logSlack, eps float64, remove bool) float64 {
	l := logSlack + logmath.Add(math.Ln2, eps)
	if remove {
		l = logSlack + math.Ln2
	}
	return math.Nextafter(math.Exp(l+1e-12), math.Inf(1))
}

// negligible reports whether slack s is below the rounding of x (one
// part in 2^52), the resolution every bound here is computed to.
func negligible(s, x float64) bool { return s <= x*0x1p-52 }

// oneDirection is a recorded mechanism read through one of its pairs
// alone, for both directions: its remove pair (add false) or its add
// pair. An accountant of them composes that direction of the run. Family
// and Lower are dropped, since they bound both directions.
type oneDirection struct {
	mechanism.Mechanism
	add bool
}

func (m oneDirection) PLD() (*mechanism.PLD, error) {
	p, err := m.Mechanism.PLD()
	if err != nil {
		return nil, err
	}
	pair := p.Remove
	if m.add {
		pair = p.Add
	}
	return &mechanism.PLD{Remove: pair, Add: pair, Symmetric: true, MaxLoss: p.MaxLoss, Attained: p.Attained, Slack: p.Slack}, nil
}

// removeAccountant and addAccountant return accountants of the recorded
// steps' remove pairs and add pairs alone (see oneDirection), each made
// once.
func (a *Accountant) removeAccountant() *Accountant {
	if a.removes == nil {
		a.removes = a.oneWay(false)
	}
	return a.removes
}

func (a *Accountant) addAccountant() *Accountant {
	if a.adds == nil {
		a.adds = a.oneWay(true)
	}
	return a.adds
}

func (a *Accountant) oneWay(add bool) *Accountant {
	r := a.empty()
	r.lowerOnly = true
	for k, n := range a.counts {
		r.counts[oneDirection{k, add}] += n
		r.steps += n
	}
	return r
}

// slackEpsilon is [Accountant.EpsilonBracket] with the slack. Where the
// pairs' lower end ε₀ at delta has a slack s = T·η·(2 + e^ε₀) that is not
// negligible, the lower end is the larger of the pairs' at delta + s (for
// ε below it their lower δ is at least delta + s, the run's at least
// delta; none when s > delta) and, for attained steps, the remove
// direction's at delta + 2·T·η.
func (a *Accountant) slackEpsilon(ctx context.Context, delta float64) (Bracket, error) {
	b, err := a.pairsEpsilonBracket(ctx, delta)
	if err != nil || b.Lower <= 0 {
		return b, err
	}
	ls := a.logSlack()
	if math.IsInf(ls, -1) {
		return b, nil
	}
	s := slackAt(ls, b.Lower, false)
	if negligible(s, delta) {
		return b, nil
	}
	lower := 0.0
	if s <= delta && delta+s < 1 {
		b2, err := a.pairsEpsilonBracket(ctx, delta+s)
		if err != nil {
			return Bracket{}, err
		}
		lower = math.Min(b.Lower, b2.Lower)
	}
	if _, attained := a.witness(); attained {
		d := delta
		if s := slackAt(ls, 0, true); !negligible(s, delta) {
			d = delta + s
			if s > delta || d >= 1 {
				d = math.NaN()
			}
		}
		if !math.IsNaN(d) {
			lo, err := a.removeLowerEpsilon(ctx, delta, d, b)
			if err != nil {
				return Bracket{}, a.public(err)
			}
			lower = math.Max(lower, math.Min(lo, b.Lower))
		}
	}
	b.Lower = lower
	return b, nil
}

// removeLowerEpsilon returns a lower end on ε(delta) that the remove
// direction's pairs certify at d ≥ delta (d = delta + 2·T·η, or delta
// where that slack is negligible); b is the pairs' bracket at delta. The
// cheap way first: at ε₁ just below the pairs' lower end at d, the
// pairs' δ(ε₁) exceeds d, and where the add direction's upper δ(ε₁) is at
// most delta, the remove direction's δ(ε₁) is the one above d, so ε₁ is a
// lower end for the run (its δ is non-increasing in ε). Otherwise the
// remove pairs are composed on their own.
func (a *Accountant) removeLowerEpsilon(ctx context.Context, delta, d float64, b Bracket) (float64, error) {
	if d != delta {
		var err error
		if b, err = a.pairsEpsilonBracket(ctx, d); err != nil {
			return 0, err
		}
	}
	if e1 := math.Nextafter(b.Lower, 0); e1 > 0 {
		_, up, _, err := a.addAccountant().deltaBounds(ctx, e1)
		if err != nil {
			return 0, err
		}
		if up <= delta {
			return e1, nil
		}
	}
	lo, _, _, err := a.removeAccountant().epsilonBounds(ctx, d)
	return lo, err
}

// slackDelta is [Accountant.DeltaBracket] with the slack: the pairs'
// lower δ less T·η·(2 + e^eps) or, for attained steps, the remove
// direction's less 2·T·η, whichever is larger, rounded down, at least 0.
func (a *Accountant) slackDelta(ctx context.Context, eps float64) (Bracket, error) {
	b, err := a.pairsDeltaBracket(ctx, eps)
	if err != nil || b.Lower <= 0 {
		return b, err
	}
	ls := a.logSlack()
	if math.IsInf(ls, -1) {
		return b, nil
	}
	s := slackAt(ls, eps, false)
	if negligible(s, b.Lower) {
		return b, nil
	}
	lower := math.Max(0, math.Nextafter(b.Lower-s, 0))
	if _, attained := a.witness(); attained {
		// Where the add direction's upper δ is below the pairs' lower δ,
		// that lower δ is the remove direction's; otherwise the remove
		// pairs are composed on their own.
		_, up, _, err := a.addAccountant().deltaBounds(ctx, eps)
		if err != nil {
			return Bracket{}, a.public(err)
		}
		lo := b.Lower
		if up >= lo {
			if lo, _, _, err = a.removeAccountant().deltaBounds(ctx, eps); err != nil {
				return Bracket{}, a.public(err)
			}
		}
		if s := slackAt(ls, 0, true); !negligible(s, lo) {
			lo = math.Max(0, math.Nextafter(lo-s, 0))
		}
		lower = math.Max(lower, math.Min(lo, b.Lower))
	}
	b.Lower = lower
	return b, nil
}
