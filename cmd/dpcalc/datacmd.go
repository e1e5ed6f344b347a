package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpcalc/dpcalc/internal/cli"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// defaultDirRule says where the data sets live unless a flag says otherwise
// (data.DefaultDir).
const defaultDirRule = cli.DataDirRule

// runDataFetch downloads a data set (dpcalc data fetch).
func runDataFetch(e *cli.Env, c *cli.DataFetchCmd) error {
	dir := c.Dir
	if dir == "" {
		dir = data.DefaultDir(c.Name)
	}
	for _, m := range c.Mirror {
		if !strings.HasPrefix(m, "https://") {
			return usageError("invalid --mirror: %q, want an https:// URL", m)
		}
	}
	if c.Retries < 0 {
		return usageError("invalid --retries: %d, want >= 0", c.Retries)
	}
	ctx := e.Ctx
	opt := data.FetchOptions{Mirrors: c.Mirror, Retries: c.Retries}
	if c.Retries == 0 {
		opt.Retries = -1 // FetchOptions: 0 means the default, negative none
	}
	if !e.JSON {
		last := ""
		opt.Progress = func(file string, done, total int64) {
			if file != last {
				fmt.Fprintf(os.Stderr, "dpcalc: fetching %s\n", file)
				last = file
			}
		}
	}
	if err := data.Fetch(ctx, c.Name, dir, opt); err != nil {
		return err
	}
	if e.JSON {
		out := &dataOutput{name: c.Name, dir: dir}
		if train, test, err := data.Load(c.Name, dir); err == nil {
			out.train = &splitInfo{train.N, train.D, train.Classes}
			out.test = &splitInfo{test.N, test.D, test.Classes}
		}
		e.Print(out)
		return nil
	}
	fmt.Fprintf(e.Stdout, "%s: verified in %s\n", c.Name, dir)
	if c.Dir != "" && filepath.Clean(c.Dir) != filepath.Clean(data.DefaultDir(c.Name)) {
		fmt.Fprintf(e.Stdout, "%s is not the default directory: pass --dir %s to data verify, --data-dir %s to train and reproduce, or set %s=%s\n",
			dir, dir, dir, data.DataDirEnv, filepath.Dir(filepath.Clean(dir)))
	}
	return nil
}

// runDataVerify loads a data set and reports its shape (dpcalc data verify).
func runDataVerify(e *cli.Env, c *cli.DataVerifyCmd) error {
	dir := c.Dir
	if dir == "" {
		dir = data.DefaultDir(c.Name)
	}
	train, test, err := data.Load(c.Name, dir)
	if err != nil {
		if c.Dir == "" && c.Name != "digits" {
			err = fmt.Errorf("%w; that is the default directory (%s), give --dir DIR for a copy fetched elsewhere", err, defaultDirRule)
		}
		return exitErr(cli.ExitUsage, err)
	}
	if e.JSON {
		e.Print(&dataOutput{name: c.Name, dir: dir, train: &splitInfo{train.N, train.D, train.Classes}, test: &splitInfo{test.N, test.D, test.Classes}})
		return nil
	}
	fmt.Fprintf(e.Stdout, "%s: verified: %d train, %d test, %d features, %d classes\n", c.Name, train.N, test.N, train.D, train.Classes)
	return nil
}
