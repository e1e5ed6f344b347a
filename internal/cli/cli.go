package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/alecthomas/kong"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/internal/render"
)

// Globals are the flags every command takes.
type Globals struct {
	JSON    bool             `name:"json" help:"Print one JSON object (docs/cli.md's schema: command, inputs, rows, version) instead of a table."`
	Version kong.VersionFlag `name:"version" help:"Print the version and exit."`
}

// CLI is the command tree.
type CLI struct {
	Globals

	Sigma     SigmaCmd     `cmd:"" help:"Noise multiplier σ that meets a budget (ε, δ) for q and epochs/steps."`
	Eps       EpsCmd       `cmd:"" help:"Privacy loss ε at δ for a given σ, q and epochs/steps."`
	Delta     DeltaCmd     `cmd:"" help:"δ at a given ε for a given σ, q and epochs/steps."`
	Epochs    EpochsCmd    `cmd:"" help:"How long can I train: the most steps (and epochs) a budget allows at σ."`
	Gaussian  GaussianCmd  `cmd:"" help:"σ of one Gaussian release: exact analytic calibration (Balle–Wang 2018) next to the classic bound."`
	Audit     AuditCmd     `cmd:"" help:"Does a published (σ, q, epochs) deliver its claimed (ε, δ)? Certified interval and verdict."`
	AuditRun  AuditRunCmd  `cmd:"" name:"audit-run" help:"What did a training run leak? Lower bounds on ε from canary scores (one-run audit), beside the certified interval."`
	Profile   ProfileCmd   `cmd:"" help:"Privacy profile of a run: ε at several δ, δ(ε), and what a membership-inference attacker can do at most."`
	Statement StatementCmd `cmd:"" help:"Privacy statement of a run: what it covers, ε at δ with its certified interval, and its Gaussian DP parameter."`
	Curve     CurveCmd     `cmd:"" help:"Curves: ε against epochs, σ against ε; table, CSV, JSON or a plot."`
	Train     TrainCmd     `cmd:"" help:"Train an MLP with DP-SGD, DP dropout, DP variational dropout, SGLD or no privacy."`
	Data      DataCmd      `cmd:"" help:"Fetch and verify the training data sets."`
	Moments   MomentsCmd   `cmd:"" help:"Log moments log E1, log E2 and α(λ) of the subsampled Gaussian (Abadi et al. eqs. 3-4)."`
	Repro     ReproCmd     `cmd:"" name:"reproduce" help:"Reproduce the papers' tables and figures (Abadi, DPD, DPVD) with our numbers beside theirs."`
	Serve     ServeCmd     `cmd:"" help:"Serve the web calculator (built by scripts/build-web.sh) on a local address."`
	Help      HelpCmd      `cmd:"" help:"Show help for a command: dpcalc help curve sigma."`
	Version   VersionCmd   `cmd:"" help:"Print the version (as --version does)."`
}

// IO are the streams a command line runs with.
type IO struct {
	Stdin io.Reader
	// Stdout gets the result; Stderr notes, warnings and the one-line
	// error.
	Stdout, Stderr io.Writer
}

// Hooks are what only the command line provides. The web page's engine
// has none: its commands read no files and draw no plots to files.
type Hooks struct {
	// Local runs the commands that need files, the network or a long run
	// (train, data, reproduce, serve); cmd is the command's struct.
	Local func(e *Env, cmd any) error
	// Plots checks and writes --plot files.
	Plots Plotter
}

// Plotter draws charts to files.
type Plotter interface {
	// Check returns an error if path cannot name a plot (its extension).
	Check(path string) error
	// Save draws c to path.
	Save(path string, c render.Chart) error
}

// Env is what a command runs with.
type Env struct {
	// Ctx is cancelled on SIGINT or SIGTERM; every computation takes it.
	Ctx context.Context
	IO
	// JSON is --json (or profile's --format json).
	JSON bool

	hooks Hooks
	out   Result // what the command prints, rendered after it returns
}

// Print makes r the command's output: [Execute] renders it (as a table,
// CSV or JSON) after the command returns.
func (e *Env) Print(r Result) { e.out = r }

func (e *Env) local(cmd any) error {
	if e.hooks.Local == nil {
		return Usagef("this command runs only on the command line")
	}
	return e.hooks.Local(e, cmd)
}

func (e *Env) checkPlot(path string) error {
	if path == "" {
		return nil
	}
	if e.hooks.Plots == nil {
		return usageAt("plot", "--plot writes a file: use the command line")
	}
	if err := e.hooks.Plots.Check(path); err != nil {
		return usageAt("plot", "invalid --plot: %q, want a file name ending in .png or .svg", path)
	}
	return nil
}

func (e *Env) savePlot(path string, c render.Chart) error {
	if e.hooks.Plots == nil {
		return e.checkPlot(path)
	}
	return e.hooks.Plots.Save(path, c)
}

// Result is what a command computes. Its --json form is an [Output]
// (every Result is an [Outputter]).
type Result interface {
	// View is the result as the table view shows it.
	View() render.Doc
}

// failer is a Result that can be negative: Fail returns the exit-1 error
// (a failed row, a claim that does not hold), after the result is printed.
type failer interface{ Fail() error }

// csver is a Result that prints CSV when asked (CSV's second value).
type csver interface{ CSV() ([][]string, bool) }

// renderText prints r as the command line does without --json: CSV if r
// was asked for CSV, else its table view.
func renderText(w io.Writer, r Result) error {
	if c, ok := r.(csver); ok {
		if records, asked := c.CSV(); asked {
			return render.CSV(w, records)
		}
	}
	return render.Text(w, r.View())
}

// errMessage is err as the one-line error prints it (after "dpcalc: ").
func errMessage(ctx context.Context, err error) string {
	msg := err.Error()
	if Code(ctx, err) == ExitInterrupted {
		msg = "interrupted: " + msg
	}
	msg = strings.TrimPrefix(msg, "dpcalc: ")
	return strings.ReplaceAll(msg, "\n", " ")
}

// Vars are the values kong interpolates into the command tree's tags: the
// version, and every accountant name, list and default, read from the
// registry (a method added there appears in every enum and help text).
func Vars() kong.Vars {
	var accountants, procedures []string
	for _, k := range registry.Kinds() {
		if registry.Procedural(k, registry.Options{}) {
			procedures = append(procedures, string(k))
		} else if k != accounting.KindPLD {
			accountants = append(accountants, string(k))
		}
	}
	return kong.Vars{
		"version":              "dpcalc " + Version(),
		"datadir":              DataDirRule,
		"accountants":          strings.Join(registry.Names(), ","),
		"accountant_list":      strings.Join(registry.Names(), ", "),
		"default_accountant":   string(registry.Default),
		"certified_accountant": string(accounting.KindPLD),
		"other_accountants":    strings.Join(accountants, ", "),
		"procedures":           strings.Join(procedures, ", "),
		"curve_accountants":    strings.Join([]string{string(accounting.KindMA), string(accounting.KindAC), string(accounting.KindPLD)}, ","),
	}
}

// orderKinds are the accountants that report the order of their bound
// ("ma and rdp") and those that do not ("zcdp, ac, pld, …"), in display
// order.
func orderKinds() (ordered, orderless string) {
	var o, n []string
	for _, k := range registry.Kinds() {
		m, err := registry.New(k, registry.Options{})
		if _, ok := m.(accounting.OrderReporter); ok && err == nil {
			o = append(o, string(k))
		} else {
			n = append(n, string(k))
		}
	}
	if len(o) > 1 {
		o = append(o[:len(o)-2], o[len(o)-2]+" and "+o[len(o)-1])
	}
	return strings.Join(o, ", "), strings.Join(n, ", ")
}

// New builds the parser of the command tree into cli, writing help to
// stdout; exit is called where kong would exit (after --help or
// --version).
func New(cli *CLI, stdout, stderr io.Writer, exit func(int)) (*kong.Kong, error) {
	return kong.New(cli,
		kong.Name("dpcalc"),
		kong.Description("Differential privacy calculator: noise, training length and privacy cost."),
		Vars(),
		kong.Writers(stdout, stderr),
		kong.Exit(exit),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.ValueFormatter(helpWithDefault),
		kong.PostBuild(namePlaceholders),
		kong.Help(helpPrinter),
		kong.WithHyphenPrefixedParameters(true), // --sigma -1 reaches our validator
		kong.KindMapper(reflect.Float64, kong.MapperFunc(plainFloat)),
	)
}

// Outcome is a command line parsed and run.
type Outcome struct {
	// Code is the exit code ([Code]).
	Code int
	// Command is the command's struct (*EpsCmd, …); nil when the command
	// line did not parse.
	Command any
	// Result is what the command printed through [Env.Print]; nil if
	// nothing.
	Result Result
	// Err is the error reported on stderr (nil on success), and Flag the
	// flag it is about ([FlagOf]).
	Err  error
	Flag string
}

type exitSentinel struct{}

// parser is a built command tree and its parser. Building one interpolates
// every help text (milliseconds; tens in the browser), so Execute takes
// one from a pool and makes it as new: the command tree's values zero,
// and kong's record of what the last command line set and walked (the
// Set and Active marks of the model) cleared.
type parser struct {
	k   *kong.Kong
	cli *CLI
}

var parsers sync.Pool

// freshParsers makes getParser build every parser (tests compare).
var freshParsers = false

func getParser() (*parser, error) {
	if p, ok := parsers.Get().(*parser); ok && !freshParsers {
		*p.cli = CLI{}
		kong.Visit(p.k.Model, func(n kong.Visitable, next kong.Next) error {
			switch v := n.(type) {
			case *kong.Application:
				v.Active = false
			case *kong.Node:
				v.Active = false
			case *kong.Value:
				v.Set, v.Active = false, false
			}
			return next(nil)
		})
		return p, nil
	}
	p := &parser{cli: &CLI{}}
	k, err := New(p.cli, os.Stdout, os.Stderr, os.Exit)
	if err != nil {
		return nil, err
	}
	p.k = k
	return p, nil
}

// Execute parses args, runs the command, prints its result to
// streams.Stdout and its error as one line on streams.Stderr ("dpcalc:
// …"; with --json an {"error": …} object also goes to stdout when nothing
// else did), and returns the outcome: exit code 0 success, 1 a
// computation that could not be completed (or a negative verdict), 2 bad
// input, 130 stopped by ctx (SIGINT or SIGTERM). It is safe for concurrent
// use.
func Execute(ctx context.Context, args []string, streams IO, hooks Hooks) (o Outcome) {
	wantJSON := false
	for i, a := range args {
		// --format json (profile) asks for JSON as --json does, errors too.
		if a == "--json" || a == "--json=true" || a == "--format=json" || (a == "--format" && i+1 < len(args) && args[i+1] == "json") {
			wantJSON = true
		}
		if a == "--" {
			break
		}
	}
	// out records whether the command printed anything: a command that
	// already printed its JSON result (whose rows carry their own "error")
	// must not get a second JSON value appended, or stdout stops being one
	// JSON document.
	out := &countingWriter{w: streams.Stdout}
	streams.Stdout = out
	p, err := getParser()
	if err != nil {
		fmt.Fprintf(streams.Stderr, "dpcalc: %s\n", err)
		return Outcome{Code: ExitFailed, Err: err}
	}
	defer func() {
		p.k.Stdout, p.k.Stderr = io.Discard, io.Discard // keep no caller's buffer alive
		parsers.Put(p)
	}()
	cli := p.cli
	e := &Env{Ctx: ctx, IO: streams, hooks: hooks}
	fail := func(err error) Outcome {
		o.Code, o.Err, o.Flag = Code(ctx, err), err, FlagOf(err)
		msg := errMessage(ctx, err)
		fmt.Fprintf(streams.Stderr, "dpcalc: %s\n", msg)
		if (wantJSON || cli.JSON || e.JSON) && out.n == 0 {
			render.JSON(out, errorOutput(msg))
		}
		return o
	}
	exited := -1
	parser := p.k
	parser.Stdout, parser.Stderr = out, streams.Stderr
	parser.Exit = func(c int) { exited = c; panic(exitSentinel{}) }
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(exitSentinel); ok {
				o.Code = exited
				return
			}
			panic(r)
		}
	}()
	if len(args) == 0 {
		args = []string{"--help"} // dpcalc alone prints its usage
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		return fail(Exit(ExitUsage, err))
	}
	if err := checkRepeated(kctx); err != nil {
		return fail(err)
	}
	if n := kctx.Selected(); n != nil && n.Target.CanAddr() {
		// A copy: the parser and its command tree go back to the pool.
		c := reflect.New(n.Target.Type())
		c.Elem().Set(n.Target)
		o.Command = c.Interface()
	}
	e.JSON = cli.JSON
	command, inputs := commandOf(kctx), inputsOf(kctx)
	err = kctx.Run(e)
	if e.out != nil {
		o.Result = e.out
		if f, ok := e.out.(failer); ok && err == nil {
			err = f.Fail()
		}
		var rerr error
		if e.JSON {
			res := NewOutput(command, inputs, e.out)
			if err != nil {
				res.Error = errMessage(ctx, err)
			}
			rerr = render.JSON(out, res)
		} else {
			rerr = renderText(out, e.out)
		}
		if rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fail(err)
	}
	return o
}

// checkRepeated refuses a flag given twice (kong keeps the last value
// silently). Slice flags such as --mirror accumulate and may repeat.
func checkRepeated(ctx *kong.Context) error {
	seen := map[*kong.Flag]bool{}
	for _, p := range ctx.Path {
		f := p.Flag
		if f == nil || f.IsSlice() || f.IsCounter() {
			continue
		}
		if seen[f] {
			return usageAt(f.Name, "--%s given more than once; give it once", f.Name)
		}
		seen[f] = true
	}
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// helpWithDefault is the kong help formatter: the flag's help followed by
// its default, so the default is shown once (the placeholder names the
// value; see namePlaceholders).
func helpWithDefault(v *kong.Value) string {
	h := kong.DefaultHelpValueFormatter(v)
	if !v.HasDefault || v.Default == "" || strings.Contains(h, "default") {
		return h
	}
	return strings.TrimSuffix(h, ".") + " (default: " + v.Default + ")."
}

// namePlaceholders gives every value flag without a placeholder tag a
// placeholder: the choices of an enum (--ac-sampling=log|linear), else the
// flag's name in capitals (--eps=EPS) instead of kong's type name
// (FLOAT-64) or its default.
func namePlaceholders(k *kong.Kong) error {
	// kong interpolates ${vars} after this hook runs: expand them first.
	var oldnew []string
	for name, v := range Vars() {
		oldnew = append(oldnew, "${"+name+"}", v)
	}
	expand := strings.NewReplacer(oldnew...)
	return kong.Visit(k.Model, func(n kong.Visitable, next kong.Next) error {
		if f, ok := n.(*kong.Flag); ok && !f.IsBool() && !f.IsCounter() && f.PlaceHolder == "" {
			switch {
			case f.Enum != "" && !f.IsSlice():
				var choices []string
				for _, e := range strings.Split(expand.Replace(f.Enum), ",") {
					if e != "" { // an empty choice means "the default"
						choices = append(choices, e)
					}
				}
				f.PlaceHolder = strings.Join(choices, "|")
			default:
				f.PlaceHolder = strings.ToUpper(f.Name)
			}
		}
		return next(nil)
	})
}

// helpPrinter is kong's help with one change: the usage line shows the
// required choice of a length as (--epochs=EPOCHS | --steps=STEPS); kong
// lists both members of a required xor group as if both were needed.
func helpPrinter(o kong.HelpOptions, ctx *kong.Context) error {
	var b bytes.Buffer
	w := ctx.Stdout
	ctx.Stdout = &b
	err := kong.DefaultHelpPrinter(o, ctx)
	ctx.Stdout = w
	if err != nil {
		return err
	}
	s := strings.Replace(b.String(), "--epochs=EPOCHS --steps=STEPS", "(--epochs=EPOCHS | --steps=STEPS)", 1)
	// eps, delta, sigma and epochs require one of several ways to give the
	// training ([given.check] checks it); kong sees only optional flags.
	const phase = "(--q=Q | --batch=BATCH --n=N) (--epochs=EPOCHS | --steps=STEPS)"
	for cmd, usage := range map[string]string{
		"eps":       "(--sigma=SIGMA " + phase + " | --schedule=PHASES | --events=FILE | --ledger=FILE)",
		"delta":     "--eps=EPS (--sigma=SIGMA " + phase + " | --schedule=PHASES | --events=FILE | --ledger=FILE)",
		"sigma":     "--eps=EPS (" + phase + " | --schedule=PHASES)",
		"epochs":    "--eps=EPS (--sigma=SIGMA (--q=Q | --batch=BATCH --n=N) | --schedule=PHASES)",
		"statement": "(--sigma=SIGMA " + phase + " | --schedule=PHASES | --events=FILE | --ledger=FILE)",
	} {
		s = strings.Replace(s, "Usage: dpcalc "+cmd+" [flags]", "Usage: dpcalc "+cmd+" "+usage+" [flags]", 1)
	}
	_, err = io.WriteString(w, s)
	return err
}
