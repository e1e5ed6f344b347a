package trainer

import (
	"math/rand/v2"
	"testing"
	"time"
)

var benchSink float32

// BenchmarkStep compares one DP-SGD step (per-example norms, clipping,
// noise on every parameter) with one non-private step on the MNIST shapes of
// Abadi et al. §5.2: lot 600, 784-1000-10. Run both in the same process:
//
//	go test -run '^$' -bench Step -benchtime 20x ./trainer/
func BenchmarkStep(b *testing.B) {
	for _, bc := range []struct {
		name    string
		method  Method
		d, h, l int
	}{
		{"np/784-1000-10/lot600", MethodNP, 784, 1000, 600},
		{"dpsgd/784-1000-10/lot600", MethodDPSGD, 784, 1000, 600},
		{"dpvd/784-1000-10/lot600", MethodDPVD, 784, 1000, 600},
		{"np/64-500-10/lot100", MethodNP, 64, 500, 100},
		{"dpsgd/64-500-10/lot100", MethodDPSGD, 64, 500, 100},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ds := blobs(bc.l*10, bc.d, 10, 0.2, 1)
			cfg := Config{Method: bc.method, Hidden: []int{bc.h}, LotSize: bc.l, Epochs: 1, NoiseMultiplier: 4}.WithDefaults(ds.N)
			r := rand.New(rand.NewChaCha8([32]byte{1}))
			m := newMLP(ds.D, nil, 0, cfg.Hidden, ds.Classes, r)
			st := newStepper(&cfg, m, ds.N)
			idx := make([]int, bc.l)
			for i := range idx {
				idx[i] = i
			}
			private := bc.method.Private()
			zeta := 0.0
			if bc.method == MethodDPVD {
				zeta = 1e-3
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st.zero()
				st.accumulate(ds, idx, zeta, r, private)
				if private {
					st.addNoise(4*cfg.ClipNorm, r)
				}
				st.apply(1e-3, float64(bc.l), r)
			}
			benchSink = m.Layers[0].W[0]
		})
	}
}

// BenchmarkStepRatio alternates a non-private and a DP-SGD step on the same
// model shapes (MNIST: lot 600, 784-1000-10) within each iteration and
// reports their times and ratio, so machine-load drift affects both alike.
func BenchmarkStepRatio(b *testing.B) {
	for _, bc := range []struct {
		name    string
		d, h, l int
	}{
		{"784-1000-10/lot600", 784, 1000, 600},
		{"64-500-10/lot100", 64, 500, 100},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ds := blobs(bc.l*2, bc.d, 10, 0.2, 1)
			r := rand.New(rand.NewChaCha8([32]byte{1}))
			mk := func(m Method) (*stepper, *Config) {
				cfg := Config{Method: m, Hidden: []int{bc.h}, LotSize: bc.l, Epochs: 1, NoiseMultiplier: 4}.WithDefaults(ds.N)
				return newStepper(&cfg, newMLP(ds.D, nil, 0, cfg.Hidden, ds.Classes, r), ds.N), &cfg
			}
			np, _ := mk(MethodNP)
			dp, dcfg := mk(MethodDPSGD)
			idx := make([]int, bc.l)
			for i := range idx {
				idx[i] = i
			}
			var tnp, tdp time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				np.zero()
				np.accumulate(ds, idx, 0, r, false)
				np.apply(1e-3, float64(bc.l), r)
				t1 := time.Now()
				dp.zero()
				dp.accumulate(ds, idx, 0, r, true)
				dp.addNoise(4*dcfg.ClipNorm, r)
				dp.apply(1e-3, float64(bc.l), r)
				t2 := time.Now()
				tnp += t1.Sub(t0)
				tdp += t2.Sub(t1)
			}
			b.ReportMetric(float64(tnp.Nanoseconds())/float64(b.N), "ns/np-step")
			b.ReportMetric(float64(tdp.Nanoseconds())/float64(b.N), "ns/dp-step")
			b.ReportMetric(float64(tdp)/float64(tnp), "dp/np")
		})
	}
}

// BenchmarkNoiseSources measures, per 64-bit word and per normal draw, the
// keystream that addGaussian uses (AES-256-CTR, ctrSource) against the
// rand.ChaCha8 it replaced, in the same run:
//
//	go test -run '^$' -bench NoiseSources ./trainer/
//
// "fill" is addNormal over a 32768-coordinate chunk (ziggurat included);
// "fill-chacha8" is the same exact sampler fed by ChaCha8 words.
func BenchmarkNoiseSources(b *testing.B) {
	var key [32]byte
	b.Run("word/aes-ctr", func(b *testing.B) {
		s := newCTR(key)
		var x uint64
		for b.Loop() {
			x += s.Uint64()
		}
		benchSink = float32(x)
	})
	b.Run("word/chacha8", func(b *testing.B) {
		s := rand.NewChaCha8(key)
		var x uint64
		for b.Loop() {
			x += s.Uint64()
		}
		benchSink = float32(x)
	})
	v := make([]float32, noiseChunk)
	b.Run("fill/aes-ctr", func(b *testing.B) {
		s := newCTR(key)
		for b.Loop() {
			addNormal(v, 1, s)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(v)), "ns/draw")
	})
	b.Run("fill/chacha8", func(b *testing.B) {
		s := rand.NewChaCha8(key)
		for b.Loop() {
			for j := range v {
				u := s.Uint64()
				k := int32(u)
				i := u >> 32 & 0x7F
				x := float64(k) * float64(zigW[i])
				if absInt32(k) >= zigK[i] {
					x = rand.New(s).NormFloat64() // rare (<2%); cost only
				}
				v[j] += float32(x)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(v)), "ns/draw")
	})
}
