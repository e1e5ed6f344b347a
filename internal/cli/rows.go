package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/advcomp"
	"github.com/dpcalc/dpcalc/accounting/pld"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/render"
	"github.com/dpcalc/dpcalc/internal/sysmem"
)

// Row is one accountant's answer to eps, delta, sigma, epochs, audit or
// train; its --json form is [Row.Output]. Epsilon is nil when no finite
// bound exists (Note says so).
//
// Sampling and Adjacency say how batches are drawn ("poisson", "fixed",
// "shuffle"; for an event, the samplings its steps use, e.g. "none+poisson")
// and the neighbouring relation. A plan of two or more phases lists them in
// Phases; Sigma and Q are then set only when every phase has the same
// value (else 0), Steps and Epochs are the totals. Unsupported is set,
// with ε null, when the accountant cannot bound this plan: it says why.
type Row struct {
	Accountant string     `json:"accountant"`
	Sigma      float64    `json:"sigma"`
	Q          float64    `json:"q"`
	Steps      int        `json:"steps"`
	Epochs     float64    `json:"epochs"`
	Sampling   string     `json:"sampling"`
	Adjacency  string     `json:"adjacency"`
	Phases     []PhaseRow `json:"phases,omitempty"`
	// ExamplesPerUser is K of --examples-per-user when above 1: the
	// row's ε is user-level, for any user with at most K examples.
	ExamplesPerUser int `json:"examples_per_user,omitempty"`
	// GroupSize is G of --group-size when above 1: ε for datasets
	// differing in up to G records (users, with ExamplesPerUser).
	GroupSize   int      `json:"group_size,omitempty"`
	Unsupported string   `json:"unsupported,omitempty"`
	Epsilon     *float64 `json:"epsilon"`
	// EpsilonLower and EpsilonUpper bracket the true ε of the run, each
	// end certified. PairEpsilonLower, set when the steps' dominating
	// pairs are not attained (fixed-size, shuffled, truncated Poisson,
	// random allocation), is the pairs' own lower end: a bound on the
	// pairs, not on the run.
	EpsilonLower     *float64 `json:"epsilon_lower,omitempty"`
	EpsilonUpper     *float64 `json:"epsilon_upper,omitempty"`
	PairEpsilonLower *float64 `json:"pair_epsilon_lower,omitempty"`
	// LowerBound marks a row whose epsilon_lower is a certified lower
	// bound on the true ε, not a guarantee; its epsilon is null.
	LowerBound bool     `json:"lower_bound,omitempty"`
	Delta      float64  `json:"delta"`
	Lambda     *float64 `json:"lambda,omitempty"`
	Note       string   `json:"note,omitempty"`
	// LedgerFormat is the format --ledger read ("dpcalc-ledger", "opacus",
	// "dp_accounting"), when the training came from a ledger file.
	LedgerFormat string `json:"ledger_format,omitempty"`
	Procedure    bool   `json:"procedure,omitempty"`
	Error        string `json:"error,omitempty"`
	Version      string `json:"version"`

	event accounting.Event // what Fill composes; nil: SubsampledGaussian(Sigma, Q, Steps)
	// answer says which of ε and δ Fill computed ("epsilon", "delta"), and
	// solved which part of the training the command solved for ("sigma",
	// "steps"): the view rounds those the safe way.
	answer, solved string
	x              float64 // the unknown of NewPlanRow (σ, or repetitions)
	// groupMixture marks a --group-size row whose event is the exact
	// group mixture (an accountant that cannot bound it is refused for
	// the group, not for the training).
	groupMixture bool
}

// Accountants are the accountant flags: --accountant, --pld-grid and
// --ac-sampling, with the neighbouring relation of the training.
type Accountants struct {
	Name       string // an accounting.Kind or "all"
	PLDGrid    float64
	ACSampling string // "log", "linear" or ""
	Adjacency  accounting.Adjacency
}

// Check validates --pld-grid.
func (a Accountants) Check() error {
	if a.PLDGrid != 0 && (!(a.PLDGrid > 0) || a.PLDGrid > 1 || math.IsInf(a.PLDGrid, 0)) {
		return usageAt("pld-grid", "invalid --pld-grid: %s, want in (0, 1]", accounting.FormatValue(a.PLDGrid))
	}
	return nil
}

// Kinds returns the kinds --accountant names, in display order.
func (a Accountants) Kinds() ([]accounting.Kind, error) {
	if a.Name == "all" {
		return registry.Kinds(), nil
	}
	k, err := registry.ParseKind(a.Name)
	if err != nil {
		return nil, usageAt("accountant", "invalid --accountant: %q, want one of %s, all", a.Name, strings.Join(registry.Names(), ", "))
	}
	return []accounting.Kind{k}, nil
}

// Options are the registry options the flags select.
func (a Accountants) Options() registry.Options {
	return registry.Options{PLDGridWidth: a.PLDGrid, ACAmplification: advcomp.Amplification(a.ACSampling), Adjacency: a.Adjacency}
}

// Factory makes fresh methods of kind k with these options. A method that
// cannot be made for the neighbouring relation is an
// *accounting.UnsupportedEventError (the row says why; it is not a failure).
func (a Accountants) Factory(k accounting.Kind) calibrate.Factory {
	opt := a.Options()
	return func() (accounting.Method, error) {
		m, err := registry.New(k, opt)
		if err != nil && opt.Adjacency != accounting.AddRemove {
			return nil, &accounting.UnsupportedEventError{Reason: err.Error()}
		}
		return m, err
	}
}

// Note returns the warning printed beside k's numbers, if any: a
// procedure's caveat, or what an accountant's bound leaves out.
func (a Accountants) Note(k accounting.Kind) string {
	if m, err := a.Factory(k)(); err == nil {
		if c := registry.Caveat(m); c != "" {
			return c
		}
	}
	return registry.Note(k)
}

// NewRow starts k's row for steps steps at rate q.
func (a Accountants) NewRow(k accounting.Kind, q float64, steps int) Row {
	return Row{
		Accountant: string(k), Q: q, Steps: steps,
		Epochs:   calibrate.EpochsForSteps(steps, q),
		Sampling: "poisson", Adjacency: a.Adjacency.String(),
		Note:      a.Note(k),
		Procedure: registry.Procedural(k, a.Options()),
		Version:   Version(),
	}
}

// bracketReporter is an accountant whose bracket says whether its lower
// end bounds the run or only its dominating pairs (pld).
type bracketReporter interface {
	EpsilonBracket(ctx context.Context, delta float64) (pld.Bracket, error)
}

// pairLowerNote explains the marked lower end of a bracket whose pairs
// only dominate the run.
func pairLowerNote(b pld.Bracket) string {
	return "*: lower end certified for the run by neighbours that attain part of it; the dominating pair's own lower end, " + render.Down(b.PairLower) + ", bounds only the pair"
}

func ptr(x float64) *float64 { return &x }

// FinitePtr returns &x, or nil for ±Inf and NaN (JSON null, table "-").
func FinitePtr(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

// JoinNotes joins two notes with "; ".
func JoinNotes(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return strings.TrimSuffix(a, ".") + "; " + b
}

// cannotBound reports whether err says that the accountant cannot bound
// the training, rather than that a computation failed: an event it does
// not support, more steps than it composes (a count limit: the command
// line has checked the counts it was given), or more memory than there is.
func cannotBound(err error) bool {
	var pe *accounting.ParamError
	var me *sysmem.Error
	return errors.Is(err, accounting.ErrUnsupportedEvent) || errors.As(err, &me) ||
		errors.As(err, &pe) && (pe.Name == "count" || pe.Name == "steps")
}

// setError records err: in Unsupported (with ε null) when the accountant
// cannot bound the training ([cannotBound]), else in Error.
func (r *Row) setError(err error) {
	if cannotBound(err) {
		msg := err.Error()
		var ue *accounting.UnsupportedEventError
		if errors.As(err, &ue) {
			msg = ue.Reason
			if ue.Path != "" {
				msg += " (at " + ue.Path + ")"
			}
		}
		msg = strings.TrimPrefix(msg, "registry: ")
		msg = strings.TrimPrefix(msg, "accounting: ")
		r.Unsupported = strings.TrimPrefix(msg, r.Accountant+": ")
		switch {
		case r.GroupSize > 1 && r.groupMixture:
			r.Unsupported = fmt.Sprintf("--group-size %d: %s", r.GroupSize, r.Unsupported)
		case r.ExamplesPerUser > 1:
			r.Unsupported = fmt.Sprintf("--examples-per-user %d: %s", r.ExamplesPerUser, r.Unsupported)
		}
		r.Epsilon, r.EpsilonLower, r.EpsilonUpper, r.Lambda = nil, nil, nil, nil
		return
	}
	r.Error = err.Error()
}

// suggest completes a row of kind k that cannot bound the training ev
// (Unsupported) with the accountant that can: the first of
// [registry.Alternatives] that composes ev. It is for a single
// accountant's answer (the default's, or one --accountant named): with
// --accountant all the other rows are there.
func (a Accountants) suggest(r *Row, k accounting.Kind, ev accounting.Event) {
	if a.Name == "all" || r.Unsupported == "" || ev == nil {
		return
	}
	for _, alt := range registry.Alternatives(k) {
		if m, err := a.Factory(alt)(); err == nil && m.Compose(ev, 1) == nil {
			if hint := "--accountant " + string(alt); !strings.Contains(r.Unsupported, hint) {
				r.Unsupported += "; " + hint + " can bound this training"
			}
			return
		}
	}
}

// Fill composes the row's training run into a fresh method from newAcc
// and answers ε at delta (delta > 0) or δ at eps; a failure goes to
// r.Error, an accountant that cannot bound the training to r.Unsupported.
func (r *Row) Fill(ctx context.Context, newAcc calibrate.Factory, delta, eps float64) {
	e := r.event
	if e == nil {
		e = accounting.SubsampledGaussian(r.Sigma, r.Q, r.Steps)
	}
	acc, err := newAcc()
	if err == nil {
		err = acc.Compose(e, 1)
	}
	if err != nil {
		r.setError(err)
		return
	}
	r.FillFrom(ctx, acc, delta, eps)
}

// FillFrom is [Row.Fill] with a method that already holds the row's
// training run (the one a σ search found it with).
func (r *Row) FillFrom(ctx context.Context, acc accounting.Method, delta, eps float64) {
	var err error
	if delta > 0 {
		r.Delta, r.answer = delta, "epsilon"
		var e float64
		switch a := acc.(type) {
		case bracketReporter:
			b, err2 := a.EpsilonBracket(ctx, delta)
			e, err = b.Upper, err2
			if err == nil {
				r.EpsilonLower, r.EpsilonUpper = FinitePtr(b.Lower), FinitePtr(b.Upper)
				if b.PairOnly {
					r.PairEpsilonLower = FinitePtr(b.PairLower)
					r.Note = JoinNotes(r.Note, pairLowerNote(b))
				}
			}
		case accounting.BoundsReporter:
			lo, hi, err2 := a.EpsilonBounds(ctx, delta)
			e, err = hi, err2
			if err == nil {
				r.EpsilonLower, r.EpsilonUpper = FinitePtr(lo), FinitePtr(hi)
			}
		case accounting.OrderReporter:
			var l float64
			e, l, err = a.EpsilonAndOrder(ctx, delta)
			if err == nil && !math.IsInf(e, 0) {
				r.Lambda = FinitePtr(l) // none (NaN) for an empty composition
			}
		default:
			e, err = acc.Epsilon(ctx, delta)
		}
		if err != nil {
			r.setError(err)
			return
		}
		r.Epsilon = FinitePtr(e)
		if r.Epsilon == nil {
			r.Note = JoinNotes(r.Note, "no finite ε bound at this δ")
		}
		return
	}
	r.Epsilon, r.answer = ptr(eps), "delta"
	var d float64
	switch a := acc.(type) {
	case accounting.OrderReporter:
		var l float64
		d, l, err = a.DeltaAndOrder(ctx, eps)
		if err == nil && d < 1 {
			r.Lambda = FinitePtr(l)
		}
	default:
		d, err = acc.Delta(ctx, eps)
	}
	if err != nil {
		r.setError(err)
		return
	}
	r.Delta = d
}

// Rows are the answer of eps, delta, sigma and epochs: one row per
// accountant (and, for shuffled batches, the Poisson reading and the
// certified lower bound).
type Rows struct {
	Rows []Row
	// Quantity is what the command answers: "sigma", "epsilon", "delta" or
	// "steps" (the rows' quantity in JSON).
	Quantity string
	// Event is the training the rows answer for (eps, delta; sigma: at the
	// first accountant's σ), for --emit-events; groupLemma reports that the
	// first accountant answered a --group-size by the group privacy lemma,
	// which Event does not describe.
	Event      accounting.Event
	groupLemma bool
}

// FillOutput implements [Outputter]: one row per accountant.
func (r *Rows) FillOutput(o *Output) {
	for _, row := range r.Rows {
		o.Rows = append(o.Rows, row.Output(r.Quantity))
	}
}

// Output is r as a row of the --json output, answering quantity ("sigma",
// "epsilon", "delta" or "steps"): Value is that quantity, null when the
// row failed or has no finite bound. A lower-bound row answers
// "epsilon_lower".
func (r Row) Output(quantity string) OutputRow {
	o := OutputRow{
		Accountant: r.Accountant, Quantity: quantity,
		Sigma: nonzero(r.Sigma), Q: nonzero(r.Q), Steps: iptr(r.Steps),
		Sampling: r.Sampling, Adjacency: r.Adjacency, Phases: r.Phases, ExamplesPerUser: r.ExamplesPerUser, GroupSize: r.GroupSize,
		Epsilon: r.Epsilon, EpsilonLower: r.EpsilonLower, EpsilonUpper: r.EpsilonUpper, PairEpsilonLower: r.PairEpsilonLower,
		LowerBound: r.LowerBound, Lambda: r.Lambda,
		Note: r.Note, LedgerFormat: r.LedgerFormat, Unsupported: r.Unsupported, Procedure: r.Procedure, Error: r.Error,
	}
	if r.Q != 0 || len(r.Phases) > 0 {
		o.Epochs = fptr(r.Epochs)
	}
	failed := r.Error != "" || r.Unsupported != ""
	if !failed || r.Delta != 0 {
		o.Delta = FinitePtr(r.Delta)
	}
	if r.LowerBound {
		o.Quantity, o.Value = "epsilon_lower", r.EpsilonLower
		return o
	}
	if failed {
		return o
	}
	switch quantity {
	case "sigma":
		o.Value = nonzero(r.x)
	case "steps":
		o.Value = fptr(float64(r.Steps))
	case "epsilon":
		o.Value = r.Epsilon
	case "delta":
		o.Value = o.Delta
	}
	return o
}

// Fail is the exit-1 error of the first failed row, or of rows none of
// which could bound the training (all unsupported).
func (r *Rows) Fail() error { return rowsFail(r.Rows) }

func rowsFail(rows []Row) error {
	answered := 0
	for _, r := range rows {
		if r.Error != "" {
			return Failed("%s: %s", r.Accountant, r.Error)
		}
		if r.Unsupported == "" {
			answered++
		}
	}
	if len(rows) > 0 && answered == 0 {
		return Failed("%s: unsupported: %s", rows[0].Accountant, rows[0].Unsupported)
	}
	return nil
}
