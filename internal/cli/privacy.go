package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/atomicfile"
)

// SigmaCmd calibrates σ.
type SigmaCmd struct {
	Eps   *float64 `name:"eps" help:"Target ε, > 0 (required)."`
	Delta float64  `name:"delta" default:"1e-5" help:"Target δ, in (0, 1)."`
	trainingFlags
	accountantFlags
	Tol        float64 `name:"tol" default:"1e-6" help:"Relative tolerance of σ; σ is always rounded up."`
	EmitEvents string  `name:"emit-events" placeholder:"FILE" help:"Write the training at the calibrated σ (of the first accountant that finds one) as dp_accounting DpEvent JSON to FILE (- for stdout, instead of the table), only if the command succeeds."`
	EmitFormat string  `name:"emit-format" default:"dp_accounting" enum:"dp_accounting,compositions" help:"Format of --emit-events: dp_accounting (one DpEvent) or compositions (a composition ledger: schema_version 1, config, compositions of {event, count})."`
}

// Run implements the command.
func (c *SigmaCmd) Run(e *Env) error {
	if err := e.checkEmit(c.EmitEvents, c.EmitFormat); err != nil {
		return err
	}
	g := &given{trainingFlags: c.trainingFlags}
	if err := g.check("sigma", "eps", c.Eps != nil, "q", c.Q != nil); err != nil {
		return err
	}
	p, err := g.plan("sigma")
	if err != nil {
		return err
	}
	eps, delta, tol := deref(c.Eps), c.Delta, c.Tol
	a := c.accountants(p.Adjacency)
	if err := firstErr(checkFlag("eps", accounting.CheckEpsilon(eps)), checkFlag("delta", accounting.CheckDelta(delta))); err != nil {
		return err
	}
	if !(tol > 0 && tol < 0.1) {
		return usageAt("tol", "invalid --tol: %s, want in (0, 0.1)", accounting.FormatValue(tol))
	}
	if err := a.Check(); err != nil {
		return err
	}
	kinds, err := a.Kinds()
	if err != nil {
		return err
	}
	res := &Rows{Quantity: "sigma"}
	for _, k := range kinds {
		var s calibrate.Result
		var at accounting.Method // the method holding the run at s.X, if kept
		b := p.bound(a, k)
		if k == accounting.KindPLD {
			// pld's queries cost up to seconds at small δ: seed the
			// search with rdp's σ (pldSearchQueries counts the queries).
			pldCount := func() (accounting.Method, error) {
				pldSearchQueries.Add(1)
				return b.factory()
			}
			seed := p.bound(a, accounting.KindRDP).factory
			s, at, err = calibrate.SigmaSeeded(e.Ctx, pldCount, seed, b.event, eps, delta, calibrate.Options{RelTol: tol})
		} else {
			s, err = calibrate.SigmaFor(e.Ctx, b.factory, b.event, eps, delta, calibrate.Options{RelTol: tol})
		}
		if err != nil {
			r := a.NewPlanRow(k, p, 0)
			r.solved = "sigma"
			r.setError(err)
			a.suggest(&r, k, b.event(1))
			res.Rows = append(res.Rows, r)
			continue
		}
		r := a.NewPlanRow(k, p, s.X)
		r.solved = "sigma"
		if at != nil {
			r.FillFrom(e.Ctx, at, delta, 0)
		} else {
			r.Fill(e.Ctx, b.factory, delta, 0)
		}
		a.suggest(&r, k, b.event(s.X))
		res.Rows = append(res.Rows, r)
		if res.Event == nil {
			res.Event, res.groupLemma = b.event(s.X), b.lemma // the first accountant's answer
		}
	}
	return e.printRows(res, emitSpec{c.EmitEvents, c.EmitFormat, c.Adjacency})
}

// EpsCmd computes ε(δ).
type EpsCmd struct {
	Sigma *float64 `name:"sigma" help:"Noise multiplier σ (noise std / L2 sensitivity, the clipping norm), > 0."`
	Delta float64  `name:"delta" default:"1e-5" help:"δ, in (0, 1)."`
	trainingFlags
	accountantFlags
	eventFlags
}

// Run implements the command.
func (c *EpsCmd) Run(e *Env) error {
	g, err := c.given(e, c.Sigma, c.eventFlags)
	if err != nil {
		return err
	}
	if err := e.checkEmit(c.EmitEvents, c.EmitFormat); err != nil {
		return err
	}
	if err := g.check("eps", "sigma", g.sigma != nil, "q", g.Q != nil); err != nil {
		return err
	}
	res, err := privacyAt(e.Ctx, g, c.accountantFlags, checkFlag("delta", accounting.CheckDelta(c.Delta)), c.Delta, 0)
	if err != nil {
		return err
	}
	return e.printRows(res, emitSpec{c.EmitEvents, c.EmitFormat, c.Adjacency})
}

// given reads the --events or --ledger file, if any, with the training
// flags.
func (t *trainingFlags) given(e *Env, sigma *float64, files eventFlags) (*given, error) {
	flag, name := "events", files.Events
	if files.Ledger != "" {
		flag, name = "ledger", files.Ledger
	}
	r, err := readTrainingFile(e, flag, name, t.Adjacency)
	if err != nil {
		return nil, err
	}
	g := &given{trainingFlags: *t, sigma: sigma, event: r.Event}
	if r.Event != nil {
		g.fileFlag = flag
		if flag == "ledger" {
			g.read = r
		}
	}
	return g, nil
}

// DeltaCmd computes δ(ε).
type DeltaCmd struct {
	Sigma *float64 `name:"sigma" help:"Noise multiplier σ, > 0."`
	Eps   *float64 `name:"eps" help:"ε, > 0 (required)."`
	trainingFlags
	accountantFlags
	eventFlags
}

// Run implements the command.
func (c *DeltaCmd) Run(e *Env) error {
	g, err := c.given(e, c.Sigma, c.eventFlags)
	if err != nil {
		return err
	}
	if err := e.checkEmit(c.EmitEvents, c.EmitFormat); err != nil {
		return err
	}
	if err := g.check("delta", "sigma", g.sigma != nil, "eps", c.Eps != nil, "q", g.Q != nil); err != nil {
		return err
	}
	eps := deref(c.Eps)
	res, err := privacyAt(e.Ctx, g, c.accountantFlags, checkFlag("eps", accounting.CheckEpsilon(eps)), 0, eps)
	if err != nil {
		return err
	}
	return e.printRows(res, emitSpec{c.EmitEvents, c.EmitFormat, c.Adjacency})
}

// worstCaseNote is the note of a pld row whose event has an ε-DP step
// bounded through the worst ε-DP pair (see [mechanism.WorstCase]).
const worstCaseNote = "ε-DP steps are bounded through the worst ε-DP pair (binary randomized response): the lower end bounds that pair, not their true ε"

// worstCaseSteps reports whether e, under adj, has a step whose pld pairs
// are those of the worst mechanism with its guarantee, not its own.
func worstCaseSteps(e accounting.Event, adj accounting.Adjacency) bool {
	p, err := accounting.NormalizeUnder(adj, e, 1)
	if err != nil {
		return false
	}
	for _, s := range p.Steps {
		if m, err := mechanism.Of(s); err == nil && mechanism.WorstCase(m) {
			return true
		}
	}
	return false
}

// privacyAt answers ε at delta when delta > 0, else δ at eps; extra is the
// check of the command's own flag, made after the training's.
func privacyAt(ctx context.Context, g *given, af accountantFlags, extra error, delta, eps float64) (*Rows, error) {
	ev := g.event
	var p Plan
	var err error
	if ev == nil {
		if p, err = g.plan(""); err != nil {
			return nil, err
		}
	}
	adj, _ := accounting.ParseAdjacency(g.Adjacency) // kong's enum: valid
	a := af.accountants(adj)
	if err := firstErr(extra, a.Check()); err != nil {
		return nil, err
	}
	kinds, err := a.Kinds()
	if err != nil {
		return nil, err
	}
	res := &Rows{Quantity: "epsilon"}
	if delta == 0 {
		res.Quantity = "delta"
	}
	for _, k := range kinds {
		var r Row
		training := ev
		var b groupBound
		if ev != nil {
			r = a.NewEventRow(k, ev)
			if g.read.Format != "" {
				r.LedgerFormat = string(g.read.Format)
				r.Note = JoinNotes("read "+g.read.Description, r.Note)
			}
			if b = g.fileBound(a, k); g.GroupSize != nil && *g.GroupSize > 1 {
				r.event, r.GroupSize = b.event(0), int(*g.GroupSize)
				r.Note = JoinNotes(r.Note, b.note)
			}
		} else {
			r = a.NewPlanRow(k, p, 0)
			training = p.Event(0)
			b = p.bound(a, k)
		}
		r.Fill(ctx, b.factory, delta, eps)
		a.suggest(&r, k, training)
		if ev != nil && k == accounting.KindPLD && r.EpsilonLower != nil && worstCaseSteps(ev, adj) {
			r.Note = JoinNotes(r.Note, worstCaseNote)
		}
		res.Rows = append(res.Rows, r)
		if len(res.Rows) == 1 {
			res.Event, res.groupLemma = b.event(0), b.lemma
		}
	}
	if pp, ok := p.PoissonReading(); ok && ev == nil {
		// Beside the certified rows, the number the usual practice
		// reports, labelled as not proven for shuffling. For a group it
		// is the group's (Poisson sampling's exact mixture), not one
		// record's; none where that mixture is refused.
		if p.GroupSize > 1 {
			if pp, err = pp.withUsers(1, p.GroupSize); err != nil {
				return res, nil
			}
		}
		pa := a
		pa.Name, pa.Adjacency = string(accounting.KindPLD), accounting.AddRemove
		r := pa.NewPlanRow(accounting.KindPLD, pp, 0)
		r.Note, r.Procedure = JoinNotes(poissonReadingNote, r.Note), true
		r.Fill(ctx, pa.Factory(accounting.KindPLD), delta, eps)
		res.Rows = append(res.Rows, r)
	}
	return res, nil
}

// EpochsCmd finds the longest training a budget allows.
type EpochsCmd struct {
	Sigma     *float64 `name:"sigma" help:"Noise multiplier σ, > 0."`
	Q         *float64 `name:"q" help:"Sampling rate q, in (0, 1]."`
	Eps       *float64 `name:"eps" help:"Budget ε, > 0 (required)."`
	Delta     float64  `name:"delta" default:"1e-5" help:"Budget δ, in (0, 1)."`
	Batch     *Count   `name:"batch" help:"Batch size B, instead of --q (with --n: q = B/N)."`
	N         *Count   `name:"n" help:"Dataset size N (with --batch)."`
	Schedule  *string  `name:"schedule" placeholder:"PHASES" help:"Phases, one with steps=? or epochs=? (see dpcalc eps --help)."`
	Sampling  string   `name:"sampling" default:"poisson" enum:"poisson,fixed,shuffle,truncated-poisson" help:"How batches are drawn: poisson, fixed, shuffle or truncated-poisson (with --max-batch)."`
	MaxBatch  *Count   `name:"max-batch" placeholder:"B" help:"Largest lot of --sampling truncated-poisson."`
	Adjacency string   `name:"adjacency" default:"add-remove" enum:"add-remove,replace-one" help:"Neighbouring datasets: add-remove or replace-one."`
	// ExamplesPerUser is --examples-per-user, as in trainingFlags.
	ExamplesPerUser *Count `name:"examples-per-user" placeholder:"K" help:"User-level privacy: each user contributes at most K examples (see dpcalc eps --help)."`
	// GroupSize is --group-size, as in trainingFlags.
	GroupSize *Count `name:"group-size" placeholder:"G" help:"Group privacy: datasets differing in up to G records or users (see dpcalc eps --help)."`
	accountantFlags
	MaxSteps int `name:"max-steps" default:"1000000000" help:"Search limit on steps."`
}

// Run implements the command.
func (c *EpochsCmd) Run(e *Env) error {
	g := &given{trainingFlags: trainingFlags{Q: c.Q, Batch: c.Batch, N: c.N, Schedule: c.Schedule, Sampling: c.Sampling, MaxBatch: c.MaxBatch, Adjacency: c.Adjacency, ExamplesPerUser: c.ExamplesPerUser, GroupSize: c.GroupSize}, sigma: c.Sigma}
	if err := g.check("epochs", "sigma", c.Sigma != nil, "q", c.Q != nil, "eps", c.Eps != nil); err != nil {
		return err
	}
	eps, delta, limit := deref(c.Eps), c.Delta, c.MaxSteps
	p, err := g.plan("length")
	if err != nil {
		return err
	}
	a := c.accountants(p.Adjacency)
	if err := firstErr(
		checkFlag("eps", accounting.CheckEpsilon(eps)),
		checkFlag("delta", accounting.CheckDelta(delta)),
		a.Check(),
	); err != nil {
		return err
	}
	if limit < 1 {
		return usageAt("max-steps", "invalid --max-steps: %d, want >= 1", limit)
	}
	kinds, err := a.Kinds()
	if err != nil {
		return err
	}
	u := p.unknownPhase()
	per := p.stepsPerRep(u)
	res := &Rows{Quantity: "steps"}
	for _, k := range kinds {
		okFor := func(k accounting.Kind) func(n int) (bool, error) {
			b := p.bound(a, k)
			return func(n int) (bool, error) {
				if k == accounting.KindPLD {
					pldSearchQueries.Add(1)
				}
				v, err := calibrate.Epsilon(e.Ctx, b.factory, b.event(float64(n)), delta)
				return v <= eps, err
			}
		}
		lim := max(limit/per, 1)
		capped := false
		if k == accounting.KindPLD && lim > pldMaxSteps/per {
			lim, capped = max(pldMaxSteps/per, 1), true
		}
		var n int
		if k == accounting.KindPLD {
			n, err = pldLargest(okFor(k), okFor(accounting.KindRDP), lim)
		} else {
			n, _, err = calibrate.LargestInt(okFor(k), lim)
		}
		r := a.NewPlanRow(k, p, float64(n))
		r.solved = "steps"
		switch {
		case err != nil:
			r.setError(err)
			a.suggest(&r, k, p.Event(float64(max(n, 1))))
		case n == 0:
			r.Note = "not even one step fits the budget"
			r.Delta = delta
		default:
			r.Fill(e.Ctx, p.bound(a, k).factory, delta, 0)
			switch {
			case n == lim && capped:
				r.Note = fmt.Sprintf("pld's limit reached: more steps may fit (pld composes at most %d steps; rdp's bound may reach further)", pldMaxSteps)
			case n == lim:
				r.Note = "search limit reached: more steps may fit (raise --max-steps)"
			}
		}
		res.Rows = append(res.Rows, r)
	}
	return e.printRows(res, emitSpec{})
}

// orderHelp explains the λ column of the result table; it is the detailed
// help (kong.HelpProvider) of every command that prints that table.
func orderHelp() string {
	ordered, orderless := orderKinds()
	return "The table has one row per accountant. λ is the order at which the bound was attained: for " + ordered +
		", the moment order λ (Rényi order λ+1) that gives the smallest bound (JSON field lambda); - for accountants without orders (" + orderless + ")."
}

// Help implements kong.HelpProvider.
func (c *SigmaCmd) Help() string { return orderHelp() }

// Help implements kong.HelpProvider.
func (c *EpsCmd) Help() string { return orderHelp() }

// Help implements kong.HelpProvider.
func (c *DeltaCmd) Help() string { return orderHelp() }

// Help implements kong.HelpProvider.
func (c *EpochsCmd) Help() string { return orderHelp() }

// checkEmit refuses --emit-events - with --json: both write to stdout.
func (e *Env) checkEmit(emit, format string) error {
	if emit == "" && format == "compositions" {
		return usageAt("emit-format", "--emit-format compositions needs --emit-events FILE: it says how that file is written")
	}
	if emit == "-" && e.JSON {
		return usageAt("emit-events", "--emit-events - and --json both write to stdout; give --emit-events a file")
	}
	return nil
}

// emitSpec is where and how --emit-events writes the training: File ("" for
// nowhere, "-" for stdout), Format (the --emit-format value) and
// Adjacency (the --adjacency value, the relation a composition ledger
// states).
type emitSpec struct{ File, Format, Adjacency string }

// marshal writes ev in the format of s.
func (s emitSpec) marshal(ev accounting.Event) ([]byte, error) {
	if s.Format != "compositions" {
		return accounting.MarshalEvent(ev)
	}
	adj, err := accounting.ParseAdjacency(s.Adjacency)
	if err != nil {
		return nil, err
	}
	return accounting.MarshalCompositions(ev, adj)
}

// printRows prints res; with --emit-events FILE it writes the training's
// event to FILE (or, for "-", to stdout instead of the table) only when
// no row failed.
func (e *Env) printRows(res *Rows, spec emitSpec) error {
	emit := spec.File
	if err := e.Ctx.Err(); err != nil {
		return err // interrupted: the rows hold partial answers
	}
	if emit != "" && res.groupLemma {
		return usageAt("emit-events", "--emit-events writes the training as events, and this --group-size answer is the group privacy lemma on a single record's events, which no event describes: drop --emit-events or --group-size")
	}
	if emit == "" || res.Event == nil {
		e.Print(res)
		return nil
	}
	// The event is written only when the command succeeds: a failed row
	// (exit 1) leaves FILE as it was, and "-" prints nothing.
	if err := res.Fail(); err != nil {
		var ee *Error
		if errors.As(err, &ee) {
			err = &Error{Code: ee.Code, Err: fmt.Errorf("%w (--emit-events %s not written)", ee.Err, emit)}
		}
		if emit != "-" {
			e.Print(res)
		}
		return err
	}
	b, err := spec.marshal(res.Event)
	if err != nil {
		return fmt.Errorf("--emit-events: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	if emit == "-" {
		_, err := e.Stdout.Write(out.Bytes())
		return err
	}
	if err := atomicfile.WriteFile(emit, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--emit-events: %w", err)
	}
	e.Print(res)
	return nil
}

// poissonReadingNote labels the row of [Plan.PoissonReading].
const poissonReadingNote = "NOT proven for shuffled batches: the Poisson number at q = B/N, the usual practice (Chua et al. 2024 show the true ε of shuffling can be far larger)"

// pldSearchQueries counts the pld methods made by epochs and σ searches,
// one per query (tests bound the cost of a search by it).
var pldSearchQueries atomic.Int64

// pldMaxSteps is the most steps the pld accountant composes.
const pldMaxSteps = 1 << 40

// pldEpochsRelTol is the relative precision of pld's step search above
// its rdp seed: each pld query at millions of steps costs seconds, and the
// exact integer would take log2(n) of them.
const pldEpochsRelTol = 1e-6

// pldLargest returns the largest n ≤ lim for which ok (pld's ε within the
// budget) holds, seeded by rdpOK: pld's upper ε is never above rdp's for
// the same steps, so every n that rdp admits, pld admits too. The search
// checks pld at rdp's answer n0 and continues from there, to within
// pldEpochsRelTol·n0 (exact below a million steps), where it returns the
// lower end (certified by pld). Without a seed (rdp fails, or admits no
// step) it is the plain search from 1. (σ 1, q 1e-12, ε 1, δ 1e-15: rdp
// admits the whole search range at once, where the plain search made 31
// pld queries of up to 1e9 steps, 422 s.)
func pldLargest(ok, rdpOK func(n int) (bool, error), lim int) (int, error) {
	if n0, _, err := calibrate.LargestInt(rdpOK, lim); err == nil && n0 >= 1 {
		good, err := ok(n0)
		if err != nil {
			return 0, err
		}
		if good {
			n, _, err := calibrate.LargestIntFrom(ok, n0, lim, pldEpochsRelTol)
			return n, err
		}
	}
	n, _, err := calibrate.LargestInt(ok, lim)
	return n, err
}
