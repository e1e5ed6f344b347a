package trainer

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"math"
)

// NoiseGenerator names how the trainer turns its seed or CSPRNG key into
// Gaussian noise (addGaussian). Seeded runs are reproducible only between
// builds with the same NoiseGenerator; caches of seeded results
// (reproduce) include it in their keys.
const NoiseGenerator = "aes256ctr-ziggurat/v1"

// ctrBytes is the size of the keystream block ctrSource buffers.
const ctrBytes = 4096

// ctrSource is a stream of uniform 64-bit words from AES-256 in counter
// mode under a 32-byte key, starting from a zero counter: the block-cipher
// construction of NIST SP 800-90A's CTR_DRBG, without its reseeding or
// derivation function (keys come from the caller's CSPRNG, and one key
// produces at most a few hundred kilobytes). On amd64 and arm64 the
// standard library runs AES-CTR with the AES instructions, several times
// faster per word than rand.ChaCha8's Uint64 on this project's machine
// (see BenchmarkNoiseSources); that keystream speed is what makes the
// DP-SGD noise cheap.
//
// It implements rand.Source, so rand.New(src).NormFloat64() is the
// reference the tests compare stdNormal against. A ctrSource is not safe
// for concurrent use.
type ctrSource struct {
	stream cipher.Stream
	pos    int
	buf    [ctrBytes]byte
}

// reset rekeys s: the following words are the AES-256-CTR keystream under
// key from counter zero.
func (s *ctrSource) reset(key [32]byte) {
	block, err := aes.NewCipher(key[:])
	if err != nil {
		panic("trainer: " + err.Error()) // unreachable: 32 bytes is a valid AES key length
	}
	var iv [aes.BlockSize]byte
	s.stream = cipher.NewCTR(block, iv[:])
	s.pos = ctrBytes
}

// refill replaces the buffer with the next ctrBytes of keystream.
func (s *ctrSource) refill() {
	clear(s.buf[:])
	s.stream.XORKeyStream(s.buf[:], s.buf[:])
	s.pos = 0
}

// Uint64 returns the next 8 bytes of keystream, little-endian.
func (s *ctrSource) Uint64() uint64 {
	if s.pos >= ctrBytes {
		s.refill()
	}
	u := binary.LittleEndian.Uint64(s.buf[s.pos:])
	s.pos += 8
	return u
}

// addNormal adds std·z to each v[j], z standard normal from src: stdNormal
// with its fast path inlined and the keystream read straight from src's
// buffer (same draws, same values as calling stdNormal in a loop).
func addNormal(v []float32, std float64, src *ctrSource) {
	buf := &src.buf
	j := 0
	for j < len(v) {
		if src.pos >= ctrBytes {
			src.refill()
		}
		// Consume the buffered words with a local read position; a
		// slow-path draw reads further words through src.Uint64, so pos is
		// handed over and taken back around it.
		pos := src.pos
		for pos <= ctrBytes-8 && j < len(v) {
			u := binary.LittleEndian.Uint64(buf[pos : pos+8])
			pos += 8
			k := int32(u)
			i := u >> 32 & 0x7F
			var x float64
			if absInt32(k) < zigK[i] {
				x = float64(k) * float64(zigW[i])
			} else {
				src.pos = pos
				x = zigSlow(k, i, src)
				pos = src.pos
			}
			v[j] += float32(std * x)
			j++
		}
		src.pos = pos
	}
}

// stdNormal returns a standard normal variate drawn from src with the
// ziggurat method of Marsaglia & Tsang (2000), exactly as math/rand/v2's
// (*Rand).NormFloat64 does (same tables, same use of the uniform stream;
// TestStdNormalMatchesStdlib checks the outputs are bit-identical). It
// exists only to call the concrete *ctrSource instead of going through the
// rand.Source interface. The ziggurat is exact: it samples the normal
// density itself (rejection from the layers plus an exact tail), not an
// approximation of it.
func stdNormal(src *ctrSource) float64 {
	u := src.Uint64()
	j := int32(u) // possibly negative
	i := u >> 32 & 0x7F
	if absInt32(j) < zigK[i] {
		return float64(j) * float64(zigW[i]) // > 98% of draws
	}
	return zigSlow(j, i, src)
}

// zigSlow finishes stdNormal for a first candidate (j, i) outside the
// inner rectangle of its layer: the base strip's exact tail, or the wedge
// test, and on rejection fresh candidates as in NormFloat64.
func zigSlow(j int32, i uint64, src *ctrSource) float64 {
	for {
		x := float64(j) * float64(zigW[i])
		if absInt32(j) < zigK[i] {
			return x
		}
		if i == 0 {
			// Base strip: sample the tail beyond zigR exactly.
			for {
				x = -math.Log(unitFloat64(src)) * (1.0 / zigR)
				y := -math.Log(unitFloat64(src))
				if y+y >= x*x {
					break
				}
			}
			if j > 0 {
				return zigR + x
			}
			return -zigR - x
		}
		if zigF[i]+float32(unitFloat64(src))*(zigF[i-1]-zigF[i]) < float32(math.Exp(-.5*x*x)) {
			return x
		}
		u := src.Uint64()
		j = int32(u)
		i = u >> 32 & 0x7F
	}
}

// unitFloat64 is (*rand.Rand).Float64 on src: uniform in [0, 1).
func unitFloat64(src *ctrSource) float64 {
	return float64(src.Uint64()<<11>>11) / (1 << 53)
}

func absInt32(i int32) uint32 {
	if i < 0 {
		return uint32(-i)
	}
	return uint32(i)
}

// Ziggurat tables for 128 layers (Marsaglia & Tsang 2000, RNOR), built
// the way math/rand/v2's were generated.
const (
	zigR = 3.442619855899      // start of the tail
	zigV = 9.91256303526217e-3 // area of each layer
)

var (
	zigK [128]uint32
	zigW [128]float32
	zigF [128]float32
)

func init() {
	const m1 = 1 << 31
	dn := zigR
	tn := dn
	q := zigV / math.Exp(-.5*dn*dn)
	zigK[0] = uint32((dn / q) * m1)
	zigK[1] = 0
	zigW[0] = float32(q / m1)
	zigW[127] = float32(dn / m1)
	zigF[0] = 1
	zigF[127] = float32(math.Exp(-.5 * dn * dn))
	for i := 126; i >= 1; i-- {
		dn = math.Sqrt(-2 * math.Log(zigV/dn+math.Exp(-.5*dn*dn)))
		zigK[i+1] = uint32((dn / tn) * m1)
		tn = dn
		zigF[i] = float32(math.Exp(-.5 * dn * dn))
		zigW[i] = float32(dn / m1)
	}
}
