package mechanism

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"testing"
)

// readRefCSV reads a reference table of testdata/mechanism (written by
// gen_discrete.py) as rows of named fields.
func readRefCSV(t *testing.T, name string) []map[string]string {
	t.Helper()
	f, err := os.Open("../../testdata/mechanism/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, k := range recs[0] {
			m[k] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

func refFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDGTails: the discrete Gaussian's log P(X ≥ k), by direct sums (σ
// 0.3, 3, 300 near the centre) and by Euler–Maclaurin (σ 3000, and σ 300
// far out), is within TailsRelError of the mpmath sums.
func TestDGTails(t *testing.T) {
	for _, r := range readRefCSV(t, "dg_tails.csv") {
		s, k, want := refFloat(t, r["sigma"]), refFloat(t, r["k"]), refFloat(t, r["log_upper"])
		got := newDGNoise(s).logUpper(k)
		if d := math.Abs(got - want); !(d <= TailsRelError) {
			t.Errorf("σ %g, k %g: log P(X ≥ k) = %.17g, want %.17g (off by %.3g, more than %g)", s, k, got, want, d, TailsRelError)
		}
	}
}

// TestShiftPairComplement: both tails of the discrete pairs are
// complementary masses, and the threshold puts each atom on its own side:
// P(L > L(x)) excludes x, P(L > L(x)⁻) includes it.
func TestShiftPairComplement(t *testing.T) {
	pairs := map[string]*shiftPair{"dg 0.7": newDGPair(0.7, 1), "dg 40 Δ3": newDGPair(40, 3), "dlap 0.5 Δ1": newDLapPair(0.5, 1), "dlap 0.3 Δ4": newDLapPair(0.3, 4)}
	for name, p := range pairs {
		for x := -5.0; x <= 8; x++ {
			l := p.loss(x)
			at, below := p.Tails(l), p.Tails(math.Nextafter(l, math.Inf(-1)))
			for _, tl := range []Tails{at, below} {
				if s := math.Exp(tl.PAbove) + math.Exp(tl.PBelow); math.Abs(s-1) > 1e-15 {
					t.Errorf("%s x=%g: P(L > l) + P(L ≤ l) = %.17g", name, x, s)
				}
			}
			m := math.Exp(p.noise.logPMF(x))
			got := math.Exp(below.PAbove) - math.Exp(at.PAbove)
			if at.PBelow < -math.Ln2 { // difference the smaller side
				got = math.Exp(at.PBelow) - math.Exp(below.PBelow)
			}
			if (math.IsInf(p.lMax, 1) || x > 0 && x < p.delta) && math.Abs(got-m) > 1e-12*m+1e-300 {
				t.Errorf("%s x=%g: the atom at L(x) = %g holds %g of P, want P[x] = %g", name, x, l, got, m)
			}
		}
	}
}

// TestDGPoissonSummation: past dgSumDirect integers the sampled discrete
// Gaussian's curve is the continuous Gaussian's at σ/Δ plus the Poisson
// summation error; it is at least the moment summed over the integers
// (both directions) and within 1e-9 of it.
func TestDGPoissonSummation(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ sigma, delta, q float64 }{{300, 1, 0.01}, {400, 7, 0.1}, {1000, 30, 0.001}} {
		n := newDGNoise(c.sigma)
		r := dgRDP{sigma: c.sigma, sens: c.delta, q: c.q, noise: n}
		for _, l := range []float64{0.5, 3, 17.25, 64} {
			if n.window(c.delta, c.q, l) <= dgSumDirect {
				t.Fatalf("σ %g λ %g: window %g, want the Poisson-summation path", c.sigma, l, n.window(c.delta, c.q, l))
			}
			got, err := r.LogMomentAt(ctx, NewCache(), 1, l)
			if err != nil {
				t.Fatal(err)
			}
			rem, ok1 := n.sampledMoment(c.delta, c.q, l+1)
			add, ok2 := n.sampledMoment(c.delta, c.q, -l)
			if !ok1 || !ok2 {
				t.Fatalf("σ %g λ %g: no sum", c.sigma, l)
			}
			want := math.Max(math.Max(rem, add), 0)
			// Both are upper bounds, each raised by its own slack: the
			// sum's up to ~1e-13 absolute, the Gaussian integrator's a
			// few 1e-7 relative at fractional orders.
			if !(got >= want-1e-9*want-2e-13 && got <= want*(1+1e-6)+2e-13) {
				t.Errorf("σ %g Δ %g q %g λ %g: %.17g, summed %.17g", c.sigma, c.delta, c.q, l, got, want)
			}
		}
	}
}
