package gemm_test

import (
	"fmt"

	"github.com/dpcalc/dpcalc/trainer/gemm"
)

// A weight gradient Xᵀ·G: X holds a batch of 2 inputs with 3 features, G
// the batch's 2 output gradients of width 2.
func ExampleSgemm() {
	x := []float32{
		1, 2, 3,
		4, 5, 6,
	}
	g := []float32{
		1, 0,
		0, 1,
	}
	w := make([]float32, 3*2) // 3×2 result, overwritten (beta = 0)
	gemm.Sgemm(true, false, 3, 2, 2, 1, x, 3, g, 2, 0, w, 2)
	for i := 0; i < 3; i++ {
		fmt.Println(w[2*i : 2*i+2])
	}
	// Output:
	// [1 4]
	// [2 5]
	// [3 6]
}
