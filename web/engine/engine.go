// Package engine is the web calculator's engine: it runs a command line
// the page assembles (["eps", "--sigma", "4", …]) through the command
// line's own parser and commands (internal/cli), and returns what the
// command line prints: the --json output byte for byte, and the result's
// lines and table cells as Go formatted them (internal/render). The page
// formats no number. web/wasm exposes it to JavaScript; its tests run it
// natively.
package engine

import (
	"bytes"
	"context"
	"io"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/internal/render"
)

// Answer is one command line run for the page.
type Answer struct {
	Args []string `json:"args"`
	// Command is Args as a shell command line starting with "dpcalc".
	Command string `json:"command"`
	// Exit is the command line's exit code.
	Exit int `json:"exit"`
	// Error is the one-line error of a command that printed nothing else
	// (bad input: Exit 2), and Flag the flag it is about ("" if none).
	Error string `json:"error,omitempty"`
	Flag  string `json:"flag,omitempty"`
	// Failure is the one-line error of a command that printed its result
	// and failed (Exit 1: a row that failed, a claim that does not hold).
	Failure string `json:"failure,omitempty"`
	// JSON is what `dpcalc ARGS --json` prints on stdout.
	JSON string `json:"json"`
	// Doc is the result's lines and tables, as the table view prints them.
	Doc render.Doc `json:"doc,omitempty"`
	// Curves are the curves the page draws around this answer.
	Curves []CurveRequest `json:"curves,omitempty"`
	// SVG is a curve's plot (dpcalc curve), "" when it has no point to
	// draw; Failed says which accountants' curves failed.
	SVG    string `json:"svg,omitempty"`
	Failed string `json:"failed,omitempty"`
}

// CurveRequest is a curve to ask for: a command line, and the point of the
// answer to circle on it.
type CurveRequest struct {
	Args    []string    `json:"args"`
	Command string      `json:"command"`
	Mark    *[2]float64 `json:"mark,omitempty"`
}

// Run runs the command line args as `dpcalc ARGS --json` does, and
// returns the answer; mark is circled on a curve's plot.
func Run(ctx context.Context, args []string, mark *[2]float64) Answer {
	a := Answer{Args: args, Command: CommandLine(args)}
	var stdout, stderr bytes.Buffer
	o := cli.Execute(ctx, append(append([]string(nil), args...), "--json"), cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}, cli.Hooks{})
	a.Exit, a.JSON = o.Code, stdout.String()
	msg := strings.TrimSuffix(strings.TrimPrefix(stderr.String(), "dpcalc: "), "\n")
	if o.Err != nil {
		if o.Result == nil {
			a.Error, a.Flag = msg, o.Flag
		} else {
			a.Failure = msg
		}
	}
	if o.Result == nil {
		return a
	}
	a.Doc = o.Result.View()
	switch r := o.Result.(type) {
	case *cli.Curve:
		a.SVG = render.SVG(r.Chart, mark)
		var failed []string
		for _, s := range r.Series {
			if s.Error != "" {
				failed = append(failed, s.Accountant+": "+s.Error)
			}
		}
		a.Failed = strings.Join(failed, "; ")
	default:
		a.Curves = curves(o.Command, o.Result)
	}
	return a
}

// CommandLine is args as a shell command line starting with "dpcalc".
func CommandLine(args []string) string {
	parts := []string{"dpcalc"}
	for _, a := range args {
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

// Model describes the commands for the page: their flags (in command-line
// order) with help, default and choices, and the accountants, all read
// from the command tree and the registry.
type Model struct {
	Version     string             `json:"version"`
	Commands    map[string]Command `json:"commands"`
	Accountants []Accountant       `json:"accountants"`
}

// Command is one command of the tree ("eps", "curve epochs").
type Command struct {
	Help  string `json:"help"`
	Flags []Flag `json:"flags"`
}

// Flag is one flag of a command.
type Flag struct {
	Name        string   `json:"name"`
	Help        string   `json:"help"`
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Enum        []string `json:"enum,omitempty"`
}

// Accountant is one entry of the registry.
type Accountant struct {
	Name  string `json:"name"`
	Title string `json:"title"`
}

// Describe returns the model of the command tree.
func Describe() (Model, error) {
	var c cli.CLI
	k, err := cli.New(&c, io.Discard, io.Discard, func(int) {})
	if err != nil {
		return Model{}, err
	}
	m := Model{Version: cli.Version(), Commands: map[string]Command{}}
	err = kong.Visit(k.Model, func(n kong.Visitable, next kong.Next) error {
		node, ok := n.(*kong.Node)
		if !ok || node.Type != kong.CommandNode {
			return next(nil)
		}
		var path []string
		for p := node; p != nil && p.Type == kong.CommandNode; p = p.Parent {
			path = append([]string{p.Name}, path...)
		}
		cmd := Command{Help: node.Help}
		for _, f := range node.Flags {
			fl := Flag{Name: f.Name, Help: f.Help, Default: f.Default, Placeholder: f.PlaceHolder}
			if f.Enum != "" {
				fl.Enum = f.EnumSlice()
			}
			cmd.Flags = append(cmd.Flags, fl)
		}
		m.Commands[strings.Join(path, " ")] = cmd
		return next(nil)
	})
	for _, k := range registry.Kinds() {
		m.Accountants = append(m.Accountants, Accountant{Name: string(k), Title: registry.Title(k)})
	}
	return m, err
}

// round3 is x to three significant digits, as an argument (curve ranges
// need no more).
func round3(x float64) string { return render.ArgDigits(x, 3) }
