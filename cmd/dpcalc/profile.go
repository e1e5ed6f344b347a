package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate/profile"
	"github.com/dpcalc/dpcalc/internal/plotting"
	"github.com/dpcalc/dpcalc/internal/query"
)

// ProfileCmd prints the privacy profile of a run (calibrate/profile).
type ProfileCmd struct {
	Sigma *float64 `name:"sigma" help:"Noise multiplier σ (noise std / L2 sensitivity, the clipping norm), > 0."`
	trainingFlags
	Events     string    `name:"events" placeholder:"FILE" help:"Read the training from FILE (- for stdin): dp_accounting DpEvent JSON (docs/events.md), instead of the training flags."`
	Accountant string    `name:"accountant" default:"pld" enum:"ma,rdp,zcdp,ac,dpd-ac,dpd-zcdp,pld" help:"Accountant: pld (certified and tightest), ma, rdp, zcdp, ac, or a procedure dpd-ac, dpd-zcdp (not certified)."`
	PLDGrid    float64   `name:"pld-grid" placeholder:"WIDTH" help:"Discretisation width of the pld accountant's privacy loss grid (default: adaptive)."`
	ACSampling string    `name:"ac-sampling" default:"log" enum:"log,linear" help:"How ac amplifies by sampling: log (proven, default) or linear (Abadi §3.1's reading; not a proven bound)."`
	Deltas     []float64 `name:"deltas" sep:"," default:"1e-3,1e-5,1e-6,1e-8,1e-10" placeholder:"DELTA" help:"Comma-separated δ at which to report ε, each in (0, 1)."`
	EpsRange   string    `name:"eps-range" placeholder:"LO:HI|E1,E2,..." help:"ε at which to report δ: lo:hi (--points evenly spaced values, 0 <= lo < hi) or a comma-separated list (default: 0 to ε at the smallest δ)."`
	Points     int       `name:"points" default:"11" help:"Number of ε in --eps-range lo:hi, 2..1000."`
	FPR        []float64 `name:"fpr" sep:"," default:"0.001,0.01,0.05,0.1" placeholder:"RATE" help:"Comma-separated false-positive rates at which to bound the attacker's true-positive rate, each in (0, 1)."`
	Format     string    `name:"format" default:"table" enum:"table,json,csv" help:"Output: table (with plain-language statements), json or csv (one value a row)."`
	Plot       string    `name:"plot" placeholder:"FILE" help:"Also draw the trade-off curve to FILE.png or FILE.svg."`
}

// profileResult is profile's JSON output.
type profileResult struct {
	Accountant string              `json:"accountant"`
	Certified  bool                `json:"certified"`
	Caveat     string              `json:"caveat,omitempty"`
	Bounded    bool                `json:"bounded"`
	Sigma      float64             `json:"sigma"`
	Q          float64             `json:"q"`
	Steps      int                 `json:"steps"`
	Epochs     float64             `json:"epochs"`
	Sampling   string              `json:"sampling"`
	Adjacency  string              `json:"adjacency"`
	Phases     []query.PhaseRow    `json:"phases,omitempty"`
	Epsilons   []profile.EpsilonAt `json:"epsilons"`
	Deltas     []profile.DeltaAt   `json:"deltas"`
	Attacks    []profile.Point     `json:"attacks"`
	Advantage  float64             `json:"advantage"`
	Accuracy   float64             `json:"accuracy"`
	Statements []string            `json:"statements"`
	Tradeoff   []profile.Point     `json:"tradeoff"`
	Version    string              `json:"version"`
}

// Run implements the command.
func (c *ProfileCmd) Run(e *env) error {
	k, err := registry.ParseKind(c.Accountant)
	if err != nil {
		return usageError("invalid --accountant: %q, want one of ma, rdp, zcdp, ac, dpd-ac, dpd-zcdp, pld", c.Accountant)
	}
	fl := map[string]*string{"sigma": fptr(c.Sigma), "accountant": &c.Accountant, "ac-sampling": &c.ACSampling}
	if c.PLDGrid != 0 {
		fl["pld-grid"] = fstr(c.PLDGrid)
	}
	r, err := (&eventFlags{Events: c.Events}).request(e, c.trainingFlags.request("eps", fl))
	if err != nil {
		return err
	}
	ev, acc, head, err := query.Training(r, k)
	if err != nil {
		return usageError("%v", err)
	}
	opt, err := c.options()
	if err != nil {
		return err
	}
	format := c.Format
	if e.json {
		if format == "csv" {
			return usageError("invalid --format csv with --json: give one of them")
		}
		format = "json"
	}
	if c.Plot != "" {
		if _, err := plotting.Format(c.Plot); err != nil {
			return usageError("invalid --plot: %q, want a file name ending in .png or .svg", c.Plot)
		}
	}
	p, err := profile.Compute(e.ctx, acc.Factory(k), ev, opt)
	if err != nil {
		return err
	}
	res := profileResult{
		Accountant: string(p.Kind), Certified: p.Certified, Caveat: p.Caveat, Bounded: p.Bounded,
		Sigma: head.Sigma, Q: head.Q, Steps: head.Steps, Epochs: head.Epochs,
		Sampling: head.Sampling, Adjacency: head.Adjacency, Phases: head.Phases,
		Epsilons: p.Epsilons, Deltas: p.Deltas, Attacks: p.Attacks,
		Advantage: p.Advantage, Accuracy: p.Accuracy, Statements: statements(p),
		Tradeoff: p.Curve, Version: versionString(),
	}
	if c.Plot != "" {
		if err := profileChart(res).Save(c.Plot); err != nil {
			return err
		}
	}
	switch format {
	case "json":
		return writeJSON(e.stdout, res)
	case "csv":
		return writeProfileCSV(e.stdout, res)
	}
	return writeProfileTable(e.stdout, res)
}

// options validates --deltas, --eps-range, --points and --fpr.
func (c *ProfileCmd) options() (profile.Options, error) {
	var opt profile.Options
	if len(c.Deltas) == 0 {
		return opt, usageError("invalid --deltas: empty, want a comma-separated list of δ in (0, 1)")
	}
	for _, d := range c.Deltas {
		if !(d > 0 && d < 1) {
			return opt, usageError("invalid --deltas: %s, want each δ in (0, 1)", accounting.FormatValue(d))
		}
	}
	if len(c.Deltas) > 1000 {
		return opt, usageError("invalid --deltas: %d values, want at most 1000", len(c.Deltas))
	}
	opt.Deltas = c.Deltas
	if len(c.FPR) == 0 {
		return opt, usageError("invalid --fpr: empty, want a comma-separated list of rates in (0, 1)")
	}
	for _, a := range c.FPR {
		if !(a > 0 && a < 1) {
			return opt, usageError("invalid --fpr: %s, want each false-positive rate in (0, 1)", accounting.FormatValue(a))
		}
	}
	if len(c.FPR) > 1000 {
		return opt, usageError("invalid --fpr: %d values, want at most 1000", len(c.FPR))
	}
	opt.FPRs = c.FPR
	if c.Points < 2 || c.Points > 1000 {
		return opt, usageError("invalid --points: %d, want 2..1000", c.Points)
	}
	if c.EpsRange != "" {
		eps, err := parseEpsRange(c.EpsRange, c.Points)
		if err != nil {
			return opt, err
		}
		if len(eps) > 1000 {
			return opt, usageError("invalid --eps-range: %d values, want at most 1000", len(eps))
		}
		opt.Epsilons = eps
	}
	return opt, nil
}

// parseEpsRange parses --eps-range: "lo:hi" (n evenly spaced values, both
// ends included) or "a,b,c", every value finite and ≥ 0.
func parseEpsRange(s string, n int) ([]float64, error) {
	fail := func() error {
		return usageError("invalid --eps-range: %q, want lo:hi with 0 <= lo < hi, finite, or a comma-separated list of finite values >= 0", s)
	}
	ok := func(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }
	if lo, hi, found := strings.Cut(s, ":"); found {
		a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		if err1 != nil || err2 != nil || !ok(a) || !ok(b) || !(b > a) {
			return nil, fail()
		}
		out := make([]float64, n)
		for i := range out {
			out[i] = a + (b-a)*float64(i)/float64(n-1)
		}
		out[n-1] = b
		return out, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !ok(v) {
			return nil, fail()
		}
		out = append(out, v)
	}
	return out, nil
}

// pctUp formats the fraction x as a percentage with three significant
// digits, rounded up (for upper bounds: a TPR or an accuracy).
func pctUp(x float64) string { return gUp(100*x, 3) }

// gUp formats v ≥ 0 with the given significant digits, rounded up; gDown
// rounds down. The table prints an upper bound with gUp and a lower bound
// with gDown, so that rounding never overstates privacy.
func gUp(v float64, digits int) string { return gRound(v, digits, 1) }

func gDown(v float64, digits int) string { return gRound(v, digits, -1) }

func gRound(v float64, digits int, dir float64) string {
	s := strconv.FormatFloat(v, 'g', digits, 64)
	if !(v > 0) || math.IsInf(v, 0) {
		return s
	}
	if f := mustParse(s); (dir > 0 && f < v) || (dir < 0 && f > v) {
		// Nearest went the wrong way: one unit in the last digit back.
		scale := math.Pow(10, math.Floor(math.Log10(v))-float64(digits-1))
		s = strconv.FormatFloat(f+dir*scale, 'g', digits, 64)
	}
	return s
}

// pct formats a given rate (an input, exact) as a percentage.
func pct(x float64) string { return strconv.FormatFloat(100*x, 'g', 6, 64) }

func mustParse(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// statements are the profile in words. Every number is an upper bound on
// what an attacker can do, rounded up.
func statements(p *profile.Profile) []string {
	var out []string
	for _, a := range p.Attacks {
		out = append(out, fmt.Sprintf("An attacker who flags members with %s%% false positives catches at most %s%% of members.", pct(a.FPR), pctUp(a.TPR)))
	}
	out = append(out,
		fmt.Sprintf("No membership test beats random guessing by more than %s percentage points (TPR − FPR <= δ(0)).", pctUp(p.Advantage)),
		fmt.Sprintf("With members and non-members equally likely, no membership guess is right more than %s%% of the time.", pctUp(p.Accuracy)))
	if !p.Certified {
		out = append(out, fmt.Sprintf("Not certified: %s is a procedure (%s).", p.Kind, p.Caveat))
	}
	return out
}

// fmtInf is fmtG that prints +Inf as "unbounded".
func fmtInf(x float64) string {
	if math.IsInf(x, 1) {
		return "unbounded"
	}
	return fmtG(x)
}

// training describes the run in one line: σ, q and length for one phase,
// the number of phases for a schedule, the number of mechanism applications
// for an --events file; then any sampling other than Poisson and any
// adjacency other than add-remove.
func (r profileResult) training() string {
	var s string
	switch {
	case len(r.Phases) > 0:
		s = fmt.Sprintf("%d phases, T = %d steps (%s epochs)", len(r.Phases), r.Steps, fmtG(r.Epochs))
	case r.Sigma == 0:
		s = fmt.Sprintf("%d mechanism applications", r.Steps)
	default:
		s = fmt.Sprintf("σ = %s, q = %s, T = %d steps (%s epochs)", fmtG(r.Sigma), fmtG(r.Q), r.Steps, fmtG(r.Epochs))
	}
	if r.Sampling != "" && r.Sampling != "poisson" {
		s += ", " + r.Sampling + " sampling"
	}
	if r.Adjacency != "" && r.Adjacency != "add-remove" {
		s += ", " + r.Adjacency
	}
	return s
}

func writeProfileTable(w io.Writer, r profileResult) error {
	kind := "certified upper bounds"
	if !r.Certified {
		kind = "NOT certified: " + r.Caveat
	}
	fmt.Fprintf(w, "%s (%s): %s\n", r.Accountant, kind, r.training())
	t := newTable(w)
	t.Header("δ", "ε", "ε certified interval")
	for _, e := range r.Epsilons {
		interval := "-"
		if r.Bounded {
			interval = fmt.Sprintf("[%s, %s]", fmtInf(e.Lower), fmtInf(e.Epsilon))
		}
		t.Append(fmtG(e.Delta), fmtInf(e.Epsilon), interval)
	}
	if err := t.Render(); err != nil {
		return err
	}
	t = newTable(w)
	t.Header("ε", "δ(ε)", "δ certified interval")
	for _, d := range r.Deltas {
		interval := "-"
		if r.Bounded {
			interval = fmt.Sprintf("[%s, %s]", fmtG(d.Lower), fmtG(d.Delta))
		}
		t.Append(fmtG(d.Epsilon), fmtG(d.Delta), interval)
	}
	if err := t.Render(); err != nil {
		return err
	}
	t = newTable(w)
	t.Header("false-positive rate", "max true-positive rate", "min false-negative rate")
	for _, a := range r.Attacks {
		t.Append(fmtG(a.FPR), gUp(a.TPR, 6), gDown(a.FNR, 6))
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, s := range r.Statements {
		if _, err := fmt.Fprintln(w, s); err != nil {
			return err
		}
	}
	return nil
}

// writeProfileCSV writes one value a row: quantity, the name and value of
// the argument, the value, and a certified lower bound where there is one.
// An unbounded ε is an empty value.
func writeProfileCSV(w io.Writer, r profileResult) error {
	cw := csv.NewWriter(w)
	f := func(x float64) string {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	lower := func(x float64) string {
		if r.Bounded {
			return f(x)
		}
		return ""
	}
	cw.Write([]string{"quantity", "given", "at", "value", "lower"})
	for _, e := range r.Epsilons {
		cw.Write([]string{"epsilon", "delta", f(e.Delta), f(e.Epsilon), lower(e.Lower)})
	}
	for _, d := range r.Deltas {
		cw.Write([]string{"delta", "epsilon", f(d.Epsilon), f(d.Delta), lower(d.Lower)})
	}
	for _, a := range r.Attacks {
		cw.Write([]string{"max_tpr", "fpr", f(a.FPR), f(a.TPR), ""})
	}
	cw.Write([]string{"advantage", "", "", f(r.Advantage), ""})
	cw.Write([]string{"accuracy", "", "", f(r.Accuracy), ""})
	for _, a := range r.Tradeoff {
		cw.Write([]string{"min_fnr", "fpr", f(a.FPR), f(a.FNR), ""})
	}
	cw.Flush()
	return cw.Error()
}

// profileChart is the trade-off curve against random guessing.
func profileChart(r profileResult) *plotting.Chart {
	xs, ys := make([]float64, len(r.Tradeoff)), make([]float64, len(r.Tradeoff))
	for i, p := range r.Tradeoff {
		xs[i], ys[i] = p.FPR, p.FNR
	}
	name := r.Accountant + " bound (certified)"
	if !r.Certified {
		name = r.Accountant + " (procedure, not certified)"
	}
	return &plotting.Chart{
		Title:  "Membership inference trade-off (" + r.training() + ")",
		XLabel: "false-positive rate α (type I error)",
		YLabel: "lowest false-negative rate β (type II error)",
		Series: []plotting.Series{
			{Name: name, X: xs, Y: ys},
			{Name: "random guessing (β = 1 − α)", X: []float64{0, 1}, Y: []float64{1, 0}},
		},
	}
}
