package pld

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/testenv"
	"github.com/dpcalc/dpcalc/internal/testref"
	"github.com/dpcalc/dpcalc/internal/work"
)

// TestTinyQCorners pins the tiny-q examples (n7, n8 of docs/peers.md),
// where ε is tiny next to the range of the per-step loss (the sampled
// component's tail): the tails are cut at the query's δ and the grid
// follows the narrower range.
// Before the cut the brackets were [0, 9.87e-5] and [0, 0.00624].
//
// n7: dp_accounting's PLD on grids of 1e-6 and 4e-7
// (testdata/pld/gen_tinyq_dpacc.py → tinyq_dpacc.csv) gives pessimistic
// estimates (upper bounds up to its truncation) of 3.82686e-5 and
// 3.82595e-5 and optimistic ones (lower) of 3.148e-5 and 3.557e-5; the
// certified bracket must meet both and be ≤ 0.2% wide. prv_accountant's
// estimate 3.8176e-5 (testdata/peers/peers.csv) lies 0.1% below our
// certified lower bound; its interval there is ±6.5e-5 wide.
// n8: a direct composition in float64 on grids of 1e-10, 5e-11 and
// 2.5e-11 with each cell's mass at its centre (an estimate, converged to
// 3e-5; testdata/pld/gen_tinyq_fft.py → tinyq_fft.csv) gives 3.48553e-6;
// the certified bracket (the two-scale bounds, twoScaleBound) must contain
// it within 1e-4 and be ≤ 0.5% wide. prv_accountant's estimate 9.64e-6
// (testdata/peers/peers.csv) is 2.8× too large there.
func TestTinyQCorners(t *testing.T) {
	pess, opt := loadTinyQDpAcc(t)
	n8 := loadTinyQFFT(t)
	cases := []struct {
		name             string
		sigma, q         float64
		steps            int
		delta            float64
		below, above     float64 // must hold: lower ≤ below, upper ≥ above
		maxUpper, maxGap float64 // gap relative to the upper end
		long             bool
		grid             float64 // Options.GridWidth (0: the default)
	}{
		{"n7", 0.54, 6.6e-6, 13, 2e-5, pess, opt, 3.835e-5, 0.002, false, 0},
		// A set width too fine for the whole per-step range cuts the
		// tails as the default does (it failed with "grid too large").
		{"n7-grid4e-7", 0.54, 6.6e-6, 13, 2e-5, pess, opt, 3.835e-5, 0.0011, true, 4e-7},
		{"n8", 0.742, 2.1e-9, 7512, 2.6e-12, n8 * (1 - 1e-4), n8 * (1 + 1e-4), 3.5e-6, 0.005, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.long {
				testenv.SkipUnlessLong(t, "10 s; n7 runs by default")
			}
			a := accountantFor(t, accounting.SelfComposed{Event: sampled(c.q, gauss(c.sigma)), Count: c.steps}, Options{GridWidth: c.grid})
			lo, up, from, err := a.EpsilonBoundsFrom(t.Context(), c.delta)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("[%.6g, %.6g] from %s", lo, up, from)
			if from != accounting.KindPLD || lo > c.below || up < c.above || up > c.maxUpper || up-lo > c.maxGap*up {
				t.Errorf("[%.6g, %.6g] from %s: want a pld bracket with lower ≤ %.6g, upper ≥ %.6g, upper ≤ %.4g, gap ≤ %g", lo, up, from, c.below, c.above, c.maxUpper, c.maxGap)
			}
			if d, err := a.Delta(t.Context(), up); err != nil || d > c.delta {
				t.Errorf("Delta(%g) = %g, %v; want ≤ %g", up, d, err, c.delta)
			}
		})
	}
}

// loadTinyQDpAcc returns dp_accounting's smallest pessimistic and largest
// optimistic ε for n7 from testdata/pld/tinyq_dpacc.csv.
func loadTinyQDpAcc(t *testing.T) (pess, opt float64) {
	t.Helper()
	b, err := os.ReadFile(testref.Path("pld/tinyq_dpacc.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pess = 1
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(line, ",")
		if len(f) != 7 {
			t.Fatalf("tinyq_dpacc.csv: bad line %q", line)
		}
		e, err := strconv.ParseFloat(f[6], 64)
		if err != nil {
			t.Fatal(err)
		}
		if f[5] == "pessimistic" {
			pess = min(pess, e)
		} else {
			opt = max(opt, e)
		}
	}
	if !(opt > 0 && pess < 1) {
		t.Fatal("tinyq_dpacc.csv: missing estimates")
	}
	return pess, opt
}

// loadTinyQFFT returns the estimate of n8's ε on the finest grid of
// testdata/pld/tinyq_fft.csv, after checking that the three grids agree
// to 1e-4.
func loadTinyQFFT(t *testing.T) float64 {
	t.Helper()
	b, err := os.ReadFile(testref.Path("pld/tinyq_fft.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var eps []float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(line, ",")
		if len(f) != 4 {
			t.Fatalf("tinyq_fft.csv: bad line %q", line)
		}
		e, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, e)
	}
	if len(eps) != 3 {
		t.Fatalf("tinyq_fft.csv: %d grids, want 3", len(eps))
	}
	for _, e := range eps {
		if math.Abs(e-eps[2]) > 1e-4*eps[2] {
			t.Fatalf("tinyq_fft.csv: the grids disagree: %v", eps)
		}
	}
	return eps[2]
}

// TestTwoScaleAgreesWithGrid checks the two-scale bounds (twoScaleBound)
// against one fine uniform grid where both are tight: σ 0.6, q 1e-4,
// T 100, δ 1e-7. The brackets must overlap, and the two-scale one be
// ≤ 0.1% wide in ε and ≤ 1% in δ.
func TestTwoScaleAgreesWithGrid(t *testing.T) {
	const sigma, q, steps, delta = 0.6, 1e-4, 100, 1e-7
	ev := accounting.SelfComposed{Event: sampled(q, gauss(sigma)), Count: steps}
	fine := accountantFor(t, ev, Options{GridWidth: 2.6e-4})
	l1, u1, err := fine.EpsilonBounds(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	a := accountantFor(t, ev, Options{})
	if _, _, err := a.EpsilonBounds(t.Context(), delta); err != nil {
		t.Fatal(err)
	}
	// The query's own bracket no longer needs them (the uncut grid is
	// tight here), so build them for the query's cut directly.
	eta := a.setup.eta(0, delta)
	ts, err := a.twoScale(t.Context(), eta, 1e-6*delta)
	if err != nil {
		t.Fatal(err)
	}
	if ts == nil {
		t.Fatal("no two-scale bounds were built")
	}
	for _, s := range []*twoScaleSet{ts} {
		m := work.NewMeter(0)
		s.evals = 0
		l2, u2, err := s.epsilonBounds(work.With(t.Context(), m), delta, 0.9*l1, 1.1*u1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("eta %g: two-scale [%.7g, %.7g], grid [%.7g, %.7g]; %d bound evaluations, %d units", eta, l2, u2, l1, u1, s.evals, m.Count())
		// Both ends by secant steps on log δ, each side evaluating its
		// own bounds only, finest bulk grid first and the other only when
		// the point is undecided, the lower end started from the upper:
		// 11 evaluations of a twoScaleBound, 95 units (one per 1024
		// bulk.d evaluations of its sums; the jump cells below the bulk's
		// window summed in closed form, those above it as one run). By
		// false position, each end from the whole bracket: 16 and 137
		// (23 and 193 with two bulk grids). Before: 32 evaluations, 2,675
		// units, one bulk.d per jump cell. Bisection evaluated all four
		// bounds at each of its 59 points: 236 evaluations, 19,765 units,
		// for the same bracket to 7 digits.
		if s.evals > 12 || m.Count() > 110 {
			t.Errorf("eta %g: %d bound evaluations, %d units of work; want <= 12, <= 110", eta, s.evals, m.Count())
		}
		// A work limit stops the sums (they were not counted before, and
		// ran to the end of both searches under any limit).
		s.evals = 0
		lim := work.NewMeter(50)
		if _, _, err := s.epsilonBounds(work.With(t.Context(), lim), delta, 0.9*l1, 1.1*u1); !errors.Is(err, work.ErrLimit) || s.evals > 12 {
			t.Errorf("eta %g: under a limit of 50 units: %v after %d bound evaluations; want a work-limit error within 12", eta, err, s.evals)
		}
		if d := s.upperDelta(u2); d > delta {
			t.Errorf("eta %g: the upper δ at the upper ε %.9g is %g > δ %g", eta, u2, d, delta)
		}
		if l2 > 0.9*l1 {
			if d := s.lowerDelta(l2); !(d > delta) {
				t.Errorf("eta %g: the lower δ at the lower ε %.9g is %g <= δ %g", eta, l2, d, delta)
			}
		}
		if l2 > u1 || l1 > u2 || u2-l2 > 1e-3*u2 {
			t.Errorf("eta %g: two-scale ε bracket [%.7g, %.7g] against the grid's [%.7g, %.7g]: want overlapping, ≤ 0.1%% wide", eta, l2, u2, l1, u1)
		}
		for _, e := range []float64{l1, u1, 0.5 * l1} {
			dl, du := s.deltaBounds(e)
			gl, gu, err := fine.DeltaBounds(t.Context(), e)
			if err != nil {
				t.Fatal(err)
			}
			if dl > gu || gl > du || du-dl > 0.01*du {
				t.Errorf("eta %g: δ(%.7g): two-scale [%.6g, %.6g], grid [%.6g, %.6g]: want overlapping, ≤ 1%% wide", eta, e, dl, du, gl, gu)
			}
		}
	}
}

// TestCutKeepsUncutBracket pins a setting where the tails cut at the
// query's δ (for tiny ε) made the bracket worse than the default
// truncation: σ 0.5, q 1e-4, T 1e4, δ 1e-10 gave [4.347, 5.783] with the
// cut and [5.0841, 5.0848] without. The default bracket must be ≤ 0.1%
// wide and meet the certified bracket on a grid of 1e-4 (no cut with a
// set width), [5.0843475, 5.0843868]. The grid's bracket is recomputed in the long test step (about 4 s); the
// default run checks against the values above.
func TestCutKeepsUncutBracket(t *testing.T) {
	ev := accounting.SelfComposed{Event: sampled(1e-4, gauss(0.5)), Count: 10000}
	if testenv.Long() {
		checkAgainstGrid(t, ev, 1e-10, 1e-4)
		return
	}
	checkAgainstBracket(t, ev, 1e-10, "grid 0.0001", 5.0843475, 5.0843868)
}

// checkAgainstGrid checks the default accountant's ε(delta) for ev: a pld
// bracket ≤ 0.1% wide that meets the certified bracket on the given grid
// width (itself ≤ 0.1% wide), and whose upper end Delta certifies.
func checkAgainstGrid(t *testing.T, ev accounting.Event, delta, grid float64) {
	t.Helper()
	fine := accountantFor(t, ev, Options{GridWidth: grid})
	l1, u1, err := fine.EpsilonBounds(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstBracket(t, ev, delta, fmt.Sprintf("grid %g", grid), l1, u1)
}

// checkAgainstBracket is checkAgainstGrid with the grid's bracket [l1, u1]
// given (what names it).
func checkAgainstBracket(t *testing.T, ev accounting.Event, delta float64, what string, l1, u1 float64) {
	t.Helper()
	a := accountantFor(t, ev, Options{})
	l2, u2, from, err := a.EpsilonBoundsFrom(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("default [%.8g, %.8g] from %s, %s [%.8g, %.8g]", l2, u2, from, what, l1, u1)
	if from != accounting.KindPLD || l2 > u1 || l1 > u2 || u2-l2 > 1e-3*u2 || u1-l1 > 1e-3*u1 {
		t.Errorf("default [%.8g, %.8g] from %s, %s [%.8g, %.8g]: want overlapping pld brackets ≤ 0.1%% wide", l2, u2, from, what, l1, u1)
	}
	if d, err := a.Delta(t.Context(), u2); err != nil || d > delta {
		t.Errorf("Delta(%g) = %g, %v; want ≤ %g", u2, d, err, delta)
	}
}

// perCellDelta is twoScaleBound.delta with one bulk.d per jump cell, as
// it was computed before bulk.jumpSum: the reference of
// TestTwoScaleJumpSum.
func perCellDelta(ts *twoScaleBound, eps float64) (float64, int) {
	const wRel = 1e-10
	sum, calls := ts.rest, 0
	for k, lw := range ts.logW {
		b, sj := ts.bulkAt(k)
		var h float64
		if k == 0 {
			h = b.d(eps, ts.upper)
			calls++
		} else {
			jp := ts.jumps[k]
			e, scale, scaleUp := eps, 1.0, 1.0
			if sj > 0 {
				e, scale, scaleUp = ts.shift(eps, sj, jp)
			}
			for j, g := range jp.g {
				if g > 0 {
					h += g * b.d(e-(jp.y0+float64(j)*jp.h), ts.upper)
					calls++
				}
			}
			h *= scale
			if ts.upper {
				h += jp.errSum * math.Exp(b.logA) * scaleUp
			} else {
				h -= jp.errSum * math.Exp(b.logA) * scaleUp
			}
		}
		if ts.upper {
			sum += math.Exp(lw) * h * (1 + wRel)
		} else if h > 0 {
			sum += math.Exp(lw) * h * (1 - wRel)
		}
	}
	return math.Max(0, math.Min(1, sum)), calls
}

// TestTwoScaleJumpSum checks the two-scale bounds' sums over the jump
// cells (bulk.jumpSum) against one bulk.d per cell: the jump cells below
// the bulk's window are summed in closed form and those above it as one
// run, so each bound may only be looser, by at most 1e-8 relative, and
// it takes a fraction of the bulk.d evaluations. σ 0.6, q 1e-4, T 100,
// δ 1e-7, at ε around the query's.
func TestTwoScaleJumpSum(t *testing.T) {
	const sigma, q, steps, delta = 0.6, 1e-4, 100, 1e-7
	a := accountantFor(t, accounting.SelfComposed{Event: sampled(q, gauss(sigma)), Count: steps}, Options{})
	if _, _, err := a.EpsilonBounds(t.Context(), delta); err != nil {
		t.Fatal(err)
	}
	s, err := a.twoScale(t.Context(), a.setup.eta(0, delta), 1e-6*delta)
	if err != nil || s == nil {
		t.Fatalf("no two-scale bounds: %v", err)
	}
	var calls, cells int
	for i, ts := range append(append([]*twoScaleBound{}, s.ups...), s.lows...) {
		for _, eps := range []float64{0.05, 0.2, 0.2618, 0.3, 0.5, 1} {
			ref, n := perCellDelta(ts, eps)
			got := ts.delta(eps)
			calls, cells = calls+ts.calls, cells+n
			loose := got - ref // ≥ 0 for an upper bound
			if !ts.upper {
				loose = -loose
			}
			if loose < -1e-12*ref || loose > 1e-8*ref {
				t.Errorf("bound %d (upper %v) at ε %g: δ %.15g, one bulk.d per cell %.15g: want the same side, within 1e-8", i, ts.upper, eps, got, ref)
			}
		}
	}
	t.Logf("%d bulk.d evaluations (work), %d one per cell", calls, cells)
	if 4*calls > cells {
		t.Errorf("%d bulk.d evaluations, want at most a quarter of one per cell (%d)", calls, cells)
	}
}

// TestTwoScaleBuildWork bounds the work of building the two-scale bounds
// at a σ search's setting (σ 1, q 1e-4, T 1e5, the tails cut for δ
// 1e-15), which every query of that search made: with a second bulk grid
// of 512 cells beside the one of 1024 (intersected with it, and never
// the tighter on the width sweep), 2,876 units; one grid, 1,755; the
// bulks of 4 to 6 jumps taken from the one of 3, shifted (bulkAt), 1,233;
// those jumps composed on a grid 4 times coarser (coarsen), 1,067; and the
// add direction's bulk made only when a bracket needs it (addBounds), 979;
// for the same bracket of the remove direction's δ at ε 0.4095397,
// [9.93944e-16, 1.0000002e-15] (its ends moved by 4e-10 and 1e-11).
func TestTwoScaleBuildWork(t *testing.T) {
	const sigma, q, steps, delta, eps = 1.00000057, 1e-4, 100000, 1e-15, 0.4095397
	a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	a.setup = newSetup(a.pldsOf(a.keys()))
	eta := a.setup.eta(0, delta)
	m := work.NewMeter(0)
	s, err := a.twoScale(work.With(t.Context(), m), eta, 1e-6*delta)
	if err != nil || s == nil {
		t.Fatalf("two-scale bounds: %v, %v", s, err)
	}
	lo, up := s.deltaBounds(eps)
	t.Logf("%d units; remove direction's δ(%g) in [%g, %g]", m.Count(), eps, lo, up)
	if n := m.Count(); n > 1020 {
		t.Errorf("%d units of work, want <= 1020", n)
	}
	if math.Abs(lo/9.93944e-16-1) > 1e-5 || math.Abs(up/1.0000002e-15-1) > 1e-6 {
		t.Errorf("δ(%g) in [%.9g, %.9g], want [9.93944e-16, 1.0000002e-15]", eps, lo, up)
	}
}

// TestTwoScaleCoarseGridWhereWide: where the two-scale bracket on the
// 1,024-cell bulk grid is still wide, the 512-cell one is made and
// intersected with it: at σ 0.742, q 2.1e-9, T 7512, δ 2.6e-12 the
// coarser grid's bounds are the tighter (the rounding slack of the bulk's
// cell masses grows with their number), and without them the bracket was
// [3.47842e-6, 3.49563e-6] (0.49%) where both grids give [3.47925e-6,
// 3.49421e-6] (0.43%).
func TestTwoScaleCoarseGridWhereWide(t *testing.T) {
	a := accountantFor(t, accounting.SelfComposed{Event: sampled(2.1e-9, gauss(0.742)), Count: 7512}, Options{})
	lo, up, err := a.EpsilonBounds(t.Context(), 2.6e-12)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[%.6g, %.6g]", lo, up)
	if math.Abs(lo/3.47925e-6-1) > 2e-6 || math.Abs(up/3.49421e-6-1) > 2e-6 {
		t.Errorf("[%.6g, %.6g], want [3.47925e-6, 3.49421e-6] to 6 digits", lo, up)
	}
}

// TestTwoScaleEpsilonEvaluations bounds the evaluations of the two-scale
// ε bracket at the slowest σ search's closing query (σ 1.0000005740036741,
// q 1e-4, T 1e5, δ 1e-15, from the cut grid's bracket [0.385204567358,
// 0.420463400943]): false position on log δ took 9 evaluations for the
// upper end and 7 for the lower, whose search started from that whole
// bracket again; 16 in all, for [0.4093145327553249, 0.4095396946472855].
// The secant steps with a step of half the tolerance past an estimate
// next to an end, and the lower end started from the upper one by a Newton
// step, take 7 and 4, for the same bracket within the stopping tolerance
// (1e-9 relative). Both ends must be points where their bound was
// evaluated on its side of δ. The work of the 11 evaluations: 790 units,
// 501 with the jumps of 4 or more steps on a coarser grid (coarsen).
func TestTwoScaleEpsilonEvaluations(t *testing.T) {
	const sigma, q, steps, delta = 1.0000005740036741, 1e-4, 100000, 1e-15
	const lo0, up0 = 0.385204567358, 0.420463400943
	a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	a.setup = newSetup(a.pldsOf(a.keys()))
	s, err := a.twoScale(t.Context(), a.setup.eta(0, delta), 1e-6*delta)
	if err != nil || s == nil {
		t.Fatalf("two-scale bounds: %v, %v", s, err)
	}
	m := work.NewMeter(0)
	s.evals = 0
	lo, up, err := s.epsilonBounds(work.With(t.Context(), m), delta, lo0, up0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[%.16g, %.16g]: %d evaluations, %d units", lo, up, s.evals, m.Count())
	if s.evals > 12 || m.Count() > 600 {
		t.Errorf("%d evaluations of a two-scale bound, %d units; want <= 12 (16 by false position), <= 600", s.evals, m.Count())
	}
	if math.Abs(lo/0.4093145327553249-1) > 1e-9 || math.Abs(up/0.4095396946472855-1) > 1e-9 {
		t.Errorf("[%.16g, %.16g], want [0.4093145327553249, 0.4095396946472855] within 1e-9", lo, up)
	}
	if d := s.upperDelta(up); d > delta {
		t.Errorf("the upper δ at the upper end %.16g is %g > %g", up, d, delta)
	}
	if d := s.lowerDelta(lo); !(d > delta) {
		t.Errorf("the lower δ at the lower end %.16g is %g <= %g", lo, d, delta)
	}
}

// TestTwoScaleExpTables checks bulk.d with its exponentials formed as
// products from tables (expTables) against d with math.Exp for each
// (the tables dropped) on every bulk of the slowest σ search's two-scale
// bounds (σ 1, q 1e-4, T 1e5, δ 1e-15), at losses across and beyond the
// window. The two differ by their rounding margins only, a few ulps of
// the sums each exponential multiplies (A ≈ 1, and sums of mass ≤ A):
// they must agree within 1e-14·A, and the tables must be in use.
func TestTwoScaleExpTables(t *testing.T) {
	const sigma, q, steps, delta = 1.0000005740036741, 1e-4, 100000, 1e-15
	a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	a.setup = newSetup(a.pldsOf(a.keys()))
	s, err := a.twoScale(t.Context(), a.setup.eta(0, delta), 1e-6*delta)
	if err != nil || s == nil {
		t.Fatalf("two-scale bounds: %v, %v", s, err)
	}
	if err := s.addBounds(t.Context()); err != nil || len(s.add) == 0 {
		t.Fatalf("the add direction's bounds: %d, %v", len(s.add), err)
	}
	var n int
	var worst float64
	for _, ts := range append(append(append([]*twoScaleBound{}, s.ups...), s.lows...), s.add...) {
		for k, b := range ts.bulk {
			if b.eLo == nil {
				t.Fatalf("upper %v, k %d: no tables", ts.upper, k)
			}
			plain := *b
			plain.eLo, plain.eHi = nil, nil
			m := len(b.c.c)
			for j := -50; j <= 1050; j++ {
				x := b.s0 + float64(j)/1000*float64(m)*b.h + 0.37*b.h
				for _, upper := range []bool{true, false} {
					got, want := b.d(x, upper), plain.d(x, upper)
					n++
					diff := math.Abs(got-want) / b.a
					worst = math.Max(worst, diff)
					if !(diff <= 1e-14) {
						t.Errorf("upper %v, k %d, x %g, upper bound %v: %.17g with tables, %.17g with math.Exp", ts.upper, k, x, upper, got, want)
					}
				}
			}
		}
	}
	t.Logf("%d points, largest difference %.3g·A", n, worst)
}

// TestCoarsen checks coarsen on both sides of index 0: every fine mass
// lands on the coarse point at or above its loss (up) or at or below it,
// within one coarse cell, and the total is kept.
func TestCoarsen(t *testing.T) {
	const h, off = 0.25, 0.1
	p := pmf{lo: -7, off: off, p: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
	for _, up := range []bool{true, false} {
		c := coarsen(p, 4, up)
		var total float64
		for i, v := range p.p {
			y := float64(p.lo+i)*h + off
			// The coarse point it went to: the one whose mass includes it,
			// found by replaying the rule on the coarse grid.
			var at float64
			if up {
				at = math.Ceil(float64(p.lo+i)/4)*4*h + off
			} else {
				at = math.Floor(float64(p.lo+i)/4)*4*h + off
			}
			if (up && !(at >= y && at-y < 4*h)) || (!up && !(at <= y && y-at < 4*h)) {
				t.Errorf("up %v: fine loss %g to coarse %g", up, y, at)
			}
			total += v
			_ = v
		}
		var ctot float64
		for m, v := range c.p {
			ctot += v
			// Each coarse mass is the sum of the fine masses mapped to it.
			var want float64
			for i, fv := range p.p {
				l := p.lo + i
				var to int
				if up {
					to = int(math.Ceil(float64(l) / 4))
				} else {
					to = int(math.Floor(float64(l) / 4))
				}
				if to == c.lo+m {
					want += fv
				}
			}
			if v != want {
				t.Errorf("up %v: coarse index %d has %g, want %g", up, c.lo+m, v, want)
			}
		}
		if ctot != total || c.off != off {
			t.Errorf("up %v: total %g (want %g), offset %g", up, ctot, total, c.off)
		}
	}
}

// TestTwoScaleBulkShift checks the inequality bulkAt rests on, with the
// bulks' own bounds: for β with losses in [lo, hi] and mass β̄,
// D_n(x + j·hi)/β̄^j ≤ D_{n−j}(x) ≤ D_n(x + j·lo)/β̄^j. So the upper bound
// of D_n at x + j·lo, over β̄^j, must not be below the lower bound of
// D_{n−j} at x, and the lower bound of D_n at x + j·hi, over β̄^j, not
// above its upper bound, across the window (a sub-probability β of 40
// cells with losses of both signs, n = 60, j = 1, 2, 3).
func TestTwoScaleBulkShift(t *testing.T) {
	const h, off, n = 0.01, 0.003, 60
	beta := pmf{lo: -12, off: off, p: make([]float64, 40)}
	var bBar float64
	for i := range beta.p {
		z := float64(i-20) / 7
		beta.p[i] = 0.99 * math.Exp(-z*z/2) / (7 * math.Sqrt(2*math.Pi))
		bBar += beta.p[i]
	}
	lo := float64(beta.lo)*h + off
	hi := float64(beta.lo+len(beta.p)-1)*h + off
	var checked int
	for _, upper := range []bool{true, false} {
		bn, err := newBulk(t.Context(), beta, h, n, upper)
		if err != nil {
			t.Fatal(err)
		}
		for j := 1; j <= 3; j++ {
			bj, err := newBulk(t.Context(), beta, h, n-j, upper)
			if err != nil {
				t.Fatal(err)
			}
			inv := math.Pow(bBar, -float64(j))
			for x := bj.s0 - 0.2; x < bj.s0+float64(len(bj.c.c))*h+0.2; x += 0.0037 {
				if upper {
					// The bound bulkAt takes for D_{n−j}(x), against a lower bound of it.
					if up, low := bn.d(x+float64(j)*lo, true)*inv, bj.d(x, false); up < low*(1-1e-12) {
						t.Errorf("j %d, x %g: D_n(x + j·lo)/β̄^j ≤ %.12g, below D_{n−j}(x) ≥ %.12g", j, x, up, low)
					}
				} else {
					if low, up := bn.d(x+float64(j)*hi, false)*inv, bj.d(x, true); low > up*(1+1e-12) {
						t.Errorf("j %d, x %g: D_n(x + j·hi)/β̄^j ≥ %.12g, above D_{n−j}(x) ≤ %.12g", j, x, low, up)
					}
				}
				checked++
			}
		}
	}
	t.Logf("%d points", checked)
}
