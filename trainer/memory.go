package trainer

import (
	"fmt"

	"github.com/dpcalc/dpcalc/internal/sysmem"
)

// maxParams bounds the trainable parameters whatever the memory: offsets
// into one layer's weights must stay within what the matmul kernels index.
const maxParams = 1 << 31

// MemoryEstimate returns the bytes a run of c on d features and classes
// classes needs, within a small factor: the float32 parameters, gradient
// sum and the two copies SaveCheckpoint builds while encoding, plus one
// batch's activations and backpropagated gradients. c must be defaulted.
func (c *Config) MemoryEstimate(d, classes int) (params, bytes float64) {
	in := float64(d)
	if c.PCADim > 0 {
		params += in * float64(c.PCADim) // the projection, also checkpointed
		in = float64(c.PCADim)
	}
	widths := 0.0
	for _, h := range append(append([]int(nil), c.Hidden...), classes) {
		params += in*float64(h) + float64(h)
		widths += float64(h)
		in = float64(h)
	}
	b := float64(c.BatchSize)
	bytes = 4*params*4 + 4*b*(float64(d)+float64(c.PCADim)+3*widths) + 16*b*float64(len(c.Hidden)+1)
	return params, bytes
}

// checkMemory refuses a configuration that could not be allocated, before
// any data is touched: a runtime out-of-memory error would kill the process
// with no message naming the cause.
func checkMemory(c *Config, d, classes int) error {
	params, need := c.MemoryEstimate(d, classes)
	if params > maxParams {
		return &FieldError{"hidden", c.Hidden, fmt.Sprintf("layers with at most %d parameters in all (these have %.3g)", maxParams, params)}
	}
	avail, ok := sysmem.Available()
	if !ok || need <= float64(avail) || need <= sysmem.Floor {
		return nil
	}
	want := fmt.Sprintf("a network and batch that fit in the %.1f GiB of available memory (about %.1f GiB needed)", float64(avail)/(1<<30), need/(1<<30))
	_, model := (&Config{Hidden: c.Hidden, PCADim: c.PCADim, BatchSize: 0}).MemoryEstimate(d, classes)
	if model > need/2 {
		return &FieldError{"hidden", c.Hidden, want}
	}
	return &FieldError{"batch_size", c.BatchSize, want}
}
