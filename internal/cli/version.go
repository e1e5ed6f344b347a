package cli

import (
	"runtime/debug"

	"github.com/alecthomas/kong"
)

// Version is what `dpcalc --version` and the results' "version" field say;
// see VersionFrom.
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

// VersionCmd prints what --version prints: "dpcalc " and [Version].
type VersionCmd struct{}

// VersionInfo is the answer of dpcalc version.
type VersionInfo struct {
	Version string `json:"version"`
}

// Run implements the command; with --json it prints the one object with
// no rows.
func (VersionCmd) Run(e *Env) error {
	e.Print(&VersionInfo{Version: Version()})
	return nil
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
		return Usagef("help: %v", err)
	}
	return nil
}
