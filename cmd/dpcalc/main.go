// Command dpcalc answers the question every team training a model with
// differential privacy asks: how much noise, for how long, at what privacy
// cost. Every command is a thin shell over the accounting and calibrate
// packages; run `dpcalc help` for the list.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"
	"github.com/dpcalc/dpcalc/internal/query"
)

// versionString reports the version the Go toolchain stamped into the
// binary (runtime/debug.BuildInfo): the module version for `go install
// …@vX`, the VCS pseudo-version (v0.0.0-<time>-<rev>[+dirty]) for a build
// from a git checkout, the bare VCS revision when only that was stamped,
// and "devel" when nothing was (go run, go test, -buildvcs=false).
func versionString() string { return query.Version() }

// Globals are the flags every command takes.
type Globals struct {
	JSON    bool             `name:"json" help:"Print one JSON object (an array for --accountant all) instead of a table."`
	Version kong.VersionFlag `name:"version" help:"Print the version and exit."`
}

// CLI is the command tree.
type CLI struct {
	Globals

	Sigma    SigmaCmd    `cmd:"" help:"Noise multiplier σ that meets a budget (ε, δ) for q and epochs/steps."`
	Eps      EpsCmd      `cmd:"" help:"Privacy loss ε at δ for a given σ, q and epochs/steps."`
	Delta    DeltaCmd    `cmd:"" help:"δ at a given ε for a given σ, q and epochs/steps."`
	Epochs   EpochsCmd   `cmd:"" help:"How long can I train: the most steps (and epochs) a budget allows at σ."`
	Gaussian GaussianCmd `cmd:"" help:"σ of one Gaussian release: exact analytic calibration (Balle–Wang 2018) next to the classic bound."`
	Audit    AuditCmd    `cmd:"" help:"Does a published (σ, q, epochs) deliver its claimed (ε, δ)? Certified interval and verdict."`
	AuditRun AuditRunCmd `cmd:"" name:"audit-run" help:"What did a training run leak? Lower bounds on ε from canary scores (one-run audit), beside the certified interval."`
	Profile  ProfileCmd  `cmd:"" help:"Privacy profile of a run: ε at several δ, δ(ε), and what a membership-inference attacker can do at most."`
	Curve    CurveCmd    `cmd:"" help:"Curves: ε against epochs, σ against ε; table, CSV, JSON or a plot."`
	Train    TrainCmd    `cmd:"" help:"Train an MLP with DP-SGD, DP dropout, DP variational dropout, SGLD or no privacy."`
	Data     DataCmd     `cmd:"" help:"Fetch and verify the training data sets."`
	Moments  MomentsCmd  `cmd:"" help:"Log moments log E1, log E2 and α(λ) of the subsampled Gaussian (Abadi et al. eqs. 3-4)."`
	Repro    ReproCmd    `cmd:"" name:"reproduce" help:"Reproduce the papers' tables and figures (Abadi, DPD, DPVD) with our numbers beside theirs."`
	Serve    ServeCmd    `cmd:"" help:"Serve the web calculator (built by scripts/build-web.sh) on a local address."`
	Help     HelpCmd     `cmd:"" help:"Show help for a command: dpcalc help curve sigma."`
	Version  VersionCmd  `cmd:"" help:"Print the version (as --version does)."`
}

// VersionCmd prints what --version prints: "dpcalc " and [versionString].
type VersionCmd struct{}

// Run implements the command; with --json it prints {"version": …}.
func (VersionCmd) Run(e *env) error {
	if e.json {
		return writeJSON(e.stdout, map[string]string{"version": versionString()})
	}
	_, err := fmt.Fprintf(e.stdout, "dpcalc %s\n", versionString())
	return err
}

// HelpCmd prints the usage of the command it names (kong's documented
// help-command pattern: kong.Trace finds the node without running it).
type HelpCmd struct {
	Command []string `arg:"" optional:"" help:"The command, e.g. sigma or curve epochs."`
}

// Run implements the command.
// It parses "CMD --help", so it prints exactly what CMD --help prints
// (also for a command with a default subcommand, such as reproduce).
func (h *HelpCmd) Run(k *kong.Context) error {
	if _, err := k.Kong.Parse(append(append([]string(nil), h.Command...), "--help")); err != nil {
		return usageError("help: %v", err)
	}
	return nil
}

// exitError carries an exit code with a message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks bad input: exit code 2.
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// env is what a command needs to print.
type env struct {
	// ctx is cancelled on SIGINT or SIGTERM; every computation takes it.
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	// stderr is where notes and warnings go (the error line is the
	// caller's).
	stderr io.Writer
	json   bool
}

// stdin is what --events - reads (tests replace it).
var stdin io.Reader = os.Stdin

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is runContext without cancellation.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext parses args, runs the command and returns the exit code: 0
// success, 1 a computation that could not be completed (or a negative
// verdict), 2 bad input, 130 stopped by ctx (SIGINT or SIGTERM). Errors go
// to stderr as one line; with --json an {"error": …} object also goes to
// stdout.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
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
	out := &countingWriter{w: stdout}
	stdout = out
	var cli CLI
	fail := func(code int, err error) int {
		msg := strings.TrimPrefix(err.Error(), "dpcalc: ")
		msg = strings.ReplaceAll(msg, "\n", " ")
		fmt.Fprintf(stderr, "dpcalc: %s\n", msg)
		if (wantJSON || cli.JSON) && out.n == 0 {
			writeJSON(stdout, map[string]string{"error": msg})
		}
		return code
	}
	exited := -1
	parser, err := kong.New(&cli,
		kong.Name("dpcalc"),
		kong.Description("Differential privacy calculator: noise, training length and privacy cost."),
		kong.Vars{"version": "dpcalc " + versionString(), "datadir": defaultDirRule},
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { exited = c; panic(exitSentinel{}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.ValueFormatter(helpWithDefault),
		kong.PostBuild(namePlaceholders),
		kong.Help(helpPrinter),
		kong.WithHyphenPrefixedParameters(true), // --sigma -1 reaches our validator
		kong.KindMapper(reflect.Float64, kong.MapperFunc(plainFloat)),
	)
	if err != nil {
		return fail(1, err)
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(exitSentinel); ok {
				code = exited
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
		return fail(2, err)
	}
	if err := checkRepeated(kctx); err != nil {
		return fail(2, err)
	}
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, json: cli.JSON}
	if err := kctx.Run(e); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return fail(130, fmt.Errorf("interrupted: %w", err))
		}
		var ee *exitError
		if errors.As(err, &ee) {
			return fail(ee.code, ee.err)
		}
		return fail(1, err)
	}
	return 0
}

type exitSentinel struct{}

// plainFloat decodes float flags with query.ParseFloat: kong's decoder
// (strconv.ParseFloat) also reads "1_0" as 10 and "0x1p-3" as 0.125.
func plainFloat(ctx *kong.DecodeContext, target reflect.Value) error {
	t, err := ctx.Scan.PopValue("float")
	if err != nil {
		return err
	}
	v, ok := t.Value.(string)
	if !ok {
		v = fmt.Sprint(t.Value)
	}
	x, err := query.ParseFloat(v)
	if err != nil {
		return err
	}
	target.SetFloat(x)
	return nil
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
			return usageError("--%s given more than once; give it once", f.Name)
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

// writeJSON prints v indented, without HTML escaping (so ">" stays ">").
// Non-finite floats, which encoding/json refuses, are printed as null (see
// finiteTree) rather than losing the whole result to an error.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	var uv *json.UnsupportedValueError
	if errors.As(err, &uv) {
		buf.Reset()
		err = enc.Encode(finiteTree(reflect.ValueOf(v)))
	}
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
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
	return kong.Visit(k.Model, func(n kong.Visitable, next kong.Next) error {
		if f, ok := n.(*kong.Flag); ok && !f.IsBool() && !f.IsCounter() && f.PlaceHolder == "" {
			switch {
			case f.Enum != "" && !f.IsSlice():
				var choices []string
				for _, e := range f.EnumSlice() {
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
	// training (internal/query checks it); kong sees only optional flags.
	const phase = "(--q=Q | --batch=BATCH --n=N) (--epochs=EPOCHS | --steps=STEPS)"
	for cmd, usage := range map[string]string{
		"eps":    "(--sigma=SIGMA " + phase + " | --schedule=PHASES | --events=FILE)",
		"delta":  "--eps=EPS (--sigma=SIGMA " + phase + " | --schedule=PHASES | --events=FILE)",
		"sigma":  "--eps=EPS (" + phase + " | --schedule=PHASES)",
		"epochs": "--eps=EPS (--sigma=SIGMA (--q=Q | --batch=BATCH --n=N) | --schedule=PHASES)",
	} {
		s = strings.Replace(s, "Usage: dpcalc "+cmd+" [flags]", "Usage: dpcalc "+cmd+" "+usage+" [flags]", 1)
	}
	_, err = io.WriteString(w, s)
	return err
}
