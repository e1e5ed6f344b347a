package search

import "testing"

// TestLargestIntFrom checks the seeded search against the plain one: the
// same answer exactly with relTol 0, the lower end of a bracket at most
// relTol·n wide otherwise, and no call below the seed.
func TestLargestIntFrom(t *testing.T) {
	for _, c := range []struct{ star, lo, max int }{{1724, 1000, 1 << 30}, {5, 5, 100}, {100, 3, 100}, {1 << 29, 1 << 20, 1 << 30}} {
		below := false
		ok := func(n int) (bool, error) {
			below = below || n < c.lo
			return n <= c.star, nil
		}
		n, calls, err := LargestIntFrom(ok, c.lo, c.max, 0)
		if err != nil || n != c.star || below {
			t.Errorf("%+v: got %d (%d calls, %v), below the seed %v", c, n, calls, err, below)
		}
		n, calls2, err := LargestIntFrom(ok, c.lo, c.max, 1e-3)
		if err != nil || n > c.star || float64(c.star-n) > 1e-3*float64(n)+1 || calls2 > calls {
			t.Errorf("%+v, relTol 1e-3: got %d in %d calls (exact: %d)", c, n, calls2, calls)
		}
	}
	if _, _, err := LargestIntFrom(func(int) (bool, error) { return true, nil }, 0, 10, 0); err == nil {
		t.Error("lo 0: want an error")
	}
}
