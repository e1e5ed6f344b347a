package main

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/internal/atomicfile"
	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/reproduce"
)

// parseShard parses "i/n".
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(a)
		if err == nil {
			n, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || n < 1 || n > 1<<20 || i < 1 || i > n {
		return 0, 0, usageError("invalid --shard: %q, want I/N with 1 <= I <= N, e.g. 1/4", s)
	}
	return i, n, nil
}

// runRepro is `dpcalc reproduce [--plan] [--shard i/n]`: it regenerates
// the papers' tables and figures with our numbers beside theirs.
func runRepro(e *cli.Env, c *cli.ReproRunCmd) error {
	opt, err := reproOptions(&c.ReproFlags)
	if err != nil {
		return err
	}
	opt.PlanOnly = c.Plan
	if c.Shard != "" {
		if opt.Shard, opt.Shards, err = parseShard(c.Shard); err != nil {
			return err
		}
	}
	return runReproduce(e, &c.ReproFlags, opt, c.Plan)
}

// runReproMerge is `dpcalc reproduce merge SHARD_DIR...`: it builds the
// tables from the caches of shards.
func runReproMerge(e *cli.Env, c *cli.ReproMergeCmd) error {
	opt, err := reproOptions(&c.ReproFlags)
	if err != nil {
		return err
	}
	for _, d := range c.Shards {
		if fi, err := os.Stat(filepath.Join(d, "cache")); err != nil || !fi.IsDir() {
			return usageError("invalid shard directory %q: it has no cache/ (give the --out of a reproduce --shard run)", d)
		}
	}
	opt.MergeFrom = c.Shards
	return runReproduce(e, &c.ReproFlags, opt, false)
}

func reproOptions(c *cli.ReproFlags) (reproduce.Options, error) {
	if err := (cli.Accountants{PLDGrid: c.PLDGrid}).Check(); err != nil {
		return reproduce.Options{}, err
	}
	if c.Seed == 0 {
		return reproduce.Options{}, usageError("invalid --seed: 0, want >= 1")
	}
	if c.Out == "" {
		return reproduce.Options{}, usageError("invalid --out: empty, want a directory")
	}
	if c.Jobs < 0 || c.Jobs > 256 {
		return reproduce.Options{}, usageError("invalid --jobs: %d, want 1..256", c.Jobs)
	}
	jobs := c.Jobs
	if jobs == 0 {
		jobs = runtime.NumCPU()
	}
	opt := reproduce.Options{
		Profile: reproduce.Profile(c.Profile), OutDir: c.Out, DataDir: c.DataDir, Seed: c.Seed,
		Accounting: registry.Options{PLDGridWidth: c.PLDGrid}, Datasets: c.Datasets, Workers: jobs,
	}
	if c.Paper != "all" {
		p, err := reproduce.ParsePaper(c.Paper)
		if err != nil {
			return opt, usageError("invalid --paper: %q, want abadi, dpd, dpvd or all", c.Paper)
		}
		opt.Papers = []reproduce.Paper{p}
	}
	return opt, nil
}

func runReproduce(e *cli.Env, c *cli.ReproFlags, opt reproduce.Options, plan bool) error {
	stderr := e.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	if !c.Quiet {
		opt.OnPlan = func(p reproduce.Plan) {
			shard := ""
			if p.Shard != "" {
				shard = " shard " + p.Shard + ":"
			}
			fmt.Fprintf(stderr, "dpcalc: reproduce: profile %s:%s %d training runs (%d cached); training expected to take %s, after the accounting tables\n",
				p.Profile, shard, p.Runs, p.Cached, p.Estimate.Round(time.Second))
			for _, n := range p.Notes {
				fmt.Fprintf(stderr, "dpcalc: reproduce: %s\n", n)
			}
			for _, m := range p.Missing {
				fmt.Fprintf(stderr, "dpcalc: reproduce: missing: %s\n", m)
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
				fmt.Fprintf(stderr, "dpcalc: reproduce: [%s] run %d/%d: %s (training: about %s left)\n",
					p.Elapsed.Round(time.Second), p.Run, p.Total, p.Item, p.Remaining.Round(time.Second))
			default:
				fmt.Fprintf(stderr, "dpcalc: reproduce: [%s] %s %s\n", p.Elapsed.Round(time.Second), p.Stage, p.Item)
			}
		}
	}
	ctx := e.Ctx
	rep, err := reproduce.Run(ctx, opt)
	if err != nil {
		var ie *reproduce.InputError
		if errors.As(err, &ie) {
			return exitErr(cli.ExitUsage, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; finished cells are cached in %s and the next run resumes: %w", c.Out, err)
		}
		return err
	}
	if e.JSON {
		e.Print(&reproOutput{report: rep})
		return nil
	}
	if plan {
		p := rep.Plan
		fmt.Fprintf(e.Stdout, "profile %s: %d training runs (%d DIGITS, %d MNIST), %d cached\n", p.Profile, p.Runs, p.DatasetRuns["digits"], p.DatasetRuns["mnist"], p.Cached)
		fmt.Fprintf(e.Stdout, "training expected to take %s with %d runs at once, after the accounting tables\n", p.Estimate.Round(time.Second), opt.Workers)
		for _, ds := range slices.Sorted(maps.Keys(p.StepSeconds)) {
			fmt.Fprintf(e.Stdout, "measured %s: %.3g s per (example × forward MAC), %d runs at once\n", ds, p.StepSeconds[ds], min(opt.Workers, runtime.NumCPU()))
		}
		for _, m := range p.Missing {
			fmt.Fprintf(e.Stdout, "missing: %s\n", m)
		}
		return nil
	}
	if opt.Shards > 0 {
		fmt.Fprintf(e.Stdout, "shard %s: %d training runs (%d were cached) in %s; build the tables with: dpcalc reproduce merge --profile %s --out DIR SHARD_DIR...\n",
			rep.Plan.Shard, rep.Plan.Runs, rep.Plan.Cached, rep.WallTime.Round(time.Second), opt.Profile)
		return nil
	}
	report := filepath.Join(c.Out, "README.md")
	if c.Markdown != "" {
		n, err := writeReport(report, c.Markdown, rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "Wrote the report to %s (%d figures beside it).\n", c.Markdown, n)
	}
	fmt.Fprintf(e.Stdout, "Wrote %d files to %s in %s; the report is %s.\n", len(rep.Files), c.Out, rep.WallTime.Round(time.Second), report)
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
