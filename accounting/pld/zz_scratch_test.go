package pld

import (
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/work"
)

func TestScratchLam2(t *testing.T) {
	for _, c := range []struct {
		s, q     float64
		T        int
		eps, del float64
	}{{1, 1e-3, 10000, 0.85355, 1e-10}, {1, 1e-4, 100000, 0.2356, 1e-10}, {0.5, 1e-4, 100000, 5.9275, 1e-10}, {0.7985, 0.0005428, 821, 0.85504, 7.795e-10}} {
		a := accountantFor(t, accounting.SubsampledGaussian(c.s, c.q, c.T), Options{})
		lv, err := a.resultFor(t.Context(), c.del)
		if err != nil {
			t.Fatal(err)
		}
		r := lv.res
		for d := range r.dirs {
			c0, _ := r.get(t.Context(), d, true, 0)
			lam := r.saddle(d, c.eps)
			if lam == 0 {
				t.Logf("%v d%d: saddle 0, n0 %d", c, d, len(c0.c))
				continue
			}
			for k := 0; k <= 2; k += 2 {
				l := math.Exp2(math.Round(4*math.Log2(lam)-float64(k)) / 4)
				m := work.NewMeter(0)
				cc, err := r.get(work.With(t.Context(), m), d, true, l)
				if err != nil {
					t.Logf("%v d%d λ %g: %v", c, d, l, err)
					continue
				}
				dl := cc.delta(c.eps, true)
				t.Logf("%v cut %v d%d λ %.4g n0 %d n %d units %d δ %.4g noisy@δ/16 %v", c, r.cut, d, l, len(c0.c), len(cc.c), m.Count(), dl, cc.noisyAt(c.eps, dl/16))
			}
		}
	}
}
