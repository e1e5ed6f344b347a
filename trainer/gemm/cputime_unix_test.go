//go:build unix

package gemm

import (
	"syscall"
	"time"
)

// processCPUTime is the user+system CPU time this process has used so far.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
