//go:build !unix

package pld

// pldCPUSeconds is unavailable here: the cpu-s/op metric reads 0.
func pldCPUSeconds() float64 { return 0 }
