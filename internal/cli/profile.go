package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate/profile"
	"github.com/dpcalc/dpcalc/internal/render"
)

// ProfileCmd prints the privacy profile of a run (calibrate/profile).
type ProfileCmd struct {
	Sigma *float64 `name:"sigma" help:"Noise multiplier σ (noise std / L2 sensitivity, the clipping norm), > 0."`
	trainingFlags
	Events     string    `name:"events" placeholder:"FILE" xor:"file" help:"Read the training from FILE (- for stdin): dp_accounting DpEvent JSON (docs/events.md), instead of the training flags."`
	Ledger     string    `name:"ledger" placeholder:"FILE" xor:"file" help:"Read the training from a ledger FILE (- for stdin), instead of the training flags: a dpcalc training ledger, an Opacus accountant state or a dp_accounting DpEvent, detected from its contents (docs/events.md)."`
	Accountant string    `name:"accountant" default:"${default_accountant}" enum:"${accountants}" help:"Accountant: ${certified_accountant} (certified and tightest), ${other_accountants}, or a procedure ${procedures} (not certified)."`
	PLDGrid    float64   `name:"pld-grid" placeholder:"WIDTH" help:"Discretisation width of the pld accountant's privacy loss grid (default: adaptive)."`
	ACSampling string    `name:"ac-sampling" default:"log" enum:"log,linear" help:"How ac amplifies by sampling: log (proven, default) or linear (Abadi §3.1's reading; not a proven bound)."`
	Deltas     []float64 `name:"deltas" sep:"," default:"1e-3,1e-5,1e-6,1e-8,1e-10" placeholder:"DELTA" help:"Comma-separated δ at which to report ε, each in (0, 1)."`
	EpsRange   string    `name:"eps-range" placeholder:"LO:HI|E1,E2,..." help:"ε at which to report δ: lo:hi (--points evenly spaced values, 0 <= lo < hi) or a comma-separated list (default: 0 to ε at the smallest δ)."`
	Points     int       `name:"points" default:"11" help:"Number of ε in --eps-range lo:hi, 2..1000."`
	FPR        []float64 `name:"fpr" sep:"," default:"0.001,0.01,0.05,0.1" placeholder:"RATE" help:"Comma-separated false-positive rates at which to bound the attacker's true-positive rate, each in (0, 1)."`
	Format     string    `name:"format" default:"table" enum:"table,json,csv" help:"Output: table (with plain-language statements), json or csv (one value a row)."`
	Plot       string    `name:"plot" placeholder:"FILE" help:"Also draw the trade-off curve to FILE.png or FILE.svg."`
}

// Profile is the answer of dpcalc profile.
type Profile struct {
	Accountant string     `json:"accountant"`
	Certified  bool       `json:"certified"`
	Caveat     string     `json:"caveat,omitempty"`
	Bounded    bool       `json:"bounded"`
	Sigma      float64    `json:"sigma"`
	Q          float64    `json:"q"`
	Steps      int        `json:"steps"`
	Epochs     float64    `json:"epochs"`
	Sampling   string     `json:"sampling"`
	Adjacency  string     `json:"adjacency"`
	Phases     []PhaseRow `json:"phases,omitempty"`
	// ExamplesPerUser and GroupSize are those of the row (above 1:
	// user-level, group privacy).
	ExamplesPerUser int                 `json:"examples_per_user,omitempty"`
	GroupSize       int                 `json:"group_size,omitempty"`
	Epsilons        []profile.EpsilonAt `json:"epsilons"`
	Deltas          []profile.DeltaAt   `json:"deltas"`
	Attacks         []profile.Point     `json:"attacks"`
	Advantage       float64             `json:"advantage"`
	Accuracy        float64             `json:"accuracy"`
	Statements      []string            `json:"statements"`
	Tradeoff        []profile.Point     `json:"tradeoff"`
	Version         string              `json:"version"`

	csv bool
}

// Run implements the command.
func (c *ProfileCmd) Run(e *Env) error {
	k, err := registry.ParseKind(c.Accountant)
	if err != nil {
		return usageAt("accountant", "invalid --accountant: %q, want one of %s", c.Accountant, strings.Join(registry.Names(), ", "))
	}
	g, err := c.given(e, c.Sigma, eventFlags{Events: c.Events, Ledger: c.Ledger})
	if err != nil {
		return err
	}
	adj, _ := accounting.ParseAdjacency(c.Adjacency) // kong's enum: valid
	acc := Accountants{Name: c.Accountant, PLDGrid: c.PLDGrid, ACSampling: c.ACSampling, Adjacency: adj}
	ev, factory, head, err := g.training(acc, k)
	if err != nil {
		return err
	}
	opt, err := c.options()
	if err != nil {
		return err
	}
	format := c.Format
	if e.JSON {
		if format == "csv" {
			return usageAt("format", "invalid --format csv with --json: give one of them")
		}
		format = "json"
	}
	if err := e.checkPlot(c.Plot); err != nil {
		return err
	}
	p, err := profile.Compute(e.Ctx, factory, ev, opt)
	if err != nil {
		return err
	}
	res := &Profile{
		Accountant: string(p.Kind), Certified: p.Certified, Caveat: p.Caveat, Bounded: p.Bounded,
		Sigma: head.Sigma, Q: head.Q, Steps: head.Steps, Epochs: head.Epochs,
		Sampling: head.Sampling, Adjacency: head.Adjacency, Phases: head.Phases,
		ExamplesPerUser: head.ExamplesPerUser, GroupSize: head.GroupSize,
		Epsilons: p.Epsilons, Deltas: p.Deltas, Attacks: p.Attacks,
		Advantage: p.Advantage, Accuracy: p.Accuracy, Statements: append(readStatement(g), statements(p)...),
		Tradeoff: p.Curve, Version: Version(),
		csv: format == "csv",
	}
	if c.Plot != "" {
		if err := e.savePlot(c.Plot, res.Chart()); err != nil {
			return err
		}
	}
	if format == "json" {
		e.JSON = true
	}
	e.Print(res)
	return nil
}

// options validates --deltas, --eps-range, --points and --fpr.
func (c *ProfileCmd) options() (profile.Options, error) {
	var opt profile.Options
	if len(c.Deltas) == 0 {
		return opt, usageAt("deltas", "invalid --deltas: empty, want a comma-separated list of δ in (0, 1)")
	}
	for _, d := range c.Deltas {
		if !(d > 0 && d < 1) {
			return opt, usageAt("deltas", "invalid --deltas: %s, want each δ in (0, 1)", accounting.FormatValue(d))
		}
	}
	if len(c.Deltas) > 1000 {
		return opt, usageAt("deltas", "invalid --deltas: %d values, want at most 1000", len(c.Deltas))
	}
	opt.Deltas = c.Deltas
	if len(c.FPR) == 0 {
		return opt, usageAt("fpr", "invalid --fpr: empty, want a comma-separated list of rates in (0, 1)")
	}
	for _, a := range c.FPR {
		if !(a > 0 && a < 1) {
			return opt, usageAt("fpr", "invalid --fpr: %s, want each false-positive rate in (0, 1)", accounting.FormatValue(a))
		}
	}
	if len(c.FPR) > 1000 {
		return opt, usageAt("fpr", "invalid --fpr: %d values, want at most 1000", len(c.FPR))
	}
	opt.FPRs = c.FPR
	if c.Points < 2 || c.Points > 1000 {
		return opt, usageAt("points", "invalid --points: %d, want 2..1000", c.Points)
	}
	if c.EpsRange != "" {
		eps, err := ParseEpsRange(c.EpsRange, c.Points)
		if err != nil {
			return opt, err
		}
		if len(eps) > 1000 {
			return opt, usageAt("eps-range", "invalid --eps-range: %d values, want at most 1000", len(eps))
		}
		opt.Epsilons = eps
	}
	return opt, nil
}

// ParseEpsRange parses --eps-range: "lo:hi" (n evenly spaced values, both
// ends included) or "a,b,c", every value finite and ≥ 0.
func ParseEpsRange(s string, n int) ([]float64, error) {
	fail := func() error {
		return usageAt("eps-range", "invalid --eps-range: %q, want lo:hi with 0 <= lo < hi, finite, or a comma-separated list of finite values >= 0", s)
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

// readStatement says what --ledger read, if it was given.
func readStatement(g *given) []string {
	if g.read.Format == "" {
		return nil
	}
	return []string{"The run was read from " + g.read.Description + "."}
}

// statements are the profile in words. Every number is an upper bound on
// what an attacker can do, rounded up.
func statements(p *profile.Profile) []string {
	var out []string
	for _, a := range p.Attacks {
		out = append(out, fmt.Sprintf("An attacker who flags members with %s%% false positives catches at most %s%% of members.", render.Pct(a.FPR), render.PctUp(a.TPR)))
	}
	out = append(out,
		fmt.Sprintf("No membership test beats random guessing by more than %s percentage points (TPR − FPR <= δ(0)).", render.PctUp(p.Advantage)),
		fmt.Sprintf("With members and non-members equally likely, no membership guess is right more than %s%% of the time.", render.PctUp(p.Accuracy)))
	if !p.Certified {
		out = append(out, fmt.Sprintf("Not certified: %s is a procedure (%s).", p.Kind, p.Caveat))
	}
	return out
}

// Chart is the trade-off curve against random guessing.
func (r *Profile) Chart() render.Chart {
	xs, ys := make([]float64, len(r.Tradeoff)), make([]float64, len(r.Tradeoff))
	for i, p := range r.Tradeoff {
		xs[i], ys[i] = p.FPR, p.FNR
	}
	name := r.Accountant + " bound (certified)"
	if !r.Certified {
		name = r.Accountant + " (procedure, not certified)"
	}
	return render.Chart{
		Title:  "Membership inference trade-off (" + r.training() + ")",
		XLabel: "false-positive rate α (type I error)",
		YLabel: "lowest false-negative rate β (type II error)",
		Series: []render.Series{
			{Name: name, Key: r.Accountant, X: xs, Y: ys},
			{Name: "random guessing (β = 1 − α)", X: []float64{0, 1}, Y: []float64{1, 0}},
		},
	}
}
