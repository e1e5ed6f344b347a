package pld

import (
	"strconv"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/moments"
	"github.com/dpcalc/dpcalc/internal/testref"
)

// worAccountant returns a replace-one pld accountant holding steps
// repetitions of a Gaussian with noise sigma on m of n records.
func worAccountant(t *testing.T, sigma float64, n, m, steps int) *Accountant {
	t.Helper()
	a, err := New(Options{}, accounting.WithAdjacency(accounting.ReplaceOne))
	if err != nil {
		t.Fatal(err)
	}
	e := accounting.SampledWithoutReplacement{SourceDatasetSize: n, SampleSize: m, Event: accounting.Gaussian{NoiseMultiplier: sigma}}
	if err := a.Compose(e, steps); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestWORAgainstMirror checks the certified interval for fixed-size batches
// against testdata/pld/wor_ref.csv (gen_wor_ref.py): an independent
// construction of the symmetric pair (the remove loss mirrored onto the
// negative half-line), composed by numpy FFT on three grids and
// extrapolated. Composing only one direction, as for Poisson sampling,
// would miss it by 15% on the first row.
func TestWORAgainstMirror(t *testing.T) {
	sizes := map[string][2]int{"0.01": {60000, 600}, "0.05": {2000, 100}, "0.02": {5000, 100}, "0.004": {25000, 100}}
	rows := testref.CSV(t, "pld/wor_ref.csv")[1:]
	if len(rows) != 4 {
		t.Fatalf("%d rows in wor_ref.csv, want 4", len(rows))
	}
	for _, r := range rows {
		sigma, _ := strconv.ParseFloat(r[0], 64)
		steps, _ := strconv.Atoi(r[2])
		delta, _ := strconv.ParseFloat(r[3], 64)
		fine, _ := strconv.ParseFloat(r[6], 64)
		ref, _ := strconv.ParseFloat(r[7], 64)
		nm, ok := sizes[r[1]]
		if !ok {
			t.Fatalf("no sizes for q = %s", r[1])
		}
		a := worAccountant(t, sigma, nm[0], nm[1], steps)
		b, err := a.EpsilonBracket(t.Context(), delta)
		if err != nil {
			t.Fatal(err)
		}
		lo, up := b.PairLower, b.Upper // the pair's interval
		// The estimate's own error: half its last grid step's change.
		tol := 5e-4*up + (fine-ref)/2
		if ref < lo-tol || ref > up+tol {
			t.Errorf("σ %g q %s T %d δ %g: certified [%.6f, %.6f], mirror estimate %.6f (± %.1e)", sigma, r[1], steps, delta, lo, up, ref, tol)
		}
		if (up-lo)/up > 2e-3 {
			t.Errorf("σ %g q %s: bracket [%.6f, %.6f] wider than 0.2%%", sigma, r[1], lo, up)
		}
	}
}

// TestWORBoundsOthers checks the fixed-size interval against the other
// bounds of the same steps: the pair's lies above both Poisson directions
// composed on their own (the symmetric pair dominates each) and below the
// rdp bound of Wang, Balle, Kasiviswanathan (its upper end is the minimum
// with it); the run's lower end is the Poisson pairs'.
func TestWORBoundsOthers(t *testing.T) {
	const sigma, n, m, steps, delta = 2.0, 60000, 600, 10000, 1e-5
	a := worAccountant(t, sigma, n, m, steps)
	b, err := a.EpsilonBracket(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	lo, up := b.PairLower, b.Upper // the pair's interval
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Compose(accounting.PoissonSampled{SamplingRate: float64(m) / n, Event: accounting.Gaussian{NoiseMultiplier: sigma}}, steps); err != nil {
		t.Fatal(err)
	}
	_, pUp, err := p.EpsilonBounds(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	if lo <= pUp*1.1 {
		t.Errorf("fixed-size pair's lower %.6f not 10%% above the Poisson add-remove upper %.6f", lo, pUp)
	}
	// The run's lower end is the Poisson pairs' (a fixed pair of neighbours
	// attains them): at most their upper end.
	pLo, _, err := p.EpsilonBounds(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	if !b.PairOnly || b.Lower > pUp || b.Lower < pLo*(1-1e-4) {
		t.Errorf("fixed-size run's lower %.6f (pair only %v), want in the Poisson [%.6f, %.6f]", b.Lower, b.PairOnly, pLo, pUp)
	}
	r, err := moments.NewRDP(nil, accounting.WithAdjacency(accounting.ReplaceOne))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Compose(accounting.SampledWithoutReplacement{SourceDatasetSize: n, SampleSize: m, Event: accounting.Gaussian{NoiseMultiplier: sigma}}, steps); err != nil {
		t.Fatal(err)
	}
	re, err := r.Epsilon(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	if up > re || up > re/1.9 {
		t.Errorf("pld upper %.6f, rdp %.6f: want pld ≤ rdp/1.9 (2.56 vs 5.20 when written)", up, re)
	}
}

// TestWORWholeDataset checks that m = n is the unsampled Gaussian (closed
// form), and that replace-one is required.
func TestWORWholeDataset(t *testing.T) {
	a := worAccountant(t, 1.5, 100, 100, 30)
	b, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Compose(accounting.Gaussian{NoiseMultiplier: 1.5}, 30); err != nil {
		t.Fatal(err)
	}
	ea, err := a.Epsilon(t.Context(), 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := b.Epsilon(t.Context(), 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if ea != eb {
		t.Errorf("m = n: %v, unsampled: %v", ea, eb)
	}
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Compose(accounting.SampledWithoutReplacement{SourceDatasetSize: 100, SampleSize: 10, Event: accounting.Gaussian{NoiseMultiplier: 1}}, 1)
	if err == nil {
		t.Error("fixed-size sampling under add-remove accepted")
	}
}
