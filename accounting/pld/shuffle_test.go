package pld

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testenv"
	"github.com/dpcalc/dpcalc/internal/testref"
	"github.com/dpcalc/dpcalc/internal/work"
)

// TestShuffledLowerAgainstMpmath checks one epoch against the exact ε of
// the maximum-coordinate pair, both orders, at 50 digits
// (testdata/pld/gen_shuffle_lower.py): never above it, within 0.1%.
func TestShuffledLowerAgainstMpmath(t *testing.T) {
	rows := testref.CSV(t, "pld/shuffle_lower_ref.csv")[1:]
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	for _, r := range rows {
		sigma, _ := strconv.ParseFloat(r[0], 64)
		b, _ := strconv.Atoi(r[1])
		unused, _ := strconv.ParseFloat(r[2], 64)
		delta, _ := strconv.ParseFloat(r[3], 64)
		want, _ := strconv.ParseFloat(r[4], 64)
		got, err := ShuffledLowerEpsilon(t.Context(), sigma, b, 1, unused, delta)
		if err != nil {
			t.Fatal(err)
		}
		if got > want || got < want*(1-1e-3) {
			t.Errorf("σ %g b %d r %g δ %g: lower %.10g, exact %.10g", sigma, b, unused, delta, got, want)
		}
	}
}

// TestShuffledLowerOneBatch checks b = 1 (every epoch one Gaussian release
// with μ = 1/σ) against the Gaussian closed form for E epochs (μ√E), and
// the order of the bounds: lower ≤ exact = the certified upper bound.
func TestShuffledLowerOneBatch(t *testing.T) {
	for _, c := range []struct {
		sigma  float64
		epochs int
		delta  float64
	}{{2, 1, 1e-5}, {2, 100, 1e-5}, {0.7, 30, 1e-8}, {10, 1000, 1e-6}} {
		got, err := ShuffledLowerEpsilon(t.Context(), c.sigma, 1, c.epochs, 0, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		lo, _ := closedEpsilon(c.sigma/math.Sqrt(float64(c.epochs)), c.delta)
		if got > lo || got < lo*(1-1e-3) {
			t.Errorf("%+v: lower %.10g, exact %.10g", c, got, lo)
		}
	}
}

// TestShuffledLowerMonotone: more epochs or less noise never lower the
// bound, and it stays below the certified bound without amplification.
func TestShuffledLowerMonotone(t *testing.T) {
	prev := 0.0
	for _, e := range []int{1, 2, 5, 10, 30, 100, 300} {
		got, err := ShuffledLowerEpsilon(t.Context(), 1, 100, e, 0, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		up, _ := closedEpsilon(1/math.Sqrt(float64(e)), 1e-5)
		if got < prev*(1-1e-9) || got > up {
			t.Errorf("E %d: lower %g after %g; certified %g", e, got, prev, up)
		}
		prev = got
	}
	prev = math.Inf(1)
	for _, s := range []float64{0.3, 0.5, 1, 2, 4, 8} {
		got, err := ShuffledLowerEpsilon(t.Context(), s, 100, 10, 0, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if got > prev*(1+1e-9) {
			t.Errorf("σ %g: lower %g after %g", s, got, prev)
		}
		prev = got
	}
}

// TestShuffledLowerEdges: bad input is a ParamError naming it; extremes
// answer a finite value ≥ 0 quickly: within shuffledEdgeWork units of work
// (internal/work) each, on any machine. The default run checks every σ,
// batch count, epoch count and δ of the table several times; the long test
// step checks the whole cross product.
func TestShuffledLowerEdges(t *testing.T) {
	var pe *accounting.ParamError
	for _, c := range []struct {
		sigma     float64
		b, e      int
		unused, d float64
		name      string
	}{
		{0, 10, 1, 0, 1e-5, "sigma"}, {math.NaN(), 10, 1, 0, 1e-5, "sigma"}, {math.Inf(1), 10, 1, 0, 1e-5, "sigma"},
		{1, 0, 1, 0, 1e-5, "batches"}, {1, 10, 0, 0, 1e-5, "epochs"}, {1, 10, 1, 1, 1e-5, "unused"},
		{1, 10, 1, math.NaN(), 1e-5, "unused"}, {1, 10, 1, 0, 1, "delta"}, {1, 10, 1, 0, math.NaN(), "delta"},
	} {
		_, err := ShuffledLowerEpsilon(t.Context(), c.sigma, c.b, c.e, c.unused, c.d)
		if !errors.As(err, &pe) || pe.Name != c.name {
			t.Errorf("%+v: %v, want a ParamError naming %s", c, err, c.name)
		}
	}
	sigmas := []float64{5e-324, 1e-150, 1e-6, 0.01, 1, 1e3, 1e150, math.MaxFloat64}
	bs := []int{1, 7, 1 << 20, 1 << 31}
	es := []int{1, 1000, 1 << 40}
	ds := []float64{5e-324, 1e-12, 0.5}
	var most int64
	mostAt := ""
	n := 0
	for i, sigma := range sigmas {
		for j, b := range bs {
			for k, e := range es {
				for l, d := range ds {
					// Default: a cover with every value of each factor
					// (46 of the 288 points, about 1/25 of the cost).
					if !testenv.Long() && (i+j+k+l)%6 != 0 {
						continue
					}
					n++
					name := fmt.Sprintf("σ %g b %d E %d δ %g", sigma, b, e, d)
					m := work.NewMeter(shuffledEdgeWork)
					got, err := ShuffledLowerEpsilon(work.With(t.Context(), m), sigma, b, e, 0.01, d)
					if err != nil || !(got >= 0) || math.IsInf(got, 0) {
						t.Errorf("%s: %v, %v (%d units of work)", name, got, err, m.Count())
					}
					if m.Count() > most {
						most, mostAt = m.Count(), name
					}
				}
			}
		}
	}
	t.Logf("%d points; the most work %d units (limit %d) at %s", n, most, shuffledEdgeWork, mostAt)
}

// shuffledEdgeWork bounds the work of one ShuffledLowerEpsilon call of
// TestShuffledLowerEdges: 3× the most of the whole table (31,875 units at
// σ 1, b 2^20, E 1000; about 2.5 s on an idle core).
const shuffledEdgeWork = 100000

func ExampleShuffledLowerEpsilon() {
	// MNIST-sized training: N = 60,000, B = 600 (100 batches per epoch),
	// σ = 4 over the clipping norm (σ/2 = 2 against the replace-one
	// sensitivity), 100 epochs.
	lo, err := ShuffledLowerEpsilon(context.Background(), 2, 100, 100, 0, 1e-5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("the true ε at δ = 1e-5 is at least %.3f\n", lo)
	// Output: the true ε at δ = 1e-5 is at least 0.887
}
