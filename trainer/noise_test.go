package trainer

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStdNormalMatchesStdlib checks that stdNormal on a ChaCha8 returns
// exactly the values math/rand/v2's NormFloat64 returns on a ChaCha8 with
// the same key: same ziggurat tables, same algorithm, same use of the
// stream (so the sampler inherits the standard library's exactness).
func TestStdNormalMatchesStdlib(t *testing.T) {
	n := 3_000_000
	if testing.Short() {
		n = 300_000
	}
	for _, key := range [][32]byte{{}, {1, 2, 3}, {0xff, 9: 7}} {
		ref := rand.New(rand.NewChaCha8(key))
		src := rand.NewChaCha8(key)
		for i := 0; i < n; i++ {
			want := ref.NormFloat64()
			if got := stdNormal(src); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("key %x draw %d: stdNormal %v, NormFloat64 %v", key[:4], i, got, want)
			}
		}
	}
}
