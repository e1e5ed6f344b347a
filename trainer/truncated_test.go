package trainer

import (
	"context"
	"errors"
	"math"
	mrand "math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestTruncatedLotSizes: 20,000 truncated-Poisson lots of n = 40 at q =
// 0.25 capped at B = 12 (fixed seed) never exceed B, are sorted and
// distinct, and their sizes follow min(Binomial(40, 0.25), 12): Pearson's
// χ² over the sizes (the low tail pooled so every cell expects ≥ 5) stays
// below the χ² quantile of probability 1 − 1e-6. Keeping the first B
// instead of a uniform B gives the same sizes but fails
// TestTruncateLotUniform.
func TestTruncatedLotSizes(t *testing.T) {
	const n, q, b, lots = 40, 0.25, 12, 20000
	rng := mrand.New(mrand.NewPCG(5, 6))
	counts := make([]int, b+1)
	var lot []int
	for range lots {
		lot = truncateLot(poissonLot(lot, n, q, rng), b, rng)
		if len(lot) > b {
			t.Fatalf("lot of %d examples, cap %d", len(lot), b)
		}
		for j := 1; j < len(lot); j++ {
			if lot[j-1] >= lot[j] {
				t.Fatalf("lot %v is not increasing", lot)
			}
		}
		counts[len(lot)]++
	}
	// Expected: P(size = j) = Binom(40, q)(j) for j < B, P(size = B) = P(K ≥ B).
	bin := distuv.Binomial{N: n, P: q}
	want := make([]float64, b+1)
	for j := range b {
		want[j] = lots * bin.Prob(float64(j))
	}
	want[b] = lots * bin.Survival(float64(b-1))
	// Pool the low tail into the first cell with ≥ 5 expected.
	var obs, exp []float64
	var po, pe float64
	for j := range want {
		po, pe = po+float64(counts[j]), pe+want[j]
		if pe >= 5 {
			obs, exp = append(obs, po), append(exp, pe)
			po, pe = 0, 0
		}
	}
	if pe > 0 {
		obs[len(obs)-1] += po
		exp[len(exp)-1] += pe
	}
	chi := 0.0
	for i := range obs {
		chi += (obs[i] - exp[i]) * (obs[i] - exp[i]) / exp[i]
	}
	df := float64(len(obs) - 1)
	limit := distuv.ChiSquared{K: df}.Quantile(1 - 1e-6)
	t.Logf("χ² = %.2f over %d cells (limit %.2f); lots at the cap %d, expected %.0f", chi, len(obs), limit, counts[b], want[b])
	if chi > limit {
		t.Errorf("lot sizes %v: χ² %.2f > %.2f, want min(Binomial(%d, %g), %d)", counts, chi, limit, n, q, b)
	}
	if counts[b] < int(want[b]/2) {
		t.Errorf("%d lots at the cap, want about %.0f: the check saw no truncation", counts[b], want[b])
	}
}

// TestTruncateLotUniform: truncating the lot 0..19 to 5 keeps each example
// with probability ¼ (χ² over the 20 examples in 40,000 draws, fixed seed,
// below the quantile of probability 1 − 1e-6) and each pair with
// probability C(18, 3)/C(20, 5) = 1/19 (within 6 standard errors): a
// uniformly random 5-subset. A lot at or under the cap is kept whole
// without drawing from the RNG.
func TestTruncateLotUniform(t *testing.T) {
	const size, b, draws = 20, 5, 40000
	rng := mrand.New(mrand.NewPCG(7, 8))
	kept := make([]float64, size)
	pair := 0 // draws keeping both 0 and 19
	lot := make([]int, size)
	for range draws {
		lot = lot[:size]
		for i := range lot {
			lot[i] = i
		}
		got := truncateLot(lot, b, rng)
		has0, has19 := false, false
		for _, i := range got {
			kept[i]++
			has0, has19 = has0 || i == 0, has19 || i == 19
		}
		if has0 && has19 {
			pair++
		}
	}
	e := float64(draws) * b / size
	chi := 0.0
	for _, k := range kept {
		chi += (k - e) * (k - e) / e
	}
	// The counts sum to draws·b, a constraint: 19 degrees of freedom, and
	// the multivariate-hypergeometric variance is below the multinomial
	// one, so the χ² limit is conservative.
	if limit := (distuv.ChiSquared{K: size - 1}).Quantile(1 - 1e-6); chi > limit {
		t.Errorf("examples kept %v times: χ² %.2f > %.2f, want each ¼ of %d", kept, chi, limit, draws)
	}
	p := 1.0 / 19
	if se := math.Sqrt(draws * p * (1 - p)); math.Abs(float64(pair)-draws*p) > 6*se {
		t.Errorf("examples 0 and 19 kept together %d times, want %.0f ± %.0f", pair, draws*p, 6*se)
	}
	r := mrand.New(mrand.NewPCG(1, 2))
	small := truncateLot([]int{3, 8, 9}, 3, r)
	if next, fresh := r.Uint64(), mrand.New(mrand.NewPCG(1, 2)).Uint64(); !reflect.DeepEqual(small, []int{3, 8, 9}) || next != fresh {
		t.Errorf("lot at the cap: %v (RNG used: %v), want [3 8 9] and no draw", small, next != fresh)
	}
}

// TestTruncatedPoissonRun: a private run with truncated-Poisson lots (n 90,
// expected lot 20, cap 22, 3 epochs of 5 steps) never exceeds the cap and
// reaches it, its ledger is 15 × TruncatedSubsampledGaussian{90, 20/90, 22,
// σ}, which is RunEvent (what σ calibration accounts), and the same run
// stopped at step 7, checkpointed and resumed ends with the uninterrupted
// run's model and ledger.
func TestTruncatedPoissonRun(t *testing.T) {
	train := blobs(90, 5, 3, 0.1, 8)
	cfg := Config{Method: MethodDPSGD, Hidden: []int{6}, LotSize: 20, Epochs: 3, NoiseMultiplier: 1.5,
		Sampling: SamplingTruncatedPoisson, MaxLotSize: 22, Seed: u64(3)}
	step := accounting.TruncatedSubsampledGaussian{DatasetSize: 90, SamplingRate: 20.0 / 90, TruncatedBatchSize: 22, NoiseMultiplier: 1.5}
	tr, err := New(cfg, train, Options{})
	if err != nil {
		t.Fatal(err)
	}
	largest, atCap := 0, 0
	tr.lotHook = func(_ int, lot []int) {
		largest = max(largest, len(lot))
		if len(lot) == 22 {
			atCap++
		}
	}
	full, err := tr.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if largest > 22 || atCap == 0 {
		t.Errorf("largest lot %d, %d lots at the cap; want ≤ 22 and some at it", largest, atCap)
	}
	if full.Steps != 15 || len(full.Ledger.Segments) != 1 || full.Ledger.Segments[0] != (accounting.Segment{Event: step, Count: 15}) {
		t.Errorf("full run: %d steps, ledger %+v; want 15 × %+v", full.Steps, full.Ledger.Segments, step)
	}
	dc := cfg.WithDefaults(90)
	if got, want := dc.RunEvent(90), (accounting.SelfComposed{Event: step, Count: 15}); got != want {
		t.Errorf("RunEvent = %+v, want %+v", got, want)
	}
	if dc.Adjacency() != accounting.AddRemove || dc.LedgerUnit(90) != 1 {
		t.Errorf("adjacency %v, ledger unit %d; want add-remove, 1", dc.Adjacency(), dc.LedgerUnit(90))
	}

	tr, err = New(cfg, train, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr.stopAt = 7
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
	if res.Steps != 15 || !reflect.DeepEqual(res.Model.Layers, full.Model.Layers) || !res.Ledger.Equal(full.Ledger) {
		t.Errorf("resumed run differs from the uninterrupted one (steps %d, ledger %+v vs %+v)", res.Steps, res.Ledger.Segments, full.Ledger.Segments)
	}
}

// TestTruncatedPoissonConfigErrors: the cap is required with
// truncated-poisson, in [1, N], and refused with the other samplings and
// with canaries.
func TestTruncatedPoissonConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		s     Sampling
		b     int
		can   int
		field string
	}{
		{SamplingTruncatedPoisson, 0, 0, "max_lot_size"},
		{SamplingTruncatedPoisson, -1, 0, "max_lot_size"},
		{SamplingTruncatedPoisson, 91, 0, "max_lot_size"},
		{SamplingPoisson, 22, 0, "max_lot_size"},
		{SamplingShuffle, 22, 0, "max_lot_size"},
		{SamplingTruncatedPoisson, 22, 10, "sampling"},
	} {
		c := Config{Method: MethodDPSGD, Hidden: []int{6}, LotSize: 20, Epochs: 1, NoiseMultiplier: 1, Sampling: tc.s, MaxLotSize: tc.b, Canaries: tc.can}
		c = c.WithDefaults(90)
		var fe *FieldError
		if err := c.Validate(90, 5); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s cap %d canaries %d: %v, want a %s error", tc.s, tc.b, tc.can, err, tc.field)
		}
	}
	c := Config{Method: MethodDPSGD, Hidden: []int{6}, LotSize: 20, Epochs: 1, NoiseMultiplier: 1, Sampling: SamplingTruncatedPoisson, MaxLotSize: 90}
	if c = c.WithDefaults(90); c.Validate(90, 5) != nil || c.StepsPerEpoch(90) != 5 || c.SamplingRate(90) != 20.0/90 {
		t.Errorf("cap N: %v, %d steps an epoch, q %g; want valid, 5, 20/90", c.Validate(90, 5), c.StepsPerEpoch(90), c.SamplingRate(90))
	}
}
