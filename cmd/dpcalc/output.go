package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// row is one accountant's answer; its JSON form is the documented schema.
// ε is null in JSON when no finite bound exists (Note says so).
type row struct {
	Accountant   string   `json:"accountant"`
	Sigma        float64  `json:"sigma"`
	Q            float64  `json:"q"`
	Steps        int      `json:"steps"`
	Epochs       float64  `json:"epochs"`
	Epsilon      *float64 `json:"epsilon"`
	EpsilonLower *float64 `json:"epsilon_lower,omitempty"`
	EpsilonUpper *float64 `json:"epsilon_upper,omitempty"`
	Delta        float64  `json:"delta"`
	Lambda       *float64 `json:"lambda,omitempty"`
	Note         string   `json:"note,omitempty"`
	// Procedure marks a published procedure whose numbers are not proven
	// bounds (Note gives the caveat).
	Procedure bool   `json:"procedure,omitempty"`
	Error     string `json:"error,omitempty"`
	Version   string `json:"version"`
}

func (a *accountantFlags) newRow(k accounting.Kind, q float64, steps int) row {
	return row{
		Accountant: string(k), Q: q, Steps: steps,
		Epochs:    calibrate.EpochsForSteps(steps, q),
		Note:      a.note(k),
		Procedure: a.procedural(k),
		Version:   versionString(),
	}
}

func ptr(x float64) *float64 { return &x }

// fill composes the row's training run into a fresh accountant and answers
// ε at delta (delta > 0) or δ at eps.
func (r *row) fill(ctx context.Context, newAcc calibrate.Factory, delta, eps float64) {
	acc, err := newAcc()
	if err == nil {
		err = acc.Compose(accounting.SubsampledGaussian(r.Sigma, r.Q, r.Steps), 1)
	}
	if err != nil {
		r.Error = err.Error()
		return
	}
	if delta > 0 {
		r.Delta = delta
		var e float64
		switch a := acc.(type) {
		case accounting.BoundsReporter:
			lo, hi, err2 := a.EpsilonBounds(ctx, delta)
			e, err = hi, err2
			if err == nil {
				r.EpsilonLower, r.EpsilonUpper = finitePtr(lo), finitePtr(hi)
			}
		case accounting.OrderReporter:
			var l float64
			e, l, err = a.EpsilonAndOrder(ctx, delta)
			if err == nil && !math.IsInf(e, 0) {
				r.Lambda = ptr(l)
			}
		default:
			e, err = acc.Epsilon(ctx, delta)
		}
		if err != nil {
			r.Error = err.Error()
			return
		}
		r.Epsilon = finitePtr(e)
		if r.Epsilon == nil {
			r.Note = joinNotes(r.Note, "no finite ε bound at this δ")
		}
		return
	}
	r.Epsilon = ptr(eps)
	var d float64
	switch a := acc.(type) {
	case accounting.OrderReporter:
		var l float64
		d, l, err = a.DeltaAndOrder(ctx, eps)
		if err == nil && d < 1 {
			r.Lambda = ptr(l)
		}
	default:
		d, err = acc.Delta(ctx, eps)
	}
	if err != nil {
		r.Error = err.Error()
		return
	}
	r.Delta = d
}

func finitePtr(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

// print writes rows as JSON (an array when all is set) or as a table. It
// returns an exit-1 error if any row failed, after printing every row.
func (e *env) print(rows []row, all bool, cmd string) error {
	if err := e.ctx.Err(); err != nil {
		return err // interrupted: the rows hold partial answers
	}
	if e.json {
		var v any = rows
		if !all {
			v = rows[0]
		}
		if err := writeJSON(e.stdout, v); err != nil {
			return err
		}
	} else {
		t := newTable(e.stdout)
		t.Header("accountant", "σ", "q", "steps", "epochs", "ε", "δ", "λ", "note")
		for _, r := range rows {
			eps := fmtPtr(r.Epsilon)
			if r.EpsilonLower != nil && r.EpsilonUpper != nil {
				eps = fmt.Sprintf("%s [%s, %s]", eps, fmtG(*r.EpsilonLower), fmtG(*r.EpsilonUpper))
			}
			note := r.Note
			if r.Error != "" {
				note = joinNotes("error: "+r.Error, note)
				eps = "-"
			}
			sigma := fmtG(r.Sigma)
			if r.Sigma == 0 {
				sigma = "-"
			}
			delta := fmtG(r.Delta)
			if r.Error != "" {
				delta = "-"
			}
			t.Append(r.Accountant, sigma, fmtG(r.Q), strconv.Itoa(r.Steps), fmtG(r.Epochs), eps, delta, fmtPtr(r.Lambda), note)
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if r.Error != "" {
			return &exitError{code: 1, err: fmt.Errorf("%s: %s", r.Accountant, r.Error)}
		}
	}
	return nil
}

// newTable returns a table writer that prints headers as given (the
// default upper-cases them, which turns σ into Σ).
func newTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
}

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

func fmtPtr(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmtG(*p)
}
