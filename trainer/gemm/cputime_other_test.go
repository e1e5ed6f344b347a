//go:build !unix

package gemm

import "time"

// processCPUTime is unavailable here; benchmarks then skip the per-CPU metric.
func processCPUTime() time.Duration { return 0 }
