package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/advcomp"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/internal/render"
)

// CurveCmd groups the curve commands.
type CurveCmd struct {
	Epochs CurveEpochsCmd `cmd:"" help:"ε as a function of epochs at fixed σ (Abadi et al. Figure 2)."`
	Sigma  CurveSigmaCmd  `cmd:"" help:"Calibrated σ as a function of the target ε (DPD Figure 1(c),(f); DPVD Figure 3)."`
}

// curveOutput are the output flags shared by the curve commands.
type curveOutput struct {
	Accountant []string `name:"accountant" default:"${curve_accountants}" enum:"${accountants},all" placeholder:"NAME" help:"Comma-separated accountants (${accountant_list}) or all."`
	PLDGrid    float64  `name:"pld-grid" placeholder:"WIDTH" help:"Discretisation width of the pld accountant (default: adaptive)."`
	ACSampling string   `name:"ac-sampling" default:"log" enum:"log,linear" help:"How ac amplifies by sampling: log (proven, default) or linear (Abadi's reading, used for his Figure 2; not a proven bound)."`
	CSV        bool     `name:"csv" help:"Print CSV instead of a table."`
	Plot       string   `name:"plot" placeholder:"FILE" help:"Also draw the curve to FILE.png or FILE.svg."`
}

func (o *curveOutput) kinds() ([]accounting.Kind, error) {
	var ks []accounting.Kind
	for _, s := range o.Accountant { // kong has checked the names (enum)
		if s == "all" {
			return registry.Kinds(), nil
		}
		k, err := registry.ParseKind(s)
		if err != nil {
			return nil, usageAt("accountant", "invalid --accountant: %q, want a comma-separated list of %s, or all", s, strings.Join(registry.Names(), ", "))
		}
		ks = append(ks, k)
	}
	return ks, nil
}

func (o *curveOutput) check(e *Env, points int) error {
	if points < 2 || points > 10000 {
		return usageAt("points", "invalid --points: %d, want 2..10000", points)
	}
	if o.PLDGrid != 0 && (!(o.PLDGrid > 0) || o.PLDGrid > 1) {
		return usageAt("pld-grid", "invalid --pld-grid: %s, want in (0, 1]", accounting.FormatValue(o.PLDGrid))
	}
	return e.checkPlot(o.Plot)
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

// CurvePoint is one point of a curve.
type CurvePoint struct {
	Epochs  float64  `json:"epochs"`
	Steps   int      `json:"steps"`
	Epsilon *float64 `json:"epsilon"`
	Sigma   float64  `json:"sigma,omitempty"`
}

// CurveSeries is one accountant's curve.
type CurveSeries struct {
	Accountant string       `json:"accountant"`
	Points     []CurvePoint `json:"points,omitempty"`
	Error      string       `json:"error,omitempty"`
}

// Curve is the answer of dpcalc curve epochs (Curve "epochs": ε against
// epochs at σ) and dpcalc curve sigma (Curve "sigma": σ against the target
// ε at a length).
type Curve struct {
	Curve   string        `json:"curve"`
	Sigma   float64       `json:"sigma,omitempty"`
	Q       float64       `json:"q"`
	Delta   float64       `json:"delta"`
	Steps   int           `json:"steps,omitempty"`
	Epochs  float64       `json:"epochs,omitempty"`
	Series  []CurveSeries `json:"series"`
	Version string        `json:"version"`

	// Chart is the curve as a plot.
	Chart render.Chart `json:"-"`
	csv   bool
}

// Fail is the exit-1 error of the first accountant whose curve failed.
func (c *Curve) Fail() error {
	for _, s := range c.Series {
		if s.Error != "" {
			return Failed("%s: %s", s.Accountant, s.Error)
		}
	}
	return nil
}

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
func (c *CurveEpochsCmd) Run(e *Env) error {
	if err := firstErr(
		checkFlag("sigma", accounting.CheckNoiseMultiplier(c.Sigma)),
		checkFlag("q", accounting.CheckSamplingRate(c.Q)),
		checkFlag("delta", accounting.CheckDelta(c.Delta)),
		c.check(e, c.Points),
	); err != nil {
		return err
	}
	if !(c.From > 0) || math.IsInf(c.From, 0) || !(c.To >= c.From) || math.IsInf(c.To, 0) {
		flag := "to"
		if !(c.From > 0) || math.IsInf(c.From, 0) {
			flag = "from"
		}
		return usageAt(flag, "invalid --from/--to: %s..%s, want 0 < from <= to, finite", accounting.FormatValue(c.From), accounting.FormatValue(c.To))
	}
	kinds, err := c.kinds()
	if err != nil {
		return err
	}
	// Evenly spaced epochs; steps are the integer counts, deduplicated.
	var steps []int
	var epochs []float64
	for i := 0; i < c.Points; i++ {
		ep := c.From + (c.To-c.From)*float64(i)/float64(c.Points-1)
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
	res := &Curve{Curve: "epochs", Sigma: c.Sigma, Q: c.Q, Delta: c.Delta, Version: Version(), csv: c.CSV}
	res.Chart = render.Chart{
		Title:  fmt.Sprintf("ε vs epochs (σ = %s, q = %s, δ = %s)", render.Exact(c.Sigma), render.Exact(c.Q), render.Exact(c.Delta)),
		XLabel: "epochs E (passes over the data)", YLabel: "ε at δ = " + render.Exact(c.Delta), LogY: true,
		LegendBottomRight: true,
	}
	for _, k := range kinds {
		s := CurveSeries{Accountant: string(k)}
		eps, err := calibrate.EpsilonCurve(e.Ctx, c.factory(k), c.Sigma, c.Q, steps, c.Delta)
		if err != nil {
			s.Error = err.Error()
		} else {
			for i := range steps {
				s.Points = append(s.Points, CurvePoint{Epochs: epochs[i], Steps: steps[i], Epsilon: FinitePtr(eps[i])})
			}
			res.Chart.Series = append(res.Chart.Series, render.Series{Name: c.seriesName(k), Key: string(k), X: epochs, Y: eps})
		}
		res.Series = append(res.Series, s)
	}
	return e.printCurve(res, c.Plot)
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
func (c *CurveSigmaCmd) Run(e *Env) error {
	steps, err := c.steps()
	if err != nil {
		return err
	}
	if err := firstErr(checkFlag("delta", accounting.CheckDelta(c.Delta)), c.check(e, c.Points)); err != nil {
		return err
	}
	targets, err := ParseRange(c.Eps, c.Points)
	if err != nil {
		return err
	}
	kinds, err := c.kinds()
	if err != nil {
		return err
	}
	res := &Curve{Curve: "sigma", Q: c.Q, Delta: c.Delta, Steps: steps, Epochs: calibrate.EpochsForSteps(steps, c.Q), Version: Version(), csv: c.CSV}
	res.Chart = render.Chart{
		Title:  fmt.Sprintf("σ vs ε (q = %s, T = %d steps, δ = %s)", render.Exact(c.Q), steps, render.Exact(c.Delta)),
		XLabel: "target ε at δ = " + render.Exact(c.Delta), YLabel: "add/remove σ (noise std / sensitivity)", LogX: true, LogY: true,
	}
	tr := calibrate.Training{SamplingRate: c.Q, Steps: steps}
	for _, k := range kinds {
		s := CurveSeries{Accountant: string(k)}
		rs, err := calibrate.SigmaCurve(e.Ctx, c.factory(k), tr, targets, c.Delta, calibrate.Options{RelTol: 1e-4})
		if err != nil {
			s.Error = err.Error()
		} else {
			ys := make([]float64, len(rs))
			for i, r := range rs {
				ys[i] = r.X
				s.Points = append(s.Points, CurvePoint{Epochs: res.Epochs, Steps: steps, Epsilon: ptr(targets[i]), Sigma: r.X})
			}
			res.Chart.Series = append(res.Chart.Series, sigmaSeries(c.seriesName(k), k, targets, ys))
		}
		res.Series = append(res.Series, s)
	}
	return e.printCurve(res, c.Plot)
}

// sigmaSeries is k's σ curve on the plot's one scale, the add/remove σ
// (noise std / sensitivity). The DPD papers' procedures return their σ on
// the replace-one scale (noise 2Cσ for a sum whose add/remove sensitivity
// is C), which is half the add/remove σ, so their curves are doubled and
// say so; tables, CSV and JSON keep each accountant's own σ.
func sigmaSeries(name string, k accounting.Kind, x, y []float64) render.Series {
	if k != accounting.KindDPDAC && k != accounting.KindDPDZCDP {
		return render.Series{Name: name, Key: string(k), X: x, Y: y}
	}
	y2 := make([]float64, len(y))
	for i, v := range y {
		y2[i] = 2 * v
	}
	return render.Series{Name: name + " (papers' σ ×2)", Key: string(k), X: x, Y: y2}
}

// printCurve draws the --plot, if any, and prints the curve.
func (e *Env) printCurve(res *Curve, plot string) error {
	if plot != "" {
		if err := e.savePlot(plot, res.Chart); err != nil {
			return err
		}
	}
	e.Print(res)
	return nil
}

// ParseRange parses --eps of curve sigma: "lo:hi" (n log-spaced values) or
// "a,b,c".
func ParseRange(s string, n int) ([]float64, error) {
	fail := func() error {
		return usageAt("eps", "invalid --eps: %q, want lo:hi with 0 < lo < hi or a comma-separated list of values > 0", s)
	}
	var out []float64
	if lo, hi, ok := strings.Cut(s, ":"); ok {
		a, err1 := strconv.ParseFloat(lo, 64)
		b, err2 := strconv.ParseFloat(hi, 64)
		if err1 != nil || err2 != nil || !(a > 0) || !(b > a) || math.IsInf(b, 0) {
			return nil, fail()
		}
		for i := 0; i < n; i++ {
			out = append(out, a*math.Pow(b/a, float64(i)/float64(n-1)))
		}
		out[n-1] = b
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fail()
		}
		out = append(out, v)
	}
	return out, nil
}
