package cli

import (
	"errors"
	"fmt"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate"
)

// groupBound is how one accountant answers a training for a group of
// --group-size records (or users): the event it composes for the unknown
// x, the methods it composes it into, and the note of its row. lemma
// reports that the answer is the group privacy lemma's, which no event
// describes (--emit-events would write a single record's training).
type groupBound struct {
	event   func(x float64) accounting.Event
	factory calibrate.Factory
	note    string
	lemma   bool
	// mixture reports that event is the exact group mixture of Poisson
	// sampling under add-remove.
	mixture bool
}

// bound returns how accountant k answers p. Without a group it is p's
// events and k's methods. Under Poisson sampling and add-remove it is the
// exact group event (the mixture of [accounting.UserLevel]), except for
// an accountant that cannot compose that event (ma, ac), which answers by
// the lemma from the single record's events. Under the other samplings and
// replace-one it is [Accountants.eventBound] of the single record's
// events.
func (p Plan) bound(a Accountants, k accounting.Kind) groupBound {
	if p.GroupSize <= 1 {
		return groupBound{event: p.Event, factory: a.Factory(k)}
	}
	unit := "records"
	if p.ExamplesPerUser > 1 {
		unit = "users"
	}
	if !p.groupLemma {
		b := groupBound{event: p.Event, factory: a.Factory(k), mixture: true,
			note: fmt.Sprintf("group privacy: ε for adding or removing up to %d %s (exact under Poisson sampling)", p.GroupSize, unit)}
		m, err := b.factory()
		if err != nil || !errors.Is(m.Compose(p.Event(1), 1), accounting.ErrUnsupportedEvent) || p.single == nil {
			return b
		}
		// k has no bound for the mixture: the lemma on one record's (or
		// user's) steps, which k may compose.
		return a.eventBound(p.single.Event, k, p.GroupSize, unit)
	}
	return a.eventBound(p.Event, k, p.GroupSize, unit)
}

// eventBound returns how accountant k answers the training event(x) for
// data sets at distance g under a.Adjacency: when every release in it is
// unsampled noise, exactly, as the same releases with the noise over g
// ([accounting.GroupEvent]); otherwise by the group privacy lemma on k's
// single-record bound ([accounting.Group]).
func (a Accountants) eventBound(event func(x float64) accounting.Event, k accounting.Kind, g int, unit string) groupBound {
	verb := "adding or removing"
	if a.Adjacency == accounting.ReplaceOne {
		verb = "replacing"
	}
	if _, ok := accounting.GroupEvent(event(1), g); ok {
		return groupBound{
			event: func(x float64) accounting.Event {
				e, _ := accounting.GroupEvent(event(x), g)
				return e
			},
			factory: a.Factory(k),
			note:    fmt.Sprintf("group privacy: ε for %s up to %d %s, exact for unsampled noise (its sensitivity times %d)", verb, g, unit, g),
		}
	}
	f := a.Factory(k)
	how := "the group privacy lemma on this accountant's single-record bound"
	if k == accounting.KindZCDP {
		how = "the smaller of ρ·G² (zCDP's group privacy) and the group privacy lemma"
	}
	return groupBound{
		event: event,
		factory: func() (accounting.Method, error) {
			m, err := f()
			if err != nil {
				return nil, err
			}
			return accounting.Group(m, g)
		},
		note:  fmt.Sprintf("group privacy: ε for %s up to %d %s by %s (not tight; a lower end is one record's)", verb, g, unit, how),
		lemma: true,
	}
}

// checkGroupSize validates --group-size for a training read from a file
// (the training flags' is checked with the plan).
func checkGroupSize(g *Count) error {
	if g != nil && (*g < 1 || int(*g) > accounting.MaxGroupSize) {
		return usageAt("group-size", "invalid --group-size: %d, want an integer in [1, 2^53]", *g)
	}
	return nil
}

// fileBound is [Plan.bound] for the training of an --events or --ledger
// file, with --group-size G (1 when not given).
func (g *given) fileBound(a Accountants, k accounting.Kind) groupBound {
	ev := g.event
	event := func(float64) accounting.Event { return ev }
	if n := int(deref(g.GroupSize)); n > 1 {
		return a.eventBound(event, k, n, "records")
	}
	return groupBound{event: event, factory: a.Factory(k)}
}
