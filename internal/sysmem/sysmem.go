// Package sysmem tells how much memory a computation can still get, so
// that one that would not fit is refused with a message naming what to
// reduce instead of being killed by the kernel with none.
package sysmem

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// Available returns MemAvailable from /proc/meminfo (Linux): the memory
// that can be allocated without swapping. ok is false where that is not
// known. Tests replace it.
var Available = func() (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && fs[0] == "MemAvailable:" {
			kb, err := strconv.ParseUint(fs[1], 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}

// Error is a computation that needs more memory than is available.
type Error struct {
	What        string  // what needs it: "pld: the composition of 1e9 steps"
	Need, Avail float64 // bytes
	Reduce      string  // what to reduce: "the number of steps, or use --accountant rdp"
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s needs about %s of memory and %s is available: reduce %s", e.What, GiB(e.Need), GiB(e.Avail), e.Reduce)
}

// GiB formats a byte count in GiB (MiB below 1 GiB).
func GiB(b float64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", b/(1<<30))
}

// Floor is the largest need that is never refused. MemAvailable is one
// moment's reading of a machine other processes share, and can read near
// zero while they peak; a need this small is no absurd size, and the
// kernel reclaims caches for it. Refusing it would make a command's
// answer depend on what else the machine was doing. Tests that simulate
// a full machine with [Available] set it to 0.
var Floor float64 = 256 << 20

// Check returns an *Error when need bytes exceed both [Floor] and the
// available memory (after returning this process's free heap to the
// system once), nil when they fit or the available memory is not known.
func Check(need float64, what, reduce string) error {
	if need <= Floor {
		return nil
	}
	avail, ok := Available()
	if !ok || need <= float64(avail) {
		return nil
	}
	// Garbage this process holds counts as used: collect it and look
	// again before refusing.
	runtime.GC()
	debug.FreeOSMemory()
	if avail, ok = Available(); !ok || need <= float64(avail) {
		return nil
	}
	return &Error{What: what, Need: need, Avail: float64(avail), Reduce: reduce}
}

// RoomForTwo reports whether a computation may run two of its parts at
// once: the memory available is at least four times what this process
// has taken from the system so far, or, where the available memory is
// not known, what it has taken is at most 512 MiB. (A part's own Check
// would not see what the other is about to take.)
func RoomForTwo() bool {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	avail, ok := Available()
	if !ok {
		return ms.Sys <= 512<<20
	}
	return float64(avail) >= 4*float64(ms.Sys)
}
