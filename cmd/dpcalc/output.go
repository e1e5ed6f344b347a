package main

// The --json rows of the commands that run only on the command line
// (cli.Output is the one shape every command prints).

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/dpcalc/dpcalc/calibrate/onerun"
	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/internal/render"
	"github.com/dpcalc/dpcalc/trainer"
)

func fptr(x float64) *float64 { return &x }

func iptr(n int) *int { return &n }

// trainRun is the "training" object of train's --json output: the run
// (trainer.Result), whether σ was calibrated, and the matrix kernel.
type trainRun struct {
	*trainer.Result
	SigmaCalibrated bool   `json:"sigma_calibrated"`
	MatmulKernel    string `json:"matmul_kernel,omitempty"`
}

// FillOutput implements cli.Outputter: ε at δ under every accountant
// (pld's with its certified interval), the certified lower bound of
// shuffled lots, the canary audit's rows; the run.
func (o *trainOutput) FillOutput(out *cli.Output) {
	for _, r := range o.Rows {
		out.Rows = append(out.Rows, r.Output("epsilon"))
	}
	if o.Audit != nil {
		o.Audit.fillRows(out, false) // pld's row above is the certified interval
	}
	b, err := render.MarshalFinite(trainRun{Result: o.Result, SigmaCalibrated: o.Calibrated, MatmulKernel: o.Kernel})
	if err == nil {
		out.Training = b
	}
}

// FillOutput implements cli.Outputter: the empirical lower bounds, then
// the certified interval.
func (o *auditRunOutput) FillOutput(out *cli.Output) { o.fillRows(out, true) }

// fillRows appends the audit's rows: the empirical lower bounds, then,
// with certified, the certified interval.
func (o *auditRunOutput) fillRows(out *cli.Output, certified bool) {
	conf := strconv.FormatFloat(100*o.Confidence, 'g', 6, 64) + "%"
	bound := func(method string, b onerun.Bound, note string) cli.OutputRow {
		return cli.OutputRow{
			Accountant: method, Quantity: "epsilon_lower", Value: cli.FinitePtr(b.Epsilon), EpsilonLower: cli.FinitePtr(b.Epsilon), LowerBound: true,
			Delta: fptr(o.Delta), Confidence: fptr(o.Confidence),
			Canaries: iptr(b.Canaries), Members: iptr(o.Members), Guesses: iptr(b.Guesses), Correct: iptr(b.Correct), Threshold: b.Threshold,
			Note: note,
		}
	}
	tested := fmt.Sprintf("%d thresholds tested, Bonferroni-corrected", o.Thresholds)
	if o.Thresholds == 1 {
		tested = "1 threshold"
	}
	at := fmt.Sprintf("empirical lower bound at %s confidence, %s", conf, tested)
	if o.Kind != "" {
		at = o.Kind + " canaries: " + at
	}
	out.Rows = append(out.Rows, bound("one-run", o.OneRun, at))
	if o.FDP != nil {
		out.Rows = append(out.Rows, bound("fdp", *o.FDP, at+"; Gaussian f-DP curve"))
	}
	cp := bound("clopper-pearson", o.ClopperPearson, "many-run Clopper–Pearson bound: not a one-run bound")
	cp.Procedure = true // not a proven bound for one run
	out.Rows = append(out.Rows, cp)
	if c := o.Certified; c != nil && certified {
		out.Rows = append(out.Rows, cli.OutputRow{
			Accountant: "pld", Quantity: "epsilon", Value: c.Upper, Epsilon: c.Upper, EpsilonLower: c.Lower, EpsilonUpper: c.Upper,
			Delta: fptr(o.Delta), Note: "certified interval of the run's true ε",
		})
	}
}

// dataOutput is what data fetch and data verify print.
type dataOutput struct {
	name, dir   string
	train, test *splitInfo
	lines       []string
}

// splitInfo is one split of a data set.
type splitInfo struct{ n, features, classes int }

// View implements cli.Result.
func (d *dataOutput) View() render.Doc {
	var doc render.Doc
	for _, l := range d.lines {
		doc.Line("%s", l)
	}
	return doc
}

// FillOutput implements cli.Outputter: one row per split, its number of
// examples.
func (d *dataOutput) FillOutput(out *cli.Output) {
	for _, s := range []struct {
		name string
		info *splitInfo
	}{{"train", d.train}, {"test", d.test}} {
		if s.info == nil {
			continue
		}
		out.Rows = append(out.Rows, cli.OutputRow{
			Quantity: "examples", Value: fptr(float64(s.info.n)), Dataset: d.name, Split: s.name, Dir: d.dir,
			Features: iptr(s.info.features), Classes: iptr(s.info.classes), Note: "verified",
		})
	}
}

// reproOutput is what reproduce prints with --json: no rows, the report.
type reproOutput struct {
	report any
}

// View implements cli.Result (the command line prints its own lines).
func (r *reproOutput) View() render.Doc { return nil }

// FillOutput implements cli.Outputter.
func (r *reproOutput) FillOutput(out *cli.Output) {
	if b, err := render.MarshalFinite(r.report); err == nil {
		out.Report = json.RawMessage(b)
	}
}
