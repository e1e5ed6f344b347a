package main

import (
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/internal/sysmem"
)

// TestEventsMemoryRefusal: an --events file whose decoding would not fit
// in the available memory is refused before it is read, with exit 2 and
// one line naming what to reduce (with --json, {"error": ...}). Not
// parallel: it replaces sysmem.Available.
func TestEventsMemoryRefusal(t *testing.T) {
	old := sysmem.Available
	defer func() { sysmem.Available = old }()
	sysmem.Available = func() (uint64, bool) { return 4 << 10, true } // 4 KiB
	floor := sysmem.Floor
	sysmem.Floor = 0
	defer func() { sysmem.Floor = floor }()
	for _, json := range []bool{false, true} {
		args := []string{"eps", "--events", "../../testdata/dpevent/py/two_phase.json", "--accountant", "rdp"}
		if json {
			args = append(args, "--json")
		}
		out, errOut, code := runCLI(args...)
		msg := errOut
		if json {
			msg = out
		}
		if code != 2 || !strings.Contains(msg, "needs about") || !strings.Contains(msg, "number of events") || strings.Count(strings.TrimSpace(msg), "\n") > 0 && !json {
			t.Errorf("json %v: exit %d, stdout %q, stderr %q", json, code, out, errOut)
		}
		if json && !strings.Contains(out, `"error"`) {
			t.Errorf("--json: %q, want {\"error\": ...}", out)
		}
	}
}
