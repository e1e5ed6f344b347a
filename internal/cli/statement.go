package cli

import (
	"fmt"
	"math"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/pld"
	"github.com/dpcalc/dpcalc/calibrate/statement"
	"github.com/dpcalc/dpcalc/internal/render"
)

// StatementCmd prints the privacy statement of a run (calibrate/statement).
type StatementCmd struct {
	Sigma *float64 `name:"sigma" help:"Noise multiplier σ (noise std / L2 sensitivity, the clipping norm), > 0."`
	Delta float64  `name:"delta" default:"1e-5" help:"δ, in (0, 1)."`
	trainingFlags
	Events  string  `name:"events" placeholder:"FILE" xor:"file" help:"Read the training from FILE (- for stdin): dp_accounting DpEvent JSON (docs/events.md), instead of the training flags."`
	Ledger  string  `name:"ledger" placeholder:"FILE" xor:"file" help:"Read the training from a ledger FILE (- for stdin), instead of the training flags: a dpcalc training ledger, an Opacus accountant state or a dp_accounting DpEvent, detected from its contents (docs/events.md)."`
	PLDGrid float64 `name:"pld-grid" placeholder:"WIDTH" help:"Discretisation width of the pld accountant's privacy loss grid (default: adaptive)."`
}

// Help implements kong.HelpProvider.
func (c *StatementCmd) Help() string {
	return "What the guarantee covers, the example-level ε at δ with pld's certified interval (rdp's beside it), " +
		"the Poisson number for shuffled or fixed-size batches labelled not proven, and the μ of the closest " +
		"Gaussian DP curve with how far the run is from it (docs/statement.md)."
}

// Statement is the answer of dpcalc statement: the rows of its table (pld's
// certified ε of the run, rdp's for reference, the Poisson reading where
// one is usual, the user-level ε where asked), the Gaussian DP parameter,
// and the statement in words.
type Statement struct {
	Rows  []Row
	GDP   statement.GDP
	Delta float64
	Lines []string
}

// Run implements the command.
func (c *StatementCmd) Run(e *Env) error {
	g, err := c.given(e, c.Sigma, eventFlags{Events: c.Events, Ledger: c.Ledger})
	if err != nil {
		return err
	}
	// The example-level run is the one without --examples-per-user and
	// --group-size; userLevel reads them from users.
	users := *g
	g.ExamplesPerUser, g.GroupSize = nil, nil
	adj, _ := accounting.ParseAdjacency(c.Adjacency) // kong's enum: valid
	a := Accountants{Name: string(accounting.KindPLD), PLDGrid: c.PLDGrid, Adjacency: adj}
	ev, _, _, err := g.training(a, accounting.KindPLD)
	if err != nil {
		return err
	}
	if err := checkFlag("delta", accounting.CheckDelta(c.Delta)); err != nil {
		return err
	}
	var p Plan
	if g.event == nil {
		if p, err = g.plan(""); err != nil {
			return err
		}
	}
	run := statement.Run{Training: ev, Adjacency: adj}
	reading, hasReading := poissonReadingOf(p)
	if hasReading && g.event == nil {
		run.PoissonReading = reading.Event(0)
	}
	// User level: --examples-per-user K (being added to trainingFlags with
	// user-level accounting) plugs in here; see userLevel.
	k, user, err := userLevel(&users)
	if err != nil {
		return err
	}
	run.UserTraining, run.ExamplesPerUser = user, k
	s, err := statement.Compute(e.Ctx, run, statement.Options{Delta: c.Delta, PLDGridWidth: c.PLDGrid})
	if err != nil {
		return err
	}
	res := &Statement{GDP: s.GDP, Delta: c.Delta}
	row := func(k accounting.Kind, eps statement.Epsilon) Row {
		a := a
		a.Name = string(k)
		var r Row
		if g.event != nil {
			r = a.NewEventRow(k, g.event)
			if g.read.Format != "" {
				r.LedgerFormat = string(g.read.Format)
				r.Note = JoinNotes("read "+g.read.Description, r.Note)
			}
		} else {
			r = a.NewPlanRow(k, p, 0)
		}
		fillEpsilon(&r, eps, c.Delta)
		if g.event != nil && k == accounting.KindPLD && r.EpsilonLower != nil && worstCaseSteps(g.event, adj) {
			r.Note = JoinNotes(r.Note, worstCaseNote)
		}
		return r
	}
	res.Rows = append(res.Rows, row(accounting.KindPLD, s.Example), row(accounting.KindRDP, s.RDP))
	if s.Poisson != nil {
		pa := a
		pa.Adjacency = accounting.AddRemove
		r := pa.NewPlanRow(accounting.KindPLD, reading, 0)
		r.Note, r.Procedure = JoinNotes(notProvenNote(p.Sampling), r.Note), true
		fillEpsilon(&r, *s.Poisson, c.Delta)
		res.Rows = append(res.Rows, r)
	}
	if s.User != nil {
		for _, u := range []*statement.Epsilon{s.User, s.UserRDP} {
			r := row(u.Kind, *u)
			r.Note = JoinNotes(fmt.Sprintf("user-level: %d examples per user", s.ExamplesPerUser), r.Note)
			r.ExamplesPerUser = s.ExamplesPerUser
			res.Rows = append(res.Rows, r)
		}
	}
	res.Lines = statementLines(g, res.Rows[0], s, p)
	e.Print(res)
	return nil
}

// userLevel returns the run at user level when the command line asks for
// it: K examples per user and the user-level
// event, a mixture of Gaussians per step for Poisson sampling (Ganesh
// 2024; [Plan.WithExamplesPerUser]). It is the one place that reads the
// user-level flags; without them no run is user-level. A bad K, a file
// run or a sampling without a user-level bound is a usage error naming
// the flag.
func userLevel(g *given) (int, accounting.Event, error) {
	if g.ExamplesPerUser == nil && g.GroupSize == nil {
		return 0, nil, nil
	}
	if g.GroupSize != nil {
		return 0, nil, usageAt("group-size", "dpcalc statement states user-level ε with --examples-per-user; --group-size is for eps, delta, sigma, epochs and profile")
	}
	if g.event != nil {
		return 0, nil, usageAt("examples-per-user", "--examples-per-user is for the training flags; an --%s file states its own events (a user's steps are a MixtureOfGaussiansDpEvent or BinomialMixtureOfGaussiansDpEvent)", g.fileFlag)
	}
	p, err := g.plan("")
	if err != nil {
		return 0, nil, err
	}
	k := max(p.ExamplesPerUser, 1)
	if k == 1 {
		return 0, nil, nil
	}
	return k, p.Event(0), nil
}

// poissonReadingOf returns, for shuffled or fixed-size batches, the run
// read as Poisson-sampled at q = B/N under add-remove for the same steps
// and σ: the number usually reported for them, not proven for either
// ([Plan.PoissonReading]).
func poissonReadingOf(p Plan) (Plan, bool) {
	if p.Sampling != "fixed" {
		return p.PoissonReading()
	}
	return p.asPoisson()
}

// notProvenNote labels the Poisson reading of a statement.
func notProvenNote(sampling string) string {
	batches := map[string]string{"shuffle": "shuffled", "fixed": "fixed-size"}[sampling]
	return "not proven for this sampling: the Poisson number at q = B/N under add-remove, which the usual practice reports for " + batches +
		" batches (Chua et al. 2024 show the true ε of shuffling can be far larger); the run's certified interval is the pld row above"
}

// fillEpsilon fills r with ε at delta as [Row.FillFrom] does from the
// same accountant: the certified interval (its lower end marked when only
// the pairs attain the pairs' own), rdp's order, or why the accountant
// cannot bound the run.
func fillEpsilon(r *Row, eps statement.Epsilon, delta float64) {
	r.Delta, r.answer = delta, "epsilon"
	if eps.Unsupported != "" {
		r.setError(&accounting.UnsupportedEventError{Reason: eps.Unsupported})
		return
	}
	if eps.Bracketed {
		r.EpsilonLower, r.EpsilonUpper = FinitePtr(eps.Lower), FinitePtr(eps.Upper)
		if eps.PairOnly {
			r.PairEpsilonLower = FinitePtr(eps.PairLower)
			r.Note = JoinNotes(r.Note, pairLowerNote(pld.Bracket{PairLower: eps.PairLower}))
		}
	}
	if eps.Kind == accounting.KindRDP && !math.IsInf(eps.Upper, 0) {
		r.Lambda = ptr(eps.Order)
	}
	r.Epsilon = FinitePtr(eps.Upper)
	if r.Epsilon == nil {
		r.Note = JoinNotes(r.Note, "no finite ε bound at this δ")
	}
}

// statementLines are the statement in words: the run, what the guarantee
// covers, its level, ε at δ, the Poisson reading, the user level, and the
// Gaussian DP parameter. Every number is rounded the safe way.
func statementLines(g *given, pldRow Row, s *statement.Statement, p Plan) []string {
	var out []string
	out = append(out, "Run: "+describeRun(g, pldRow)+".")
	sens := "the clipping norm C is the sensitivity of each step (one example's clipped gradient moves the noisy sum by at most C)"
	switch {
	case g.event != nil && g.read.Format != accounting.FormatOpacus && g.read.Format != accounting.FormatDpcalcLedger:
		sens = "each mechanism's noise is relative to its sensitivity, as the events state it (for DP-SGD, the clipping norm C)"
	case pldRow.Adjacency == accounting.ReplaceOne.String():
		sens = "the sensitivity of each step is 2C, twice the clipping norm (replacing one example moves the noisy sum by at most 2C); σ stays the noise over C"
	}
	out = append(out,
		"Covers: every model released during training, each intermediate model and checkpoint as well as the final one (the bound is on the whole sequence of noisy steps); "+sens+".")
	level := "Level: example-level, neighbouring datasets differing in one example (" + map[string]string{
		"add-remove":  "added or removed",
		"replace-one": "replaced",
	}[pldRow.Adjacency] + "). "
	if s.User == nil {
		level += "No user-level guarantee is stated: one needs a bound on the examples each user contributes."
	} else {
		level += fmt.Sprintf("User-level with at most %d examples per user: see the user-level rows.", s.ExamplesPerUser)
	}
	out = append(out, level)
	ex := s.Example
	mark := ""
	if ex.PairOnly {
		mark = "*"
	}
	epsLine := fmt.Sprintf("Example-level ε at δ = %s: the true ε %s (pld, certified)", render.G(s.Delta), intervalMarked(ex.Lower, ex.Upper, mark))
	if s.RDP.Unsupported == "" {
		epsLine += "; rdp's bound " + render.Inf(s.RDP.Upper, render.Up) + " for reference"
	}
	out = append(out, epsLine+".")
	if s.Poisson != nil {
		out = append(out, fmt.Sprintf("Poisson reading: %s at q = B/N is not proven for this sampling (%s batches); only the certified interval above is a guarantee.",
			render.Inf(s.Poisson.Upper, render.Up), map[string]string{"shuffle": "shuffled", "fixed": "fixed-size"}[p.Sampling]))
	}
	if s.User != nil {
		out = append(out, fmt.Sprintf("User-level ε at δ = %s with %d examples per user: the true ε %s (pld, certified).",
			render.G(s.Delta), s.ExamplesPerUser, intervalMarked(s.User.Lower, s.User.Upper, map[bool]string{true: "*"}[s.User.PairOnly])))
	}
	out = append(out, gdpLines(s)...)
	return out
}

// gdpLines state the Gaussian DP parameter and the distance to it.
func gdpLines(s *statement.Statement) []string {
	d := s.GDP
	if math.IsInf(d.Mu, 1) {
		return []string{fmt.Sprintf("Gaussian DP: no μ up to %s covers the run's certified privacy profile.", render.G(statement.MaxMu))}
	}
	lower := "is not μ-GDP for any μ < " + render.Down(d.MuLower)
	if d.MuLower == 0 {
		lower = "no smaller μ is ruled out (the certified lower bounds on its δ(ε) are 0 here)"
	}
	return []string{
		fmt.Sprintf("Gaussian DP: the run is μ-GDP with μ = %s for every ε in [0, %s] (for larger ε, δ <= %s), and %s.",
			render.Up(d.Mu), render.Down(d.EpsilonMax), render.Up(d.TailDelta), lower),
		fmt.Sprintf("Distance to μ-GDP: read as μ-GDP the run would have ε = %s at δ = %s, against its certified %s; the μ-GDP curve overstates its δ by at least %s at ε = %s.",
			render.Inf(d.EpsilonAtDelta, render.Up), render.G(s.Delta), render.Inf(s.Example.Upper, render.Up), render.Down(d.DeltaGap), render.G(d.DeltaGapEpsilon)),
	}
}

// intervalMarked is [interval] with mark after the lower end ("*": see
// pairLowerNote).
func intervalMarked(lo, hi float64, mark string) string {
	if math.IsInf(lo, 1) {
		return "is unbounded"
	}
	return "lies in [" + render.Down(lo) + mark + ", " + render.Inf(hi, render.Up) + "]"
}

// describeSteps lists the steps of an event read from a file: each
// Gaussian phase as "T steps at σ = …, q = …" (σ the noise multiplier over
// the clipping norm, as in the file), at most four; otherwise the number of
// mechanism applications. Under replace-one the events' σ is the noise
// over the sensitivity 2C, and is called so.
func describeSteps(e accounting.Event, adj accounting.Adjacency) string {
	label := "σ"
	if adj == accounting.ReplaceOne {
		label = "event σ" // the noise over the sensitivity 2C
	}
	p, err := accounting.NormalizeUnder(accounting.AddRemove, e, 1)
	if err != nil || len(p.Steps) > 4 {
		return applications(p.Total())
	}
	var parts []string
	for _, st := range p.Steps {
		if st.Mechanism != accounting.MechGaussian {
			return applications(p.Total())
		}
		part := fmt.Sprintf("%d steps at %s = %s", st.Count, label, render.G(st.Sigma))
		if st.Sampling != accounting.SamplingNone {
			part += ", q = " + render.G(st.Rate)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; then ")
}

// applications is "n mechanism applications" (one: "application").
func applications(n int) string {
	if n == 1 {
		return "1 mechanism application"
	}
	return fmt.Sprintf("%d mechanism applications", n)
}

// describeRun is the run in one line, from its pld row.
func describeRun(g *given, r Row) string {
	var s string
	adj, _ := accounting.ParseAdjacency(r.Adjacency)
	switch {
	case g.read.Format != "":
		s = fmt.Sprintf("%s: %s", g.read.Description, describeSteps(g.event, adj))
	case g.event != nil:
		s = "dp_accounting DpEvent: " + describeSteps(g.event, adj)
	case len(r.Phases) > 0:
		s = fmt.Sprintf("DP-SGD in %d phases, T = %d steps (%s epochs)", len(r.Phases), r.Steps, render.G(r.Epochs))
	default:
		s = fmt.Sprintf("DP-SGD with noise multiplier σ = %s (noise std over the clipping norm C), q = %s, T = %d steps (%s epochs)",
			render.G(r.Sigma), render.G(r.Q), r.Steps, render.G(r.Epochs))
	}
	switch r.Sampling {
	case "":
	case "none":
		s += ", no sampling"
	default:
		s += ", " + r.Sampling + " sampling"
	}
	return s + ", " + r.Adjacency
}

// View implements Result: the rows as eps prints them, the Gaussian DP
// parameter, then the statement in words.
func (r *Statement) View() render.Doc {
	var d render.Doc
	rowsTable(&d, r.Rows)
	t := d.Table("μ-GDP", "μ certified interval", "ε range", "δ beyond", "ε of μ-GDP at δ", "largest δ overstatement (at ε)")
	g := r.GDP
	if math.IsInf(g.Mu, 1) {
		t.Append("unbounded", "-", "-", "-", "-", "-")
	} else {
		t.Append(render.Up(g.Mu), fmt.Sprintf("[%s, %s]", render.Down(g.MuLower), render.Up(g.Mu)),
			fmt.Sprintf("[0, %s]", render.Down(g.EpsilonMax)), render.Up(g.TailDelta), render.Inf(g.EpsilonAtDelta, render.Up),
			fmt.Sprintf("%s (%s)", render.Down(g.DeltaGap), render.G(g.DeltaGapEpsilon)))
	}
	for _, l := range r.Lines {
		d.Line("%s", l)
	}
	return d
}

// FillOutput implements [Outputter]: the rows as eps's (quantity epsilon),
// then the Gaussian DP row (quantity mu); the statement in words.
func (r *Statement) FillOutput(o *Output) {
	for _, row := range r.Rows {
		o.Rows = append(o.Rows, row.Output("epsilon"))
	}
	g := r.GDP
	row := OutputRow{Accountant: string(accounting.KindPLD), Quantity: "mu", Value: FinitePtr(g.Mu),
		MuLower: FinitePtr(g.MuLower), MuUpper: FinitePtr(g.Mu), EpsilonMax: fptr(g.EpsilonMax), TailDelta: fptr(g.TailDelta),
		Delta: fptr(r.Delta), GDPEpsilon: FinitePtr(g.EpsilonAtDelta)}
	if row.Value != nil {
		row.DeltaGap, row.DeltaGapEpsilon = fptr(g.DeltaGap), fptr(g.DeltaGapEpsilon)
	} else {
		row.Note = "no μ covers the run's certified privacy profile"
	}
	if len(r.Rows) > 0 {
		row.Sigma, row.Q, row.Steps, row.Sampling, row.Adjacency, row.Phases = nonzero(r.Rows[0].Sigma), nonzero(r.Rows[0].Q), iptr(r.Rows[0].Steps), r.Rows[0].Sampling, r.Rows[0].Adjacency, r.Rows[0].Phases
		if r.Rows[0].Q != 0 || len(r.Rows[0].Phases) > 0 {
			row.Epochs = fptr(r.Rows[0].Epochs)
		}
		row.LedgerFormat = r.Rows[0].LedgerFormat
	}
	o.Rows = append(o.Rows, row)
	o.Statements = r.Lines
}

// Fail is the exit-1 error of a row that failed.
func (r *Statement) Fail() error {
	for _, row := range r.Rows {
		if row.Error != "" {
			return Failed("%s: %s", row.Accountant, row.Error)
		}
	}
	return nil
}
