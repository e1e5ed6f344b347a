package pld

import (
	"math"
	"os"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testenv"
	"github.com/dpcalc/dpcalc/internal/work"
)

// TestSmallDeltaQueryWork bounds the work (internal/work units) of ε
// queries at a small sampling rate and δ, where the tails are cut at δ:
// the certification of the upper ε (Delta at it must not exceed δ) stops
// at the first upper δ its query keeps that is at most δ, before any
// lower distribution is made for it, and a cut grid whose first bracket
// is past what refinement can fix yields to the uncut grid first. The
// brackets are those of testdata/pld/width_sweep.txt (to its 6 digits).
// Before: 6,340 units at σ 0.5, T 1000, δ 1e-10 (now 3,541) and 23,063
// at T 1e4, δ 1e-15 (now 3,422; the certifying δ query refined the cut
// and the uncut grids, eight offsets of the lower merge each). In CPU
// seconds, dpcalc eps there: 1.8 and 7.5 before, 0.6 and 0.6 now.
//
// At the peer's setting (σ 0.7985, q 0.0005428, T 821, δ 7.795e-10) the
// cut grid's bracket was 2.4% wide because the add direction, whose
// losses stay below 0.51 there, was tilted to the cap 2^30, which did not
// fit, and the remove direction's tilt was dropped with it: the uncut
// grid decided, and the certifying δ query then made two more default
// grids to steer its cut from RDP's δ 3.7e-5: 3,311 units before; 1,999
// with the add direction exact and the steering on coarse grids; 1,260
// with the remove direction tilted half an octave below its saddle
// (λ 8, a window of 101,250 cells instead of 243,000).
func TestSmallDeltaQueryWork(t *testing.T) {
	type workCase struct {
		sigma, q     float64
		steps        int
		delta        float64
		lower, upper float64 // the sweep's bracket
		maxUnits     int64
	}
	cases := []workCase{
		{0.5, 1e-4, 1000, 1e-10, 4.33888, 4.33891, 1800},
		// A peer's setting (dp_accounting's PLD is faster there): the
		// lower merge's Illinois search stopped only within 1e-6·h of its
		// target, below φ's own float64 noise, and alternated between
		// noisy signs (4.65 pair evaluations per merged cell, up to 40),
		// and the cut grid was refined twice, stalling, before the uncut
		// first grid decided: 5,060 units before, then 3,311, now 1,260
		// (see above).
		{0.7985, 0.0005428, 821, 7.795e-10, 0.855020, 0.855048, 1500},
		// The uncut and the cut grids were refined twice each before the
		// two-scale bounds decided, and their upper ε (0.0798330) was
		// certified by raising it in doubling steps from 1e-12, 25 δ
		// queries that ended at 0.0798498: 19,105 units before, then 6,279,
		// then 5,369, 5,034 (the two-scale sums, see below), now 4,290
		// (the two-scale bounds before the uncut first grid, which
		// could not help) (testdata/pld/width_sweep.txt had the bracket
		// before, [0.0798098, 0.0798498]).
		{1, 1e-4, 10000, 1e-10, 0.0798007, 0.0798448, 4700},
		// The two-scale bounds decide. Their sums took one bulk.d per
		// jump cell (now the cells below the bulk's window in closed
		// form and those above as one run), and the uncut first grid
		// was tried before them though it could not help ([0.0977,
		// 0.3151] around the cut grid's [0.23171, 0.23270]): 10,308
		// units before, then 7,816, now 6,757.
		{1, 1e-4, 1000, 1e-15, 0.232504, 0.232538, 7200},
		// The cut grid's bracket is just wider than the target; the
		// uncut first grid, 2.7 times as coarse, gave a bracket 3.8 times as wide
		// around it before the cut grid was refined once: 2,315 units
		// before, 1,980 now that a first grid that coarse is skipped.
		{0.5, 1e-4, 100000, 1e-5, 2.05717, 2.05838, 2150},
	}
	if testenv.Long() {
		cases = append(cases, workCase{0.5, 1e-4, 10000, 1e-15, 8.30565, 8.30651, 1500})
	}
	for _, c := range cases {
		a, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(self(sampled(c.q, gauss(c.sigma)), c.steps), 1); err != nil {
			t.Fatal(err)
		}
		m := work.NewMeter(0)
		ctx := work.With(t.Context(), m)
		lo, up, err := a.EpsilonBounds(ctx, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		units := m.Count()
		t.Logf("σ %g q %g T %d δ %g: [%.9g, %.9g], %d units", c.sigma, c.q, c.steps, c.delta, lo, up, units)
		if math.Abs(lo-c.lower) > 1e-5 || math.Abs(up-c.upper) > 1e-5 {
			t.Errorf("σ %g T %d δ %g: [%.9g, %.9g], want [%g, %g] to 6 digits", c.sigma, c.steps, c.delta, lo, up, c.lower, c.upper)
		}
		if units > c.maxUnits {
			t.Errorf("σ %g T %d δ %g: %d units of work, want <= %d", c.sigma, c.steps, c.delta, units, c.maxUnits)
		}
		if d, err := a.Delta(t.Context(), up); err != nil || d > c.delta {
			t.Errorf("Delta(%g) = %g, %v; want <= %g", up, d, err, c.delta)
		}
	}
}

// TestPeerQueryGrids pins what the ε query at the peer's setting (σ 0.7985,
// q 0.0005428, T 821, δ 7.795e-10) composes: the add direction's losses
// stay below T·(−log(1−q) + h) ≈ 0.51 < ε, so its upper δ at ε is its
// mass at +∞ alone, exactly, and it needs no tilt (it was tilted to the
// cap 2^30, which did not fit, so the remove direction's tilt was dropped
// as well, leaving the cut grid's bracket [0.84514, 0.86583]); the cut grid
// then settles the bracket, and the certifying δ query steers its cut on
// coarse grids to the grid the ε query used. Before: four default grids
// (the cut one, the uncut one, and two to steer the δ query's cut). The
// remove direction is tilted at λ 8, half an octave below its saddle
// 11.3, whose window is 2.4 times as long; neither query composes the
// saddle's tilt.
func TestPeerQueryGrids(t *testing.T) {
	const eps, delta = 0.855, 7.795e-10
	a := accountantFor(t, self(sampled(0.0005428, gauss(0.7985)), 821), Options{})
	lo, up, err := a.EpsilonBounds(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	if up-lo > 1e-4*up || lo > 0.855047 || up < 0.855021 {
		t.Errorf("[%.9g, %.9g], want within 0.01%% around [0.855022, 0.855046]", lo, up)
	}
	if len(a.levels) != 1 {
		t.Errorf("%d default grids composed, want 1 (the cut one)", len(a.levels))
	}
	for eta, lv := range a.levels {
		r := lv.res
		if !r.cut || len(r.dirs) != 2 {
			t.Fatalf("eta %g: cut %v, %d directions; want the cut grid, 2 directions", eta, r.cut, len(r.dirs))
		}
		add := r.dirs[1].up
		if add == nil {
			t.Fatal("add direction not composed")
		}
		if d := add.delta(eps, true); d != add.inf {
			t.Errorf("add direction: upper δ(%g) = %g, want its mass at +∞ %g", eps, d, add.inf)
		}
		if n := add.noise(eps); n != 0 {
			t.Errorf("add direction: noise at %g = %g, want 0", eps, n)
		}
		if lam := r.saddle(1, eps); lam != 0 {
			t.Errorf("add direction: saddle tilt %g, want 0", lam)
		}
		if len(r.lams) != 2 || r.lams[0] != 8 || r.lams[1] != 0 {
			t.Errorf("tilts %v, want [8 0]", r.lams)
		}
		for k := range r.dirs[0].tilt {
			if k.lambda != 8 {
				t.Errorf("remove direction composed at λ %g, want only 8", k.lambda)
			}
		}
	}
}

// TestRefineStopsWhereTheGridIsNotTheLimit: a refinement whose grid's own
// bracket does not shrink by a quarter when h halves (a second-order
// bracket shrinks by three quarters) is the last. The σ search's δ query
// at σ 1.0066, q 1e-4, T 1e5, ε 0.409541 (its approach to σ ≈ 1 at δ
// 1e-15) has the two-scale bracket [6.04463e-16, 6.09712e-16], just wider
// than the target; the uncut grid ([2.2e-28, 2.5e-14] on its first grid,
// [0, 2.46e-14] and [0, 2.58e-14] refined) and the cut grid ([2.37e-16,
// 9.82e-16], then [2.37e-16, 9.79e-16] and [2.17e-16, 9.97e-16]) were
// each refined twice before the bracket was left as it was: 13,642 units
// before, 9,988 now, the same bracket.
func TestRefineStopsWhereTheGridIsNotTheLimit(t *testing.T) {
	const sigma, q, steps, eps = 1.00660188, 1e-4, 100000, 0.409541
	a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	m := work.NewMeter(0)
	lo, up, err := a.DeltaBounds(work.With(t.Context(), m), eps)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[%.9g, %.9g], %d units", lo, up, m.Count())
	if math.Abs(lo/6.04463e-16-1) > 1e-5 || math.Abs(up/6.09712e-16-1) > 1e-5 {
		t.Errorf("[%.9g, %.9g], want [6.04463e-16, 6.09712e-16] to 6 digits", lo, up)
	}
	if n := m.Count(); n > 11000 {
		t.Errorf("%d units of work, want <= 11000", n)
	}
}

// TestPLDWidthSweepWork measures (not a test) the work of the ε queries of
// testdata/pld/width_sweep.txt's settings in internal/work units, which
// are the same on a loaded machine as on an idle one, with each bracket
// and whether Delta at its upper end is within δ: one line per query and
// the total. Run with
//
//	DPCALC_PLD_SWEEP=work go test ./accounting/pld -run TestPLDWidthSweepWork -v -timeout 1h
func TestPLDWidthSweepWork(t *testing.T) {
	if os.Getenv("DPCALC_PLD_SWEEP") != "work" {
		t.Skip("set DPCALC_PLD_SWEEP=work to measure the sweep's work")
	}
	var total int64
	for _, s := range []float64{0.5, 1, 2, 4, 10} {
		for _, q := range []float64{1e-4, 1e-3, 0.01, 0.1} {
			for _, steps := range []int{1000, 10000, 100000} {
				for _, d := range []float64{1e-5, 1e-10, 1e-15} {
					a := accountantFor(t, accounting.SubsampledGaussian(s, q, steps), Options{})
					m := work.NewMeter(0)
					lo, up, err := a.EpsilonBounds(work.With(t.Context(), m), d)
					if err != nil {
						t.Fatal(err)
					}
					dd, err := a.Delta(t.Context(), up)
					if err != nil {
						t.Fatal(err)
					}
					total += m.Count()
					t.Logf("%g %g %d %g: [%.9g, %.9g] %.4f%% %d units, Delta(upper) <= delta: %v", s, q, steps, d, lo, up, 100*(up-lo)/up, m.Count(), dd <= d)
				}
			}
		}
	}
	t.Logf("180 queries: %d units", total)
}

// TestTiltUppersFirst: where the first tilt's upper bounds move ε to
// another tilt, its lower distributions are not made (σ 0.935, q 1e-4,
// T 1e5, δ 1e-10: the first tilt, from the untilted bound's ε 0.55, is
// λ 90.5 for the remove direction, whose lower composition alone took
// 800,000 cells, where λ 76 at ε 0.2658 decides: 12,393 units before,
// 10,578 now, for the same bracket to the bit).
func TestTiltUppersFirst(t *testing.T) {
	const sigma, q, steps, delta = 0.935, 1e-4, 100000, 1e-10
	a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	m := work.NewMeter(0)
	lo, up, err := a.EpsilonBounds(work.With(t.Context(), m), delta)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[%.17g, %.17g], %d units", lo, up, m.Count())
	if lo != 0.26559814798145798 || up != 0.265780999726763 {
		t.Errorf("[%.17g, %.17g], want [0.26559814798145798, 0.265780999726763]", lo, up)
	}
	if n := m.Count(); n > 11000 {
		t.Errorf("%d units of work, want <= 11000", n)
	}
}
