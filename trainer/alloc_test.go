package trainer

import (
	"context"
	"errors"
	"math"
	mrand "math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestAllocateExactlyK: every example is in exactly k distinct steps of an
// epoch, the lots' sizes sum to N·k, and over 2,000 epochs each step holds
// an example with frequency k/t (within 5 standard errors) and each of the
// C(t, k) subsets is drawn about equally often.
func TestAllocateExactlyK(t *testing.T) {
	const n, k, steps, epochs = 30, 2, 5, 2000
	rng := mrand.New(mrand.NewPCG(1, 2))
	var a []int
	perStep := make([]int, steps)
	subsets := map[[2]int]int{}
	for range epochs {
		a = allocate(a, n, k, steps, rng)
		start, idx := allocationLots(a, n, k, steps)
		if start[steps] != n*k || len(idx) != n*k {
			t.Fatalf("lot sizes sum to %d, want N·k = %d", start[steps], n*k)
		}
		count := make([]int, n)
		for s := range steps {
			lot := idx[start[s]:start[s+1]]
			for j, i := range lot {
				if j > 0 && lot[j-1] >= i {
					t.Fatalf("step %d's lot %v is not in increasing example order", s, lot)
				}
				count[i]++
			}
			perStep[s] += len(lot)
		}
		for i, c := range count {
			if c != k {
				t.Fatalf("example %d is in %d lots of the epoch, want %d", i, c, k)
			}
			p := [2]int{min(a[i*k], a[i*k+1]), max(a[i*k], a[i*k+1])}
			if p[0] == p[1] {
				t.Fatalf("example %d drew step %d twice", i, p[0])
			}
			subsets[p]++
		}
	}
	trials := float64(n * epochs)
	for s, c := range perStep {
		p := float64(k) / steps
		if se := math.Sqrt(trials * p * (1 - p)); math.Abs(float64(c)-trials*p) > 5*se {
			t.Errorf("step %d drew %d examples over %d epochs, want %g ± %g", s, c, epochs, trials*p, 5*se)
		}
	}
	if len(subsets) != 10 {
		t.Fatalf("%d distinct 2-subsets of 5 steps drawn, want all 10", len(subsets))
	}
	for p, c := range subsets {
		if se := math.Sqrt(trials * 0.1 * 0.9); math.Abs(float64(c)-trials*0.1) > 5*se {
			t.Errorf("subset %v drawn %d times, want %g ± %g", p, c, trials*0.1, 5*se)
		}
	}
}

// TestRandomAllocationRun: a private run with random allocation (k = 2 of
// t = ⌈2·90/20⌉ = 9 steps) draws lots in which every example is in exactly
// 2 of each epoch's 9 steps, the ledger holds one RandomAllocation{2, 9}
// event per epoch paid at the epoch's first lot (a run stopped after 10
// steps has paid for 2 epochs), and RunEvent, which σ calibration
// accounts, is the full run's ledger.
func TestRandomAllocationRun(t *testing.T) {
	train := blobs(90, 5, 3, 0.1, 8)
	cfg := Config{Method: MethodDPSGD, Hidden: []int{6}, LotSize: 20, Epochs: 3, NoiseMultiplier: 1.5,
		Sampling: SamplingRandomAllocation, AllocationK: 2, Seed: u64(3)}
	epoch := accounting.RandomAllocation{NumSelected: 2, NumSteps: 9, Event: accounting.Gaussian{NoiseMultiplier: 1.5}}
	tr, err := New(cfg, train, Options{})
	if err != nil {
		t.Fatal(err)
	}
	counts := make([][]int, 3)
	sizes := make([]int, 3)
	tr.lotHook = func(step int, lot []int) {
		e := step / 9
		if counts[e] == nil {
			counts[e] = make([]int, 90)
		}
		for _, i := range lot {
			counts[e][i]++
		}
		sizes[e] += len(lot)
	}
	full, err := tr.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for e := range 3 {
		if sizes[e] != 180 {
			t.Errorf("epoch %d: lot sizes sum to %d, want N·k = 180", e, sizes[e])
		}
		for i, c := range counts[e] {
			if c != 2 {
				t.Errorf("epoch %d: example %d in %d lots, want 2", e, i, c)
				break
			}
		}
	}
	if full.Steps != 27 || len(full.Ledger.Segments) != 1 || full.Ledger.Segments[0] != (accounting.Segment{Event: epoch, Count: 3}) {
		t.Errorf("full run: %d steps, ledger %+v; want 27 steps, 3 × %+v", full.Steps, full.Ledger.Segments, epoch)
	}
	if full.SamplingRate != 2.0/9 {
		t.Errorf("sampling rate %g, want k/t = 2/9", full.SamplingRate)
	}
	dc := cfg.WithDefaults(90)
	if got, want := dc.RunEvent(90), (accounting.SelfComposed{Event: epoch, Count: 3}); got != want {
		t.Errorf("RunEvent = %+v, want %+v", got, want)
	}
	if dc.Adjacency() != accounting.AddRemove {
		t.Errorf("adjacency %v, want add-remove", dc.Adjacency())
	}
	tr, err = New(cfg, train, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr.stopAt = 10
	part, err := tr.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if part.Steps != 10 || part.Ledger.Len() != 2 {
		t.Errorf("stopped run: %d steps, ledger of %d epochs; want 10, 2", part.Steps, part.Ledger.Len())
	}
}

// TestResumeMidEpochAllocation: a seeded balls-in-bins run stopped in the
// middle of an epoch, checkpointed and resumed ends where the uninterrupted
// run does (the epoch's allocation is in the checkpoint), with the same
// ledger; a checkpoint whose allocation is damaged is refused as corrupt.
func TestResumeMidEpochAllocation(t *testing.T) {
	train := blobs(90, 5, 3, 0.1, 8)
	cfg := Config{Method: MethodDPSGD, Hidden: []int{6}, LotSize: 20, Epochs: 3, NoiseMultiplier: 1,
		Sampling: SamplingBallsInBins, Seed: u64(3)}
	full, err := Train(context.Background(), cfg, train, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(cfg, train, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr.stopAt = 7 // epochs of ⌈90/20⌉ = 5 steps: inside the second
	if _, err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mid.ckpt")
	if err := tr.SaveCheckpoint(path); err != nil {
		t.Fatal(err)
	}
	res, err := Resume(context.Background(), path, train, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := accounting.Segment{Event: accounting.RandomAllocation{NumSelected: 1, NumSteps: 5, Event: accounting.Gaussian{NoiseMultiplier: 1}}, Count: 3}
	if res.Steps != 15 || !reflect.DeepEqual(res.Model.Layers, full.Model.Layers) || !res.Ledger.Equal(full.Ledger) || full.Ledger.Segments[0] != want {
		t.Errorf("mid-epoch resume differs from the uninterrupted run (steps %d vs %d, ledger %+v)", res.Steps, full.Steps, full.Ledger.Segments)
	}

	c := cfg.WithDefaults(90)
	for _, tc := range []struct {
		name  string
		alloc []int
		step  int
	}{
		{"missing mid-epoch", nil, 7},
		{"short", make([]int, 89), 7},
		{"step out of range", append(make([]int, 89), 5), 7},
	} {
		if err := checkAllocation(tc.alloc, &c, 90, tc.step); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if err := checkAllocation(nil, &c, 90, 10); err != nil {
		t.Errorf("no allocation at an epoch boundary: %v", err)
	}
	k2 := c
	k2.Sampling, k2.AllocationK = SamplingRandomAllocation, 2
	if err := checkAllocation([]int{0, 0}, &k2, 1, 0); err == nil {
		t.Error("an example drawn twice into one step: accepted")
	}
}

// TestAllocationConfigErrors: k is checked against the sampling, and k·N is
// bounded.
func TestAllocationConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		s Sampling
		k int
	}{
		{SamplingRandomAllocation, -1},
		{SamplingRandomAllocation, maxAllocation/90 + 1},
		{SamplingBallsInBins, 2},
		{SamplingPoisson, 2},
		{SamplingShuffle, 1},
	} {
		c := Config{Method: MethodDPSGD, Hidden: []int{6}, LotSize: 20, Epochs: 1, NoiseMultiplier: 1, Sampling: tc.s, AllocationK: tc.k}
		c = c.WithDefaults(90)
		var fe *FieldError
		if err := c.Validate(90, 5); !errors.As(err, &fe) || fe.Field != "allocation_k" {
			t.Errorf("%s k=%d: %v, want an allocation_k error", tc.s, tc.k, err)
		}
	}
	c := Config{Method: MethodDPSGD, Hidden: []int{6}, LotSize: 20, Epochs: 1, NoiseMultiplier: 1, Sampling: SamplingRandomAllocation}
	if c = c.WithDefaults(90); c.AllocationK != 1 || c.Validate(90, 5) != nil || c.StepsPerEpoch(90) != 5 {
		t.Errorf("random allocation without k: k %d, %d steps an epoch, %v; want 1, 5, valid", c.AllocationK, c.StepsPerEpoch(90), c.Validate(90, 5))
	}
}
