package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/internal/atomicfile"
	"github.com/dpcalc/dpcalc/reproduce"
)

// ReproCmd regenerates the papers' tables and figures with our numbers
// beside theirs.
type ReproCmd struct {
	Paper    string  `name:"paper" default:"all" enum:"abadi,dpd,dpvd,all" help:"Paper: abadi, dpd, dpvd or all."`
	Profile  string  `name:"profile" default:"quick" enum:"tiny,quick,full" help:"tiny (DIGITS, 1 epoch: seconds), quick (every table, ≤ 15 min on 2 cores), full (papers' epochs, 10 runs)."`
	Out      string  `name:"out" default:"results" placeholder:"DIR" help:"Output directory for tables, figures and the cache of finished cells."`
	DataDir  string  `name:"data-dir" placeholder:"DIR" help:"MNIST directory, or a parent with mnist/ (default: $DPCALC_DATA_DIR/mnist)."`
	Seed     uint64  `name:"seed" default:"1" help:"Seed of the first run of every cell; run r uses seed+r."`
	PLDGrid  float64 `name:"pld-grid" placeholder:"WIDTH" help:"Discretisation width of the pld accountant (default: adaptive)."`
	Quiet    bool    `name:"quiet" help:"No plan or progress lines on stderr."`
	Plan     bool    `name:"plan" help:"Print the plan (runs, cached, expected wall time) and stop: no data set needed, nothing written."`
	Markdown string  `name:"markdown" placeholder:"FILE" help:"Also write the report to FILE (e.g. docs/reproduction.md), its figures into a directory named after FILE beside it."`

	stderr io.Writer
}

// Run implements the command.
func (c *ReproCmd) Run(e *env) error {
	stderr := c.stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	if err := (&accountantFlags{PLDGrid: c.PLDGrid}).check(); err != nil {
		return err
	}
	if c.Seed == 0 {
		return usageError("invalid --seed: 0, want >= 1")
	}
	if c.Out == "" {
		return usageError("invalid --out: empty, want a directory")
	}
	opt := reproduce.Options{
		Profile: reproduce.Profile(c.Profile), OutDir: c.Out, DataDir: c.DataDir, Seed: c.Seed,
		Accounting: registry.Options{PLDGridWidth: c.PLDGrid}, PlanOnly: c.Plan,
	}
	if c.Paper != "all" {
		p, err := reproduce.ParsePaper(c.Paper)
		if err != nil {
			return usageError("invalid --paper: %q, want abadi, dpd, dpvd or all", c.Paper)
		}
		opt.Papers = []reproduce.Paper{p}
	}
	if !c.Quiet {
		opt.OnPlan = func(p reproduce.Plan) {
			fmt.Fprintf(stderr, "dpcalc: reproduce: profile %s: %d training runs (%d cached); expected wall time %s\n",
				p.Profile, p.Runs, p.Cached, p.Estimate.Round(time.Second))
			for _, n := range p.Notes {
				fmt.Fprintf(stderr, "dpcalc: reproduce: %s\n", n)
			}
		}
		var last time.Duration
		opt.Progress = func(p reproduce.Progress) {
			if strings.Contains(p.Item, ": epoch ") {
				// Epoch lines of long runs, at most one every 30 s.
				if p.Elapsed-last < 30*time.Second {
					return
				}
			}
			last = p.Elapsed
			switch p.Stage {
			case "train":
				if p.Item == "done" {
					fmt.Fprintf(stderr, "dpcalc: reproduce: [%s] training done (%d runs, %d cached)\n", p.Elapsed.Round(time.Second), p.Total, p.Cached)
					return
				}
				fmt.Fprintf(stderr, "dpcalc: reproduce: [%s] run %d/%d: %s (about %s left)\n",
					p.Elapsed.Round(time.Second), p.Done+1, p.Total, p.Item, p.Remaining.Round(time.Second))
			default:
				fmt.Fprintf(stderr, "dpcalc: reproduce: [%s] %s %s\n", p.Elapsed.Round(time.Second), p.Stage, p.Item)
			}
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := reproduce.Run(ctx, opt)
	if err != nil {
		var ie *reproduce.InputError
		if errors.As(err, &ie) {
			return &exitError{code: 2, err: err}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; finished cells are cached in %s and the next run resumes: %w", c.Out, err)
		}
		return err
	}
	if e.json {
		return writeJSON(e.stdout, rep)
	}
	if c.Plan {
		p := rep.Plan
		fmt.Fprintf(e.stdout, "profile %s: %d training runs, %d cached, expected wall time %s\n", p.Profile, p.Runs, p.Cached, p.Estimate.Round(time.Second))
		for _, ds := range slices.Sorted(maps.Keys(p.StepSeconds)) {
			fmt.Fprintf(e.stdout, "measured %s: %.3g s per (example × forward MAC)\n", ds, p.StepSeconds[ds])
		}
		return nil
	}
	report := filepath.Join(c.Out, "README.md")
	if c.Markdown != "" {
		n, err := writeReport(report, c.Markdown, rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Wrote the report to %s (%d figures beside it).\n", c.Markdown, n)
	}
	fmt.Fprintf(e.stdout, "Wrote %d files to %s in %s; the report is %s.\n", len(rep.Files), c.Out, rep.WallTime.Round(time.Second), report)
	return nil
}

// writeReport copies the report at src to dst, with its figures copied into
// a directory beside dst named after it (docs/reproduction.md →
// docs/reproduction/) and the image links rewritten to point there. It
// returns the number of figures.
func writeReport(src, dst string, rep *reproduce.Report) (int, error) {
	md, err := os.ReadFile(src)
	if err != nil {
		return 0, err
	}
	stem := strings.TrimSuffix(filepath.Base(dst), filepath.Ext(dst))
	figDir := filepath.Join(filepath.Dir(dst), stem)
	n := 0
	for _, t := range rep.Tables {
		for _, f := range t.Figures {
			if n == 0 {
				if err := os.MkdirAll(figDir, 0o755); err != nil {
					return 0, err
				}
			}
			b, err := os.ReadFile(filepath.Join(filepath.Dir(src), f))
			if err != nil {
				return 0, err
			}
			if err := atomicfile.WriteFile(filepath.Join(figDir, f), b, 0o644); err != nil {
				return 0, err
			}
			link := path.Join(stem, f)
			md = bytes.ReplaceAll(md, []byte("]("+f+")"), []byte("]("+link+")"))
			md = bytes.ReplaceAll(md, []byte("!["+f+"]"), []byte("!["+link+"]"))
			n++
		}
	}
	return n, atomicfile.WriteFile(dst, md, 0o644)
}
