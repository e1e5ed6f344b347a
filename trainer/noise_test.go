package trainer

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
)

// newCTR returns a ctrSource keyed with key.
func newCTR(key [32]byte) *ctrSource {
	s := new(ctrSource)
	s.reset(key)
	return s
}

// TestCTRSourceKeystream checks ctrSource's words against AES-256-CTR
// computed by OpenSSL, independently of Go's crypto/cipher:
//
//	head -c 48 /dev/zero | openssl enc -aes-256-ctr \
//	  -K 000102…1e1f -iv 00000000000000000000000000000000 | xxd -p
//
// and that it keeps counting across buffer refills (word ctrBytes/8 is
// compared with a fresh stream's XORKeyStream output at that offset).
func TestCTRSourceKeystream(t *testing.T) {
	var key [32]byte
	for i := range key {
		key[i] = byte(i)
	}
	want, _ := hex.DecodeString("f29000b62a499fd0a9f39a6add2e7780f05d76ae4ab99fe5a6f69b3148c2" +
		"363d0ebcb5deb52c83bd08a8a935182c9199")
	s := newCTR(key)
	for w := 0; w < len(want)/8; w++ {
		if got, exp := s.Uint64(), binary.LittleEndian.Uint64(want[8*w:]); got != exp {
			t.Fatalf("word %d: %016x, want %016x (OpenSSL)", w, got, exp)
		}
	}
	// Across refills: words 0 … 3·ctrBytes/8 against one long keystream.
	long := make([]byte, 3*ctrBytes+64)
	block, _ := aes.NewCipher(key[:])
	cipher.NewCTR(block, make([]byte, aes.BlockSize)).XORKeyStream(long, long)
	s = newCTR(key)
	for w := 0; w < len(long)/8; w++ {
		if got, exp := s.Uint64(), binary.LittleEndian.Uint64(long[8*w:]); got != exp {
			t.Fatalf("word %d: %016x, want %016x", w, got, exp)
		}
	}
}

// TestStdNormalMatchesStdlib checks that stdNormal on a ctrSource returns
// exactly the values math/rand/v2's NormFloat64 returns on a ctrSource
// with the same key: same ziggurat tables, same algorithm, same use of the
// stream (so the sampler inherits the standard library's exactness).
func TestStdNormalMatchesStdlib(t *testing.T) {
	n := 3_000_000
	if testing.Short() {
		n = 300_000
	}
	for _, key := range [][32]byte{{}, {1, 2, 3}, {0xff, 9: 7}} {
		ref := rand.New(newCTR(key))
		src := newCTR(key)
		for i := 0; i < n; i++ {
			want := ref.NormFloat64()
			if got := stdNormal(src); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("key %x draw %d: stdNormal %v, NormFloat64 %v", key[:4], i, got, want)
			}
		}
	}
}

// TestChunkedNoiseStatistics checks addGaussian's output over several
// chunks: mean ≈ 0, variance ≈ std², and no correlation between adjacent
// chunks (which come from different AES keys) or between neighbouring
// coordinates. The seed is fixed, so the outcome is deterministic; the
// bounds are 5 standard errors, a false-rejection probability below 6e-7
// per check for a correct sampler and a fresh seed.
func TestChunkedNoiseStatistics(t *testing.T) {
	const std = 2.5
	n := 40 * noiseChunk // 1.3M coordinates, 40 chunks
	v := make([]float32, n)
	addGaussian(v, std, rand.New(rand.NewChaCha8([32]byte{42})))
	var s, s2 float64
	for _, x := range v {
		s += float64(x)
		s2 += float64(x) * float64(x)
	}
	N := float64(n)
	mean := s / N
	variance := s2/N - mean*mean
	if se := std / math.Sqrt(N); math.Abs(mean) > 5*se {
		t.Errorf("mean %g, want 0 ± %g", mean, 5*se)
	}
	// Var of the sample variance of a normal: 2σ⁴/(n−1).
	if se := std * std * math.Sqrt(2/(N-1)); math.Abs(variance-std*std) > 5*se {
		t.Errorf("variance %g, want %g ± %g", variance, std*std, 5*se)
	}
	// Correlation of chunk c with chunk c+1, coordinate by coordinate,
	// pooled over all adjacent pairs: under independence each term has
	// mean 0 and the pooled estimate has s.e. 1/√(pairs).
	var cross float64
	pairs := 0
	for c := 0; c+1 < n/noiseChunk; c++ {
		a := v[c*noiseChunk : (c+1)*noiseChunk]
		b := v[(c+1)*noiseChunk : (c+2)*noiseChunk]
		for j := range a {
			cross += float64(a[j]) * float64(b[j])
		}
		pairs += noiseChunk
	}
	if r, se := cross/float64(pairs)/(std*std), 1/math.Sqrt(float64(pairs)); math.Abs(r) > 5*se {
		t.Errorf("adjacent-chunk correlation %g, want 0 ± %g", r, 5*se)
	}
	// Per pair of adjacent chunks too (s.e. 1/√noiseChunk ≈ 0.0055): a
	// repeated or shifted key would give a correlation near 1.
	for c := 0; c+1 < n/noiseChunk; c++ {
		a := v[c*noiseChunk : (c+1)*noiseChunk]
		b := v[(c+1)*noiseChunk : (c+2)*noiseChunk]
		var x float64
		for j := range a {
			x += float64(a[j]) * float64(b[j])
		}
		if r := x / noiseChunk / (std * std); math.Abs(r) > 6/math.Sqrt(noiseChunk) {
			t.Errorf("chunks %d and %d: correlation %g", c, c+1, r)
		}
	}
	// Lag-1 correlation within the vector.
	var lag float64
	for j := 0; j+1 < n; j++ {
		lag += float64(v[j]) * float64(v[j+1])
	}
	if r, se := lag/(N-1)/(std*std), 1/math.Sqrt(N-1); math.Abs(r) > 5*se {
		t.Errorf("lag-1 correlation %g, want 0 ± %g", r, 5*se)
	}
	// The last, partial chunk is noised too.
	w := make([]float32, 2*noiseChunk+3)
	addGaussian(w, 1, rand.New(rand.NewChaCha8([32]byte{7})))
	for j := len(w) - 3; j < len(w); j++ {
		if w[j] == 0 {
			t.Errorf("coordinate %d of %d not noised", j, len(w))
		}
	}
}

// TestNoiseIndependentOfGOMAXPROCS checks that the noise depends only on the
// seed: the same vector with GOMAXPROCS 1, 2 and 4 (serial and parallel
// filling).
func TestNoiseIndependentOfGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	n := 795_010 // the MNIST model's parameter count
	var ref []float32
	for _, procs := range []int{1, 4, 2} {
		runtime.GOMAXPROCS(procs)
		v := make([]float32, n)
		r := rand.New(rand.NewChaCha8([32]byte{3}))
		addGaussian(v, 4, r)
		tail := r.Uint64() // rng's position afterwards must not depend on procs either
		v = append(v, math.Float32frombits(uint32(tail)), math.Float32frombits(uint32(tail>>32)))
		if ref == nil {
			ref = v
			continue
		}
		for j := range v {
			if math.Float32bits(v[j]) != math.Float32bits(ref[j]) {
				t.Fatalf("GOMAXPROCS %d: coordinate %d is %v, with GOMAXPROCS 1 %v", procs, j, v[j], ref[j])
			}
		}
	}
}

// TestReluMask checks the branchless mask against the plain rule, including
// signed zeros, infinities and NaNs.
func TestReluMask(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -float32(math.NaN()), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32}
	pre := make([]float32, 10000)
	da := make([]float32, len(pre))
	for j := range pre {
		pre[j] = float32(r.NormFloat64())
		if j < len(special) {
			pre[j] = special[j]
		}
		da[j] = float32(r.NormFloat64())
		if j%97 == 0 {
			da[j] = float32(math.NaN())
		}
	}
	got := append([]float32(nil), da...)
	reluMask(got, pre)
	for j, v := range pre {
		want := da[j]
		if v <= 0 {
			want = 0
		}
		if math.Float32bits(got[j]) != math.Float32bits(want) {
			t.Fatalf("pre %v, da %v: got %v, want %v", v, da[j], got[j], want)
		}
	}
}

// TestSeededRunIndependentOfGOMAXPROCS trains the same seeded runs with
// GOMAXPROCS 1 and 4 and requires bit-identical parameters. The model has
// 81,603 parameters (3 noise chunks, filled in parallel when GOMAXPROCS > 1).
func TestSeededRunIndependentOfGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	train := blobs(100, 64, 3, 0.1, 5)
	for _, m := range []Method{MethodDPSGD, MethodDPVD, MethodSGLD} {
		cfg := Config{Method: m, Hidden: []int{1200}, LotSize: 25, Epochs: 2, NoiseMultiplier: 1.1, Seed: u64(17)}
		var ref *Result
		for _, procs := range []int{1, 4} {
			runtime.GOMAXPROCS(procs)
			res, err := Train(context.Background(), cfg, train, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref = res
				continue
			}
			if !reflect.DeepEqual(res.Model.Layers, ref.Model.Layers) {
				t.Errorf("%s: parameters after %d steps differ between GOMAXPROCS 1 and %d", m, res.Steps, procs)
			}
		}
	}
}

// TestNormalFillsMatchStdlib checks addNormal's inlined sampler against
// NormFloat64 on the same stream.
func TestNormalFillsMatchStdlib(t *testing.T) {
	const n = 1_000_000
	const std = 1.7
	key := [32]byte{9, 9}
	ref := rand.New(newCTR(key))
	add := make([]float32, n)
	for j := range add {
		add[j] = float32(j%7) - 3
	}
	base := append([]float32(nil), add...)
	addNormal(add, std, newCTR(key))
	for j := range add {
		want := float32(std * ref.NormFloat64())
		if w := base[j] + want; math.Float32bits(add[j]) != math.Float32bits(w) {
			t.Fatalf("addNormal[%d] = %v, want %v", j, add[j], w)
		}
	}
}
