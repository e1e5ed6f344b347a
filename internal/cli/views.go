package cli

// The views: how each result reads as lines and tables. The command line
// prints them (render.Text) and the web page shows the same cells, so this
// file is the one place where a result becomes text. Numbers are formatted
// by package render.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/internal/render"
)

// rowsTable appends the table of rows to d: one row per accountant.
func rowsTable(d *render.Doc, rows []Row) {
	t := d.Table("accountant", "σ", "q", "steps", "epochs", "sampling", "adjacency", "ε", "δ", "λ", "note")
	for _, r := range rows {
		// The answer is an upper bound, printed rounded up; a lower bound
		// rounded down; what was given as it was. A solved σ is the
		// smallest that meets the budget (up), a solved length the
		// longest (down).
		epsFmt, deltaFmt, sigmaFmt, epochsFmt := render.Up, render.G, render.G, render.G
		if r.answer == "delta" {
			epsFmt, deltaFmt = render.G, render.Up
		}
		switch r.solved {
		case "sigma":
			sigmaFmt = render.Up
		case "steps":
			epochsFmt = render.Down
		}
		eps := render.Ptr(r.Epsilon, epsFmt)
		if r.EpsilonLower != nil && r.EpsilonUpper != nil {
			mark := "" // a lower end that is not the pairs' (see pairLowerNote)
			if r.PairEpsilonLower != nil {
				mark = "*"
			}
			eps = fmt.Sprintf("%s [%s%s, %s]", eps, render.Down(*r.EpsilonLower), mark, render.Up(*r.EpsilonUpper))
		}
		note := r.Note
		class := ""
		if r.Procedure {
			class = "procedure"
		}
		if r.Error != "" {
			note = JoinNotes("error: "+r.Error, note)
			eps = "-"
			class = "failed"
		}
		if r.Unsupported != "" {
			note = JoinNotes("unsupported: "+r.Unsupported, note)
			eps = "-"
			class = "unsupported"
		}
		sigma, q := sigmaFmt(r.Sigma), render.G(r.Q)
		if r.Sigma == 0 {
			sigma = "-"
		}
		if len(r.Phases) > 0 { // a schedule: each phase's σ and q
			var ss, qs []string
			for _, p := range r.Phases {
				s := sigmaFmt(p.Sigma)
				if p.Sigma == 0 {
					s = "-" // sigma=? not found
				}
				ss, qs = append(ss, s), append(qs, render.G(p.Q))
			}
			sigma, q = strings.Join(ss, "; "), strings.Join(qs, "; ")
		}
		epochs := epochsFmt(r.Epochs)
		if r.Q == 0 && len(r.Phases) == 0 {
			q, epochs = "-", "-" // an --events training
		}
		delta := deltaFmt(r.Delta)
		if r.Error != "" || r.Unsupported != "" {
			delta = "-"
		}
		row := t.Append(r.Accountant, sigma, q, strconv.Itoa(r.Steps), epochs, r.Sampling, r.Adjacency, eps, delta, render.Order(r.Lambda), note)
		row.Class, row.Key = class, r.Accountant
	}
}

// View implements Result.
func (r *Rows) View() render.Doc {
	var d render.Doc
	rowsTable(&d, r.Rows)
	return d
}

// interval says where a certified interval [lo, hi] lies: "lies in
// [lo, hi]", with "no finite bound" for an infinite upper end, or "is
// unbounded" when lo is infinite (never "+Inf").
func interval(lo, hi float64) string {
	if math.IsInf(lo, 1) {
		return "is unbounded"
	}
	end := func(x float64, f func(float64) string) string {
		if math.IsInf(x, 1) {
			return "no finite bound"
		}
		return f(x)
	}
	return "lies in [" + end(lo, render.Down) + ", " + end(hi, render.Up) + "]"
}

// View implements Result.
func (a *Audit) View() render.Doc {
	var d render.Doc
	d.Line("claim: (ε = %s, δ = %s) for σ = %s, q = %s, T = %d steps (%s epochs)", render.Exact(a.Claimed), render.Exact(a.Delta), render.Exact(a.Sigma), render.Exact(a.Q), a.Steps, render.Exact(a.Epochs))
	d.Line("true ε at δ %s (pld, certified)", interval(a.lower, a.upper))
	d.Line("verdict: %s", a.Verdict)
	rowsTable(&d, a.Accountants)
	return d
}

// View implements Result: one row per point, one column per accountant.
func (c *Curve) View() render.Doc {
	var d render.Doc
	sigma := c.Curve == "sigma"
	header := []string{"epochs", "steps"}
	if sigma {
		header = []string{"ε"}
	}
	for _, s := range c.Series {
		header = append(header, s.Accountant)
	}
	t := d.Table(header...)
	// The x values come from the first series that has points.
	var xs []CurvePoint
	for _, s := range c.Series {
		if len(s.Points) > 0 {
			xs = s.Points
			break
		}
	}
	for i, p := range xs {
		cells := []string{render.G(p.Epochs), strconv.Itoa(p.Steps)}
		if sigma {
			cells = []string{render.Ptr(p.Epsilon, render.G)}
		}
		for _, s := range c.Series {
			switch {
			case s.Error != "":
				cells = append(cells, "error")
			case sigma:
				cells = append(cells, render.Up(s.Points[i].Sigma))
			default:
				cells = append(cells, render.Ptr(s.Points[i].Epsilon, render.Up))
			}
		}
		t.Append(cells...)
	}
	return d
}

// CSV implements csver: one record per point (--csv).
func (c *Curve) CSV() ([][]string, bool) {
	out := [][]string{{"accountant", "epochs", "steps", "epsilon", "sigma", "error"}}
	for _, s := range c.Series {
		if s.Error != "" {
			out = append(out, []string{s.Accountant, "", "", "", "", s.Error})
		}
		for _, p := range s.Points {
			// The curve's values: ε (an upper bound) or σ (the smallest
			// that meets the target), rounded up; the given σ or ε as it is.
			sig, eps := render.G(c.Sigma), render.Ptr(p.Epsilon, render.Up)
			if c.Curve == "sigma" {
				sig, eps = render.UpDigits(p.Sigma, 8), render.Ptr(p.Epsilon, render.G)
			}
			out = append(out, []string{s.Accountant, render.G(p.Epochs), strconv.Itoa(p.Steps), eps, sig, ""})
		}
	}
	return out, c.csv
}

// View implements Result.
func (g *Gaussian) View() render.Doc {
	var d render.Doc
	t := d.Table("calibration", "σ", "exact δ at that σ", "note")
	// σ rounded up (more noise), δ up (more privacy loss).
	t.Append("analytic (Balle–Wang 2018)", render.Up(g.SigmaExact), render.Up(g.deltaExact), "smallest σ with δ(ε) ≤ target")
	t.Append("classic (Dwork–Roth A.1)", render.Ptr(g.SigmaClassic, render.Up), render.Ptr(g.DeltaClassic, render.Up), g.Note)
	return d
}

// View implements Result.
func (m *Moments) View() render.Doc {
	var d render.Doc
	t := d.Table("λ", "log E1", "log E2", "α(λ)", "abs error", "q²λ(λ+1)/((1−q)σ²)")
	for _, r := range m.Moments {
		t.Append(render.G(r.Lambda), render.Ptr(r.LogE1, render.G), render.Ptr(r.LogE2, render.G), render.Ptr(r.Alpha, render.G), render.Ptr(r.AbsError, render.G), render.Ptr(r.Bound, render.G))
	}
	if m.Q == 1 {
		d.Line("q = 1: α(λ) = λ(λ+1)/(2σ²) exactly")
	}
	return d
}

// View implements Result.
func (v *VersionInfo) View() render.Doc {
	var d render.Doc
	d.Line("dpcalc %s", v.Version)
	return d
}

// training describes the run in one line: σ, q and length for one phase,
// the number of phases for a schedule, the number of mechanism applications
// for an --events file; then any sampling other than Poisson and any
// adjacency other than add-remove.
func (r *Profile) training() string {
	var s string
	switch {
	case len(r.Phases) > 0:
		s = fmt.Sprintf("%d phases, T = %d steps (%s epochs)", len(r.Phases), r.Steps, render.G(r.Epochs))
	case r.Sigma == 0:
		s = fmt.Sprintf("%d mechanism applications", r.Steps)
	default:
		s = fmt.Sprintf("σ = %s, q = %s, T = %d steps (%s epochs)", render.G(r.Sigma), render.G(r.Q), r.Steps, render.G(r.Epochs))
	}
	if r.Sampling != "" && r.Sampling != "poisson" {
		s += ", " + r.Sampling + " sampling"
	}
	if r.Adjacency != "" && r.Adjacency != "add-remove" {
		s += ", " + r.Adjacency
	}
	if r.ExamplesPerUser > 1 {
		s += fmt.Sprintf(", user-level (users of at most %d examples)", r.ExamplesPerUser)
	}
	if r.GroupSize > 1 {
		s += fmt.Sprintf(", groups of %d", r.GroupSize)
	}
	return s
}

// View implements Result: the certified intervals and the attacker's
// bounds, then the statements.
func (r *Profile) View() render.Doc {
	var d render.Doc
	kind := "certified upper bounds"
	if !r.Certified {
		kind = "NOT certified: " + r.Caveat
	}
	d.Line("%s (%s): %s", r.Accountant, kind, r.training())
	up := func(x float64) string { return render.Inf(x, render.Up) }
	down := func(x float64) string { return render.Inf(x, render.Down) }
	t := d.Table("δ", "ε", "ε certified interval")
	for _, e := range r.Epsilons {
		interval := "-"
		if r.Bounded {
			interval = fmt.Sprintf("[%s, %s]", down(e.Lower), up(e.Epsilon))
		}
		t.Append(render.G(e.Delta), up(e.Epsilon), interval)
	}
	t = d.Table("ε", "δ(ε)", "δ certified interval")
	for _, dl := range r.Deltas {
		interval := "-"
		if r.Bounded {
			interval = fmt.Sprintf("[%s, %s]", render.Down(dl.Lower), render.Up(dl.Delta))
		}
		t.Append(render.G(dl.Epsilon), render.Up(dl.Delta), interval)
	}
	t = d.Table("false-positive rate", "max true-positive rate", "min false-negative rate")
	for _, a := range r.Attacks {
		t.Append(render.G(a.FPR), render.Up(a.TPR), render.Down(a.FNR))
	}
	for _, s := range r.Statements {
		d.Line("%s", s)
	}
	return d
}

// CSV implements csver: one value a row (--format csv): quantity, the name
// and value of the argument, the value, and a certified lower bound where
// there is one. An unbounded ε is an empty value.
func (r *Profile) CSV() ([][]string, bool) {
	f := func(x float64) string {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return ""
		}
		return render.Exact(x)
	}
	lower := func(x float64) string {
		if r.Bounded {
			return f(x)
		}
		return ""
	}
	out := [][]string{{"quantity", "given", "at", "value", "lower"}}
	for _, e := range r.Epsilons {
		out = append(out, []string{"epsilon", "delta", f(e.Delta), f(e.Epsilon), lower(e.Lower)})
	}
	for _, d := range r.Deltas {
		out = append(out, []string{"delta", "epsilon", f(d.Epsilon), f(d.Delta), lower(d.Lower)})
	}
	for _, a := range r.Attacks {
		out = append(out, []string{"max_tpr", "fpr", f(a.FPR), f(a.TPR), ""})
	}
	out = append(out, []string{"advantage", "", "", f(r.Advantage), ""}, []string{"accuracy", "", "", f(r.Accuracy), ""})
	for _, a := range r.Tradeoff {
		out = append(out, []string{"min_fnr", "fpr", f(a.FPR), f(a.FNR), ""})
	}
	return out, r.csv
}
