package pld

import (
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/work"
)

// TestEpsilonAgainst: far from its target, EpsilonAgainst stops once the
// bracket stands clear of it, uncertified, at a fraction of
// EpsilonBracket's work; near it, it is EpsilonBracket, certified. At σ
// 0.935208486, q 1e-4, T 1e5, δ 1e-10 (a σ search's query for ε
// 0.235602): the cut grid and the two-scale bounds give [0.265271,
// 0.265893], above the target, where EpsilonBracket went on to the uncut
// and refined grids for [0.265482, 0.265666], 13,360 units. At the
// search's answer, σ 1.0000012, the two agree to the bit.
func TestEpsilonAgainst(t *testing.T) {
	const q, steps, delta, target = 1e-4, 100000, 1e-10, 0.235602
	type res struct {
		b     Bracket
		cert  bool
		units int64
	}
	query := func(sigma float64, against bool) res {
		a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
		m := work.NewMeter(0)
		ctx := work.With(t.Context(), m)
		var r res
		var err error
		if against {
			r.b, r.cert, err = a.EpsilonAgainst(ctx, delta, target)
		} else {
			r.b, err = a.EpsilonBracket(ctx, delta)
			r.cert = true
		}
		if err != nil {
			t.Fatal(err)
		}
		r.units = m.Count()
		if against && r.cert {
			if d, err := a.Delta(t.Context(), r.b.Upper); err != nil || d > delta {
				t.Errorf("σ %g: Delta(%g) = %g, %v; want <= %g (certified)", sigma, r.b.Upper, d, err, delta)
			}
		}
		return r
	}
	far, full := query(0.935208486, true), query(0.935208486, false)
	t.Logf("far: against %+v %v %d units; full %+v %d units", far.b, far.cert, far.units, full.b, full.units)
	if far.cert || !(far.b.Lower > target) || far.b.Upper-far.b.Lower > clearWidth*(far.b.Lower-target) {
		t.Errorf("far: %+v certified %v; want uncertified, clear above %g", far.b, far.cert, target)
	}
	if !(far.b.Lower <= full.b.Upper && full.b.Lower <= far.b.Upper) {
		t.Errorf("far: %+v and EpsilonBracket's %+v do not overlap", far.b, full.b)
	}
	if far.units > 6000 || full.units < 2*far.units {
		t.Errorf("far: %d units (EpsilonBracket %d); want <= 6000 and half of EpsilonBracket's at most", far.units, full.units)
	}
	near, nearFull := query(1.0000012, true), query(1.0000012, false)
	t.Logf("near: against %+v %v; full %+v", near.b, near.cert, nearFull.b)
	if !near.cert || near.b != nearFull.b {
		t.Errorf("near: %+v certified %v; want EpsilonBracket's %+v, certified", near.b, near.cert, nearFull.b)
	}
}

// TestDeltaAgainst: DeltaAgainst's bracket is narrowed only until it
// stands clear of its target, and cut for the target: at σ 1.0066, q
// 1e-4, T 1e5, ε 0.409541 against δ 1e-15 (a σ search's approach) it
// stops at the two-scale bracket, about 6.07e-16, where DeltaBounds
// refined the uncut and cut grids for nothing (9,988 units; 13,642
// before refinement stopped at a stalled grid) after steering its cut
// from RDP's δ 3e-5 in six compositions.
func TestDeltaAgainst(t *testing.T) {
	const sigma, q, steps, eps, target = 1.00660188, 1e-4, 100000, 0.409541, 1e-15
	a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	m := work.NewMeter(0)
	lo, up, err := a.DeltaAgainst(work.With(t.Context(), m), eps, target)
	if err != nil {
		t.Fatal(err)
	}
	fresh := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	flo, fup, err := fresh.DeltaBounds(t.Context(), eps)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[%.9g, %.9g], %d units; DeltaBounds [%.9g, %.9g]", lo, up, m.Count(), flo, fup)
	if !(up < target && lo > 0 && math.Log(up/lo) <= clearWidth*math.Log(target/up)) {
		t.Errorf("[%g, %g]: want clear below %g", lo, up, target)
	}
	if !(lo <= fup && flo <= up) {
		t.Errorf("[%g, %g] and DeltaBounds' [%g, %g] do not overlap", lo, up, flo, fup)
	}
	if n := m.Count(); n > 6500 {
		t.Errorf("%d units of work, want <= 6500", n)
	}
	if a.deltaTarget != 0 {
		t.Errorf("deltaTarget %g left set", a.deltaTarget)
	}
}

// TestDeltaAgainstFarBelow: where δ(eps) is far below DeltaAgainst's
// target, a cut steered from the target floors the upper δ near a share
// of the target (3.4e-19 at σ 1.1325, q 1e-4, T 1e5, ε 0.409541 against
// 1e-15), and a σ search's approach, whose first step takes −log δ ∝ σ²
// from it, needed a δ query more (5 where the one steered as DeltaBounds
// is took 4). DeltaAgainst then steers as DeltaBounds does: the same
// upper δ, 1.02795e-19.
func TestDeltaAgainstFarBelow(t *testing.T) {
	const sigma, q, steps, eps, target = 1.13253606, 1e-4, 100000, 0.409541, 1e-15
	a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	lo, up, err := a.DeltaAgainst(t.Context(), eps, target)
	if err != nil {
		t.Fatal(err)
	}
	fresh := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	flo, fup, err := fresh.DeltaBounds(t.Context(), eps)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[%g, %g]; DeltaBounds [%g, %g]", lo, up, flo, fup)
	if up != fup || !(lo <= up) {
		t.Errorf("[%g, %g], want the upper δ DeltaBounds has, %g", lo, up, fup)
	}
}

// TestDeltaUpperAgainst: DeltaUpperAgainst's value is DeltaAgainst's
// upper end where the query ends at the two-scale bounds, without their
// lower bound, the cut grid's lower distributions, the cut grid cut again
// at the lower end, or what lies beyond (σ 1, q 1e-4, T 1e5, ε 0.409541
// against 1e-15, at σ 0.999997468 and at σ 1.0066, where DeltaAgainst's
// bracket is clear of the target: 2,416 work units for DeltaAgainst's
// 3,269 and 3,742 for 4,594 with the cut grid's lower distributions made;
// with the two-scale bounds' terms of 4 or more jumps made cheaper, 2,098
// for 2,608 and 3,309 for 3,814; without those lower distributions, 1,653
// and 2,888: at most 80%).
func TestDeltaUpperAgainst(t *testing.T) {
	const q, steps, eps, target = 1e-4, 100000, 0.409541, 1e-15
	for _, sigma := range []float64{0.999997468, 1.00660187} {
		a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
		m := work.NewMeter(0)
		u, err := a.DeltaUpperAgainst(work.With(t.Context(), m), eps, target)
		if err != nil {
			t.Fatal(err)
		}
		b := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
		mb := work.NewMeter(0)
		_, up, err := b.DeltaAgainst(work.With(t.Context(), mb), eps, target)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("σ %g: %g, %d units; DeltaAgainst's upper %g, %d units", sigma, u, m.Count(), up, mb.Count())
		if u != up {
			t.Errorf("σ %g: %g, want DeltaAgainst's upper end %g", sigma, u, up)
		}
		if 100*m.Count() > 80*mb.Count() {
			t.Errorf("σ %g: %d units, want at most 80%% of DeltaAgainst's %d", sigma, m.Count(), mb.Count())
		}
		if a.upperOnly || a.deltaTarget != 0 {
			t.Errorf("σ %g: upperOnly %v, deltaTarget %g left set", sigma, a.upperOnly, a.deltaTarget)
		}
	}
}

// TestDeltaUpperAgainstFarBelow: where the steering's cut has settled on
// an upper δ two orders or more below the target, DeltaUpperAgainst ends
// there: at σ 1.13253606, q 1e-4, T 1e5, ε 0.409541 against 1e-15 (a σ
// search's first δ query) the steering's 1.02795e-19 stood as the upper
// end, and the default grid and the bracket after it (its upper end
// 1.83e-17) took 1,466 of the query's 3,111 work units (1,645 now). The
// value is DeltaAgainst's upper end still.
func TestDeltaUpperAgainstFarBelow(t *testing.T) {
	const sigma, q, steps, eps, target = 1.13253606, 1e-4, 100000, 0.409541, 1e-15
	a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	m := work.NewMeter(0)
	u, err := a.DeltaUpperAgainst(work.With(t.Context(), m), eps, target)
	if err != nil {
		t.Fatal(err)
	}
	b := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	_, up, err := b.DeltaAgainst(t.Context(), eps, target)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%g, %d units; DeltaAgainst's upper %g", u, m.Count(), up)
	if u != up || !(u < 1e-2*target) {
		t.Errorf("%g, want DeltaAgainst's upper end %g, below %g", u, up, 1e-2*target)
	}
	if n := m.Count(); n > 2000 {
		t.Errorf("%d units of work, want <= 2000", n)
	}
	if a.upperOnly || a.deltaTarget != 0 {
		t.Errorf("upperOnly %v, deltaTarget %g left set", a.upperOnly, a.deltaTarget)
	}
}

// TestEpsilonAgainstAbove: where the narrowed bracket's upper end lies
// above the target, EpsilonAgainst leaves it uncertified: certifying
// could only raise it. At σ 0.999999674, q 1e-4, T 1e5, δ 1e-15 against
// 0.409541 (the point just below a σ search's answer), the upper end
// 0.409542193 is EpsilonBracket's, which spent 1,225 of its 5,758 work
// units on δ queries that raised it by nothing.
func TestEpsilonAgainstAbove(t *testing.T) {
	const sigma, q, steps, delta, target = 0.999999674004, 1e-4, 100000, 1e-15, 0.409541
	a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	m := work.NewMeter(0)
	b, cert, err := a.EpsilonAgainst(work.With(t.Context(), m), delta, target)
	if err != nil {
		t.Fatal(err)
	}
	fresh := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	full, err := fresh.EpsilonBracket(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v certified %v, %d units; EpsilonBracket %+v", b, cert, m.Count(), full)
	if cert || !(b.Upper > target) || b.Upper > full.Upper || b.Lower != full.Lower {
		t.Errorf("%+v certified %v; want uncertified, above %g, EpsilonBracket's %+v lower end and at most its upper", b, cert, target, full)
	}
	if n := m.Count(); n > 5000 {
		t.Errorf("%d units of work, want <= 5000", n)
	}
}

// TestDeltaUpperAgainstNarrow: where the cut grid's bracket is narrow,
// DeltaUpperAgainst ends there as DeltaAgainst does, with its lower
// distributions made first and no two-scale bound (which would tighten
// the upper δ, and put the σ search's approach 1.9e-5 below the σ its ε
// queries find at σ 1, q 1e-4, T 1000, ε 0.0481699, δ 1e-10: 8 queries
// and 16,179 work units, where this takes 14,921).
func TestDeltaUpperAgainstNarrow(t *testing.T) {
	const sigma, q, steps, eps, target = 1.0000136192024618, 1e-4, 1000, 0.0481699, 1e-10
	a := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	m := work.NewMeter(0)
	u, err := a.DeltaUpperAgainst(work.With(t.Context(), m), eps, target)
	if err != nil {
		t.Fatal(err)
	}
	b := accountantFor(t, accounting.SubsampledGaussian(sigma, q, steps), Options{})
	mb := work.NewMeter(0)
	_, up, err := b.DeltaAgainst(work.With(t.Context(), mb), eps, target)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.17g, %d units; DeltaAgainst's upper %.17g, %d units; two-scale bounds made: %v", u, m.Count(), up, mb.Count(), a.twoScales != nil)
	if u != up {
		t.Errorf("%g, want DeltaAgainst's upper end %g", u, up)
	}
	if a.twoScales != nil || m.Count() > mb.Count() {
		t.Errorf("%d units (DeltaAgainst %d), two-scale bounds %v; want no more, and none made", m.Count(), mb.Count(), a.twoScales)
	}
}
