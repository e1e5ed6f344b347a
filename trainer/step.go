package trainer

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dpcalc/dpcalc/trainer/data"
)

// tiny keeps the clipping factor finite for a zero gradient.
const tiny = 1e-12

// gradState guards the gradient buffer against reuse: a summed gradient is
// noised exactly once and applied exactly once (cf. Opacus'
// _check_processed_flag).
type gradState int

const (
	gradEmpty   gradState = iota // zeroed, ready to accumulate
	gradSummed                   // clipped per-example gradients summed
	gradNoised                   // noise added; ready to apply
	gradApplied                  // consumed by an update
)

// stepper owns the buffers of one training run's steps.
type stepper struct {
	cfg   *Config
	model *MLP
	ws    *workspace
	grad  []float32 // flat gradient sum, parameter layout
	state gradState
	bx    []float32
	by    []uint8
	n     int
	d     int
	fac   [][]float32

	// statistics of the last accumulate call
	lossSum  float64
	correct  int
	examples int
	clipped  int
}

func newStepper(cfg *Config, m *MLP, n int) *stepper {
	s := &stepper{cfg: cfg, model: m, n: n, d: m.InDim}
	s.ws = newWorkspace(m, cfg.BatchSize)
	s.grad = make([]float32, m.NumParams())
	s.bx = make([]float32, cfg.BatchSize*m.InDim)
	s.by = make([]uint8, cfg.BatchSize)
	s.fac = make([][]float32, len(m.Layers))
	for i := range s.fac {
		s.fac[i] = make([]float32, cfg.BatchSize)
	}
	s.state = gradApplied
	return s
}

// zero resets the gradient sum for a new lot.
func (s *stepper) zero() {
	clear(s.grad)
	s.state = gradEmpty
	s.lossSum, s.correct, s.examples, s.clipped = 0, 0, 0, 0
}

// accumulate adds the clipped gradients of the examples idx to the sum,
// processing at most BatchSize examples per forward/backward pass.
//
// Clipping scheme (flat): one backward pass computes every layer's
// per-example pre-activation gradient rows g_{l,i} (unscaled) and, from
// them, ‖∇_i‖² = Σ_l (‖a_{l,i}‖²+1)·‖g_{l,i}‖² over ALL parameters. Since
// example i's gradient of layer l is (a_{l,i} g_{l,i}ᵀ, g_{l,i}), scaling the
// rows g_{l,i} by f_i = min(1, C/(‖∇_i‖+tiny)) scales example i's whole
// gradient by f_i; the summed clipped gradient is then Σ_i f_i∇_i = (aᵀ·diag(f)·G,
// colsum(diag(f)·G)) per layer, the same matmul a plain step does. Extra cost
// over a plain step: O(batch·(D + units)) for norms and row scaling.
//
// Per-layer: f_{l,i} = min(1, C_l/(‖∇_{l,i}‖+tiny)) scales layer l's rows
// only (after the whole backward pass, so lower layers see unscaled
// gradients).
//
// zeta > 0 enables dpvd's local reparameterisation noise in the forward pass.
func (s *stepper) accumulate(ds *data.Dataset, idx []int, zeta float64, rng *rand.Rand, clip bool) {
	if s.state != gradEmpty && s.state != gradSummed {
		panic("trainer: accumulate on a gradient that was already noised or applied")
	}
	m := s.model
	B := s.cfg.BatchSize
	for start := 0; start < len(idx); start += B {
		b := min(B, len(idx)-start)
		for i, k := range idx[start : start+b] {
			copy(s.bx[i*s.d:(i+1)*s.d], ds.X[k*s.d:(k+1)*s.d])
			s.by[i] = ds.Y[k]
		}
		m.forward(s.ws, s.bx[:b*s.d], b, zeta, rng)
		s.correct += m.lossGrad(s.ws, s.by[:b], b)
		for i := 0; i < b; i++ {
			s.lossSum += s.ws.loss[i]
		}
		m.backward(s.ws, b, zeta, clip)
		if clip {
			s.clip(b)
			for li, l := range m.Layers {
				scaleRows(s.ws.grads[li], l.Out, b, s.fac[li])
				// A dropped example's activations may be non-finite too, and
				// Inf·0 is NaN in aᵀ·G: clear them (acts[0] is a copy).
				for i := 0; i < b; i++ {
					if s.fac[li][i] == 0 {
						clear(s.ws.acts[li][i*l.In : (i+1)*l.In])
					}
				}
			}
		}
		m.accumulate(s.ws, b, s.grad)
		s.examples += b
	}
	s.state = gradSummed
}

// clip fills s.fac with the clipping factors of the current batch.
func (s *stepper) clip(b int) {
	ws := s.ws
	if len(s.cfg.PerLayerClip) == 0 {
		c := s.cfg.ClipNorm
		for i := 0; i < b; i++ {
			var sq float64
			for li := range s.model.Layers {
				sq += ws.lsq[li][i]
			}
			f := clipFactor(math.Sqrt(sq), c)
			if f < 1 {
				s.clipped++
			}
			for li := range s.model.Layers {
				s.fac[li][i] = f
			}
		}
		return
	}
	for i := 0; i < b; i++ {
		any := false
		for li := range s.model.Layers {
			f := clipFactor(math.Sqrt(ws.lsq[li][i]), s.cfg.PerLayerClip[li])
			any = any || f < 1
			s.fac[li][i] = f
		}
		if any {
			s.clipped++
		}
	}
}

// clipFactor is min(1, C/(norm+tiny)), and 0 for a NaN or infinite norm:
// such an example is dropped from the sum (its rows are zeroed), because a
// non-finite contribution would have unbounded sensitivity.
func clipFactor(norm, c float64) float32 {
	if !finite(norm) {
		return 0
	}
	return float32(min(1, c/(norm+tiny)))
}

// addCanaries adds to the summed gradient the gradient mag·e_j of each
// gradient canary idx of cs in the lot: already of norm mag (the clipping
// norm), so clipping would leave it whole. It panics unless the gradient
// has just been summed: canaries go in before the noise.
func (s *stepper) addCanaries(cs *canarySet, idx []int) {
	if s.state != gradSummed {
		panic(fmt.Sprintf("trainer: canaries added to a gradient in state %d", s.state))
	}
	for _, k := range idx {
		s.grad[cs.coords[k]] += cs.mag
	}
}

// addNoise adds independent N(0, std²) to every coordinate of the summed
// gradient. It panics unless the gradient has just been summed: noise is
// added exactly once per lot.
//
// Generating the noise in the background during accumulate was tried
// (branch dpstep, 67f7c5b and d09c489) and measured no better, mostly
// worse, on the 2-core shared machine: the matmul already uses every core
// and waits at barriers for its slowest worker.
func (s *stepper) addNoise(std float64, rng *rand.Rand) {
	if s.state != gradSummed && s.state != gradEmpty {
		panic(fmt.Sprintf("trainer: noise added to a gradient in state %d", s.state))
	}
	addGaussian(s.grad, std, rng)
	s.state = gradNoised
}

// noiseChunk is the number of coordinates filled from one independently
// keyed AES-256-CTR stream by addGaussian. It is a constant, so the noise a
// seeded run draws does not depend on GOMAXPROCS or on the machine.
const noiseChunk = 1 << 15

// noiseSerial is the length below which addGaussian fills its chunks on the
// calling goroutine (the result is the same either way).
const noiseSerial = 1 << 16

// addGaussian adds independent N(0, std²) to every coordinate of v.
//
// v is cut into fixed chunks of noiseChunk coordinates. For each chunk a
// 32-byte key is drawn, in chunk order, from rng (four Uint64s), and the
// chunk's noise comes from its own AES-256-CTR keystream under that key
// (ctrSource). The
// chunks are filled concurrently on up to GOMAXPROCS goroutines. The result
// depends only on rng's state and len(v): a seeded run stays reproducible,
// and in an unseeded run (rng a ChaCha8 keyed from crypto/rand) every chunk
// key is CSPRNG output, so the noise remains CSPRNG-derived.
//
// The normals come from stdNormal: the same exact ziggurat sampler as
// math/rand/v2's NormFloat64, computed in float64 and scaled by std before
// rounding to float32 (no approximation of the Gaussian).
//
// Until this version the chunk streams were ChaCha8 (rand.ChaCha8); AES-CTR
// replaced it because the keystream was most of a DP step's extra cost
// (BenchmarkNoiseSources). Seeded runs therefore draw different noise
// than they did before that change, though still reproducibly.
func addGaussian(v []float32, std float64, rng *rand.Rand) {
	if std == 0 || len(v) == 0 {
		return
	}
	fillChunks(v, std, noiseKeys(len(v), rng))
}

// noiseKeys draws from rng, in chunk order, the AES-256 keys of the
// noiseChunk-sized chunks of an n-vector.
func noiseKeys(n int, rng *rand.Rand) [][32]byte {
	keys := make([][32]byte, (n+noiseChunk-1)/noiseChunk)
	for c := range keys {
		for w := 0; w < 4; w++ {
			binary.LittleEndian.PutUint64(keys[c][8*w:], rng.Uint64())
		}
	}
	return keys
}

// fillChunks adds std·N(0, 1) to every coordinate of v, chunk c from
// AES-256-CTR keyed with keys[c], on up to GOMAXPROCS goroutines.
func fillChunks(v []float32, std float64, keys [][32]byte) {
	nc := len(keys)
	fill := func(c int, src *ctrSource) {
		src.reset(keys[c])
		addNormal(v[c*noiseChunk:min(len(v), (c+1)*noiseChunk)], std, src)
	}
	workers := min(nc, runtime.GOMAXPROCS(0))
	if len(v) < noiseSerial || workers < 2 {
		var src ctrSource
		for c := range nc {
			fill(c, &src)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var src ctrSource
			for {
				c := int(next.Add(1) - 1)
				if c >= nc {
					return
				}
				fill(c, &src)
			}
		})
	}
	wg.Wait()
}

// apply performs θ ← θ − lr·grad/denom, then for sgld adds the prior drift
// and Langevin noise. It panics unless the gradient is ready (noised for
// private methods, summed for np); afterwards the gradient is consumed.
func (s *stepper) apply(lr, denom float64, rng *rand.Rand) {
	want := gradNoised
	if !s.cfg.Method.Private() {
		want = gradSummed
	}
	if s.state != want {
		panic(fmt.Sprintf("trainer: apply on a gradient in state %d, want %d", s.state, want))
	}
	k := float32(lr / denom)
	off := 0
	sgld := s.cfg.Method == MethodSGLD
	decay := float32(0)
	langevin := 0.0
	if sgld {
		decay = float32(lr * s.cfg.PriorPrecision / float64(s.n))
		langevin = math.Sqrt(2 * lr * s.cfg.SGLDTemperature / float64(s.n))
	}
	for _, p := range s.model.params() {
		g := s.grad[off : off+len(p)]
		off += len(p)
		for j := range p {
			p[j] -= k * g[j]
		}
		if sgld {
			for j := range p {
				p[j] -= decay * p[j]
			}
			addGaussian(p, langevin, rng)
		}
	}
	s.state = gradApplied
}

// poissonLot appends to dst the indices of a Poisson sample of [0, n) with
// rate q, using geometric gaps (O(qn) draws, not O(n)).
func poissonLot(dst []int, n int, q float64, rng *rand.Rand) []int {
	dst = dst[:0]
	if q >= 1 {
		for i := 0; i < n; i++ {
			dst = append(dst, i)
		}
		return dst
	}
	lq := math.Log1p(-q)
	i := -1
	for {
		u := 1 - rng.Float64() // (0, 1]
		gap := math.Floor(math.Log(u) / lq)
		if gap >= float64(n) {
			return dst
		}
		i += 1 + int(gap)
		if i >= n {
			return dst
		}
		dst = append(dst, i)
	}
}
