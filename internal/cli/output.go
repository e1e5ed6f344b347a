package cli

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/alecthomas/kong"
)

// Output is what every command prints with --json: one object of this
// type, whatever the command and its flags (docs/cli.md, "JSON schema").
// A command that computed something fills Command, Inputs, Rows and
// Version; Error is set exactly when the exit code is not 0. Bad input
// and failures before a result print only {"error": "..."}.
//
// Rows is always a list, possibly empty: the rows of the command's table
// (one per accountant for sigma, eps, delta, epochs, audit and train; one
// per point for curve; one per order for moments; …). Verdict, Training
// and Report belong to one command each (audit, train, reproduce).
type Output struct {
	// Command is the command's path: "eps", "curve epochs", "data fetch",
	// "reproduce run".
	Command string `json:"command"`
	// Inputs are the command's flags and arguments with their values:
	// those given and those with a default; an optional flag left out is
	// absent.
	Inputs map[string]any `json:"inputs"`
	// Rows are the answers, each a [OutputRow].
	Rows []OutputRow `json:"rows"`
	// Verdict is audit's: "holds", "violated" or "undetermined".
	Verdict string `json:"verdict,omitempty"`
	// Statements are profile's plain-language bounds on an attacker, and
	// statement's privacy statement in words.
	Statements []string `json:"statements,omitempty"`
	// Training is train's run: its configuration, step counts, accuracies,
	// ledger and per-epoch history (docs/training.md).
	Training json.RawMessage `json:"training,omitempty"`
	// Report is reproduce's plan and tables.
	Report json.RawMessage `json:"report,omitempty"`
	// Error is the one-line error of a command whose exit code is not 0.
	Error string `json:"error,omitempty"`
	// Version is dpcalc's version.
	Version string `json:"version"`
}

// OutputRow is one row of an [Output]. Quantity names what the row
// answers and Value is that answer (null when there is none: a failed or
// unsupported row, an ε without a finite bound); the other fields give
// the row's context and its certified intervals. A field a command does
// not set is absent.
type OutputRow struct {
	// Accountant is the accountant (ma, rdp, zcdp, ac, pld, dpd-ac,
	// dpd-zcdp) or other method the row's numbers come from: analytic or
	// classic (gaussian), one-run, fdp or clopper-pearson (audit-run's
	// empirical lower bounds).
	Accountant string `json:"accountant,omitempty"`
	// Quantity is what Value is: sigma, epsilon, delta, steps,
	// epsilon_lower, alpha, max_tpr, min_fnr, advantage, accuracy or
	// examples.
	Quantity string   `json:"quantity"`
	Value    *float64 `json:"value"`

	// The training.
	Sigma     *float64   `json:"sigma,omitempty"`
	Q         *float64   `json:"q,omitempty"`
	Steps     *int       `json:"steps,omitempty"`
	Epochs    *float64   `json:"epochs,omitempty"`
	Sampling  string     `json:"sampling,omitempty"`
	Adjacency string     `json:"adjacency,omitempty"`
	Phases    []PhaseRow `json:"phases,omitempty"`
	// ExamplesPerUser is K of --examples-per-user when above 1: ε is
	// user-level, for adding or removing a user with at most K examples.
	ExamplesPerUser int `json:"examples_per_user,omitempty"`
	// GroupSize is G of --group-size when above 1: ε for datasets
	// differing in up to G records (or users, with examples_per_user).
	GroupSize int `json:"group_size,omitempty"`

	// The privacy, with certified intervals [lower, upper] where the
	// accountant gives one (pld). PairEpsilonLower is the lower end of the
	// dominating pairs' composition where they are not attained by the
	// run (fixed-size, shuffled, truncated-Poisson, randomly allocated
	// batches): a bound on the pairs only; EpsilonLower is then certified
	// for the run by neighbours that attain part of it.
	Epsilon          *float64 `json:"epsilon,omitempty"`
	EpsilonLower     *float64 `json:"epsilon_lower,omitempty"`
	EpsilonUpper     *float64 `json:"epsilon_upper,omitempty"`
	PairEpsilonLower *float64 `json:"pair_epsilon_lower,omitempty"`
	Delta            *float64 `json:"delta,omitempty"`
	DeltaLower       *float64 `json:"delta_lower,omitempty"`
	DeltaUpper       *float64 `json:"delta_upper,omitempty"`
	// LowerBound marks a row whose epsilon_lower is a lower bound on the
	// true ε (not a guarantee), and whose epsilon is absent.
	LowerBound bool `json:"lower_bound,omitempty"`
	// Lambda is the moment order of ma's and rdp's bound.
	Lambda *float64 `json:"lambda,omitempty"`

	// moments: the log moments at Lambda.
	LogE1           *float64 `json:"log_e1,omitempty"`
	LogE2           *float64 `json:"log_e2,omitempty"`
	Alpha           *float64 `json:"alpha,omitempty"`
	AbsError        *float64 `json:"abs_error,omitempty"`
	AsymptoticBound *float64 `json:"asymptotic_bound,omitempty"`

	// profile: a membership-inference attacker's rates.
	FPR *float64 `json:"fpr,omitempty"`
	TPR *float64 `json:"tpr,omitempty"`
	FNR *float64 `json:"fnr,omitempty"`

	// audit-run (and train --canaries): the canaries and the guesses.
	Canaries   *int     `json:"canaries,omitempty"`
	Members    *int     `json:"members,omitempty"`
	Guesses    *int     `json:"guesses,omitempty"`
	Correct    *int     `json:"correct,omitempty"`
	Threshold  *float64 `json:"threshold,omitempty"`
	Confidence *float64 `json:"confidence,omitempty"`

	// data: a data set's split.
	Dataset  string `json:"dataset,omitempty"`
	Split    string `json:"split,omitempty"`
	Dir      string `json:"dir,omitempty"`
	Features *int   `json:"features,omitempty"`
	Classes  *int   `json:"classes,omitempty"`

	// statement: the Gaussian DP parameter of the run (quantity mu, Value
	// MuUpper). The run is μ-GDP with μ = MuUpper for every ε in
	// [0, EpsilonMax], δ ≤ TailDelta beyond, and is not μ-GDP for any
	// μ < MuLower; read as MuUpper-GDP its ε at Delta is GDPEpsilon, and
	// the GDP curve overstates its δ by at least DeltaGap at
	// DeltaGapEpsilon.
	MuLower         *float64 `json:"mu_lower,omitempty"`
	MuUpper         *float64 `json:"mu_upper,omitempty"`
	EpsilonMax      *float64 `json:"epsilon_max,omitempty"`
	TailDelta       *float64 `json:"tail_delta,omitempty"`
	GDPEpsilon      *float64 `json:"gdp_epsilon,omitempty"`
	DeltaGap        *float64 `json:"delta_gap,omitempty"`
	DeltaGapEpsilon *float64 `json:"delta_gap_epsilon,omitempty"`

	// Note is a caveat about the row's numbers; LedgerFormat is the format
	// --ledger read; Unsupported says why the
	// accountant cannot bound this training; Procedure marks a published
	// procedure whose numbers are not proven bounds; Error is the failure
	// of this row.
	Note         string `json:"note,omitempty"`
	LedgerFormat string `json:"ledger_format,omitempty"`
	Unsupported  string `json:"unsupported,omitempty"`
	Procedure    bool   `json:"procedure,omitempty"`
	Error        string `json:"error,omitempty"`
}

// Outputter is a Result that fills the rows (and its command's fields) of
// the --json [Output]. Every Result is one.
type Outputter interface {
	FillOutput(o *Output)
}

// NewOutput is the --json output of r for the command line that made it
// (command and inputs as [commandOf] and [inputsOf] read them).
func NewOutput(command string, inputs map[string]any, r Result) *Output {
	o := &Output{Command: command, Inputs: inputs, Rows: []OutputRow{}, Version: Version()}
	if f, ok := r.(Outputter); ok {
		f.FillOutput(o)
	}
	if o.Rows == nil {
		o.Rows = []OutputRow{}
	}
	return o
}

// errorOutput is the --json output of a command that failed before it had
// a result.
func errorOutput(msg string) any { return map[string]string{"error": msg} }

// commandOf is the path of the command kctx selected ("curve epochs").
func commandOf(kctx *kong.Context) string {
	var path []string
	for p := kctx.Selected(); p != nil && p.Type == kong.CommandNode; p = p.Parent {
		path = append([]string{p.Name}, path...)
	}
	return strings.Join(path, " ")
}

// inputsOf are the flags and arguments of the command kctx parsed, with
// their values: each flag given or with a default (the global flags
// aside), and each positional argument given.
func inputsOf(kctx *kong.Context) map[string]any {
	in := map[string]any{}
	add := func(v *kong.Value) {
		if !v.Set && (!v.HasDefault || v.Default == "") {
			return
		}
		t := v.Target
		for t.Kind() == reflect.Pointer {
			if t.IsNil() {
				return
			}
			t = t.Elem()
		}
		if (t.Kind() == reflect.Slice || t.Kind() == reflect.String) && t.Len() == 0 {
			return
		}
		if t.CanInterface() {
			in[v.Name] = t.Interface()
		}
	}
	for _, f := range kctx.Flags() {
		switch f.Name {
		case "help", "json", "version":
			continue
		}
		add(f.Value)
	}
	if n := kctx.Selected(); n != nil {
		for _, p := range n.Positional {
			add(p)
		}
	}
	return in
}

// Helpers for filling rows.

func fptr(x float64) *float64 { return &x }

func iptr(n int) *int { return &n }

// nonzero is &x, or nil for 0 (a field that does not apply).
func nonzero(x float64) *float64 {
	if x == 0 {
		return nil
	}
	return FinitePtr(x)
}

// FillOutput implements [Outputter]: one row per accountant, and the
// verdict.
func (a *Audit) FillOutput(o *Output) {
	for _, r := range a.Accountants {
		o.Rows = append(o.Rows, r.Output("epsilon"))
	}
	o.Verdict = string(a.Verdict)
}

// FillOutput implements [Outputter]: the analytic σ, then the classic.
func (g *Gaussian) FillOutput(o *Output) {
	o.Rows = append(o.Rows,
		OutputRow{Accountant: "analytic", Quantity: "sigma", Value: fptr(g.SigmaExact), Sigma: fptr(g.SigmaExact),
			Epsilon: fptr(g.Epsilon), Delta: FinitePtr(g.deltaExact), Note: "smallest σ with δ(ε) ≤ target"},
		OutputRow{Accountant: "classic", Quantity: "sigma", Value: g.SigmaClassic, Sigma: g.SigmaClassic,
			Epsilon: fptr(g.Epsilon), Delta: g.DeltaClassic, Note: g.Note})
}

// FillOutput implements [Outputter]: one row per order λ.
func (m *Moments) FillOutput(o *Output) {
	for _, r := range m.Moments {
		o.Rows = append(o.Rows, OutputRow{
			Quantity: "alpha", Value: r.Alpha, Sigma: fptr(m.Sigma), Q: fptr(m.Q), Lambda: fptr(r.Lambda),
			LogE1: r.LogE1, LogE2: r.LogE2, Alpha: r.Alpha, AbsError: r.AbsError, AsymptoticBound: r.Bound,
		})
	}
}

// FillOutput implements [Outputter]: one row per point of every
// accountant's curve (ε at a length, or σ at a target ε), and one row for
// each curve that failed.
func (c *Curve) FillOutput(o *Output) {
	quantity := "epsilon"
	if c.Curve == "sigma" {
		quantity = "sigma"
	}
	for _, s := range c.Series {
		if s.Error != "" {
			o.Rows = append(o.Rows, OutputRow{Accountant: s.Accountant, Quantity: quantity, Q: fptr(c.Q), Delta: fptr(c.Delta), Error: s.Error})
		}
		for _, p := range s.Points {
			r := OutputRow{Accountant: s.Accountant, Quantity: quantity, Q: fptr(c.Q), Steps: iptr(p.Steps), Epochs: fptr(p.Epochs),
				Epsilon: p.Epsilon, Delta: fptr(c.Delta)}
			if c.Curve == "sigma" {
				r.Sigma = FinitePtr(p.Sigma)
				r.Value = r.Sigma
			} else {
				r.Sigma = fptr(c.Sigma)
				r.Value = p.Epsilon
				if r.Value == nil {
					r.Note = "no finite ε bound at this δ"
				}
			}
			o.Rows = append(o.Rows, r)
		}
	}
}

// FillOutput implements [Outputter]: ε at each δ and δ at each ε (with
// their certified intervals when the method gives them), the attacker's
// largest true-positive rate at each false-positive rate, the largest
// advantage and accuracy, then the trade-off curve; the statements.
func (r *Profile) FillOutput(o *Output) {
	note := ""
	if !r.Certified {
		note = r.Caveat
	}
	training := func(row OutputRow) OutputRow {
		row.Sigma, row.Q, row.Steps = nonzero(r.Sigma), nonzero(r.Q), iptr(r.Steps)
		if r.Q != 0 || len(r.Phases) > 0 {
			row.Epochs = fptr(r.Epochs)
		}
		row.Sampling, row.Adjacency, row.Phases = r.Sampling, r.Adjacency, r.Phases
		row.ExamplesPerUser, row.GroupSize = r.ExamplesPerUser, r.GroupSize
		return row
	}
	for _, e := range r.Epsilons {
		row := OutputRow{Accountant: r.Accountant, Quantity: "epsilon", Value: FinitePtr(e.Epsilon), Epsilon: FinitePtr(e.Epsilon), Delta: fptr(e.Delta),
			Note: note, Procedure: !r.Certified}
		if r.Bounded {
			row.EpsilonLower, row.EpsilonUpper = FinitePtr(e.Lower), FinitePtr(e.Epsilon)
		}
		if row.Value == nil {
			row.Note = JoinNotes(row.Note, "no finite ε bound at this δ")
		}
		o.Rows = append(o.Rows, training(row))
	}
	for _, d := range r.Deltas {
		row := OutputRow{Accountant: r.Accountant, Quantity: "delta", Value: fptr(d.Delta), Delta: fptr(d.Delta), Epsilon: fptr(d.Epsilon),
			Note: note, Procedure: !r.Certified}
		if r.Bounded {
			row.DeltaLower, row.DeltaUpper = fptr(d.Lower), fptr(d.Delta)
		}
		o.Rows = append(o.Rows, training(row))
	}
	point := func(quantity string, p profileRates, value float64) OutputRow {
		return OutputRow{Accountant: r.Accountant, Quantity: quantity, Value: fptr(value), FPR: fptr(p.FPR), TPR: fptr(p.TPR), FNR: fptr(p.FNR), Note: note, Procedure: !r.Certified}
	}
	for _, a := range r.Attacks {
		o.Rows = append(o.Rows, point("max_tpr", profileRates(a), a.TPR))
	}
	o.Rows = append(o.Rows,
		OutputRow{Accountant: r.Accountant, Quantity: "advantage", Value: fptr(r.Advantage), Note: note, Procedure: !r.Certified},
		OutputRow{Accountant: r.Accountant, Quantity: "accuracy", Value: fptr(r.Accuracy), Note: note, Procedure: !r.Certified})
	for _, p := range r.Tradeoff {
		o.Rows = append(o.Rows, point("min_fnr", profileRates(p), p.FNR))
	}
	o.Statements = r.Statements
}

// profileRates is a point of a trade-off curve (profile.Point).
type profileRates struct{ FPR, FNR, TPR float64 }

// FillOutput implements [Outputter]: no rows; the version.
func (v *VersionInfo) FillOutput(o *Output) {}
