package statement

import (
	"context"
	"errors"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/pld"
	"github.com/dpcalc/dpcalc/accounting/registry"
)

// Run is the training a statement is about.
type Run struct {
	// Training is the run as it was sampled and composed, at example
	// level: what the certified ε, rdp's ε and the GDP parameter bound.
	Training accounting.Event
	// Adjacency is the neighbouring relation of Training (and of
	// UserTraining).
	Adjacency accounting.Adjacency
	// PoissonReading, if not nil, is the run read as Poisson-sampled at
	// q = B/N under add-remove: the number usually reported for shuffled
	// (or fixed-size) batches, for which no such amplification is proven.
	// The statement gives its ε labelled as not proven, never as the run's.
	PoissonReading accounting.Event
	// UserTraining, if not nil, is the run at user level: what one user's
	// ExamplesPerUser examples, together, go through (for Poisson sampling
	// a mixture of Gaussians per step; Ganesh 2024, arXiv:2401.10294).
	UserTraining    accounting.Event
	ExamplesPerUser int
}

// Options are the statement's δ and how its accountants are made. The
// zero value of every field but Delta gives the defaults.
type Options struct {
	// Delta is the δ at which ε is stated, in (0, 1).
	Delta float64
	// PLDGridWidth is pld's discretisation width (0: adaptive), as
	// registry.Options.PLDGridWidth.
	PLDGridWidth float64
	// TailDelta is the δ whose ε ends the GDP range (0: DefaultTailDelta);
	// at most Delta is used.
	TailDelta float64
	// GridPoints and Refinements are the number of evenly spaced ε at
	// which the GDP bound queries δ(ε), 2..10000 (0: 33), and the most
	// further queries that refine it, 0..10000 (-1: none; 0: 96); the
	// refinement stops early once μ is within 1e-4 (relative) of what the
	// queried points need.
	GridPoints, Refinements int
}

// Epsilon is ε at δ from one accountant: Upper its certified upper bound
// (+Inf when it has none). pld also certifies Lower (Bracketed), with the
// dominating pairs' own lower end in PairLower when they are not attained
// by the run (PairOnly; fixed-size, shuffled, truncated-Poisson and
// randomly allocated batches): Lower is then certified for the run by
// neighbours that attain part of it. rdp gives Order, the moment order λ
// of its bound. Unsupported says why the accountant cannot bound the run
// (the other fields are then zero).
type Epsilon struct {
	Kind        accounting.Kind
	Upper       float64
	Lower       float64
	PairLower   float64
	PairOnly    bool
	Bracketed   bool
	Order       float64
	Unsupported string
}

// Statement is the privacy statement of a run at Delta.
type Statement struct {
	Delta float64
	// Example is pld's certified ε of the run at example level, and RDP
	// rdp's ε for reference.
	Example, RDP Epsilon
	// Poisson is pld's ε of Run.PoissonReading (nil without one): not
	// proven for the run's sampling.
	Poisson *Epsilon
	// User is pld's certified ε at user level and UserRDP rdp's (nil
	// without Run.UserTraining); ExamplesPerUser is Run's.
	User, UserRDP   *Epsilon
	ExamplesPerUser int
	// GDP is the Gaussian DP parameter of the example-level run.
	GDP GDP
}

// Compute returns the statement of run at opt.Delta. It validates its
// inputs first (a *accounting.ParamError naming Delta, TailDelta,
// GridPoints, Refinements or ExamplesPerUser); a run pld cannot bound is
// an error (errors.Is accounting.ErrUnsupportedEvent), one rdp cannot
// bound is said in RDP.Unsupported. It makes four pld and two rdp
// compositions at most (the example and user levels, the Poisson
// reading) and about GridPoints + Refinements δ(ε) queries of pld for the
// GDP bound; it checks ctx between queries. The δ(ε) queries of a long run cost
// pld up to a second each (a million steps: about 0.3 s).
func Compute(ctx context.Context, run Run, opt Options) (*Statement, error) {
	if err := accounting.CheckDelta(opt.Delta); err != nil {
		return nil, err
	}
	tail := opt.TailDelta
	if tail == 0 {
		tail = DefaultTailDelta
	}
	if !(tail > 0 && tail < 1) {
		return nil, &accounting.ParamError{Name: "TailDelta", Value: tail, Want: "in (0, 1), or 0 for the default"}
	}
	tail = math.Min(tail, opt.Delta)
	grid, refine := opt.GridPoints, opt.Refinements
	if grid == 0 {
		grid = defaultGrid
	}
	switch {
	case refine == 0:
		refine = defaultRefine
	case refine == -1:
		refine = 0
	}
	if grid < 2 || grid > 10000 {
		return nil, &accounting.ParamError{Name: "GridPoints", Value: float64(opt.GridPoints), Want: "2..10000, or 0 for the default"}
	}
	if refine < 0 || refine > 10000 {
		return nil, &accounting.ParamError{Name: "Refinements", Value: float64(opt.Refinements), Want: "0..10000, or -1 for none"}
	}
	if run.Training == nil {
		return nil, &accounting.ParamError{Name: "Training", Value: 0, Want: "the run's event"}
	}
	if run.UserTraining != nil && run.ExamplesPerUser < 1 {
		return nil, &accounting.ParamError{Name: "ExamplesPerUser", Value: float64(run.ExamplesPerUser), Want: ">= 1 with UserTraining"}
	}
	ropt := registry.Options{PLDGridWidth: opt.PLDGridWidth, Adjacency: run.Adjacency}
	s := &Statement{Delta: opt.Delta, ExamplesPerUser: run.ExamplesPerUser}
	acc, ex, err := epsilonOf(ctx, accounting.KindPLD, ropt, run.Training, opt.Delta)
	if err != nil {
		return nil, err
	}
	if ex.Unsupported != "" {
		return nil, &accounting.UnsupportedEventError{Event: run.Training, Reason: "pld cannot bound the run: " + ex.Unsupported}
	}
	s.Example = ex
	if _, s.RDP, err = epsilonOf(ctx, accounting.KindRDP, ropt, run.Training, opt.Delta); err != nil {
		return nil, err
	}
	if run.PoissonReading != nil {
		popt := ropt
		popt.Adjacency = accounting.AddRemove
		_, p, err := epsilonOf(ctx, accounting.KindPLD, popt, run.PoissonReading, opt.Delta)
		if err != nil {
			return nil, err
		}
		s.Poisson = &p
	}
	if run.UserTraining != nil {
		_, u, err := epsilonOf(ctx, accounting.KindPLD, ropt, run.UserTraining, opt.Delta)
		if err != nil {
			return nil, err
		}
		_, ur, err := epsilonOf(ctx, accounting.KindRDP, ropt, run.UserTraining, opt.Delta)
		if err != nil {
			return nil, err
		}
		s.User, s.UserRDP = &u, &ur
	}
	if s.GDP, err = computeGDP(ctx, acc, opt.Delta, tail, grid, refine); err != nil {
		return nil, err
	}
	return s, nil
}

// bracketer is pld's ε bracket.
type bracketer interface {
	EpsilonBracket(ctx context.Context, delta float64) (pld.Bracket, error)
}

// epsilonOf composes e into a fresh method of kind k and returns it with
// its ε at delta. An event the method cannot bound is reported in
// Epsilon.Unsupported, not as an error.
func epsilonOf(ctx context.Context, k accounting.Kind, opt registry.Options, e accounting.Event, delta float64) (accounting.Method, Epsilon, error) {
	out := Epsilon{Kind: k}
	m, err := registry.New(k, opt)
	if err == nil {
		err = m.Compose(e, 1)
	}
	if errors.Is(err, accounting.ErrUnsupportedEvent) || (err != nil && m == nil) {
		out.Unsupported = reason(err)
		return nil, out, nil
	}
	if err != nil {
		return nil, out, err
	}
	switch a := m.(type) {
	case bracketer:
		b, err := a.EpsilonBracket(ctx, delta)
		if err != nil {
			return nil, out, err
		}
		out.Upper, out.Lower, out.PairLower, out.PairOnly, out.Bracketed = b.Upper, b.Lower, b.PairLower, b.PairOnly, true
	case accounting.OrderReporter:
		out.Upper, out.Order, err = a.EpsilonAndOrder(ctx, delta)
	default:
		out.Upper, err = m.Epsilon(ctx, delta)
	}
	if errors.Is(err, accounting.ErrUnsupportedEvent) {
		out = Epsilon{Kind: k, Unsupported: reason(err)}
		return nil, out, nil
	}
	return m, out, err
}

// reason is why a method cannot bound an event, as its error says it.
func reason(err error) string {
	var ue *accounting.UnsupportedEventError
	if errors.As(err, &ue) && ue.Reason != "" {
		if ue.Path != "" {
			return ue.Reason + " (at " + ue.Path + ")"
		}
		return ue.Reason
	}
	return err.Error()
}
