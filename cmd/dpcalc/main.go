// Command dpcalc answers the question every team training a model with
// differential privacy asks: how much noise, for how long, at what privacy
// cost. Its commands, flags and outputs are internal/cli's (the web page
// runs the same ones); this program adds what needs files, the network or
// a long run: train, data, reproduce, serve and --plot. Run `dpcalc help`
// for the list.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/internal/plotting"
	"github.com/dpcalc/dpcalc/internal/render"
)

// versionString is [cli.Version].
func versionString() string { return cli.Version() }

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

// runContext runs the command line args and returns its exit code
// (cli.Execute).
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Execute(ctx, args, cli.IO{Stdin: stdin, Stdout: stdout, Stderr: stderr}, hooks).Code
}

// hooks are what only the command line does.
var hooks = cli.Hooks{Local: local, Plots: plots{}}

// local runs the commands that need files, the network or a long run.
func local(e *cli.Env, cmd any) error {
	switch c := cmd.(type) {
	case *cli.TrainCmd:
		return (*trainCmd)(c).Run(e)
	case *cli.DataFetchCmd:
		return runDataFetch(e, c)
	case *cli.DataVerifyCmd:
		return runDataVerify(e, c)
	case *cli.ReproRunCmd:
		return runRepro(e, c)
	case *cli.ReproMergeCmd:
		return runReproMerge(e, c)
	case *cli.ServeCmd:
		return runServe(e, c)
	case *cli.AuditRunCmd:
		return runAuditRun(e, c)
	}
	return fmt.Errorf("dpcalc: no command-line implementation of %T", cmd)
}

// plots draws --plot files with internal/plotting.
type plots struct{}

// Check implements cli.Plotter: a plot is a .png or .svg file.
func (plots) Check(path string) error {
	_, err := plotting.Format(path)
	return err
}

// Save implements cli.Plotter with internal/plotting.
func (plots) Save(path string, c render.Chart) error {
	ch := &plotting.Chart{Title: c.Title, XLabel: c.XLabel, YLabel: c.YLabel, LogX: c.LogX, LogY: c.LogY, LegendBottomRight: c.LegendBottomRight}
	for _, s := range c.Series {
		ch.Series = append(ch.Series, plotting.Series{Name: s.Name, X: s.X, Y: s.Y})
	}
	return ch.Save(path)
}

// usageError marks bad input: exit code 2.
func usageError(format string, args ...any) error { return cli.Usagef(format, args...) }

// exitErr gives err the exit code code.
func exitErr(code int, err error) error { return cli.Exit(code, err) }
