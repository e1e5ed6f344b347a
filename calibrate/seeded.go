package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/pld"
	"github.com/dpcalc/dpcalc/internal/search"
	"github.com/dpcalc/dpcalc/internal/sysmem"
)

// SigmaSeeded is [SigmaFor] for an accountant whose queries cost seconds
// (pld at a small δ), seeded by a cheap one (rdp) whose σ is close. It
// calibrates σ0 with seed and evaluates newAcc there: its ε(σ0) is ρ·eps
// (ρ ≤ 1 for pld, whose upper ε is never above rdp's).
//
// It calibrates seed again for the target eps/ρ, whose σ1 is where seed's
// curve scaled by ρ meets eps. Where seed is close (ρ ≥ 0.3), or delta is
// not small (≥ 1e-8: there newAcc's queries cost at most tenths of a
// second, and this search makes at most 8 of them on the width sweep), it
// runs [search.SmallestFrom] on newAcc's ε from σ0 and σ1.
//
// Where seed is far off (ρ < 0.3: small sampling rates, where rdp's σ can
// be 3.4 times pld's) and delta is small, log ε(σ) bends sharply near the
// answer (σ 1, q 1e-4, T 1e4, δ 1e-10: its slope in log σ is −7.5 at
// σ 0.85, −4.3 at 1 and −1.3 at 1.5), and interpolating it took 12 ε
// queries of up to 1.5 s each. There it
// first approaches the σ where newAcc's δ at the target ε is delta, by
// [search.Approach] on log δ(σ) − log delta, which is close to linear in
// σ (slope −44 at σ 0.8, −50 at 1, −56 at 1.6), from the larger of
// σ0·ρ (where ε ∝ 1/σ, a Gaussian's, would meet eps) and σ1; then
// [search.SmallestFrom] closes on newAcc's ε from the two points
// 0.45·opt.RelTol either side of it, with a margin of 4·opt.RelTol. The σ
// at which ε meets eps is not below it: an ε query's upper end is one at
// which a δ query's upper δ is within delta, so it is at least where
// Delta's own upper δ (the least of the bounds it tries) reaches delta.
// It is above by the gap between the two queries' grids (1e-7 to 4e-5
// relative on the width sweep). A pld accountant's δ there is the upper
// end of pld.Accountant.DeltaUpperAgainst: cut for delta, narrowed only
// until it stands clear of delta, and ended at the two-scale bounds
// without their lower bound or the cut grid's lower distributions (σ
// 1.0066, q 1e-4, T 1e5, ε 0.409541: 3,321 work units where Delta took
// 9,988, the same upper δ).
//
// The ε queries of SmallestFrom ask a pld accountant where ε stands
// against eps (pld.Accountant.EpsilonAgainst): a σ whose bracket stands
// clear of eps is decided without the narrowing and the certification
// that an answer's bracket needs (σ 1, q 1e-3, T 1e4, δ 1e-15: rdp's σ
// took 9,344 work units of the search's 21,215, now 748 of 11,690).
// Such an evaluation is provisional: an answer found at one is queried
// again in full, and if its certified ε then missed eps, the search would
// go on from it with full queries alone.
//
// The two points SmallestFrom starts from are queried at once, on two
// goroutines, where neither was queried before, at least pairProcs CPUs
// are available and memory allows (see sysmem.RoomForTwo): near the
// answer they are its two closing ε queries (σ 1, q 1e-4, T 1e5, δ
// 1e-15: about 0.5 s each, a third of the search). The
// factory and event are called one at a time, the two results are
// recorded in SmallestFrom's order, and a query refused for memory is
// asked again alone, so the result does not depend on the schedule.
//
// Only SmallestFrom on newAcc's ε decides: the result meets SigmaFor's
// contract (X was evaluated under newAcc and its ε is ≤ eps, Lo was
// evaluated and misses, the bracket is within opt.RelTol), and nothing
// about the seed or the approach is trusted: a seed or an approach that
// fails or is far off costs evaluations, not soundness.
//
// Result.Evaluations counts newAcc's queries, of ε and of δ.
//
// It also returns the method holding event(X), queried at delta, so that
// a caller reporting more about X need not compose it again; a pld
// accountant comes with its bracket of ε at delta kept (its
// EpsilonBracket at delta answers without a second query). (σ for ε
// 0.0798448, δ 1e-10, q 1e-4, T 1e4 under pld took 12 ε queries, 69,011
// work units, from rdp's σ alone; it takes 1 ε query far above the answer,
// 4 δ and 2 ε queries near it, 26,000.)
func SigmaSeeded(ctx context.Context, newAcc, seed Factory, event func(sigma float64) accounting.Event, eps, delta float64, opt Options) (Result, accounting.Method, error) {
	if err := accounting.CheckEpsilon(eps); err != nil {
		return Result{}, nil, err
	}
	if err := accounting.CheckDelta(delta); err != nil {
		return Result{}, nil, err
	}
	if opt.Min <= 0 {
		opt.Min = 1e-3
	}
	tol := opt.WithDefaults().RelTol
	// Each σ is composed and queried once; the method at the smallest σ
	// that met the target is kept. A pld accountant is asked for its
	// bracket, which costs the same as its ε while its steps' pairs are
	// attained (after the first answer says they are not, for ε alone).
	// An evaluation is provisional where EpsilonAgainst left its upper
	// end uncertified (see above); full makes every later one certified.
	type eval struct {
		v           float64
		provisional bool
	}
	seen := map[float64]eval{}
	var best accounting.Method
	bestX := math.Inf(1)
	brackets := true
	full := false // every evaluation certified (after a provisional answer)
	queries := 0  // of newAcc, ε and δ
	// ask queries a composed method; it changes no state of the search,
	// so two run at once (see prefetch).
	type answer struct {
		v         float64
		certified bool
		pairOnly  bool
		acc       accounting.Method
	}
	ask := func(acc accounting.Method) (answer, error) {
		var err error
		an := answer{certified: true}
		if p, ok := acc.(*pld.Accountant); ok && brackets {
			var b pld.Bracket
			if full {
				b, err = p.EpsilonBracket(ctx, delta)
			} else {
				b, an.certified, err = p.EpsilonAgainst(ctx, delta, eps)
			}
			if err != nil {
				return answer{}, err
			}
			an.v, an.pairOnly = b.Upper, b.PairOnly
			an.acc = &bracketed{Accountant: p, delta: delta, b: b}
			return an, nil
		}
		if an.v, err = acc.Epsilon(ctx, delta); err != nil {
			return answer{}, err
		}
		an.acc = acc
		return an, nil
	}
	record := func(sigma float64, an answer) {
		queries++
		if _, ok := an.acc.(*bracketed); ok {
			brackets = !an.pairOnly
		}
		seen[sigma] = eval{v: an.v, provisional: !an.certified}
		if an.v <= eps && sigma < bestX && an.certified {
			best, bestX = an.acc, sigma
		}
	}
	query := func(sigma float64) (answer, error) {
		acc, err := composed(newAcc, event(sigma))
		if err != nil {
			return answer{}, err
		}
		return ask(acc)
	}
	f := func(sigma float64) (float64, error) {
		if e, ok := seen[sigma]; ok && !(full && e.provisional) {
			return e.v, nil
		}
		an, err := query(sigma)
		if err != nil {
			queries++
			return 0, err
		}
		record(sigma, an)
		return an.v, nil
	}
	// prefetch queries the two starting points of SmallestFrom at once
	// (as it clamps them) where neither has been queried: it evaluates
	// both before any other point, and they are independent. The two
	// are recorded in SmallestFrom's order, so the result does not
	// depend on which finishes first.
	prefetch := func(x0, x1 float64) error {
		o := opt.WithDefaults()
		x0 = math.Min(math.Max(x0, o.Min), o.Max)
		x1 = math.Min(math.Max(x1, o.Min), o.Max)
		if _, ok := seen[x0]; ok || x0 == x1 || !(x0 > 0 && x1 > 0) {
			return nil
		}
		if _, ok := seen[x1]; ok || runtime.GOMAXPROCS(0) < pairProcs || !sysmem.RoomForTwo() {
			return nil
		}
		// The factory and event are called here, one after the other;
		// only the queries run at once.
		acc0, err0 := composed(newAcc, event(x0))
		acc1, err1 := composed(newAcc, event(x1))
		var an0, an1 answer
		if err0 == nil && err1 == nil {
			done := make(chan struct{})
			go func() {
				defer close(done)
				an1, err1 = ask(acc1)
			}()
			an0, err0 = ask(acc0)
			<-done
			// A query refused for memory while the other held its own
			// is asked again alone, as the sequential search would.
			var me *sysmem.Error
			if errors.As(err0, &me) {
				an0, err0 = query(x0)
			}
			if errors.As(err1, &me) {
				an1, err1 = query(x1)
			}
		}
		for _, q := range []struct {
			x   float64
			an  answer
			err error
		}{{x0, an0, err0}, {x1, an1, err1}} {
			if q.err != nil {
				queries++
				return q.err
			}
			record(q.x, q.an)
		}
		return nil
	}
	seedOpt := Options{RelTol: 1e-4, Min: opt.Min, Max: opt.Max}
	x0, x1 := 1.0, 1.1 // no seed: SmallestFrom's own bracketing
	if s, err := SigmaFor(ctx, seed, event, eps, delta, seedOpt); err == nil {
		x0, x1 = s.X, s.X*(1-1e-3)
		v, err := f(x0)
		if err != nil {
			return Result{}, nil, err
		}
		if target := eps * eps / v; v > 0 && !math.IsInf(v, 1) && target > 0 && !math.IsInf(target, 1) {
			if s1, err := SigmaFor(ctx, seed, event, target, delta, seedOpt); err == nil && s1.X != x0 {
				x1 = s1.X
			}
		}
		if rho := v / eps; rho > 0 && rho < approachBelow && delta < approachDeltaBelow {
			start := math.Max(x0*rho, math.Min(x1, x0))
			est, n, ok, err := approachDelta(ctx, newAcc, event, eps, delta, start, tol, opt)
			queries += n
			if err != nil {
				return Result{}, nil, err
			}
			if ok {
				x0, x1 = est*(1+0.45*tol), est*(1-0.45*tol)
				if opt.Margin <= 0 {
					opt.Margin = 4 * tol
				}
			}
		}
	} else if err := accounting.Canceled(ctx); err != nil {
		return Result{}, nil, err
	}
	if err := prefetch(x0, x1); err != nil {
		return Result{Evaluations: queries}, nil, search.Prefix("calibrate", err)
	}
	r, err := search.SmallestFrom(f, eps, x0, x1, opt)
	if e, ok := seen[r.X]; err == nil && ok && e.provisional {
		// The answer was decided provisionally: query it in full, and
		// search on from it with full queries if it misses now.
		full = true
		v, ferr := f(r.X)
		switch {
		case ferr != nil:
			err = ferr
		case v <= eps:
			r.Value = v
		default:
			r, err = search.SmallestFrom(f, eps, r.X*(1+tol), r.X, opt)
		}
	}
	r.Evaluations = queries
	if err != nil {
		return r, nil, search.Prefix("calibrate", err)
	}
	if !(r.Value <= eps) || r.X != bestX { // defence in depth: SmallestFrom guarantees it
		return r, nil, fmt.Errorf("calibrate: internal error: ε(σ=%g) = %g against the target %g", r.X, r.Value, eps)
	}
	return r, best, nil
}

// pairProcs is the least GOMAXPROCS at which SigmaSeeded queries its two
// starting points at once. Two logical CPUs are often one core's two
// hyperthreads, which give two threads little more than one: on this
// project's 2-CPU machine the pair took 0.1–0.5 s more CPU for 0.1–0.35 s
// less wall time (σ 1, q 1e-4, T 1000, δ 1e-15: 1.46–1.52 s CPU and wall
// one after the other, 1.60–2.02 s CPU and 1.14–1.45 s wall at once).
// A variable for tests.
var pairProcs = 4

// approachBelow is the ratio of newAcc's ε to the target at seed's σ, and
// approachDeltaBelow the δ, below which SigmaSeeded approaches on δ
// first.
const (
	approachBelow      = 0.3
	approachDeltaBelow = 1e-8
)

// maxApproach caps the δ queries of SigmaSeeded's approach.
const maxApproach = 8

// approachDelta estimates the σ at which newAcc's δ at eps is delta
// ([search.Approach] on log δ − log delta, to half of tol) from start. Its
// first step assumes −log δ grows as σ² (a Gaussian tail); a later step
// with no usable secant (δ far above the answer sits on the floor of its
// bounds, about 1e-25 at q 1e-4, and says less than it seems) as σ. ok is
// false where the approach found nothing to go on (a δ query failed, or
// none was finite); only a canceled context is an error. queries counts
// the δ queries made.
func approachDelta(ctx context.Context, newAcc Factory, event func(sigma float64) accounting.Event, eps, delta, start, tol float64, opt Options) (est float64, queries int, ok bool, err error) {
	lgd := math.Log(delta)
	g := func(sigma float64) (float64, error) {
		if sigma < opt.Min || (opt.Max > 0 && sigma > opt.Max) {
			return math.NaN(), nil // outside the domain: stop approaching
		}
		acc, err := composed(newAcc, event(sigma))
		if err != nil {
			return 0, err
		}
		var d float64
		if p, ok := acc.(*pld.Accountant); ok {
			// Only the upper δ matters here.
			d, err = p.DeltaUpperAgainst(ctx, eps, delta)
		} else {
			d, err = acc.Delta(ctx, eps)
		}
		if err != nil {
			return 0, err
		}
		return math.Log(d) - lgd, nil
	}
	steps := 0
	model := func(sigma, gx float64) float64 {
		steps++
		ld := gx + lgd
		switch {
		case !(ld < 0):
			return 2 * sigma // δ = 1: far below
		case steps == 1:
			return sigma * math.Sqrt(lgd/ld) // −log δ ∝ σ²
		}
		return sigma * lgd / ld // −log δ ∝ σ
	}
	est, queries, st, err := search.Approach(g, start, model, tol/2, maxApproach)
	if err != nil {
		return 0, queries, false, accounting.Canceled(ctx)
	}
	return est, queries, st == search.Converged || st == search.Exact, nil
}

// bracketed is a pld accountant with its bracket of ε at one δ kept.
type bracketed struct {
	*pld.Accountant
	delta float64
	b     pld.Bracket
}

// EpsilonBracket is [pld.Accountant.EpsilonBracket], kept at b.delta.
func (b *bracketed) EpsilonBracket(ctx context.Context, delta float64) (pld.Bracket, error) {
	if delta == b.delta {
		return b.b, nil
	}
	return b.Accountant.EpsilonBracket(ctx, delta)
}

// Compose is [pld.Accountant.Compose]; the bracket kept no longer holds.
func (b *bracketed) Compose(e accounting.Event, count int) error {
	b.delta = math.NaN()
	return b.Accountant.Compose(e, count)
}
