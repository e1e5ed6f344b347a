package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpcalc/dpcalc/trainer/data"
)

// defaultDirRule says where the data sets live unless a flag says otherwise
// (data.DefaultDir).
const defaultDirRule = "$DPCALC_DATA_DIR/NAME if set, else the user cache directory's dpcalc/NAME, e.g. ~/.cache/dpcalc/mnist"

// DataCmd groups the data-set commands.
type DataCmd struct {
	Fetch  DataFetchCmd  `cmd:"" help:"Download a data set from public mirrors, verify its SHA-256 and write it atomically."`
	Verify DataVerifyCmd `cmd:"" help:"Load a data set and check its checksums, shapes and labels."`
}

// DataFetchCmd downloads a data set.
type DataFetchCmd struct {
	Name    string   `arg:"" enum:"mnist,fashion-mnist" help:"mnist or fashion-mnist."`
	Dir     string   `name:"dir" placeholder:"DIR" help:"Destination directory (default: ${datadir})."`
	Mirror  []string `name:"mirror" placeholder:"URL" help:"Base https URL to fetch from, tried in order (default: the usual public mirrors)."`
	Retries int      `name:"retries" default:"3" help:"Retries per mirror for transient failures; 0 tries each mirror once."`
}

// Run implements the command.
func (c *DataFetchCmd) Run(e *env) error {
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
	ctx := e.ctx
	opt := data.FetchOptions{Mirrors: c.Mirror, Retries: c.Retries}
	if c.Retries == 0 {
		opt.Retries = -1 // FetchOptions: 0 means the default, negative none
	}
	if !e.json {
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
	if e.json {
		return writeJSON(e.stdout, map[string]string{"dataset": c.Name, "dir": dir, "status": "verified"})
	}
	fmt.Fprintf(e.stdout, "%s: verified in %s\n", c.Name, dir)
	if c.Dir != "" && filepath.Clean(c.Dir) != filepath.Clean(data.DefaultDir(c.Name)) {
		fmt.Fprintf(e.stdout, "%s is not the default directory: pass --dir %s to data verify, --data-dir %s to train and reproduce, or set %s=%s\n",
			dir, dir, dir, data.DataDirEnv, filepath.Dir(filepath.Clean(dir)))
	}
	return nil
}

// DataVerifyCmd loads a data set and reports its shape.
type DataVerifyCmd struct {
	Name string `arg:"" enum:"digits,mnist,fashion-mnist" help:"digits, mnist or fashion-mnist."`
	Dir  string `name:"dir" placeholder:"DIR" help:"Directory with the files (default: ${datadir})."`
}

// Run implements the command.
func (c *DataVerifyCmd) Run(e *env) error {
	dir := c.Dir
	if dir == "" {
		dir = data.DefaultDir(c.Name)
	}
	train, test, err := data.Load(c.Name, dir)
	if err != nil {
		if c.Dir == "" && c.Name != "digits" {
			err = fmt.Errorf("%w; that is the default directory (%s), give --dir DIR for a copy fetched elsewhere", err, defaultDirRule)
		}
		return &exitError{code: 2, err: err}
	}
	if e.json {
		return writeJSON(e.stdout, map[string]any{"dataset": c.Name, "train": train.N, "test": test.N, "features": train.D, "classes": train.Classes, "status": "verified"})
	}
	fmt.Fprintf(e.stdout, "%s: verified: %d train, %d test, %d features, %d classes\n", c.Name, train.N, test.N, train.D, train.Classes)
	return nil
}
