//go:build !unix

package data

import "time"

// cpuTime is not measured on this platform; the CPU-time check passes.
func cpuTime() time.Duration { return 0 }
