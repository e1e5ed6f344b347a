package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/atomicfile"

	"github.com/dpcalc/dpcalc/internal/query"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// row is one accountant's answer; its JSON form is the documented schema
// (query.Row, shared with the web page). ε is null in JSON when no finite
// bound exists (Note says so).
type row = query.Row

func ptr(x float64) *float64 { return &x }

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
		t.Header("accountant", "σ", "q", "steps", "epochs", "sampling", "adjacency", "ε", "δ", "λ", "note")
		for _, r := range rows {
			eps := fmtPtr(r.Epsilon)
			if r.EpsilonLower != nil && r.EpsilonUpper != nil {
				eps = fmt.Sprintf("%s [%s, %s]", eps, fmtG(*r.EpsilonLower), fmtG(*r.EpsilonUpper))
			}
			if r.LowerBound && r.EpsilonLower != nil {
				eps = "≥ " + fmtG(*r.EpsilonLower)
			}
			note := r.Note
			if r.Error != "" {
				note = query.JoinNotes("error: "+r.Error, note)
				eps = "-"
			}
			if r.Unsupported != "" {
				note = query.JoinNotes("unsupported: "+r.Unsupported, note)
				eps = "-"
			}
			sigma, q := fmtG(r.Sigma), fmtG(r.Q)
			if r.Sigma == 0 {
				sigma = "-"
			}
			if len(r.Phases) > 0 { // a schedule: each phase's σ and q
				var ss, qs []string
				for _, p := range r.Phases {
					s := fmtG(p.Sigma)
					if p.Sigma == 0 {
						s = "-" // sigma=? not found
					}
					ss, qs = append(ss, s), append(qs, fmtG(p.Q))
				}
				sigma, q = strings.Join(ss, "; "), strings.Join(qs, "; ")
			}
			epochs := fmtG(r.Epochs)
			if r.Q == 0 && len(r.Phases) == 0 {
				q, epochs = "-", "-" // an --events training
			}
			delta := fmtG(r.Delta)
			if r.Error != "" || r.Unsupported != "" {
				delta = "-"
			}
			t.Append(r.Accountant, sigma, q, strconv.Itoa(r.Steps), epochs, r.Sampling, r.Adjacency, eps, delta, fmtOrder(r.Lambda), note)
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return rowsExit(rows)
}

// rowsExit is the exit-1 error of the first failed row, or of rows none
// of which could bound the training (all unsupported).
func rowsExit(rows []row) error {
	answered := 0
	for _, r := range rows {
		if r.Error != "" {
			return &exitError{code: 1, err: fmt.Errorf("%s: %s", r.Accountant, r.Error)}
		}
		if r.Unsupported == "" {
			answered++
		}
	}
	if len(rows) > 0 && answered == 0 {
		return &exitError{code: 1, err: fmt.Errorf("%s: unsupported: %s", rows[0].Accountant, rows[0].Unsupported)}
	}
	return nil
}

// emitEvent writes ev as dp_accounting DpEvent JSON to path (atomically),
// or to stdout for "-".
func emitEvent(e *env, path string, ev accounting.Event) error {
	b, err := accounting.MarshalEvent(ev)
	if err != nil {
		return fmt.Errorf("--emit-events: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	if path == "-" {
		_, err := e.stdout.Write(out.Bytes())
		return err
	}
	if err := atomicfile.WriteFile(path, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--emit-events: %w", err)
	}
	return nil
}

// newTable returns a table writer that prints headers as given (the
// default upper-cases them, which turns σ into Σ).
func newTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
}

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// fmtOrder formats a moment order λ: an integer as it is, any other order
// (the continuous search's, such as 0.272996…) to 4 significant digits.
func fmtOrder(p *float64) string {
	switch {
	case p == nil:
		return "-"
	case *p == math.Trunc(*p) && math.Abs(*p) < 1e6:
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	return strconv.FormatFloat(*p, 'g', 4, 64)
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmtG(*p)
}
