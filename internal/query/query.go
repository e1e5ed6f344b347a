// Package query answers one dpcalc computation described by the CLI's flag
// names, without the CLI: it is what the web calculator (web/wasm) runs. A
// Request is a command (sigma, eps, delta, epochs, audit, curve-epochs,
// curve-sigma) and raw flag values as typed; Run validates them in the
// order the CLI does, with the CLI's messages, and computes the same rows
// through the same calibrate and registry calls, so that the page and
// `dpcalc … --json` print identical numbers (query_test.go checks this
// against the binary).
package query

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/advcomp"
	"github.com/dpcalc/dpcalc/accounting/pld"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/calibrate"
)

// Commands are the values of Request.Cmd, in the order the page lists them.
var Commands = []string{"eps", "delta", "sigma", "epochs", "audit", "curve-epochs", "curve-sigma"}

// kind of a flag's value, as kong decodes it.
type kind int

const (
	kFloat  kind = iota
	kInt         // kong's int decoding
	kCount       // the CLI's count type: 20000 or 2e4
	kString      // a string, or a comma-separated list when list is set
)

type flagSpec struct {
	name     string
	kind     kind
	required bool
	def      string
	enum     []string // checked after decoding, as kong's enum tag
	list     bool     // a kong slice flag: comma-separated, each element checked against enum
}

var (
	accountantEnum = append(registry.Names(), "all")
	samplingEnum   = []string{"log", "linear"}
	adjacencyEnum  = []string{"add-remove", "replace-one"}
)

func fl(name string) flagSpec        { return flagSpec{name: name, kind: kFloat} }
func req(name string) flagSpec       { return flagSpec{name: name, kind: kFloat, required: true} }
func def(name, d string) flagSpec    { return flagSpec{name: name, kind: kFloat, def: d} }
func intDef(name, d string) flagSpec { return flagSpec{name: name, kind: kInt, def: d} }
func enum(name, d string, e []string) flagSpec {
	return flagSpec{name: name, kind: kString, def: d, enum: e}
}

// length and accountant flags, in the CLI structs' field order.
var (
	// epochs and steps form a required xor group (lengthGroup).
	lengthSpecs = []flagSpec{req("q"), fl("epochs"), {name: "steps", kind: kCount}}
	// planSpecs describe the training of eps, delta, sigma and epochs
	// beyond one Poisson phase: batch and n instead of q, a schedule of
	// phases instead of --sigma/--q/--epochs/--steps, the sampling and the
	// neighbouring relation.
	planSpecs       = []flagSpec{{name: "batch", kind: kCount}, {name: "n", kind: kCount}, {name: "schedule", kind: kString}, enum("sampling", "poisson", Samplings), enum("adjacency", "add-remove", adjacencyEnum)}
	accountantSpecs = []flagSpec{enum("accountant", "rdp", accountantEnum), fl("pld-grid"), enum("ac-sampling", "log", samplingEnum)}
	curveSpecs      = []flagSpec{{name: "accountant", kind: kString, def: "ma,ac,pld", enum: accountantEnum, list: true}, fl("pld-grid"), enum("ac-sampling", "log", samplingEnum)}
)

func cat(parts ...[]flagSpec) []flagSpec {
	var out []flagSpec
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// specs are each command's flags in the order of the CLI's struct fields;
// it is also the order of the command line Args builds.
var specs = map[string][]flagSpec{
	"sigma":        cat([]flagSpec{req("eps"), def("delta", "1e-5")}, lengthSpecs, planSpecs, accountantSpecs, []flagSpec{def("tol", "1e-6")}),
	"eps":          cat([]flagSpec{req("sigma"), def("delta", "1e-5")}, lengthSpecs, planSpecs, accountantSpecs),
	"delta":        cat([]flagSpec{req("sigma"), req("eps")}, lengthSpecs, planSpecs, accountantSpecs),
	"epochs":       cat([]flagSpec{req("sigma"), req("q"), req("eps"), def("delta", "1e-5")}, planSpecs, accountantSpecs, []flagSpec{intDef("max-steps", "1000000000")}),
	"audit":        cat([]flagSpec{req("sigma"), req("eps"), def("delta", "1e-5")}, lengthSpecs, []flagSpec{fl("pld-grid")}),
	"curve-epochs": cat([]flagSpec{req("sigma"), req("q"), def("delta", "1e-5"), def("from", "1"), def("to", "400"), intDef("points", "400")}, curveSpecs),
	"curve-sigma":  cat([]flagSpec{def("delta", "1e-5"), {name: "eps", kind: kString, def: "0.1:10"}, intDef("points", "40")}, lengthSpecs, curveSpecs),
}

// Flags returns the flag names cmd takes, in command-line order, or nil for
// an unknown command.
func Flags(cmd string) []string {
	var out []string
	for _, s := range specs[cmd] {
		out = append(out, s.name)
	}
	return out
}

// Request is one computation: a command and the raw value of each flag
// given, keyed by the CLI's flag name without dashes ("sigma", "pld-grid").
// A flag that is absent or empty takes the CLI's default.
type Request struct {
	Cmd   string
	Flags map[string]string
	// Event, when set, is the training of eps or delta given as an event
	// (the CLI's --events file) instead of the training flags.
	Event accounting.Event
}

// Parse reads a URL query string such as
// "cmd=eps&sigma=4&q=0.01&epochs=100&delta=1e-5&accountant=all". Empty
// values and keys the command does not take are dropped (the page keeps
// fields of other commands in its form, not in the computation); a
// missing cmd means eps.
func Parse(rawQuery string) (Request, error) {
	v, err := url.ParseQuery(strings.TrimPrefix(rawQuery, "?"))
	if err != nil {
		return Request{}, fmt.Errorf("invalid query string: %v", err)
	}
	r := Request{Cmd: v.Get("cmd"), Flags: map[string]string{}}
	if r.Cmd == "" {
		r.Cmd = "eps"
	}
	for _, s := range specs[r.Cmd] {
		if x := v.Get(s.name); x != "" {
			r.Flags[s.name] = x
		}
	}
	return r, nil
}

// Args returns the CLI arguments equivalent to r (without "dpcalc" and
// --json): the command words, then each given flag in the CLI's order.
func (r Request) Args() []string {
	args := strings.Split(r.Cmd, "-")
	if !strings.HasPrefix(r.Cmd, "curve-") {
		args = []string{r.Cmd}
	}
	for _, s := range specs[r.Cmd] {
		if x, ok := r.Flags[s.name]; ok && x != "" {
			args = append(args, "--"+s.name, x)
		}
	}
	return args
}

// CommandLine is Args as a shell command line starting with "dpcalc".
func (r Request) CommandLine() string {
	parts := []string{"dpcalc"}
	for _, a := range r.Args() {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.,:+=/@%", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Row is one accountant's answer: the CLI's JSON row, field for field.
//
// Sampling and Adjacency say how batches are drawn ("poisson", "fixed",
// "shuffle"; for an event, the samplings its steps use, e.g. "none+poisson")
// and the neighbouring relation. A plan of two or more phases lists them in
// Phases; Sigma and Q are then set only when every phase has the same
// value (else 0), Steps and Epochs are the totals. Unsupported is set,
// with ε null, when the accountant cannot bound this plan: it says why.
type Row struct {
	Accountant   string     `json:"accountant"`
	Sigma        float64    `json:"sigma"`
	Q            float64    `json:"q"`
	Steps        int        `json:"steps"`
	Epochs       float64    `json:"epochs"`
	Sampling     string     `json:"sampling"`
	Adjacency    string     `json:"adjacency"`
	Phases       []PhaseRow `json:"phases,omitempty"`
	Unsupported  string     `json:"unsupported,omitempty"`
	Epsilon      *float64   `json:"epsilon"`
	EpsilonLower *float64   `json:"epsilon_lower,omitempty"`
	EpsilonUpper *float64   `json:"epsilon_upper,omitempty"`
	// LowerBound marks a row whose epsilon_lower is a certified lower bound
	// on the true ε (shuffled batches), not a guarantee; its epsilon is null.
	LowerBound bool     `json:"lower_bound,omitempty"`
	Delta      float64  `json:"delta"`
	Lambda     *float64 `json:"lambda,omitempty"`
	Note       string   `json:"note,omitempty"`
	Procedure  bool     `json:"procedure,omitempty"`
	Error      string   `json:"error,omitempty"`
	Version    string   `json:"version"`

	event accounting.Event // what Fill composes; nil: SubsampledGaussian(Sigma, Q, Steps)
}

// Audit is `dpcalc audit --json`'s object.
type Audit struct {
	Sigma        float64           `json:"sigma"`
	Q            float64           `json:"q"`
	Steps        int               `json:"steps"`
	Epochs       float64           `json:"epochs"`
	Claimed      float64           `json:"claimed_epsilon"`
	Delta        float64           `json:"delta"`
	EpsilonLower *float64          `json:"epsilon_lower"`
	EpsilonUpper *float64          `json:"epsilon_upper"`
	Verdict      calibrate.Verdict `json:"verdict"`
	Accountants  []Row             `json:"accountants"`
	Version      string            `json:"version"`
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

// Curve is `dpcalc curve epochs|sigma --json`'s object.
type Curve struct {
	Curve   string        `json:"curve"`
	Sigma   float64       `json:"sigma,omitempty"`
	Q       float64       `json:"q"`
	Delta   float64       `json:"delta"`
	Steps   int           `json:"steps,omitempty"`
	Epochs  float64       `json:"epochs,omitempty"`
	Series  []CurveSeries `json:"series"`
	Version string        `json:"version"`
}

// Result is the answer to a Request. Exactly one of Error, Rows, Audit and
// Curve is set. Exit is the CLI's exit code for the same arguments: 0, 1
// (a row failed, or the audit's claim does not hold) or 2 (bad input).
type Result struct {
	Cmd     string `json:"cmd"`
	Command string `json:"command"`
	// Error is the CLI's one-line message for bad input; Flag names the
	// flag it is about ("" when it is about the command as a whole).
	Error string `json:"error,omitempty"`
	Flag  string `json:"flag,omitempty"`
	// All: the CLI prints Rows as an array (--accountant all, or more than
	// one row, as --sampling shuffle adds its Poisson reading), otherwise
	// as the single object Rows[0].
	All   bool   `json:"all,omitempty"`
	Rows  []Row  `json:"rows,omitempty"`
	Audit *Audit `json:"audit,omitempty"`
	Curve *Curve `json:"curve,omitempty"`
	Exit  int    `json:"exit"`
	// Event is the training the rows answer for (eps, delta; sigma: at the
	// first accountant's σ), for the CLI's --emit-events.
	Event accounting.Event `json:"-"`
}

// inputError is bad input about one flag.
type inputError struct {
	flag, msg string
}

func (e *inputError) Error() string { return e.msg }

func bad(flag, format string, args ...any) error {
	return &inputError{flag: flag, msg: fmt.Sprintf(format, args...)}
}

// paramErr turns a library ParamError into the CLI's message naming the
// flag (the CLI's flagErr when flag is "", checkFlag otherwise).
func paramErr(flag string, err error) error {
	if err == nil {
		return nil
	}
	var pe *accounting.ParamError
	if errors.As(err, &pe) {
		if flag == "" {
			flag = pe.Name
		}
		return bad(flag, "invalid --%s: %s, want %s", flag, pe.ValueText(), pe.Want)
	}
	return err
}

// Version is what `dpcalc --version` and the rows' "version" field say; see
// VersionFrom.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return VersionFrom(bi)
}

// VersionFrom is Version for the build info bi: the module version of a
// release, else "devel-" and the VCS revision (12 digits, "+dirty" when
// modified), else "devel".
func VersionFrom(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "+dirty"
	}
	return "devel-" + rev
}

// vals are the decoded flag values.
type vals struct {
	f   map[string]float64
	i   map[string]int
	s   map[string]string
	set map[string]bool
}

// decode mirrors kong's parse: values decoded in command-line order, then
// the epochs/steps exclusion, the enums and the required flags.
func decode(r Request) (vals, error) {
	v := vals{f: map[string]float64{}, i: map[string]int{}, s: map[string]string{}, set: map[string]bool{}}
	sp, ok := specs[r.Cmd]
	if !ok {
		return v, bad("cmd", "invalid cmd: %q, want one of %s", r.Cmd, strings.Join(Commands, ", "))
	}
	for _, s := range sp {
		raw, given := r.Flags[s.name]
		if given && raw == "" {
			given = false
		}
		v.set[s.name] = given
		if !given {
			raw = s.def
		}
		switch s.kind {
		case kFloat:
			if raw == "" {
				continue
			}
			x, err := ParseFloat(raw)
			if err != nil {
				return v, bad(s.name, "--%s: %v", s.name, err)
			}
			v.f[s.name] = x
		case kInt:
			if raw == "" {
				continue
			}
			x, err := strconv.ParseInt(raw, 0, 64)
			if err != nil || x != int64(int(x)) {
				return v, bad(s.name, "--%s: expected a valid 64 bit int but got %q", s.name, raw)
			}
			v.i[s.name] = int(x)
		case kCount:
			if raw == "" {
				continue
			}
			x, err := ParseCount(raw)
			if err != nil {
				return v, bad(s.name, "--%s: invalid value %q, want a whole number such as 20000 or 2e4", s.name, raw)
			}
			v.i[s.name] = x
		case kString:
			v.s[s.name] = raw
		}
	}
	if v.set["epochs"] && v.set["steps"] {
		return v, bad("steps", "--epochs and --steps can't be used together")
	}
	if v.set["schedule"] || r.Event != nil {
		for _, f := range []string{"sigma", "q", "batch", "epochs", "steps"} {
			if v.set[f] {
				if r.Event != nil {
					return v, bad(f, "--events replaces --sigma, --q, --batch, --epochs, --steps and --schedule: the file describes the training")
				}
				return v, bad(f, "--schedule replaces --%s: give sigma, q or batch, and steps or epochs in each phase", f)
			}
		}
		if r.Event != nil && v.set["schedule"] {
			return v, bad("schedule", "--events and --schedule can't be used together")
		}
	}
	if v.set["q"] && v.set["batch"] {
		return v, bad("batch", "--q and --batch can't be used together: q = batch/n")
	}
	for _, s := range sp {
		if s.enum == nil {
			continue
		}
		elems := []string{v.s[s.name]}
		if s.list {
			elems = strings.Split(v.s[s.name], ",")
		}
		for _, el := range elems {
			if !slices.Contains(s.enum, el) {
				q := make([]string, len(s.enum))
				for i, e := range s.enum {
					q[i] = strconv.Quote(e)
				}
				return v, bad(s.name, "--%s must be one of %s but got %q", s.name, strings.Join(q, ","), el)
			}
		}
	}
	// kong's missing-flag message: each flag as --name=NAME (the CLI's
	// placeholders), the epochs/steps group as one entry, sorted.
	var missing []string
	first := ""
	planned := v.set["schedule"] || r.Event != nil
	for _, s := range sp {
		switch {
		case planned && (s.name == "sigma" || s.name == "q" || s.name == "epochs"),
			s.name == "q" && v.set["batch"]:
			continue
		case s.required && !v.set[s.name]:
			missing = append(missing, "--"+s.name+"="+strings.ToUpper(s.name))
		case s.name == "epochs" && !v.set["epochs"] && !v.set["steps"]:
			missing = append(missing, "--epochs=EPOCHS or --steps=STEPS")
		default:
			continue
		}
		if first == "" {
			first = s.name
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return v, bad(first, "missing flags: %s", strings.Join(missing, ", "))
	}
	return v, nil
}

// Run computes r. It never panics on any input; ctx cancels the work (the
// Result then says "interrupted").
func Run(ctx context.Context, r Request) Result {
	res := Result{Cmd: r.Cmd, Command: r.CommandLine()}
	err := run(ctx, r, &res)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		res.Rows, res.Audit, res.Curve, res.All = nil, nil, nil, false
		res.Error = strings.ReplaceAll(err.Error(), "\n", " ")
		var ie *inputError
		switch {
		case errors.As(err, &ie):
			res.Flag, res.Exit = ie.flag, 2
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			res.Error, res.Exit = "interrupted: "+ctx.Err().Error(), 130
		default:
			res.Exit = 1
		}
		return res
	}
	answered := 0
	for _, row := range res.Rows {
		if row.Error != "" {
			res.Exit = 1
		}
		if row.Unsupported == "" {
			answered++
		}
	}
	if len(res.Rows) > 0 && answered == 0 {
		res.Exit = 1 // no accountant bounds this training
	}
	if res.Audit != nil && res.Audit.Verdict != calibrate.Holds {
		res.Exit = 1
	}
	if res.Curve != nil {
		for _, s := range res.Curve.Series {
			if s.Error != "" {
				res.Exit = 1
			}
		}
	}
	return res
}

func run(ctx context.Context, r Request, res *Result) error {
	v, err := decode(r)
	if err != nil {
		return err
	}
	switch r.Cmd {
	case "sigma":
		if r.Event != nil {
			return bad("events", "dpcalc sigma takes no --events: σ is the unknown of a --schedule or of --sigma-free flags")
		}
		return runSigma(ctx, v, res)
	case "eps":
		return privacyAt(ctx, v, r.Event, res, paramErr("delta", accounting.CheckDelta(v.f["delta"])), v.f["delta"], 0)
	case "delta":
		return privacyAt(ctx, v, r.Event, res, paramErr("eps", accounting.CheckEpsilon(v.f["eps"])), 0, v.f["eps"])
	case "epochs":
		if r.Event != nil {
			return bad("events", "dpcalc epochs takes no --events: the length is the unknown of a --schedule or of the flags")
		}
		return runEpochs(ctx, v, res)
	case "audit":
		return runAudit(ctx, v, res)
	case "curve-epochs":
		return runCurveEpochs(ctx, v, res)
	case "curve-sigma":
		return runCurveSigma(ctx, v, res)
	}
	return bad("cmd", "invalid cmd: %q", r.Cmd)
}

// steps is the CLI's lengthFlags.steps.
func (v vals) steps() (int, error) {
	q, epochs, steps := v.f["q"], v.f["epochs"], v.i["steps"]
	if err := paramErr("", accounting.CheckSamplingRate(q)); err != nil {
		return 0, err
	}
	switch {
	case v.set["steps"]:
		if steps < 1 {
			return 0, bad("steps", "invalid --steps: %d, want an integer >= 1", steps)
		}
		return steps, nil
	case v.set["epochs"]:
		t, err := calibrate.StepsForEpochs(epochs, q)
		return t, paramErr("", err)
	}
	return 0, bad("epochs", "missing --epochs or --steps: give the training length")
}

// ParseFloat parses a float flag as the CLI does: a plain decimal number
// (0.5, 2e-3, 1e400 is out of range), or inf or nan in any spelling
// strconv reads, which the flag's own check then names. Underscores and
// hex floats, which strconv.ParseFloat also reads ("1_0" as 10, "0x1p-3"
// as 0.125), are refused.
func ParseFloat(s string) (float64, error) {
	x, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("expected a float but got %q (string)", s)
	case !plainNumber(s) && accounting.Finite(x):
		return 0, fmt.Errorf("expected a plain decimal number such as 0.5 or 2e-3 but got %q (no underscores or hex)", s)
	}
	return x, nil
}

// ParseCount parses a whole number written as 1000000 or 1e6 (the CLI's
// --steps).
func ParseCount(s string) (int, error) {
	if !plainNumber(s) {
		return 0, fmt.Errorf("value %q, want a whole number such as 20000 or 2e4", s)
	}
	if n, err := strconv.ParseInt(s, 10, 0); err == nil {
		return int(n), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("value %q, want a whole number such as 20000 or 2e4", s)
	}
	return int(f), nil
}

// Accountants are the accountant flags shared by the CLI's commands and the
// page: --accountant, --pld-grid and --ac-sampling.
type Accountants struct {
	Name       string // an accounting.Kind or "all"
	PLDGrid    float64
	ACSampling string // "log", "linear" or ""
	Adjacency  accounting.Adjacency
}

func (v vals) accountants() Accountants {
	adj, _ := accounting.ParseAdjacency(v.s["adjacency"]) // "" (audit, curves) and decode's enum: add-remove
	return Accountants{Name: v.s["accountant"], PLDGrid: v.f["pld-grid"], ACSampling: v.s["ac-sampling"], Adjacency: adj}
}

// Check validates --pld-grid.
func (a Accountants) Check() error {
	if a.PLDGrid != 0 && (!(a.PLDGrid > 0) || a.PLDGrid > 1 || math.IsInf(a.PLDGrid, 0)) {
		return bad("pld-grid", "invalid --pld-grid: %s, want in (0, 1]", accounting.FormatValue(a.PLDGrid))
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
		return nil, bad("accountant", "invalid --accountant: %q, want one of ma, rdp, zcdp, ac, dpd-ac, dpd-zcdp, pld, all", a.Name)
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

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func runSigma(ctx context.Context, v vals, res *Result) error {
	p, err := v.plan("sigma")
	if err != nil {
		return err
	}
	eps, delta, tol := v.f["eps"], v.f["delta"], v.f["tol"]
	a := v.accountants()
	if err := firstErr(paramErr("eps", accounting.CheckEpsilon(eps)), paramErr("delta", accounting.CheckDelta(delta))); err != nil {
		return err
	}
	if !(tol > 0 && tol < 0.1) {
		return bad("tol", "invalid --tol: %s, want in (0, 0.1)", accounting.FormatValue(tol))
	}
	if err := a.Check(); err != nil {
		return err
	}
	kinds, err := a.Kinds()
	if err != nil {
		return err
	}
	for _, k := range kinds {
		s, err := calibrate.SigmaFor(ctx, a.Factory(k), p.Event, eps, delta, calibrate.Options{RelTol: tol})
		if err != nil {
			r := a.NewPlanRow(k, p, 0)
			r.setError(err)
			res.Rows = append(res.Rows, r)
			continue
		}
		r := a.NewPlanRow(k, p, s.X)
		r.Fill(ctx, a.Factory(k), delta, 0)
		res.Rows = append(res.Rows, r)
		if res.Event == nil {
			res.Event = p.Event(s.X) // the first accountant's answer
		}
	}
	res.All = a.Name == "all"
	return nil
}

// privacyAt is the CLI's privacyAt: ε at delta when delta > 0, else δ at eps.
func privacyAt(ctx context.Context, v vals, ev accounting.Event, res *Result, extra error, delta, eps float64) error {
	var p Plan
	var err error
	if ev == nil {
		if p, err = v.plan(""); err != nil {
			return err
		}
	}
	a := v.accountants()
	if err := firstErr(extra, a.Check()); err != nil {
		return err
	}
	kinds, err := a.Kinds()
	if err != nil {
		return err
	}
	for _, k := range kinds {
		var r Row
		if ev != nil {
			r = a.NewEventRow(k, ev)
		} else {
			r = a.NewPlanRow(k, p, 0)
		}
		r.Fill(ctx, a.Factory(k), delta, eps)
		res.Rows = append(res.Rows, r)
	}
	if pp, ok := p.PoissonReading(); ok && ev == nil {
		// Beside the certified rows, the number the usual practice
		// reports, labelled as not proven for shuffling.
		pa := a
		pa.Name, pa.Adjacency = string(accounting.KindPLD), accounting.AddRemove
		r := pa.NewPlanRow(accounting.KindPLD, pp, 0)
		r.Note, r.Procedure = JoinNotes(poissonReadingNote, r.Note), true
		r.Fill(ctx, pa.Factory(accounting.KindPLD), delta, eps)
		res.Rows = append(res.Rows, r)
		if delta > 0 {
			// And how far below the certified bound the truth can be.
			lr := a.NewPlanRow(accounting.KindPLD, p, 0)
			lr.Note, lr.LowerBound, lr.Delta = shuffleLowerNote, true, delta
			lb, ok, err := pld.ShuffledLowerEpsilonOf(ctx, p.Event(0), delta)
			switch {
			case err != nil:
				lr.Error = err.Error()
			case ok:
				lr.EpsilonLower = FinitePtr(lb)
			}
			if ok || err != nil {
				res.Rows = append(res.Rows, lr)
			}
		}
	}
	if ev != nil && delta > 0 {
		// Shuffled epochs in an events file: the same lower bound.
		// (An event that does not normalise is reported by the rows above.)
		if lb, ok, err := pld.ShuffledLowerEpsilonOf(ctx, ev, delta); err == nil && ok {
			lr := a.NewEventRow(accounting.KindPLD, ev)
			lr.Note, lr.LowerBound, lr.Delta = shuffleLowerNote, true, delta
			lr.EpsilonLower = FinitePtr(lb)
			res.Rows = append(res.Rows, lr)
		}
	}
	res.All = a.Name == "all" || len(res.Rows) > 1
	res.Event = ev
	if ev == nil {
		res.Event = p.Event(0)
	}
	return nil
}

func runEpochs(ctx context.Context, v vals, res *Result) error {
	eps, delta, limit := v.f["eps"], v.f["delta"], v.i["max-steps"]
	a := v.accountants()
	p, err := v.plan("length")
	if err != nil {
		return err
	}
	if err := firstErr(
		paramErr("eps", accounting.CheckEpsilon(eps)),
		paramErr("delta", accounting.CheckDelta(delta)),
		a.Check(),
	); err != nil {
		return err
	}
	if limit < 1 {
		return bad("max-steps", "invalid --max-steps: %d, want >= 1", limit)
	}
	kinds, err := a.Kinds()
	if err != nil {
		return err
	}
	u := p.unknownPhase()
	per := p.stepsPerRep(u)
	for _, k := range kinds {
		ok := func(n int) (bool, error) {
			e, err := calibrate.Epsilon(ctx, a.Factory(k), p.Event(float64(n)), delta)
			return e <= eps, err
		}
		n, _, err := calibrate.LargestInt(ok, max(limit/per, 1))
		r := a.NewPlanRow(k, p, float64(n))
		switch {
		case err != nil:
			r.setError(err)
		case n == 0:
			r.Note = "not even one step fits the budget"
			r.Delta = delta
		default:
			r.Fill(ctx, a.Factory(k), delta, 0)
			if n == max(limit/per, 1) {
				r.Note = "search limit reached: more steps may fit (raise --max-steps)"
			}
		}
		res.Rows = append(res.Rows, r)
	}
	res.All = a.Name == "all"
	return nil
}

func runAudit(ctx context.Context, v vals, res *Result) error {
	steps, err := v.steps()
	if err != nil {
		return err
	}
	sigma, q, eps, delta := v.f["sigma"], v.f["q"], v.f["eps"], v.f["delta"]
	a := Accountants{PLDGrid: v.f["pld-grid"]}
	if err := firstErr(
		paramErr("sigma", accounting.CheckNoiseMultiplier(sigma)),
		paramErr("eps", accounting.CheckEpsilon(eps)),
		paramErr("delta", accounting.CheckDelta(delta)),
		a.Check(),
	); err != nil {
		return err
	}
	ar, err := calibrate.Audit(ctx, accounting.SubsampledGaussian(sigma, q, steps), calibrate.Epsilons{Epsilon: eps, Delta: delta}, a.PLDGrid)
	if err != nil {
		return err
	}
	out := &Audit{
		Sigma: sigma, Q: q, Steps: steps, Epochs: float64(steps) * q,
		Claimed: eps, Delta: delta, EpsilonLower: FinitePtr(ar.Lower), EpsilonUpper: FinitePtr(ar.Upper),
		Verdict: ar.Verdict, Version: Version(),
	}
	for _, k := range registry.Kinds() {
		r := a.NewRow(k, q, steps)
		r.Sigma = sigma
		r.Fill(ctx, a.Factory(k), delta, 0)
		out.Accountants = append(out.Accountants, r)
	}
	res.Audit = out
	return nil
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

// setError records err: in Unsupported (with ε null) when the accountant
// cannot bound the training, else in Error.
func (r *Row) setError(err error) {
	if errors.Is(err, accounting.ErrUnsupportedEvent) {
		msg := err.Error()
		var ue *accounting.UnsupportedEventError
		if errors.As(err, &ue) {
			msg = ue.Reason
			if ue.Path != "" {
				msg += " (at " + ue.Path + ")"
			}
		}
		msg = strings.TrimPrefix(msg, "registry: ")
		r.Unsupported = strings.TrimPrefix(msg, r.Accountant+": ")
		r.Epsilon, r.EpsilonLower, r.EpsilonUpper, r.Lambda = nil, nil, nil, nil
		return
	}
	r.Error = err.Error()
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
	if delta > 0 {
		r.Delta = delta
		var e float64
		switch a := acc.(type) {
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
				r.Lambda = ptr(l)
			}
		default:
			e, err = acc.Epsilon(ctx, delta)
		}
		if err != nil {
			r.Error = err.Error()
			return
		}
		r.Epsilon = FinitePtr(e)
		if r.Epsilon == nil {
			r.Note = JoinNotes(r.Note, "no finite ε bound at this δ")
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
