//go:build !unix

package pld

// cpuSeconds is unavailable here: the cpu-s/op metric reads 0.
func cpuSeconds() float64 { return 0 }
