package mechanism

import (
	"math"
	"testing"
)

// TestGaussianPairMirror: the add pair's tails at l are the remove
// pair's at −l mirrored, bit for bit (both evaluate the same normal tails
// at the same output x), on a grid of losses through both ends of the
// support, log(1−q) and the +∞ cut of x included; and MirrorOf names
// exactly the other direction of the same σ and q.
func TestGaussianPairMirror(t *testing.T) {
	bits := func(t Tails) [4]uint64 {
		return [4]uint64{math.Float64bits(t.PAbove), math.Float64bits(t.QAbove), math.Float64bits(t.PBelow), math.Float64bits(t.QBelow)}
	}
	for _, c := range []struct{ sigma, q float64 }{{1, 1e-4}, {0.5, 1e-4}, {10, 0.01}, {0.3, 0.5}, {2, 1}} {
		rem, add := newGaussianPair(c.sigma, c.q, false), newGaussianPair(c.sigma, c.q, true)
		if !rem.MirrorOf(&add) || !add.MirrorOf(&rem) || rem.MirrorOf(&rem) || add.MirrorOf(&add) {
			t.Errorf("σ %g, q %g: MirrorOf wrong", c.sigma, c.q)
		}
		other := newGaussianPair(c.sigma*1.5, c.q, true)
		if rem.MirrorOf(&other) {
			t.Errorf("σ %g, q %g: mirrors another σ", c.sigma, c.q)
		}
		lo, hi := rem.Truncation(1e-30)
		h := (hi - lo) / 997
		ls := []float64{0, rem.log1mq, -rem.log1mq, math.Nextafter(rem.log1mq, 0), 800, -800, 1e300, -1e300}
		for k := math.Floor(lo/h) - 5; k <= math.Ceil(hi/h)+5; k++ {
			ls = append(ls, k*h)
		}
		for _, l := range ls {
			for _, pr := range [][2]*gaussianPair{{&rem, &add}, {&add, &rem}} {
				got, want := pr[1].Tails(-l), pr[0].Tails(l).Mirror()
				if bits(got) != bits(want) {
					t.Fatalf("σ %g, q %g, add %v: Tails(%g) = %+v, mirror of Tails(%g) %+v", c.sigma, c.q, pr[1].add, -l, got, l, want)
				}
			}
		}
	}
}

// TestGaussianPairTailsAbove: TailsAbove is Tails' PAbove and QAbove bit
// for bit, for both directions, on a grid of losses through both ends of
// the support, log(1−q) and the +∞ cut of x included, and near the
// output x = 0 and 1 where the normal tails change sides.
func TestGaussianPairTailsAbove(t *testing.T) {
	for _, c := range []struct{ sigma, q float64 }{{1, 1e-4}, {0.5, 1e-4}, {10, 0.01}, {0.3, 0.5}, {2, 1}} {
		for _, p := range []gaussianPair{newGaussianPair(c.sigma, c.q, false), newGaussianPair(c.sigma, c.q, true)} {
			var ap AboveTails = &p
			lo, hi := p.Truncation(1e-30)
			h := (hi - lo) / 997
			ls := []float64{0, p.log1mq, -p.log1mq, math.Nextafter(p.log1mq, 0), math.Nextafter(-p.log1mq, 0), 800, -800, 1e300, -1e300}
			for _, x := range []float64{0, 1} {
				for d := -3.0; d <= 3; d++ {
					l := p.lRemove(x + d*1e-9)
					ls = append(ls, l, -l)
				}
			}
			for k := math.Floor(lo/h) - 5; k <= math.Ceil(hi/h)+5; k++ {
				ls = append(ls, k*h)
			}
			for _, l := range ls {
				tl := p.Tails(l)
				pa, qa := ap.TailsAbove(l)
				if math.Float64bits(pa) != math.Float64bits(tl.PAbove) || math.Float64bits(qa) != math.Float64bits(tl.QAbove) {
					t.Fatalf("σ %g, q %g, add %v: TailsAbove(%g) = %g, %g; Tails %+v", c.sigma, c.q, p.add, l, pa, qa, tl)
				}
			}
		}
	}
}
