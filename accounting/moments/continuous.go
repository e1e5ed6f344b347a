package moments

import (
	"context"
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/internal/search"
)

// The continuous order search of the default configuration (orders nil).
const (
	// MaxSearchOrder is the largest moment order the continuous search
	// tries; beyond 10⁴ α is the closed-form bound of [LogMoments].
	MaxSearchOrder = 0x1p20
	// latticeN is the number of lattice orders per octave of λ: the search
	// runs over λ_k = 2^(k/latticeN). Between neighbours log λ changes by
	// ln 2/1024 = 6.8e-4, so the lattice's minimum is above the continuous
	// one by at most (6.8e-4/2)²/2 = 6e-8 times the bound's curvature in
	// log λ relative to its value (about 1 for DP-SGD settings), below the
	// 1e-7 to 1e-6 of α's own certified error; and neighbouring values
	// differ by far more than α's round-off, so the lattice's values keep
	// the bound's quasi-convexity.
	latticeN = 1024
	// latticeMin and latticeMax are the lattice indices of MinOrder and
	// MaxSearchOrder. latticeSplit is the last lattice index at or below
	// mechanism.SplitOrder = 10⁴ (2^(13606/1024) = 9999.6): beyond it α is the
	// closed-form bound λ(λ+1)/(2σ²), which for q < 1 jumps far above the
	// integrated α, so the bound is quasi-convex on each side but not
	// across; each side is searched on its own.
	latticeMin   = -10 * latticeN
	latticeMax   = 20 * latticeN
	latticeSplit = 13606
	// latticeStart is the half-width, in lattice steps (1.1% in λ), of
	// the search's first bracket around its starting guess.
	latticeStart = 16
	// goldenStep is the golden-section fraction (3 − √5)/2.
	goldenStep = 0.3819660112501051
	// extraCacheSize caps the off-grid composed totals kept per plan.
	extraCacheSize = 4096
)

// latticeOrder returns the lattice order λ_k = 2^(k/latticeN).
func latticeOrder(k int) float64 { return math.Exp2(float64(k) / latticeN) }

// latticeIndex returns the index of the lattice order nearest to l, within
// [latticeMin, latticeMax].
func latticeIndex(l float64) int {
	return min(max(int(math.Round(math.Log2(l)*latticeN)), latticeMin), latticeMax)
}

// totalAt returns the composed, rounded-up log moment at order l for the
// current plan: the grid's value when l is a fractional grid order, else
// the sum over the plan's steps of α(l) evaluated for l alone
// ([mechanism.RDP.LogMomentAt]; for the Gaussian at an integer order with
// E2 also bounded by the binomial sum), and at an integer grid order the
// smaller of that and the grid's value. The value depends on l only, so
// every search that meets l sees the same number.
func (s *state) totalAt(ctx context.Context, l float64) (float64, error) {
	grid, onGrid := 0.0, false
	if i := sort.SearchFloat64s(s.orders, l); i < len(s.orders) && s.orders[i] == l {
		total, err := s.totals(ctx)
		if err != nil {
			return 0, err
		}
		grid, onGrid = total[i], true
		if l != math.Trunc(l) || l > mechanism.SplitOrder {
			return grid, nil
		}
	}
	if v, ok := s.extra[l]; ok {
		return v, nil
	}
	total := 0.0
	for _, st := range s.plan.Steps {
		r, err := curve(st)
		if err != nil {
			return 0, err
		}
		v, err := r.LogMomentAt(ctx, s.cache, float64(st.Count), l)
		if err != nil {
			return 0, err
		}
		total = search.RoundUp(total + v)
	}
	if onGrid {
		total = math.Min(total, grid)
	}
	if s.extra == nil || len(s.extra) >= extraCacheSize {
		s.extra = make(map[float64]float64)
	}
	s.extra[l] = total
	return total, nil
}

// minimize returns the smallest f(α_total(λ), λ) over the orders it
// evaluates and its order (NaN when every value is +Inf). It scans the grid
// s.orders; in continuous mode it then finds a local minimum of f over the
// lattice λ_k = 2^(k/latticeN), MinOrder ≤ λ_k ≤ MaxSearchOrder, and
// returns the smaller of the two. The lattice search keeps a bracket
// a ≤ c ≤ b of lattice indices with f(c) ≤ f(a), f(b), starting from the
// grid's best order and its grid neighbours (moved outward while a side
// is lower), and narrows it by parabolic steps rounded to the lattice,
// with golden-section steps where those do not shrink the bracket (Brent
// 1973, ch. 5), until a and b are c's lattice neighbours.
//
// The bounds minimised here are quasi-convex in λ (see the package
// documentation), so on the lattice the local minimum is the lattice's
// minimum, whatever the starting point: Epsilon and Delta search the same
// candidates (the grid and the lattice, each value a function of the plan
// and λ only) and both find their minimum over them, which makes the two
// mutually inverse up to rounding (Delta(Epsilon(δ)) ≤ δ and
// Epsilon(Delta(ε)) ≤ ε) and every answer independent of earlier queries.
// Only evaluated orders are returned, each a valid bound, and the grid is
// among them, so the result never exceeds the grid's. NaN counts as +Inf.
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
	eval := func(k int) (float64, error) {
		l := latticeOrder(k)
		t, err := s.totalAt(ctx, l)
		if err != nil {
			return 0, err
		}
		v := f(t, l)
		if math.IsNaN(v) {
			v = math.Inf(1)
		}
		return v, nil
	}
	// Start from the vertex of the parabola in log λ through the grid's
	// best order and its neighbours, with a bracket of ±latticeStart
	// lattice steps; the start only decides how fast the search ends, not
	// where.
	c := latticeIndex(s.orders[bi])
	if n := len(s.orders); bi > 0 && bi < n-1 {
		x0, x1, x2 := math.Log(s.orders[bi-1]), math.Log(s.orders[bi]), math.Log(s.orders[bi+1])
		f0, f1, f2 := f(total[bi-1], s.orders[bi-1]), best, f(total[bi+1], s.orders[bi+1])
		p, q := (x1-x0)*(f1-f2), (x1-x2)*(f1-f0)
		if den := 2 * (p - q); den != 0 && !math.IsInf(f0, 0) && !math.IsInf(f2, 0) {
			if x := x1 - ((x1-x0)*p-(x1-x2)*q)/den; x > x0 && x < x2 {
				c = latticeIndex(math.Exp(x))
			}
		}
	}
	c = min(c, latticeSplit)
	k, v, err := latticeSearch(ctx, eval, latticeMin, latticeSplit, c-latticeStart, c, c+latticeStart)
	if err != nil {
		return 0, math.NaN(), err
	}
	if v < best {
		best, bestL = v, latticeOrder(k)
	}
	// The peers' grid orders near the lattice minimum. Where α rises
	// steeply (a tiny q: the last binomial term q^(λ+1)·e^(λ(λ+1)/2σ²)
	// overtakes the others), the bound's curvature in log λ is far above
	// the lattice spacing's assumption, and an order between two lattice
	// neighbours can be lower than both: at σ = 2.53, q = 4.633e-5, T = 14,
	// δ = 2.206e-7 the lattice minimum λ = 127.05 was 5.3e-5 above
	// dp_accounting's order 128 (λ = 127). The bound is quasi-convex in λ,
	// so the peers' grid has its minimum at the grid order below or above
	// the continuous minimum, which lies between k's lattice neighbours;
	// peerSearch walks the grid downhill from the order nearest k.
	pk, pv, err := peerSearch(ctx, func(l float64) (float64, error) {
		t, err := s.totalAt(ctx, l)
		if err != nil {
			return 0, err
		}
		v := f(t, l)
		if math.IsNaN(v) {
			v = math.Inf(1)
		}
		return v, nil
	}, latticeOrder(k))
	if err != nil {
		return 0, math.NaN(), err
	}
	if pv < best {
		best, bestL = pv, PeerOrders[pk]
	}
	k, v, err = latticeSearch(ctx, eval, latticeSplit+1, latticeMax, latticeSplit+1, latticeSplit+1, latticeSplit+2)
	if err != nil {
		return 0, math.NaN(), err
	}
	if v < best {
		best, bestL = v, latticeOrder(k)
	}
	return best, bestL, nil
}

// peerSearch returns the index in [PeerOrders] of a local minimum of eval
// over that grid and its value: it starts at the grid order nearest to l
// (in log λ) and walks to the lower neighbour while one is lower. eval is
// quasi-convex in λ, so the local minimum is the grid's minimum; typically
// it takes three evaluations.
func peerSearch(ctx context.Context, eval func(float64) (float64, error), l float64) (int, float64, error) {
	o := PeerOrders
	i := sort.SearchFloat64s(o, l)
	if i == len(o) || i > 0 && math.Log(l/o[i-1]) < math.Log(o[i]/l) {
		i--
	}
	fi, err := eval(o[i])
	if err != nil {
		return 0, 0, err
	}
	for _, dir := range []int{-1, 1} {
		moved := false
		for j := i + dir; j >= 0 && j < len(o); j += dir {
			if err := accounting.Canceled(ctx); err != nil {
				return 0, 0, err
			}
			fj, err := eval(o[j])
			if err != nil {
				return 0, 0, err
			}
			if !(fj < fi) {
				break
			}
			i, fi, moved = j, fj, true
		}
		if moved {
			break // a quasi-convex function does not fall on both sides
		}
	}
	return i, fi, nil
}

// latticeSearch returns a lattice index in [lo, hi] where eval has a local
// minimum over the lattice, and its value, starting from the bracket
// a ≤ c ≤ b (clamped to [lo, hi]). The bracket is moved outward, doubling
// its step, while an end is lower than c; then narrowed by parabolic steps
// rounded to the lattice, with golden-section steps where two of those in
// a row do not halve it (Brent 1973, ch. 5), until a and b are c's
// neighbours (or c is at lo or hi).
func latticeSearch(ctx context.Context, eval func(int) (float64, error), lo, hi, a, c, b int) (int, float64, error) {
	c = min(max(c, lo), hi)
	a, b = min(max(a, lo), c), max(min(b, hi), c)
	fc, err := eval(c)
	if err != nil {
		return 0, 0, err
	}
	fa, fb := fc, fc
	if a < c {
		if fa, err = eval(a); err != nil {
			return 0, 0, err
		}
	}
	if b > c {
		if fb, err = eval(b); err != nil {
			return 0, 0, err
		}
	}
	// Move the bracket outward while an end is lower than its middle: past
	// the vertex of the parabola through the three points (by half the
	// distance again) where it lies beyond, else doubling the step; at
	// most 64 times the last step.
	for fa < fc || fb < fc {
		x, convex := vertex(a, c, b, fa, fc, fb)
		if fa <= fb { // left
			d := 2 * (c - a)
			if convex && x < float64(a) {
				d = min(max(d, int(math.Ceil(1.5*(float64(a)-x)))), 64*(c-a))
			}
			b, fb, c, fc = c, fc, a, fa
			if c == lo {
				a, fa = c, fc
				break
			}
			a = max(c-max(d, 1), lo)
			if fa, err = eval(a); err != nil {
				return 0, 0, err
			}
		} else {
			d := 2 * (b - c)
			if convex && x > float64(b) {
				d = min(max(d, int(math.Ceil(1.5*(x-float64(b))))), 64*(b-c))
			}
			a, fa, c, fc = c, fc, b, fb
			if c == hi {
				b, fb = c, fc
				break
			}
			b = min(c+max(d, 1), hi)
			if fb, err = eval(b); err != nil {
				return 0, 0, err
			}
		}
	}
	// Narrow [a, b] around c to c's lattice neighbours. Every step moves
	// an end strictly inward, so the loop ends.
	slow := 0 // parabolic steps in a row that did not halve the bracket
	for c-a > 1 || b-c > 1 {
		if err := accounting.Canceled(ctx); err != nil {
			return 0, 0, err
		}
		u, ok := 0, false
		if slow < 2 && a < c && c < b && !math.IsInf(fa, 0) && !math.IsInf(fb, 0) && !math.IsInf(fc, 0) {
			// The vertex of the parabola through the three points.
			p, q := float64(c-a)*(fc-fb), float64(c-b)*(fc-fa)
			num := float64(c-a)*p - float64(c-b)*q
			if den := 2 * (p - q); den != 0 {
				x := float64(c) - num/den
				if x > float64(a) && x < float64(b) {
					u = int(math.Round(x))
					if u == c {
						// c's neighbour on the vertex's side, or the other
						// one if that side is done.
						u = c - 1
						if (x >= float64(c) && b > c+1) || c-a == 1 {
							u = c + 1
						}
					}
					ok = u > a && u < b
				}
			}
		}
		if !ok { // golden section in the larger part
			slow = 0
			if b-c >= c-a {
				u = c + int(math.Ceil(goldenStep*float64(b-c)))
			} else {
				u = c - int(math.Ceil(goldenStep*float64(c-a)))
			}
		}
		fu, err := eval(u)
		if err != nil {
			return 0, 0, err
		}
		w := b - a
		if fu < fc {
			if u > c {
				a, fa = c, fc
			} else {
				b, fb = c, fc
			}
			c, fc = u, fu
		} else if u > c {
			b, fb = u, fu
		} else {
			a, fa = u, fu
		}
		if ok {
			if 2*(b-a) > w {
				slow++
			} else {
				slow = 0
			}
		}
	}
	return c, fc, nil
}

// vertex returns the abscissa of the vertex of the parabola through
// (a, fa), (c, fc), (b, fb), a < c < b, and whether the parabola is convex
// (false when the points are not distinct or a value is not finite).
func vertex(a, c, b int, fa, fc, fb float64) (x float64, convex bool) {
	if !(a < c && c < b) || math.IsInf(fa, 0) || math.IsInf(fc, 0) || math.IsInf(fb, 0) {
		return 0, false
	}
	s01 := (fc - fa) / float64(c-a)
	k := ((fb-fc)/float64(b-c) - s01) / float64(b-a)
	if !(k > 0) {
		return 0, false
	}
	return float64(a+c)/2 - s01/(2*k), true
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
