package moments

import (
	"context"
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/search"
)

// The continuous order search of the default configuration (orders nil).
const (
	// MaxSearchOrder is the largest moment order the continuous search
	// tries; beyond 10⁴ α is the closed-form bound of [LogMoments].
	MaxSearchOrder = 0x1p20
	// searchTol is the width of the final bracket in log λ: near its
	// optimum the bound changes by O(tol²) relative, below α's own
	// certified error (about 1e-6 relative), and Delta on a fresh
	// accountant meets Epsilon's δ to about 1e-10 relative.
	searchTol = 1e-5
	// searchMaxIter caps the steps of Brent's method (golden-section steps
	// alone would need 14 for a bracket of log-width ln 2).
	searchMaxIter = 40
	// extraCacheSize caps the off-grid composed totals kept per plan and
	// alphaCacheSize the per-step α kept per (σ, q, λ).
	extraCacheSize = 4096
	alphaCacheSize = 4096
	// maxWinners is how many recent Epsilon orders Delta also tries.
	maxWinners = 32
)

// orderValue is a composed log moment α_total(λ) at an order λ.
type orderValue struct{ lambda, total float64 }

// totalAt returns the composed, rounded-up log moment at order l for the
// current plan: the grid's value when l is a grid order, else the sum over
// the plan's steps of α(l) evaluated for l alone ([LogMoments] with one
// order), so the value depends on l only and every search that meets l
// sees the same number.
func (s *state) totalAt(ctx context.Context, l float64) (float64, error) {
	if i := sort.SearchFloat64s(s.orders, l); i < len(s.orders) && s.orders[i] == l {
		total, err := s.totals(ctx)
		if err != nil {
			return 0, err
		}
		return total[i], nil
	}
	if v, ok := s.extra[l]; ok {
		return v, nil
	}
	total := 0.0
	for _, st := range s.plan.Steps {
		n := float64(st.Count)
		switch st.Mechanism {
		case accounting.MechZCDP:
			total = search.RoundUp(total + n*l*(st.Xi+st.Rho*(l+1)))
		case accounting.MechGaussian:
			a, err := s.alphaAt(ctx, st.Sigma, st.Rate, l)
			if err != nil {
				return 0, err
			}
			total = search.RoundUp(total + n*a)
		}
	}
	if s.extra == nil || len(s.extra) >= extraCacheSize {
		s.extra = make(map[float64]float64)
	}
	s.extra[l] = total
	return total, nil
}

// alphaAt returns the rounded-up α(l) of one step, evaluated alone, cached
// per (σ, q, l).
func (s *state) alphaAt(ctx context.Context, sigma, q, l float64) (float64, error) {
	key := [3]float64{sigma, q, l}
	if a, ok := s.alphaCache[key]; ok {
		return a, nil
	}
	if err := accounting.Canceled(ctx); err != nil {
		return 0, err
	}
	ms, err := logMoments(ctx, sigma, q, []float64{l})
	if err != nil {
		return 0, err
	}
	a := ms[0].Upper()
	if s.alphaCache == nil || len(s.alphaCache) >= alphaCacheSize {
		s.alphaCache = make(map[[3]float64]float64)
	}
	s.alphaCache[key] = a
	return a, nil
}

// minimize returns the smallest f(α_total(λ), λ) over the orders it
// evaluates and its order (NaN when every value is +Inf): the grid, then,
// in continuous mode, a bracket around the grid's best order (widened by
// halving below the grid down to MinOrder and doubling above it up to
// MaxSearchOrder while f decreases), narrowed by Brent's method on log λ
// (Brent 1973, ch. 5: parabolic steps, golden-section steps where they
// fail) to a width of searchTol. The bounds minimised here are
// quasi-convex in λ (see the package documentation), so the bracket holds
// the continuous minimum; but only evaluated orders are ever returned, each
// of which gives a valid bound, and the grid is among them, so the result
// never exceeds the grid's. NaN values count as +Inf.
func (s *state) minimize(ctx context.Context, f func(total, l float64) float64) (best, bestL float64, err error) {
	total, err := s.totals(ctx)
	if err != nil {
		return 0, math.NaN(), err
	}
	best, bestL = math.Inf(1), math.NaN()
	bi := -1
	for i, l := range s.orders {
		if v := f(total[i], l); v < best {
			best, bestL, bi = v, l, i
		}
	}
	if !s.continuous || bi < 0 {
		return best, bestL, nil
	}
	eval := func(l float64) (float64, error) {
		t, err := s.totalAt(ctx, l)
		if err != nil {
			return 0, err
		}
		v := f(t, l)
		if math.IsNaN(v) {
			v = math.Inf(1)
		}
		if v < best {
			best, bestL = v, l
		}
		return v, nil
	}
	n := len(s.orders)
	c, fc := s.orders[bi], best
	var lo, hi float64
	switch {
	case bi > 0 && bi < n-1:
		lo, hi = s.orders[bi-1], s.orders[bi+1]
	case bi == 0:
		hi = c
		if n > 1 {
			hi = s.orders[1]
		}
		for {
			l := math.Max(c/2, MinOrder)
			if l == c {
				lo = c
				break
			}
			v, err := eval(l)
			if err != nil {
				return 0, math.NaN(), err
			}
			if !(v < fc) {
				lo = l
				break
			}
			hi, c, fc = c, l, v
		}
	default: // the largest grid order
		lo = c
		if n > 1 {
			lo = s.orders[n-2]
		}
		for {
			l := math.Min(c*2, MaxSearchOrder)
			if l == c {
				hi = c
				break
			}
			v, err := eval(l)
			if err != nil {
				return 0, math.NaN(), err
			}
			if !(v < fc) {
				hi = l
				break
			}
			lo, c, fc = c, l, v
		}
	}
	// Brent's method (parabolic interpolation safeguarded by golden
	// section) on x = log λ over [a, b], from the bracket's best point.
	const cgold = 0.3819660112501051
	const tol1, tol2 = searchTol / 4, searchTol / 2
	a, b := math.Log(lo), math.Log(hi)
	x := math.Log(c)
	w, v := x, x
	fx, fw, fv := fc, fc, fc
	var d, e float64
	for it := 0; it < searchMaxIter; it++ {
		if err := accounting.Canceled(ctx); err != nil {
			return 0, math.NaN(), err
		}
		xm := 0.5 * (a + b)
		if math.Abs(x-xm) <= tol2-0.5*(b-a) {
			break
		}
		golden := true
		if math.Abs(e) > tol1 {
			r := (x - w) * (fx - fv)
			q := (x - v) * (fx - fw)
			p := (x-v)*q - (x-w)*r
			q = 2 * (q - r)
			if q > 0 {
				p = -p
			}
			q = math.Abs(q)
			etemp := e
			e = d
			if !math.IsNaN(p) && !math.IsInf(p, 0) && q > 0 && math.Abs(p) < math.Abs(0.5*q*etemp) && p > q*(a-x) && p < q*(b-x) {
				d = p / q
				golden = false
				if u := x + d; u-a < tol2 || b-u < tol2 {
					d = math.Copysign(tol1, xm-x)
				}
			}
		}
		if golden {
			if x >= xm {
				e = a - x
			} else {
				e = b - x
			}
			d = cgold * e
		}
		u := x + d
		if math.Abs(d) < tol1 {
			u = x + math.Copysign(tol1, d)
		}
		fu, err := eval(math.Exp(u))
		if err != nil {
			return 0, math.NaN(), err
		}
		if fu <= fx {
			if u >= x {
				a = x
			} else {
				b = x
			}
			v, w, x = w, x, u
			fv, fw, fx = fw, fx, fu
		} else {
			if u < x {
				a = u
			} else {
				b = u
			}
			if fu <= fw || w == x {
				v, w = w, u
				fv, fw = fw, fu
			} else if fu <= fv || v == x || v == w {
				v, fv = u, fu
			}
		}
	}
	return best, bestL, nil
}

// addWinner records an order an Epsilon query returned, with its composed
// log moment, for Delta to try again: Delta's minimum then never exceeds
// its value there, which keeps Delta(Epsilon(δ)) ≤ δ exact.
func (s *state) addWinner(l float64, ctx context.Context) {
	if !s.continuous || math.IsNaN(l) {
		return
	}
	for _, w := range s.winners {
		if w.lambda == l {
			return
		}
	}
	t, err := s.totalAt(ctx, l)
	if err != nil {
		return
	}
	if len(s.winners) >= maxWinners {
		s.winners = s.winners[1:]
	}
	s.winners = append(s.winners, orderValue{l, t})
}

// minimizeDelta is minimize for a log δ objective, also trying the
// recorded Epsilon orders.
func (s *state) minimizeDelta(ctx context.Context, f func(total, l float64) float64) (best, bestL float64, err error) {
	best, bestL, err = s.minimize(ctx, f)
	if err != nil {
		return
	}
	for _, w := range s.winners {
		if v := f(w.total, w.lambda); v < best {
			best, bestL = v, w.lambda
		}
	}
	return best, bestL, nil
}

// maEpsAt is Theorem 2.2's ε at one order (before the final rounding up).
func maEpsAt(total, l, logInvDelta float64) float64 { return (total + logInvDelta) / l }

// maLogDeltaAt is Theorem 2.2's log δ at one order, rounded up.
func maLogDeltaAt(total, l, epsilon float64) float64 {
	v := total - l*epsilon
	return v + search.Slack(total, l*epsilon)
}

// cksEpsAt is the conversion of [RDP] at one order, rounded up.
func cksEpsAt(total, l, logDelta float64) float64 {
	o := l + 1 // Rényi order
	rdp := total / l
	t1, t2 := math.Log1p(-1/o), (logDelta+math.Log(o))/l
	e := rdp + t1 - t2
	return e + search.Slack(rdp, t1, t2)
}

// rdpLogDeltaAt is RDP's log δ at one order: the smaller of the inverse
// conversion and Theorem 2.2, rounded up.
func rdpLogDeltaAt(total, l, epsilon float64) float64 {
	o := l + 1
	rdp := total / l
	t1, t2 := math.Log1p(-1/o), math.Log(o)
	v := l*(rdp-epsilon+t1) - t2
	v += search.Slack(l*rdp, l*epsilon, l*t1, t2)
	return math.Min(v, maLogDeltaAt(total, l, epsilon))
}
