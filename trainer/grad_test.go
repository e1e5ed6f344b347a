package trainer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpcalc/dpcalc/trainer/data"
)

func smallModel(t *testing.T, proj bool) (*MLP, *data.Dataset) {
	t.Helper()
	ds := blobs(9, 6, 3, 0.3, 1)
	r := rand.New(rand.NewPCG(3, 4))
	var p []float32
	k := 0
	if proj {
		k = 4
		p = make([]float32, 6*4)
		for i := range p {
			p[i] = float32(r.NormFloat64() * 0.5)
		}
	}
	m := newMLP(ds.D, p, k, []int{7, 5}, ds.Classes, r)
	for _, l := range m.Layers { // non-zero biases exercise the bias term
		for j := range l.B {
			l.B[j] = float32(0.1 * r.NormFloat64())
		}
	}
	return m, ds
}

// exampleGrad is the one-example-at-a-time oracle: the full gradient of
// example i's loss, materialised.
func exampleGrad(m *MLP, ds *data.Dataset, i int, zeta float64, seed uint64) []float32 {
	w := newWorkspace(m, 1)
	m.forward(w, ds.Row(i), 1, zeta, rand.New(rand.NewPCG(seed, uint64(i))))
	m.lossGrad(w, ds.Y[i:i+1], 1)
	m.backward(w, 1, zeta, false)
	g := make([]float32, m.NumParams())
	m.accumulate(w, 1, g)
	return g
}

func exampleLoss(m *MLP, ds *data.Dataset, i int, zeta float64, seed uint64) float64 {
	w := newWorkspace(m, 1)
	m.forward(w, ds.Row(i), 1, zeta, rand.New(rand.NewPCG(seed, uint64(i))))
	m.lossGrad(w, ds.Y[i:i+1], 1)
	return w.loss[0]
}

func layerNorms(m *MLP, g []float32) []float64 {
	var out []float64
	off := 0
	for _, l := range m.Layers {
		n := len(l.W) + len(l.B)
		out = append(out, math.Sqrt(sqNorm(g[off:off+n])))
		off += n
	}
	return out
}

func TestFiniteDifferenceGradient(t *testing.T) {
	for _, tc := range []struct {
		name string
		proj bool
		zeta float64
	}{
		{"plain", false, 0},
		{"projection", true, 0},
		{"dpvd local reparameterisation", false, 0.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ds := smallModel(t, tc.proj)
			for _, i := range []int{0, 4} {
				g := exampleGrad(m, ds, i, tc.zeta, 7)
				off := 0
				for _, p := range m.params() {
					for j := range p {
						old := p[j]
						const h = 1e-2
						p[j] = old + h
						lp := exampleLoss(m, ds, i, tc.zeta, 7)
						p[j] = old - h
						lm := exampleLoss(m, ds, i, tc.zeta, 7)
						p[j] = old
						fd := (lp - lm) / (2 * h)
						// float32 forward pass: loss round-off ~1e-7 / h plus O(h²)
						// curvature; 2e-3 absolute + 2% relative covers both.
						if got := float64(g[off+j]); math.Abs(got-fd) > 2e-3+0.02*math.Abs(fd) {
							t.Errorf("example %d param %d: backprop %g, finite difference %g", i, off+j, got, fd)
						}
					}
					off += len(p)
				}
			}
		})
	}
}

// TestPerExampleNormsAndClipping checks the batched per-example norms
// (Goodfellow's trick) and the batched clipped sum against the
// one-example-at-a-time oracle, for flat and per-layer clipping, with and
// without dpvd noise.
func TestPerExampleNormsAndClipping(t *testing.T) {
	for _, tc := range []struct {
		name     string
		perLayer []float64
		zeta     float64
		proj     bool
	}{
		{"flat", nil, 0, false},
		{"flat projection", nil, 0, true},
		{"per-layer", []float64{0.5, 0.3, 0.2}, 0, false},
		{"flat dpvd", nil, 0.2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ds := smallModel(t, tc.proj)
			idx := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
			// Oracle per-example gradients with the same noise the batched pass
			// draws: run the batch with one PCG stream and replay it per row.
			oracle := make([][]float32, len(idx))
			for k, i := range idx {
				oracle[k] = exampleGrad(m, ds, i, 0, 0)
			}
			if tc.zeta > 0 {
				// With noise, compare norms only (same noise per row is
				// ensured by drawing it per example below).
				w := newWorkspace(m, 1)
				for k, i := range idx {
					r := rand.New(rand.NewPCG(11, uint64(i)))
					m.forward(w, ds.Row(i), 1, tc.zeta, r)
					m.lossGrad(w, ds.Y[i:i+1], 1)
					m.backward(w, 1, tc.zeta, true)
					g := exampleGrad(m, ds, i, tc.zeta, 11)
					oracle[k] = g
					var sq float64
					for li := range m.Layers {
						sq += w.lsq[li][0]
					}
					if want := sqNorm(g); math.Abs(sq-want) > 1e-4*want {
						t.Errorf("example %d: trick norm² %g, oracle %g", i, sq, want)
					}
				}
				return
			}
			cfg := Config{Method: MethodDPSGD, ClipNorm: 0.4, PerLayerClip: tc.perLayer, LotSize: 4, BatchSize: 4, Hidden: []int{7, 5}}
			st := newStepper(&cfg, m, ds.N)
			st.zero()
			st.accumulate(ds, idx, 0, nil, true) // 3 batches of ≤ 4
			want := make([]float64, m.NumParams())
			for k := range idx {
				g := oracle[k]
				ln := layerNorms(m, g)
				tot := 0.0
				for _, v := range ln {
					tot += v * v
				}
				tot = math.Sqrt(tot)
				off := 0
				var clippedSq float64
				for li, l := range m.Layers {
					f := math.Min(1, cfg.ClipNorm/tot)
					if tc.perLayer != nil {
						f = math.Min(1, tc.perLayer[li]/ln[li])
					}
					n := len(l.W) + len(l.B)
					for j := 0; j < n; j++ {
						want[off+j] += f * float64(g[off+j])
					}
					clippedSq += f * f * ln[li] * ln[li]
					if tc.perLayer != nil && f*ln[li] > tc.perLayer[li]*(1+1e-6) {
						t.Errorf("example %d layer %d: clipped norm %g > %g", k, li, f*ln[li], tc.perLayer[li])
					}
					off += n
				}
				if tc.perLayer == nil && math.Sqrt(clippedSq) > cfg.ClipNorm*(1+1e-6) {
					t.Errorf("example %d: clipped norm %g > C=%g", k, math.Sqrt(clippedSq), cfg.ClipNorm)
				}
			}
			if st.clipped == 0 {
				t.Errorf("no example was clipped; the test does not exercise clipping")
			}
			for j, w := range want {
				if got := float64(st.grad[j]); math.Abs(got-w) > 1e-5+1e-4*math.Abs(w) {
					t.Fatalf("clipped sum[%d] = %g, oracle %g", j, got, w)
				}
			}
		})
	}
}

// TestBatchNormsMatchOracle checks the trick's per-example norms from a
// batched pass against materialised per-example gradients.
func TestBatchNormsMatchOracle(t *testing.T) {
	m, ds := smallModel(t, true)
	w := newWorkspace(m, ds.N)
	m.forward(w, ds.X, ds.N, 0, nil)
	m.lossGrad(w, ds.Y, ds.N)
	m.backward(w, ds.N, 0, true)
	for i := 0; i < ds.N; i++ {
		ln := layerNorms(m, exampleGrad(m, ds, i, 0, 0))
		for li := range m.Layers {
			got := math.Sqrt(w.lsq[li][i])
			if math.Abs(got-ln[li]) > 1e-5*ln[li]+1e-7 {
				t.Errorf("example %d layer %d: norm %g, oracle %g", i, li, got, ln[li])
			}
		}
	}
}

func TestNoiseStatistics(t *testing.T) {
	const n = 200000
	v := make([]float32, n)
	r := rand.New(rand.NewPCG(5, 6))
	const std = 3.0
	addGaussian(v, std, r)
	var s, s2 float64
	for _, x := range v {
		s += float64(x)
		s2 += float64(x) * float64(x)
	}
	mean := s / n
	sd := math.Sqrt(s2/n - mean*mean)
	// Fixed seed; the bounds are 5 standard errors (std/√n ≈ 0.0067 for the
	// mean, std/√(2n) ≈ 0.0047 for the std).
	if math.Abs(mean) > 5*std/math.Sqrt(n) {
		t.Errorf("noise mean %g, want ≈ 0", mean)
	}
	if math.Abs(sd-std) > 5*std/math.Sqrt(2*n) {
		t.Errorf("noise std %g, want %g", sd, std)
	}
}

// TestStepNoiseScale runs one private step on a zero-gradient model (all
// weights zero except nothing flows) and checks the update's std equals
// η·noise_factor·σ·S/L.
func TestStepNoiseScale(t *testing.T) {
	ds := blobs(50, 4, 2, 0.1, 2)
	for _, tc := range []struct {
		method Method
		factor float64
	}{{MethodDPSGD, 1}, {MethodDPD, 2}} {
		cfg := Config{Method: tc.method, Hidden: []int{3000}, LotSize: 10, Epochs: 1, NoiseMultiplier: 1.5, ClipNorm: 2, LearningRate: 0.5, Seed: u64(1)}.WithDefaults(ds.N)
		if err := cfg.Validate(ds.N, ds.D); err != nil {
			t.Fatal(err)
		}
		m := newMLP(ds.D, nil, 0, cfg.Hidden, 2, rand.New(rand.NewPCG(1, 1)))
		before := m.clone()
		st := newStepper(&cfg, m, ds.N)
		st.zero()
		st.accumulate(ds, nil, 0, nil, true) // empty lot: the gradient is pure noise
		std := tc.factor * cfg.NoiseMultiplier * cfg.Sensitivity()
		st.addNoise(std, rand.New(rand.NewPCG(8, 9)))
		st.apply(cfg.LearningRate, float64(cfg.LotSize), nil)
		var s2 float64
		cnt := 0
		for li, l := range m.Layers {
			for j := range l.W {
				d := float64(l.W[j] - before.Layers[li].W[j])
				s2 += d * d
				cnt++
			}
		}
		got := math.Sqrt(s2 / float64(cnt))
		want := cfg.LearningRate * std / float64(cfg.LotSize)
		// 18000 weights: the relative s.e. of the std is 1/√(2·18000) ≈ 0.53%,
		// so 3% is 5.7 s.e. (false rejection < 2e-8). With 1800 weights, as
		// before, 3% was only 1.8 s.e. (~7% false rejections per seed).
		if math.Abs(got-want) > 0.03*want {
			t.Errorf("%s: update std %g, want %g", tc.method, got, want)
		}
	}
}

func TestGradientReusePanics(t *testing.T) {
	ds := blobs(10, 3, 2, 0.1, 1)
	cfg := Config{Method: MethodDPSGD, Hidden: []int{4}, LotSize: 5, Epochs: 1, NoiseMultiplier: 1}.WithDefaults(ds.N)
	m := newMLP(ds.D, nil, 0, cfg.Hidden, 2, rand.New(rand.NewPCG(1, 1)))
	st := newStepper(&cfg, m, ds.N)
	r := rand.New(rand.NewPCG(1, 2))
	st.zero()
	st.accumulate(ds, []int{0, 1}, 0, nil, true)
	st.addNoise(1, r)
	mustPanic(t, "double noise", func() { st.addNoise(1, r) })
	st.apply(0.1, 5, r)
	mustPanic(t, "double apply", func() { st.apply(0.1, 5, r) })
	mustPanic(t, "accumulate after apply", func() { st.accumulate(ds, []int{0}, 0, nil, true) })
	st.zero()
	st.accumulate(ds, []int{0}, 0, nil, true)
	mustPanic(t, "apply without noise", func() { st.apply(0.1, 5, r) })
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", name)
		}
	}()
	f()
}

func TestPoissonLot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, q, trials = 1000, 0.05, 2000
	var tot int
	var buf []int
	for k := 0; k < trials; k++ {
		buf = poissonLot(buf, n, q, r)
		for j := 1; j < len(buf); j++ {
			if buf[j] <= buf[j-1] || buf[j] >= n {
				t.Fatalf("lot not strictly increasing in [0, n): %v", buf)
			}
		}
		tot += len(buf)
	}
	mean := float64(tot) / trials
	// s.e. of the mean lot size: √(nq(1−q)/trials) ≈ 0.154; allow 5 s.e.
	if math.Abs(mean-n*q) > 5*math.Sqrt(n*q*(1-q)/trials) {
		t.Errorf("mean lot size %g, want %g", mean, n*q)
	}
	if got := poissonLot(nil, 7, 1, r); len(got) != 7 {
		t.Errorf("q=1 lot size %d, want 7", len(got))
	}
}

func TestNonFiniteGradientDropped(t *testing.T) {
	for _, n := range []float64{math.NaN(), math.Inf(1)} {
		if f := clipFactor(n, 1); f != 0 {
			t.Errorf("clipFactor(%g) = %g, want 0", n, f)
		}
	}
	if f := clipFactor(0, 1); f != 1 {
		t.Errorf("clipFactor(0) = %g, want 1", f)
	}
	g := []float32{1, 2, float32(math.NaN()), float32(math.Inf(1)), 5, 6}
	scaleRows(g, 2, 3, []float32{0.5, 0, 1})
	want := []float32{0.5, 1, 0, 0, 5, 6}
	for i := range g {
		if g[i] != want[i] {
			t.Fatalf("scaleRows = %v, want %v", g, want)
		}
	}
}

// TestNonFiniteExampleDoesNotPoisonSum feeds one example with an infinite
// feature: it must be dropped, the others summed as usual.
func TestNonFiniteExampleDoesNotPoisonSum(t *testing.T) {
	m, ds := smallModel(t, false)
	bad := *ds
	bad.X = append([]float32(nil), ds.X...)
	bad.X[2*ds.D+1] = float32(math.Inf(1))
	cfg := Config{Method: MethodDPSGD, ClipNorm: 1e6, LotSize: 9, BatchSize: 9, Hidden: []int{7, 5}}
	run := func(d *data.Dataset, idx []int) []float32 {
		st := newStepper(&cfg, m, d.N)
		st.zero()
		st.accumulate(d, idx, 0, nil, true)
		return st.grad
	}
	got := run(&bad, []int{0, 1, 2, 3})
	want := run(ds, []int{0, 1, 3})
	for j := range got {
		if math.IsNaN(float64(got[j])) || math.Abs(float64(got[j]-want[j])) > 1e-5 {
			t.Fatalf("sum[%d] = %g, want %g (the non-finite example dropped)", j, got[j], want[j])
		}
	}
}
