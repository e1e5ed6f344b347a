package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"strconv"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/advcomp"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/plotting"
	"github.com/dpcalc/dpcalc/internal/query"
)

// CurveCmd groups the curve commands.
type CurveCmd struct {
	Epochs CurveEpochsCmd `cmd:"" help:"ε as a function of epochs at fixed σ (Abadi et al. Figure 2)."`
	Sigma  CurveSigmaCmd  `cmd:"" help:"Calibrated σ as a function of the target ε (DPD Figure 1(c),(f); DPVD Figure 3)."`
}

// curveOutput are the output flags shared by the curve commands.
type curveOutput struct {
	Accountant []string `name:"accountant" default:"ma,ac,pld" enum:"ma,rdp,zcdp,ac,dpd-ac,dpd-zcdp,pld,all" placeholder:"NAME" help:"Comma-separated accountants (ma, rdp, zcdp, ac, dpd-ac, dpd-zcdp, pld) or all."`
	PLDGrid    float64  `name:"pld-grid" placeholder:"WIDTH" help:"Discretisation width of the pld accountant (default: adaptive)."`
	ACSampling string   `name:"ac-sampling" default:"log" enum:"log,linear" help:"How ac amplifies by sampling: log (proven, default) or linear (Abadi's reading, used for his Figure 2; not a proven bound)."`
	CSV        bool     `name:"csv" help:"Print CSV instead of a table."`
	Plot       string   `name:"plot" placeholder:"FILE" help:"Also draw the curve to FILE.png or FILE.svg."`

	points int // set by the command from its own --points flag
}

func (o *curveOutput) kinds() ([]accounting.Kind, error) {
	var ks []accounting.Kind
	for _, s := range o.Accountant { // kong has checked the names (enum)
		if s == "all" {
			return registry.Kinds(), nil
		}
		k, err := registry.ParseKind(s)
		if err != nil {
			return nil, usageError("invalid --accountant: %q, want a comma-separated list of ma, rdp, zcdp, ac, dpd-ac, dpd-zcdp, pld, or all", s)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

func (o *curveOutput) check() error {
	if o.points < 2 || o.points > 10000 {
		return usageError("invalid --points: %d, want 2..10000", o.points)
	}
	if o.PLDGrid != 0 && (!(o.PLDGrid > 0) || o.PLDGrid > 1) {
		return usageError("invalid --pld-grid: %s, want in (0, 1]", accounting.FormatValue(o.PLDGrid))
	}
	if o.Plot != "" {
		if _, err := plotting.Format(o.Plot); err != nil {
			return usageError("invalid --plot: %q, want a file name ending in .png or .svg", o.Plot)
		}
	}
	return nil
}

func (o *curveOutput) factory(k accounting.Kind) calibrate.Factory {
	opt := registry.Options{PLDGridWidth: o.PLDGrid, ACAmplification: advcomp.Amplification(o.ACSampling)}
	return func() (accounting.Method, error) { return registry.New(k, opt) }
}

// seriesName labels k's line in a plot.
func (o *curveOutput) seriesName(k accounting.Kind) string {
	if k == accounting.KindAC && o.ACSampling == string(advcomp.AmplificationLinear) {
		return "ac (Abadi's linear sampling)"
	}
	return string(k)
}

// The curve JSON types are internal/query's, shared with the web page.
type (
	curvePoint  = query.CurvePoint
	curveSeries = query.CurveSeries
	curveResult = query.Curve
)

// CurveEpochsCmd prints ε against epochs.
type CurveEpochsCmd struct {
	Sigma  float64 `name:"sigma" required:"" help:"Noise multiplier σ, > 0."`
	Q      float64 `name:"q" required:"" help:"Sampling rate q, in (0, 1]."`
	Delta  float64 `name:"delta" default:"1e-5" help:"δ, in (0, 1)."`
	From   float64 `name:"from" default:"1" help:"First epoch, > 0."`
	To     float64 `name:"to" default:"400" help:"Last epoch."`
	Points int     `name:"points" default:"400" help:"Number of points on the curve, 2..10000."`
	curveOutput
}

// Run implements the command.
func (c *CurveEpochsCmd) Run(e *env) error {
	c.points = c.Points
	for _, chk := range []error{
		checkFlag("sigma", accounting.CheckNoiseMultiplier(c.Sigma)),
		checkFlag("q", accounting.CheckSamplingRate(c.Q)),
		checkFlag("delta", accounting.CheckDelta(c.Delta)),
		c.check(),
	} {
		if chk != nil {
			return chk
		}
	}
	if !(c.From > 0) || math.IsInf(c.From, 0) || !(c.To >= c.From) || math.IsInf(c.To, 0) {
		return usageError("invalid --from/--to: %s..%s, want 0 < from <= to, finite", accounting.FormatValue(c.From), accounting.FormatValue(c.To))
	}
	kinds, err := c.kinds()
	if err != nil {
		return err
	}
	// Evenly spaced epochs; steps are the integer counts, deduplicated.
	var steps []int
	var epochs []float64
	for i := 0; i < c.points; i++ {
		ep := c.From + (c.To-c.From)*float64(i)/float64(c.points-1)
		s, err := calibrate.StepsForEpochs(ep, c.Q)
		if err != nil {
			return flagErr(err)
		}
		if len(steps) > 0 && s <= steps[len(steps)-1] {
			continue
		}
		steps = append(steps, s)
		epochs = append(epochs, calibrate.EpochsForSteps(s, c.Q))
	}
	res := curveResult{Curve: "epochs", Sigma: c.Sigma, Q: c.Q, Delta: c.Delta, Version: versionString()}
	chart := &plotting.Chart{
		Title:  fmt.Sprintf("ε vs epochs (σ = %g, q = %g, δ = %g)", c.Sigma, c.Q, c.Delta),
		XLabel: "epochs E (passes over the data)", YLabel: fmt.Sprintf("ε at δ = %g", c.Delta), LogY: true,
		LegendBottomRight: true,
	}
	for _, k := range kinds {
		s := curveSeries{Accountant: string(k)}
		eps, err := calibrate.EpsilonCurve(e.ctx, c.factory(k), c.Sigma, c.Q, steps, c.Delta)
		if err != nil {
			s.Error = err.Error()
		} else {
			for i := range steps {
				s.Points = append(s.Points, curvePoint{Epochs: epochs[i], Steps: steps[i], Epsilon: query.FinitePtr(eps[i])})
			}
			chart.Series = append(chart.Series, plotting.Series{Name: c.seriesName(k), X: epochs, Y: eps})
		}
		res.Series = append(res.Series, s)
	}
	return e.printCurve(res, chart, c.curveOutput, "epsilon")
}

// CurveSigmaCmd prints σ against target ε.
type CurveSigmaCmd struct {
	Delta  float64 `name:"delta" default:"1e-5" help:"δ, in (0, 1)."`
	Eps    string  `name:"eps" default:"0.1:10" placeholder:"LO:HI|E1,E2,..." help:"Target ε range lo:hi (log-spaced) or a comma-separated list."`
	Points int     `name:"points" default:"40" help:"Number of log-spaced targets in lo:hi, 2..10000."`
	lengthFlags
	curveOutput
}

// Run implements the command.
func (c *CurveSigmaCmd) Run(e *env) error {
	c.points = c.Points
	steps, err := c.steps()
	if err != nil {
		return err
	}
	for _, chk := range []error{checkFlag("delta", accounting.CheckDelta(c.Delta)), c.check()} {
		if chk != nil {
			return chk
		}
	}
	targets, err := query.ParseRange(c.Eps, c.points)
	if err != nil {
		return usageError("%v", err)
	}
	kinds, err := c.kinds()
	if err != nil {
		return err
	}
	res := curveResult{Curve: "sigma", Q: c.Q, Delta: c.Delta, Steps: steps, Epochs: calibrate.EpochsForSteps(steps, c.Q), Version: versionString()}
	chart := &plotting.Chart{
		Title:  fmt.Sprintf("σ vs ε (q = %g, T = %d steps, δ = %g)", c.Q, steps, c.Delta),
		XLabel: fmt.Sprintf("target ε at δ = %g", c.Delta), YLabel: "add/remove σ (noise std / sensitivity)", LogX: true, LogY: true,
	}
	tr := calibrate.Training{SamplingRate: c.Q, Steps: steps}
	for _, k := range kinds {
		s := curveSeries{Accountant: string(k)}
		rs, err := calibrate.SigmaCurve(e.ctx, c.factory(k), tr, targets, c.Delta, calibrate.Options{RelTol: 1e-4})
		if err != nil {
			s.Error = err.Error()
		} else {
			ys := make([]float64, len(rs))
			for i, r := range rs {
				ys[i] = r.X
				s.Points = append(s.Points, curvePoint{Epochs: res.Epochs, Steps: steps, Epsilon: ptr(targets[i]), Sigma: r.X})
			}
			chart.Series = append(chart.Series, sigmaSeries(c.seriesName(k), k, targets, ys))
		}
		res.Series = append(res.Series, s)
	}
	return e.printCurve(res, chart, c.curveOutput, "sigma")
}

// sigmaSeries is k's σ curve on the plot's one scale, the add/remove σ
// (noise std / sensitivity). The DPD papers' procedures return their σ on
// the replace-one scale (noise 2Cσ for a sum whose add/remove sensitivity
// is C), which is half the add/remove σ, so their curves are doubled and
// say so; tables, CSV and JSON keep each accountant's own σ.
func sigmaSeries(name string, k accounting.Kind, x, y []float64) plotting.Series {
	if k != accounting.KindDPDAC && k != accounting.KindDPDZCDP {
		return plotting.Series{Name: name, X: x, Y: y}
	}
	y2 := make([]float64, len(y))
	for i, v := range y {
		y2[i] = 2 * v
	}
	return plotting.Series{Name: name + " (papers' σ ×2)", X: x, Y: y2}
}

func (e *env) printCurve(res curveResult, chart *plotting.Chart, o curveOutput, y string) error {
	if o.Plot != "" {
		if err := chart.Save(o.Plot); err != nil {
			return err
		}
	}
	switch {
	case e.json:
		if err := writeJSON(e.stdout, res); err != nil {
			return err
		}
	case o.CSV:
		w := csv.NewWriter(e.stdout)
		w.Write([]string{"accountant", "epochs", "steps", "epsilon", "sigma", "error"})
		for _, s := range res.Series {
			if s.Error != "" {
				w.Write([]string{s.Accountant, "", "", "", "", s.Error})
			}
			for _, p := range s.Points {
				sig := fmtG(res.Sigma)
				if y == "sigma" {
					sig = strconv.FormatFloat(p.Sigma, 'g', 8, 64)
				}
				w.Write([]string{s.Accountant, fmtG(p.Epochs), strconv.Itoa(p.Steps), fmtPtr(p.Epsilon), sig, ""})
			}
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return err
		}
	default:
		// One row per point, one column per accountant.
		t := newTable(e.stdout)
		header := []any{"epochs", "steps"}
		if y == "sigma" {
			header = []any{"ε"}
		}
		for _, s := range res.Series {
			header = append(header, s.Accountant)
		}
		t.Header(header...)
		// The x values come from the first series that has points.
		var xs []curvePoint
		for _, s := range res.Series {
			if len(s.Points) > 0 {
				xs = s.Points
				break
			}
		}
		for i, p := range xs {
			cells := []any{fmtG(p.Epochs), strconv.Itoa(p.Steps)}
			if y == "sigma" {
				cells = []any{fmtPtr(p.Epsilon)}
			}
			for _, s := range res.Series {
				switch {
				case s.Error != "":
					cells = append(cells, "error")
				case y == "sigma":
					cells = append(cells, fmtG(s.Points[i].Sigma))
				default:
					cells = append(cells, fmtPtr(s.Points[i].Epsilon))
				}
			}
			t.Append(cells...)
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	for _, s := range res.Series {
		if s.Error != "" {
			return &exitError{code: 1, err: fmt.Errorf("%s: %s", s.Accountant, s.Error)}
		}
	}
	return nil
}
