package sysmem

import (
	"runtime"
	"strings"
	"testing"
)

// TestCheckFloor: with the machine's memory momentarily exhausted by other
// processes, a small need is not refused (its answer must not depend on
// what else runs); a large one is, naming what needs it and what to reduce.
func TestCheckFloor(t *testing.T) {
	old := Available
	defer func() { Available = old }()
	Available = func() (uint64, bool) { return 100 << 10, true } // 100 KiB
	if err := Check(1<<20, "pld: a composition on 1875 grid points", "the number of steps"); err != nil {
		t.Errorf("1 MiB refused at 100 KiB available: %v", err)
	}
	if err := Check(Floor, "x", "y"); err != nil {
		t.Errorf("the floor refused: %v", err)
	}
	err := Check(2*Floor, "pld: a composition", "the number of steps")
	if err == nil || !strings.Contains(err.Error(), "pld: a composition needs about 512 MiB of memory and 0 MiB is available: reduce the number of steps") {
		t.Errorf("512 MiB at 100 KiB: %v", err)
	}
	Available = func() (uint64, bool) { return 0, false }
	if err := Check(1e18, "x", "y"); err != nil {
		t.Errorf("unknown availability refused: %v", err)
	}
}

// TestRoomForTwo: two parts run at once only with four times what the
// process has taken still available, and where that is not known only
// while it has taken at most 512 MiB (a test binary takes far less).
func TestRoomForTwo(t *testing.T) {
	old := Available
	defer func() { Available = old }()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, c := range []struct {
		avail uint64
		ok    bool
		want  bool
	}{
		{100 << 10, true, false},
		{2 * ms.Sys, true, false},
		{1 << 50, true, true},
		{0, false, true},
	} {
		Available = func() (uint64, bool) { return c.avail, c.ok }
		if got := RoomForTwo(); got != c.want {
			t.Errorf("available %d (known %v), %d taken: %v, want %v", c.avail, c.ok, ms.Sys, got, c.want)
		}
	}
}
