package pld

import (
	"math"
	"testing"
)

// TestChernoffMinWalk: chernoffMin's walk over the losses and the λ
// finds, at every loss, the least bound a scan of every λ finds (its
// λ grid and the cumulant of a bulk of the two-scale bounds: a
// discretised Gaussian of 512 cells composed 1e5 times), to the bit; the
// scan was 11% of a σ search's CPU.
func TestChernoffMinWalk(t *testing.T) {
	const cells, h, n = 512, 1e-5, 1e5
	beta := pmf{lo: -300, p: make([]float64, cells)}
	var sum float64
	for i := range beta.p {
		x := (float64(i) - 300) / 60
		beta.p[i] = math.Exp(-x * x / 2)
		sum += beta.p[i]
	}
	for i := range beta.p {
		beta.p[i] /= sum
	}
	// The composed losses spread over about ±0.2 (its standard
	// deviation √n·60h): the losses from −0.5 to 1.5.
	const m, hs, s0 = 20000, 1e-4, -0.5
	width := hs * m
	var lams, ks, logLams []float64
	for j := 0; j <= 120; j++ {
		lam := math.Exp2(float64(j)/3) / width
		k := n * logMGF(&beta, h, lam)
		if math.IsNaN(k) || math.IsInf(k, 0) {
			break
		}
		lams = append(lams, lam)
		ks = append(ks, k+1e-9*(1+math.Abs(k)))
		logLams = append(logLams, math.Log(lam))
	}
	if len(lams) < 20 {
		t.Fatalf("%d λ values, want a grid of at least 20", len(lams))
	}
	got := chernoffMin(lams, ks, logLams, s0, hs, m)
	moved := 0
	prev := -1
	for i := range got {
		s := s0 + float64(i)*hs
		best, arg := math.Inf(1), -1
		for j := range lams {
			if v := ks[j] - lams[j]*s - 1 - logLams[j]; v < best {
				best, arg = v, j
			}
		}
		if got[i] != best {
			t.Fatalf("loss %d (s %g): walk %v, scan %v (λ index %d)", i, s, got[i], best, arg)
		}
		if arg != prev {
			moved++
			prev = arg
		}
	}
	t.Logf("%d λ values, the best one changed %d times", len(lams), moved)
	if moved < 5 {
		t.Errorf("the best λ changed %d times over the losses, want a test that moves it", moved)
	}
	if v := chernoffMin(nil, nil, nil, 0, 1, 3); !math.IsInf(v[0], 1) || len(v) != 3 {
		t.Errorf("no λ: %v, want +Inf", v)
	}
}
