package pld

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/moments"
)

// TestPLDRDPFallback checks that the upper bounds are min(PLD, RDP), never
// above RDP, and that the PLD's own certificate now holds at small δ: the
// cases where the untilted PLD's FFT round-off and window tails exceeded δ
// (its bound was +Inf or looser than RDP's, and RDP answered) are answered
// by the tilted composition (see composeParts) with a bracket at most
// maxWidth wide, with the round trip Delta(Epsilon(δ)) ≤ δ and lower ≤
// upper throughout.
func TestPLDRDPFallback(t *testing.T) {
	const maxWidth = 0.001
	cases := []struct {
		name     string
		sigma, q float64
		steps    int
		delta    float64
		from     accounting.Kind
	}{
		// Was +Inf (knownSweepBugs "pld: +Inf where finite"), then RDP's.
		{"below floor", 1, 0.01, 1000, 1e-15, accounting.KindPLD},
		// The sweep's example of that entry (seed 20261122).
		{"sweep example", 3.1861429758370785, 0.11043655823384253, 50649, 5.2179945254313834e-12, accounting.KindPLD},
		// Was pld 1.569 > rdp 1.270 ("pld: upper above rdp"), then RDP's.
		{"above rdp near floor", 9.24, 0.0653, 672, 1.47e-12, accounting.KindPLD},
		{"common regime", 1.1, 0.01, 10000, 1e-5, accounting.KindPLD},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := accounting.SubsampledGaussian(c.sigma, c.q, c.steps)
			a := accountantFor(t, ev, Options{})
			rdp, err := moments.NewRDP(nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := rdp.Compose(ev, 1); err != nil {
				t.Fatal(err)
			}
			rdpEps, err := rdp.Epsilon(t.Context(), c.delta)
			if err != nil {
				t.Fatal(err)
			}
			lo, up, from, err := a.EpsilonBoundsFrom(t.Context(), c.delta)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsInf(up, 1) || !(lo <= up) || up > rdpEps*(1+1e-9) {
				t.Errorf("EpsilonBoundsFrom(%g) = [%g, %g] from %s; want finite, lower ≤ upper ≤ rdp %g", c.delta, lo, up, from, rdpEps)
			}
			if from != c.from {
				t.Errorf("upper bound from %s, want %s", from, c.from)
			}
			if from == accounting.KindPLD && up-lo > maxWidth*up {
				t.Errorf("EpsilonBoundsFrom(%g) = [%g, %g]: wider than %g relative", c.delta, lo, up, maxWidth)
			}
			e, err := a.Epsilon(t.Context(), c.delta)
			if err != nil {
				t.Fatal(err)
			}
			d, err := a.Delta(t.Context(), e)
			if err != nil {
				t.Fatal(err)
			}
			if !(d <= c.delta) {
				t.Errorf("Delta(Epsilon(%g) = %g) = %g, want ≤ δ", c.delta, e, d)
			}
			// Delta's upper bound is min(PLD, RDP) too.
			dlo, dup, dfrom, err := a.DeltaBoundsFrom(t.Context(), e)
			if err != nil {
				t.Fatal(err)
			}
			rdpD, _ := rdp.Delta(t.Context(), e)
			if !(dlo <= dup) || dup > rdpD {
				t.Errorf("DeltaBoundsFrom(%g) = [%g, %g] from %s; want lower ≤ upper ≤ rdp %g", e, dlo, dup, dfrom, rdpD)
			}
		})
	}
}

// TestPLDCurveRDPFallback checks that EpsilonCurve's fast path hands the
// points where its untilted round-off matters (δ = 1e-15) to Epsilon, and
// matches Epsilon there.
func TestPLDCurveRDPFallback(t *testing.T) {
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []int{10, 100, 1000, 1000}
	const delta = 1e-15
	got, err := a.EpsilonCurve(t.Context(), accounting.PoissonSampled{SamplingRate: 0.01, Event: accounting.Gaussian{NoiseMultiplier: 1}}, steps, delta)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		b := accountantFor(t, accounting.SubsampledGaussian(1, 0.01, s), Options{})
		want, err := b.Epsilon(t.Context(), delta)
		if err != nil {
			t.Fatal(err)
		}
		if math.IsInf(got[i], 1) || math.Abs(got[i]-want) > 1e-6*want {
			t.Errorf("T=%d: curve %g, Epsilon %g", s, got[i], want)
		}
	}
}

// The upper bound comes from the PLD at the usual δ and far below it (the
// composition is tilted toward the loss where a small δ is decided).
func ExampleAccountant_EpsilonBoundsFrom() {
	ctx := context.Background()
	a, _ := New(Options{})
	_ = a.Compose(accounting.SubsampledGaussian(1, 0.01, 1000), 1)
	for _, delta := range []float64{1e-5, 1e-15} {
		lo, up, from, _ := a.EpsilonBoundsFrom(ctx, delta)
		fmt.Printf("δ = %g: %.4g ≤ ε ≤ %.4g (%s)\n", delta, lo, up, from)
	}
	// Output:
	// δ = 1e-05: 1.828 ≤ ε ≤ 1.829 (pld)
	// δ = 1e-15: 4.854 ≤ ε ≤ 4.855 (pld)
}

// TestPLDTooLargeFallsBackToRDP: with the default grid, a composition too
// large for the FFT cap even after coarsening was an error ("pld grid too
// large", the long sweep at T ~ 1e8, σ < 0.4); it is now answered by RDP
// with lower bound 0. A user-set grid still reports the error.
func TestPLDTooLargeFallsBackToRDP(t *testing.T) {
	// From the long sweep (DPCALC_LONG=1, seed 20261122).
	const sigma, q, steps, delta = 0.096938416512631145, 0.0025673218549295156, 73773893, 5.8929953588763836e-24
	ev := accounting.SubsampledGaussian(sigma, q, steps)
	rdp, err := moments.NewRDP(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdp.Compose(ev, 1); err != nil {
		t.Fatal(err)
	}
	want, err := rdp.Epsilon(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	a := accountantFor(t, ev, Options{})
	lo, up, from, err := a.EpsilonBoundsFrom(t.Context(), delta)
	if err != nil || lo != 0 || from != accounting.KindRDP || !(up >= want && up <= want*(1+1e-9)) {
		t.Errorf("EpsilonBoundsFrom = [%g, %g] from %s, %v; want [0, rdp %g] from rdp", lo, up, from, err, want)
	}
	if d, err := a.Delta(t.Context(), up); err != nil || !(d <= delta) {
		t.Errorf("Delta(%g) = %g, %v; want ≤ %g", up, d, err, delta)
	}
	b := accountantFor(t, ev, Options{GridWidth: 1e-3})
	if _, err := b.Epsilon(t.Context(), delta); err == nil {
		t.Errorf("GridWidth 1e-3: no error, want %v", errTooLarge)
	}
}

// TestDeltaBoundsFromLabel checks that a δ upper end labelled rdp is
// rdp's δ: a δ query keeps the smallest upper bound it met while steering
// its cut, which may be a coarse-grid pld bound, and labelled every such
// bound rdp (σ 0.7985, q 1e-4, T 821 at ε(1e-10): 9.99e-11 "from rdp",
// where rdp's δ is 2.8e-3).
func TestDeltaBoundsFromLabel(t *testing.T) {
	ev := accounting.SubsampledGaussian(0.7985, 1e-4, 821)
	_, eps, _, err := accountantFor(t, ev, Options{}).EpsilonBoundsFrom(t.Context(), 1e-10)
	if err != nil {
		t.Fatal(err)
	}
	a := accountantFor(t, ev, Options{})
	_, up, from, err := a.DeltaBoundsFrom(t.Context(), eps)
	if err != nil {
		t.Fatal(err)
	}
	rdp, err := a.rdpAccountant()
	if err != nil {
		t.Fatal(err)
	}
	rd, err := rdpDelta(t.Context(), rdp, eps)
	if err != nil {
		t.Fatal(err)
	}
	if up > 1e-10 || (from == accounting.KindRDP) != (up == rd) {
		t.Errorf("DeltaBoundsFrom(%g) = %g from %s; rdp's δ is %g: want ≤ 1e-10, labelled rdp exactly when it is rdp's", eps, up, from, rd)
	}
}
