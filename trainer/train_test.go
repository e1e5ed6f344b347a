package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

func TestMethodsLearnBlobs(t *testing.T) {
	train := blobs(600, 10, 3, 0.08, 1)
	// Same centres (same seed), examples 600..899 unseen in training.
	test := blobs(900, 10, 3, 0.08, 1)
	test.X, test.Y, test.N = test.X[600*10:], test.Y[600:], 300
	for _, tc := range []struct {
		method Method
		sigma  float64
		lr     float64
		minAcc float64
	}{
		{MethodNP, 0, 0.5, 0.95},
		{MethodDPSGD, 1, 1, 0.9},
		{MethodDPD, 1, 1, 0.9},
		{MethodDPVD, 1, 1, 0.9},
		{MethodSGLD, 1, 1, 0.88},
	} {
		t.Run(string(tc.method), func(t *testing.T) {
			t.Parallel()
			var epochs []Progress
			cfg := Config{Method: tc.method, Hidden: []int{32}, LotSize: 60, BatchSize: 25, Epochs: 10,
				NoiseMultiplier: tc.sigma, ClipNorm: 1, LearningRate: tc.lr, Seed: u64(42)}
			opts := Options{Progress: func(p Progress) { epochs = append(epochs, p) }}
			if tc.method.Private() {
				opts.NewAccountant = newTestAccountant
			}
			res, err := Train(context.Background(), cfg, train, test, opts)
			if err != nil {
				t.Fatal(err)
			}
			if *res.TestAccuracy < tc.minAcc {
				t.Errorf("test accuracy %g, want ≥ %g", *res.TestAccuracy, tc.minAcc)
			}
			if res.Steps != 100 || res.Ledger.Len() != 100 || len(epochs) != 10 {
				t.Errorf("steps %d, ledger %d, progress calls %d; want 100, 100, 10", res.Steps, res.Ledger.Len(), len(epochs))
			}
			if tc.method.Private() {
				want := accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.Gaussian{NoiseMultiplier: tc.method.noiseFactor() * tc.sigma}}
				if got := res.Ledger.Segments[0].Event; len(res.Ledger.Segments) != 1 || got != want {
					t.Errorf("ledger %+v, want one segment of %+v", res.Ledger.Segments, want)
				}
				// Closed form of the test accountant: ρ = T/(2σ_eff²).
				rho := 100 / (2 * math.Pow(tc.method.noiseFactor()*tc.sigma, 2))
				wantEps := rho + 2*math.Sqrt(rho*math.Log(1e5))
				if math.Abs(*res.Epsilon-wantEps) > 1e-9*wantEps {
					t.Errorf("ε = %g, want %g", *res.Epsilon, wantEps)
				}
			}
		})
	}
}

func TestBudgetStopsBeforeExceeding(t *testing.T) {
	train := blobs(200, 5, 2, 0.1, 3)
	// Test accountant: ε(k) = ρk + 2√(ρk ln(1/δ)), ρ = 1/(2σ²) per step.
	// Pick the target between k=37 and k=38 steps.
	sigma, delta := 2.0, 1e-5
	eps := func(k int) float64 {
		r := float64(k) / (2 * sigma * sigma)
		return r + 2*math.Sqrt(r*math.Log(1/delta))
	}
	target := (eps(37) + eps(38)) / 2
	cfg := Config{Method: MethodDPSGD, Hidden: []int{8}, LotSize: 20, Epochs: 10, NoiseMultiplier: sigma,
		TargetEpsilon: target, TargetDelta: delta, Seed: u64(1)}
	res, err := Train(context.Background(), cfg, train, nil, Options{NewAccountant: newTestAccountant})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 37 || !res.StoppedByBudget || res.Ledger.Len() != 37 {
		t.Errorf("steps %d (ledger %d), stopped %v; want 37, true", res.Steps, res.Ledger.Len(), res.StoppedByBudget)
	}
	if *res.Epsilon > target {
		t.Errorf("ε spent %g > target %g", *res.Epsilon, target)
	}
	// A budget the run fits in does not stop it.
	cfg.TargetEpsilon = eps(100)
	res, err = Train(context.Background(), cfg, train, nil, Options{NewAccountant: newTestAccountant})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 100 || res.StoppedByBudget {
		t.Errorf("steps %d, stopped %v; want 100, false", res.Steps, res.StoppedByBudget)
	}
	// DP-PCA alone over budget: refused before training.
	cfg.PCADim, cfg.PCANoiseMultiplier, cfg.TargetEpsilon = 3, 0.01, 1
	if _, err := Train(context.Background(), cfg, train, nil, Options{NewAccountant: newTestAccountant}); err == nil {
		t.Errorf("over-budget DP-PCA: no error")
	}
}

func TestConfigErrorsNameField(t *testing.T) {
	train := blobs(50, 4, 2, 0.1, 1)
	for _, tc := range []struct {
		field string
		cfg   Config
	}{
		{"method", Config{Method: "adam", Epochs: 1}},
		{"noise_multiplier", Config{Method: MethodDPSGD, Epochs: 1}},
		{"epochs", Config{Method: MethodNP}},
		{"lot_size", Config{Method: MethodNP, Epochs: 1, LotSize: -3}},
		{"clip_norm", Config{Method: MethodDPSGD, Epochs: 1, NoiseMultiplier: 1, ClipNorm: math.NaN()}},
		{"per_layer_clip", Config{Method: MethodDPSGD, Epochs: 1, NoiseMultiplier: 1, PerLayerClip: []float64{1}}},
		{"pca_dim", Config{Method: MethodNP, Epochs: 1, PCADim: 9}},
		{"pca_noise_multiplier", Config{Method: MethodDPSGD, Epochs: 1, NoiseMultiplier: 1, PCADim: 2}},
		{"target_delta", Config{Method: MethodDPSGD, Epochs: 1, NoiseMultiplier: 1, TargetEpsilon: 1}},
		{"hidden[0]", Config{Method: MethodNP, Epochs: 1, Hidden: []int{0}}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			_, err := New(tc.cfg, train, Options{NewAccountant: newTestAccountant})
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("error %v, want a FieldError on %q", err, tc.field)
			}
		})
	}
	if _, err := New(Config{Method: MethodDPSGD, Epochs: 1, NoiseMultiplier: 1, TargetEpsilon: 1, TargetDelta: 1e-5}, train, Options{}); err == nil {
		t.Errorf("target without accountant: no error")
	}
}

func TestStepEventSensitivity(t *testing.T) {
	c := Config{Method: MethodDPD, NoiseMultiplier: 3, PerLayerClip: []float64{3, 4}, LotSize: 10}
	if got := c.Sensitivity(); got != 5 {
		t.Errorf("per-layer sensitivity %g, want 5", got)
	}
	want := accounting.PoissonSampled{SamplingRate: 0.01, Event: accounting.Gaussian{NoiseMultiplier: 6}}
	if got := c.StepEvent(1000); got != want {
		t.Errorf("dpd event %+v, want %+v", got, want)
	}
	c.Method = MethodNP
	if got := c.StepEvent(1000); got != (accounting.NonPrivate{}) {
		t.Errorf("np event %+v, want NonPrivate", got)
	}
}

func TestCheckpointResumeMatchesUninterrupted(t *testing.T) {
	train := blobs(120, 6, 3, 0.1, 5)
	for _, tc := range []struct {
		name     string
		method   Method
		sampling Sampling
		pca      int
	}{
		{"dpsgd poisson pca", MethodDPSGD, SamplingPoisson, 4},
		{"dpvd shuffle", MethodDPVD, SamplingShuffle, 0},
		{"np", MethodNP, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Method: tc.method, Hidden: []int{10}, LotSize: 25, Epochs: 4, NoiseMultiplier: 1.1,
				Sampling: tc.sampling, PCADim: tc.pca, PCANoiseMultiplier: 5, Seed: u64(9)}
			full, err := Train(context.Background(), cfg, train, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "run.ckpt")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := Options{CheckpointPath: path, CheckpointEvery: 1, Progress: func(p Progress) {
				if p.Epoch == 2 {
					cancel() // the epoch-2 checkpoint is still written
				}
			}}
			part, err := Train(ctx, cfg, train, nil, opts)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: err %v, want context.Canceled", err)
			}
			dc := cfg.WithDefaults(train.N)
			spe := dc.StepsPerEpoch(train.N)
			if part.Steps != 2*spe {
				t.Fatalf("interrupted after %d steps, want %d", part.Steps, 2*spe)
			}
			res, err := Resume(context.Background(), path, train, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps != full.Steps || res.Ledger.Len() != full.Ledger.Len() {
				t.Errorf("resumed: %d steps, ledger %d; uninterrupted %d, %d", res.Steps, res.Ledger.Len(), full.Steps, full.Ledger.Len())
			}
			if !res.Ledger.Equal(full.Ledger) {
				t.Errorf("resumed ledger %+v differs from uninterrupted %+v", res.Ledger, full.Ledger)
			}
			if !reflect.DeepEqual(res.Model.Layers, full.Model.Layers) {
				t.Errorf("seeded resume is not bit-identical to the uninterrupted run")
			}
			if len(res.History) != 4 {
				t.Errorf("history has %d epochs, want 4", len(res.History))
			}
		})
	}
}

func TestCheckpointCorruptionRefused(t *testing.T) {
	train := blobs(60, 4, 2, 0.1, 5)
	cfg := Config{Method: MethodDPSGD, Hidden: []int{5}, LotSize: 20, Epochs: 1, NoiseMultiplier: 1}
	tr, err := New(cfg, train, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ok.ckpt")
	if err := tr.SaveCheckpoint(path); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(path, train, Options{}); err != nil {
		t.Fatalf("loading a good checkpoint: %v", err)
	}
	flip := append([]byte(nil), good...)
	flip[len(flip)-10] ^= 0x40
	badMagic := append([]byte("XPCALCCK"), good[8:]...)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"truncated payload", good[:len(good)-7]},
		{"truncated header", good[:30]},
		{"empty", nil},
		{"bit flip", flip},
		{"bad magic", badMagic},
		{"trailing bytes", append(append([]byte(nil), good...), 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.ckpt")
			if err := os.WriteFile(p, tc.b, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadCheckpoint(p, train, Options{}); !errors.Is(err, ErrCorruptCheckpoint) {
				t.Errorf("error %v, want ErrCorruptCheckpoint", err)
			}
		})
	}
	other := blobs(60, 4, 2, 0.1, 6)
	if _, err := LoadCheckpoint(path, other, Options{}); err == nil {
		t.Errorf("checkpoint loaded against a different dataset")
	}
}

func TestDPPCARecoversDominantDirections(t *testing.T) {
	// Data concentrated along e0 and e2: exact PCA (σ=0, q=1) must return
	// them as the top two directions, with orthonormal columns.
	ds := blobs(400, 6, 2, 0.0, 1)
	for i := 0; i < ds.N; i++ {
		row := ds.Row(i)
		for j := range row {
			row[j] = 0.01
		}
		row[0] = float32(0.2 + 0.8*float64(i%7)/6)
		row[2] = float32(0.1 + 0.3*float64(i%5)/4)
	}
	tr, err := New(Config{Method: MethodNP, Hidden: []int{3}, Epochs: 1, PCADim: 2, PCASamplingRate: 1}, ds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := tr.Model().Proj
	k := 2
	for c := 0; c < k; c++ {
		var mass float64
		for r := 0; r < ds.D; r++ {
			if r == 0 || r == 2 {
				mass += float64(p[r*k+c] * p[r*k+c])
			}
		}
		if mass < 0.99 {
			t.Errorf("component %d has %g of its mass on {e0, e2}, want ≥ 0.99", c, mass)
		}
	}
	var dot, n0, n1 float64
	for r := 0; r < ds.D; r++ {
		dot += float64(p[r*k] * p[r*k+1])
		n0 += float64(p[r*k] * p[r*k])
		n1 += float64(p[r*k+1] * p[r*k+1])
	}
	if math.Abs(dot) > 1e-5 || math.Abs(n0-1) > 1e-5 || math.Abs(n1-1) > 1e-5 {
		t.Errorf("columns not orthonormal: dot %g, norms² %g %g", dot, n0, n1)
	}
	if tr.Ledger().Len() != 1 {
		t.Errorf("PCA not recorded in the ledger")
	}
}

func TestRunEvent(t *testing.T) {
	c := Config{Method: MethodDPD, NoiseMultiplier: 3, LotSize: 100, Epochs: 7, PCADim: 10, PCANoiseMultiplier: 5}.WithDefaults(1000)
	e := c.RunEvent(1000)
	comp, ok := e.(accounting.Composed)
	if !ok || len(comp.Events) != 2 {
		t.Fatalf("RunEvent = %#v, want Composed of PCA and steps", e)
	}
	steps := comp.Events[1].(accounting.SelfComposed)
	ps := steps.Event.(accounting.PoissonSampled)
	if steps.Count != 70 || ps.SamplingRate != 0.1 || ps.Event.(accounting.Gaussian).NoiseMultiplier != 6 {
		t.Errorf("steps = %#v, want 70 × PoissonSampled{0.1, Gaussian{6}} (dpd noise is 2σ)", steps)
	}
}

func TestRunEventMatchesLedger(t *testing.T) {
	train := blobs(100, 5, 2, 0.1, 3)
	cfg := Config{Method: MethodDPVD, Hidden: []int{4}, LotSize: 30, Epochs: 3, NoiseMultiplier: 2,
		PCADim: 2, PCANoiseMultiplier: 6, Seed: u64(2)}
	res, err := Train(context.Background(), cfg, train, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dc := cfg.WithDefaults(train.N)
	a, b := new(zcdpTestAccountant), new(zcdpTestAccountant)
	if err := a.Compose(dc.RunEvent(train.N), 1); err != nil {
		t.Fatal(err)
	}
	if err := res.Ledger.Replay(b); err != nil {
		t.Fatal(err)
	}
	ea, _ := a.Epsilon(t.Context(), 1e-5)
	eb, _ := b.Epsilon(t.Context(), 1e-5)
	if ea != eb || res.Steps != 12 {
		t.Errorf("RunEvent ε %g, ledger ε %g, steps %d (want equal, 12)", ea, eb, res.Steps)
	}
}

// TestResumeMidEpoch interrupts a shuffled, seeded run in the middle of an
// epoch, saves, resumes, and checks the result is the uninterrupted run's.
func TestResumeMidEpoch(t *testing.T) {
	train := blobs(90, 5, 3, 0.1, 8)
	cfg := Config{Method: MethodDPSGD, Hidden: []int{6}, LotSize: 20, Epochs: 3, NoiseMultiplier: 1,
		Sampling: SamplingShuffle, Seed: u64(3)}
	full, err := Train(context.Background(), cfg, train, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(cfg, train, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Stop after 7 steps: mid-way through the second 4-step epoch (90 examples, lots of 20, the partial lot dropped).
	tr.stopAt = 7
	part, err := tr.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if part.Steps != 7 {
		t.Fatalf("partial run took %d steps, want 7", part.Steps)
	}
	path := filepath.Join(t.TempDir(), "mid.ckpt")
	if err := tr.SaveCheckpoint(path); err != nil {
		t.Fatal(err)
	}
	res, err := Resume(context.Background(), path, train, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != full.Steps || !reflect.DeepEqual(res.Model.Layers, full.Model.Layers) || !res.Ledger.Equal(full.Ledger) {
		t.Errorf("mid-epoch resume differs from the uninterrupted run (steps %d vs %d)", res.Steps, full.Steps)
	}
}

func TestSaveResultJSON(t *testing.T) {
	train := blobs(60, 4, 2, 0.1, 1)
	cfg := Config{Method: MethodDPD, Hidden: []int{4}, LotSize: 20, Epochs: 2, NoiseMultiplier: 1, Seed: u64(1)}
	res, err := Train(context.Background(), cfg, train, train, Options{NewAccountant: newTestAccountant})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "result.json")
	if err := SaveResult(path, res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Config Config            `json:"config"`
		Steps  int               `json:"steps"`
		Ledger accounting.Ledger `json:"ledger"`
		Eps    *float64          `json:"epsilon"`
		Hist   []Progress        `json:"history"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Steps != 6 || back.Ledger.Len() != 6 || back.Eps == nil || *back.Eps != *res.Epsilon || len(back.Hist) != 2 || back.Config.Method != MethodDPD {
		t.Errorf("round trip lost data: %+v", back)
	}
}

// TestGoldenCheckpoint loads a checkpoint committed in testdata (format
// version 1), so an accidental change of the on-disk format is caught.
// Regenerate with DPCALC_UPDATE_GOLDEN=1 only for a deliberate, versioned
// format change.
func TestGoldenCheckpoint(t *testing.T) {
	train := blobs(40, 3, 2, 0.1, 21)
	path := filepath.Join("..", "testdata", "trainer", "tiny-v1.ckpt")
	cfg := Config{Method: MethodDPSGD, Hidden: []int{3}, LotSize: 10, Epochs: 2, NoiseMultiplier: 1.5, Seed: u64(5)}
	if os.Getenv("DPCALC_UPDATE_GOLDEN") == "1" {
		tr, err := New(cfg, train, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tr.stopAt = 4
		if _, err := tr.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if err := tr.SaveCheckpoint(path); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := LoadCheckpoint(path, train, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Step() != 4 || tr.Ledger().Len() != 4 {
		t.Errorf("golden checkpoint: step %d, ledger %d; want 4, 4", tr.Step(), tr.Ledger().Len())
	}
	res, err := tr.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := accounting.PoissonSampled{SamplingRate: 0.25, Event: accounting.Gaussian{NoiseMultiplier: 1.5}}
	if res.Steps != 8 || res.Ledger.Len() != 8 || res.Ledger.Segments[0].Event != want {
		t.Errorf("resumed golden run: steps %d, ledger %+v", res.Steps, res.Ledger)
	}
}

// TestShuffleLedgerPerEpoch: with shuffled lots a private run drops the
// partial lot (90 examples, lots of 20: 4 steps per epoch) and the ledger
// records one Shuffled epoch before the epoch's first lot, so a run stopped
// after 5 steps has paid for 2 epochs; RunEvent is the ledger of a full run.
func TestShuffleLedgerPerEpoch(t *testing.T) {
	train := blobs(90, 5, 3, 0.1, 8)
	cfg := Config{Method: MethodDPSGD, Hidden: []int{6}, LotSize: 20, Epochs: 3, NoiseMultiplier: 1.5,
		Sampling: SamplingShuffle, Seed: u64(3)}
	// Replace-one: the clipped sum's sensitivity is 2C, so σ_eff/2 = 0.75.
	epoch := accounting.Shuffled{DatasetSize: 90, BatchSize: 20, Event: accounting.Gaussian{NoiseMultiplier: 0.75}}
	full, err := Train(context.Background(), cfg, train, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if full.Steps != 12 || len(full.Ledger.Segments) != 1 || full.Ledger.Segments[0] != (accounting.Segment{Event: epoch, Count: 3}) {
		t.Errorf("full run: %d steps, ledger %+v; want 12 steps, 3 × %+v", full.Steps, full.Ledger.Segments, epoch)
	}
	dc := cfg.WithDefaults(90)
	if got, want := dc.RunEvent(90), (accounting.SelfComposed{Event: epoch, Count: 3}); got != want {
		t.Errorf("RunEvent = %+v, want %+v", got, want)
	}
	tr, err := New(cfg, train, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr.stopAt = 5
	part, err := tr.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if part.Steps != 5 || part.Ledger.Len() != 2 {
		t.Errorf("stopped run: %d steps, ledger of %d epochs; want 5, 2", part.Steps, part.Ledger.Len())
	}
}
