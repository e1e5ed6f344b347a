package trainer_test

import (
	"context"
	"fmt"

	"github.com/dpcalc/dpcalc/trainer"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// A DP-SGD run on a toy data set: 200 examples, expected lot 20 (q = 0.1),
// 3 epochs = 30 steps. The ledger holds one run-length segment; replay it
// into any accountant for ε.
func ExampleTrain() {
	ds := &data.Dataset{Name: "toy", N: 200, D: 2, Classes: 2}
	for i := 0; i < ds.N; i++ {
		x := float32(i%10) / 10
		ds.X = append(ds.X, x, 1-x)
		ds.Y = append(ds.Y, uint8(i%10/5))
	}
	seed := uint64(7) // reproducible; never use a fixed seed for a real release
	cfg := trainer.Config{
		Method:          trainer.MethodDPSGD,
		Hidden:          []int{16},
		LotSize:         20,
		Epochs:          3,
		ClipNorm:        1,
		NoiseMultiplier: 1.1,
		Seed:            &seed,
	}
	res, err := trainer.Train(context.Background(), cfg, ds, nil, trainer.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("steps:", res.Steps)
	for _, s := range res.Ledger.Segments {
		fmt.Printf("%d × %+v\n", s.Count, s.Event)
	}
	// Output:
	// steps: 30
	// 30 × {SamplingRate:0.1 Event:{NoiseMultiplier:1.1}}
}
