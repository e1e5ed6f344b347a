package mechanism

import (
	"context"
	"math"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
)

// sumStatistic is a lower bound on the privacy of T Poisson-sampled Gaussian
// steps (noise σ, rate q, remove direction) that costs no grid: it looks at
// the sum S of the T outputs only. Without the record S ~ N(0, Tσ²) (Q);
// with it S ~ N(K, Tσ²), K ~ Binomial(T, q) the number of steps that
// sampled it (P). S is a post-processing of the T outputs, so its
// hockey-stick divergence is at most the composition's at every ε, and for
// every threshold t
//
//	δ(ε) ≥ P(S > t) − e^ε·Q(S > t),
//
// so ε(δ) ≥ log((P(S > t) − δ)/Q(S > t)) for every t with P(S > t) > δ.
// The grid's lower bound needs a width far below the per-step loss when
// q is tiny and T huge (a lower discretisation rounds each step's loss
// down by up to a width: T·h in all), and then does not fit; this one
// does not depend on h. It loses the nonlinearity of the per-step loss:
// for σ = 1 its μ is q√T/σ against the composition's q√(T(e^{1/σ²}−1)),
// about 0.76 of it; for large σ the two agree.
type sumStatistic struct {
	sd float64   // σ√T
	k0 int       // the first k of b
	b  []float64 // lower bounds on P(K = k0+i)
}

// sumMaxTerms caps the binomial terms (the cost of each evaluation:
// about 230 evaluations of this many log-tails, 0.2 s at the cap). It
// covers T·q(1−q) up to about 10⁴, where the grid's lower bound fails.
const sumMaxTerms = 1 << 13

// newSumStatistic returns the statistic of T steps, or ok false when the
// binomial range needs more than sumMaxTerms terms.
//
// The masses are computed relative to the mode by the ratio recurrence
// w_{k+1}/w_k = (T−k)/(k+1)·q/(1−q) in logs (an error below 4 ulps of
// |log ratio| ≤ 40 per step) and normalised by their sum over the range
// R = 40·√(Tq(1−q)) + 60 around the mode, outside which Bernstein's
// inequality leaves a mass τ ≤ 2·exp(−R²/(2(v + R/3))) of the total; each
// b_k is lowered by (1 − τ) and by the accumulated rounding, so it is a
// lower bound on the true mass.
func newSumStatistic(sigma, q float64, T int) (CompositionLower, bool) {
	tf := float64(T)
	v := tf * q * (1 - q)
	r := math.Ceil(40*math.Sqrt(v) + 60)
	mode := math.Floor((tf + 1) * q)
	lo, hi := math.Max(0, mode-r), math.Min(tf, mode+r)
	if hi-lo+1 > sumMaxTerms || !(sigma > 0) {
		return nil, false
	}
	n := int(hi-lo) + 1
	k0, m := int(lo), int(mode-lo)
	lw := make([]float64, n)
	lr := math.Log(q) - math.Log1p(-q)
	for i := m + 1; i < n; i++ { // up from the mode
		k := float64(k0 + i - 1)
		lw[i] = lw[i-1] + math.Log((tf-k)/(k+1)) + lr
	}
	for i := m - 1; i >= 0; i-- { // down from the mode
		k := float64(k0 + i)
		lw[i] = lw[i+1] - math.Log((tf-k)/(k+1)) - lr
	}
	var w float64
	b := make([]float64, n)
	for i, l := range lw {
		b[i] = math.Exp(l)
		w += b[i]
	}
	tau := 2 * math.Exp(-r*r/(2*(v+r/3)))
	// Rounding: the recurrence (4 ulps of at most 40 per step, over at
	// most n steps), exp (1 ulp), the sum (n ulps): well inside 1e-9 +
	// n·1e-13.
	f := (1 - tau) * (1 - 1e-9 - float64(n)*1e-13) / (w * (1 + float64(n)*0x1p-52))
	for i := range b {
		b[i] *= f
	}
	return sumStatistic{sd: sigma * math.Sqrt(tf), k0: k0, b: b}, true
}

// tails returns lower bounds on log P(S > t) and an upper bound on
// log Q(S > t).
func (s sumStatistic) tails(t float64) (lp, lq float64) {
	lp = math.Inf(-1)
	for i, bk := range s.b {
		if bk > 0 {
			lp = logmath.Add(lp, math.Log(bk)+logmath.NormSF((t-float64(s.k0+i))/s.sd))
		}
	}
	// logmath.NormSF (log Φ̄) is accurate to well below 1e-12 relative in
	// the range used, the arguments carry a relative error of a few ulps,
	// and each logmath.Add a few ulps of its result: 1e-9 covers them.
	slack := func(l float64) float64 { return 1e-9 * math.Max(1, math.Abs(l)) }
	lq = logmath.NormSF(t / s.sd)
	return lp - slack(lp), lq + slack(lq)
}

// scan maximises g(t) over thresholds t = sd·x, x from the mean shift
// less 8 to 40 above it, on a grid of 1/4 then by golden section (any t
// gives a certified bound; the search only makes it tight).
func (s sumStatistic) scan(ctx context.Context, g func(t float64) float64) (float64, error) {
	var m, w float64
	for i, bk := range s.b {
		m += bk * float64(s.k0+i)
		w += bk
	}
	mu := m / w / s.sd
	best, bx := math.Inf(-1), mu
	for i := 0; i <= 192; i++ {
		// By index: at |mu| ≥ 2^51 (σ near its floor) mu + 0.25 == mu.
		x := mu - 8 + 0.25*float64(i)
		if v := g(x * s.sd); v > best {
			best, bx = v, x
		}
	}
	if err := accounting.Canceled(ctx); err != nil {
		return 0, err
	}
	a, b := bx-0.25, bx+0.25
	const phi = 0.6180339887498949
	c, d := b-phi*(b-a), a+phi*(b-a)
	gc, gd := g(c*s.sd), g(d*s.sd)
	for range 40 {
		if gc > gd {
			b, d, gd = d, c, gc
			c = b - phi*(b-a)
			gc = g(c * s.sd)
		} else {
			a, c, gc = c, d, gd
			d = a + phi*(b-a)
			gd = g(d * s.sd)
		}
	}
	return math.Max(best, math.Max(gc, gd)), nil
}

// EpsilonLower returns a certified lower bound on ε(delta) (0 when none
// is found).
func (s sumStatistic) EpsilonLower(ctx context.Context, delta float64) (float64, error) {
	ld := logmath.Log(delta)
	e, err := s.scan(ctx, func(t float64) float64 {
		lp, lq := s.tails(t)
		if !(lp > ld) || math.IsInf(lq, -1) {
			return math.Inf(-1)
		}
		// log(P − δ) − log Q.
		return lp + logmath.Log1mExp(ld-lp) - lq
	})
	if err != nil || !(e > 0) || math.IsInf(e, 1) {
		return 0, err
	}
	return e * (1 - 1e-12), nil // the logs and their differences
}

// DeltaLower returns a certified lower bound on δ(eps).
func (s sumStatistic) DeltaLower(ctx context.Context, eps float64) (float64, error) {
	d, err := s.scan(ctx, func(t float64) float64 {
		lp, lq := s.tails(t)
		if !(lp > eps+lq) {
			return math.Inf(-1)
		}
		// log(P − e^ε·Q).
		return lp + logmath.Log1mExp(eps+lq-lp)
	})
	if err != nil || math.IsInf(d, -1) {
		return 0, err
	}
	return math.Exp(d) * (1 - 1e-12), nil
}
