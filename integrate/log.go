package integrate

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/dpcalc/dpcalc/internal/search"
)

// Status reports how an integration ended.
type Status int

// The integration outcomes.
const (
	// Success means the error estimate met the requested tolerance.
	Success Status = iota
	// BudgetExhausted means the evaluation budget ran out before the error
	// estimate met the tolerance; the returned value is the best estimate.
	BudgetExhausted
	// NonFinite means log f returned NaN or +Inf at some point.
	NonFinite
	// BadInput means the arguments were invalid.
	BadInput
)

func (s Status) String() string {
	switch s {
	case Success:
		return "success"
	case BudgetExhausted:
		return "evaluation budget exhausted"
	case NonFinite:
		return "integrand not finite"
	case BadInput:
		return "bad input"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// ErrBudget is matched by errors.Is when [Log] runs out of evaluations
// before reaching the requested tolerance.
var ErrBudget = errors.New("integrate: evaluation budget exhausted before reaching tolerance")

// ErrNonFinite is matched by errors.Is when log f returns NaN or +Inf.
var ErrNonFinite = errors.New("integrate: integrand returned NaN or +Inf")

// Options tunes [Log]. The zero value (or nil) selects the defaults.
type Options struct {
	// RelTol is the requested relative error of ∫f, which is also the
	// absolute error of log ∫f. Default 1e-12; values below 1e-15 are raised
	// to 1e-15.
	RelTol float64
	// MaxEval caps the number of evaluations of log f. Default 200000.
	MaxEval int
	// Scale is the length scale of the integrand (for example a standard
	// deviation). Infinite ends are mapped with this scale and the initial
	// breakpoints of an infinite range lie at Center ± Scale·2^k,
	// k = -2..30. Default 1.
	Scale float64
	// Center is a point near the bulk of the integrand, used for doubly
	// infinite ranges. Default 0. It is clamped into [a, b].
	Center float64
	// Breakpoints are extra points in (a, b) at which the range is split
	// before adaptation starts (peaks, kinks). Points outside are ignored.
	Breakpoints []float64
}

// Result is the outcome of [Log].
type Result struct {
	// LogValue is the estimate of log ∫_a^b f.
	LogValue float64
	// AbsErr is the estimated bound on |LogValue − log ∫f|: the Gauss–Kronrod
	// error estimate (|K15 − G7| summed over intervals, which for smooth
	// integrands overestimates the error of K15) plus a rounding allowance.
	AbsErr float64
	// Evaluations is the number of calls of log f.
	Evaluations int
	// Status says how the integration ended.
	Status Status
}

// interval is a piece of the transformed range [lo, hi] in t.
type interval struct {
	lo, hi  float64
	logVal  float64 // log of the K15 estimate over the piece
	logErr  float64 // log |K15 − G7|
	ordinal int     // creation order, for deterministic tie-breaking
}

// transform maps t in the finite working range to x and returns x and
// log dx/dt.
type transform func(t float64) (x, logJac float64)

// Log returns log ∫_a^b exp(logf(x)) dx, where a may be -Inf and b may be
// +Inf, by adaptive G7/K15 Gauss–Kronrod quadrature with bisection, summed in
// log space.
//
// Infinite ends are removed by the substitutions x = c + s·t/(1−t²)
// (doubly infinite) and x = a + s·t/(1−t) (half infinite), with s =
// opt.Scale and c = opt.Center; the initial partition has breakpoints at
// c ± s·2^k so that features at any distance from c are sampled. The
// integrand may return -Inf (f = 0) but not NaN or +Inf.
//
// Log returns an error wrapping [ErrBudget] when the estimate does not reach
// opt.RelTol within opt.MaxEval evaluations, together with the best Result
// found (Status BudgetExhausted); callers that need a bound must treat such a
// result as unusable. If f is zero everywhere it returns LogValue = -Inf
// with Status Success. Log is deterministic and safe for concurrent use if
// logf is.
func Log(logf func(float64) float64, a, b float64, opt *Options) (Result, error) {
	o := Options{RelTol: 1e-12, MaxEval: 200000, Scale: 1}
	if opt != nil {
		if opt.RelTol != 0 {
			o.RelTol = opt.RelTol
		}
		if opt.MaxEval != 0 {
			o.MaxEval = opt.MaxEval
		}
		if opt.Scale != 0 {
			o.Scale = opt.Scale
		}
		o.Center = opt.Center
		o.Breakpoints = opt.Breakpoints
	}
	bad := func(format string, v ...any) (Result, error) {
		return Result{LogValue: math.NaN(), AbsErr: math.Inf(1), Status: BadInput}, fmt.Errorf("integrate: "+format, v...)
	}
	switch {
	case math.IsNaN(a) || math.IsNaN(b) || a > b:
		return bad("range [%g, %g] invalid, want a <= b", a, b)
	case !(o.RelTol > 0) || math.IsInf(o.RelTol, 0):
		return bad("RelTol = %g, want finite and > 0", o.RelTol)
	case o.MaxEval < 15:
		return bad("MaxEval = %d, want >= 15", o.MaxEval)
	case !(o.Scale > 0) || math.IsInf(o.Scale, 0):
		return bad("Scale = %g, want finite and > 0", o.Scale)
	case math.IsNaN(o.Center) || math.IsInf(o.Center, 0):
		return bad("Center = %g, want finite", o.Center)
	case math.IsInf(a, 1) || math.IsInf(b, -1) || a == b:
		return Result{LogValue: math.Inf(-1), Status: Success}, nil
	}
	if o.RelTol < 1e-15 {
		o.RelTol = 1e-15
	}
	s := o.Scale
	c := math.Max(a, math.Min(b, o.Center))

	// Working range [tlo, thi], the transform, and initial breakpoints in x.
	var tr transform
	var tlo, thi float64
	var xbreaks []float64
	geometric := func(sign float64, from float64) {
		for k := -2; k <= 30; k++ {
			xbreaks = append(xbreaks, from+sign*s*math.Ldexp(1, k))
		}
	}
	switch {
	case math.IsInf(a, -1) && math.IsInf(b, 1):
		tr = func(t float64) (float64, float64) {
			d := 1 - t*t
			return c + s*t/d, math.Log(s*(1+t*t)) - 2*math.Log(d)
		}
		tlo, thi = -1, 1
		xbreaks = append(xbreaks, c)
		geometric(1, c)
		geometric(-1, c)
	case math.IsInf(b, 1):
		tr = func(t float64) (float64, float64) {
			d := 1 - t
			return a + s*t/d, math.Log(s) - 2*math.Log(d)
		}
		tlo, thi = 0, 1
		geometric(1, a)
	case math.IsInf(a, -1):
		tr = func(t float64) (float64, float64) {
			d := 1 - t
			return b - s*t/d, math.Log(s) - 2*math.Log(d)
		}
		tlo, thi = 0, 1
		geometric(-1, b)
	default:
		tr = func(t float64) (float64, float64) { return t, 0 }
		tlo, thi = a, b
		xbreaks = append(xbreaks, c)
	}
	xbreaks = append(xbreaks, o.Breakpoints...)
	// Map breakpoints to t, keeping those strictly inside.
	tb := []float64{tlo, thi}
	for _, x := range xbreaks {
		if !(x > a && x < b) {
			continue
		}
		t := invert(x, a, b, s, c)
		if t > tlo && t < thi {
			tb = append(tb, t)
		}
	}
	sort.Float64s(tb)
	ivs := make([]interval, 0, 64)
	evals := 0
	ordinal := 0
	status := Success
	rounds := 0
	eval := func(lo, hi float64) interval {
		iv := interval{lo: lo, hi: hi, ordinal: ordinal}
		ordinal++
		lv, le, ok := gk15(logf, tr, lo, hi)
		evals += 15
		if !ok {
			status = NonFinite
		}
		iv.logVal, iv.logErr = lv, le
		return iv
	}
	for i := 1; i < len(tb); i++ {
		if tb[i] > tb[i-1] {
			ivs = append(ivs, eval(tb[i-1], tb[i]))
		}
	}
	for {
		if status == NonFinite {
			return Result{LogValue: math.NaN(), AbsErr: math.Inf(1), Evaluations: evals, Status: NonFinite}, ErrNonFinite
		}
		logTot, logErr := totals(ivs)
		res := Result{LogValue: logTot, Evaluations: evals}
		zero := math.IsInf(logTot, -1)
		if zero {
			// f vanished at every node: report zero only after two rounds
			// of refinement have also seen nothing.
			if rounds >= 2 {
				res.Status = Success
				return res, nil
			}
		} else {
			// Rounding: each node value carries a relative error of about
			// eps·|log f| from the exponentiation of its logarithm, plus
			// the summation's few ulp.
			round := eps * (100 + 8*weightedAbsLog(ivs, logTot))
			est := math.Exp(logErr - logTot)
			res.AbsErr = logRelToAbs(est + round)
			if est <= math.Max(o.RelTol, round) {
				res.Status = Success
				return res, nil
			}
		}
		rounds++
		// Bisect the worst intervals: about an eighth of them per round,
		// chosen deterministically by error then creation order.
		k := len(ivs)/8 + 1
		if zero {
			k = len(ivs)
		}
		if evals+30*k > o.MaxEval {
			k = (o.MaxEval - evals) / 30
		}
		if k <= 0 {
			res.Status = BudgetExhausted
			if math.IsInf(logTot, -1) {
				res.AbsErr = math.Inf(1)
			}
			return res, fmt.Errorf("%w (relative error estimate %g, tolerance %g, %d evaluations)",
				ErrBudget, math.Exp(logErr-logTot), o.RelTol, evals)
		}
		sort.SliceStable(ivs, func(i, j int) bool {
			if ivs[i].logErr != ivs[j].logErr {
				return ivs[i].logErr > ivs[j].logErr
			}
			return ivs[i].ordinal < ivs[j].ordinal
		})
		split := ivs[:k:k]
		rest := ivs[k:]
		next := make([]interval, 0, len(ivs)+k)
		for _, iv := range split {
			mid := 0.5 * (iv.lo + iv.hi)
			if !(mid > iv.lo && mid < iv.hi) {
				// Cannot bisect further in floating point; keep it.
				next = append(next, iv)
				continue
			}
			next = append(next, eval(iv.lo, mid), eval(mid, iv.hi))
		}
		next = append(next, rest...)
		ivs = next
	}
}

const eps = 0x1p-52

// weightedAbsLog returns Σ |log v_i|·v_i/V over the intervals, the relative
// rounding error (in units of eps) that exponentiating the interval
// logarithms introduces into the total V = e^{logTot}.
func weightedAbsLog(ivs []interval, logTot float64) float64 {
	w := 0.0
	for _, iv := range ivs {
		if !math.IsInf(iv.logVal, 0) {
			w += math.Abs(iv.logVal) * math.Exp(iv.logVal-logTot)
		}
	}
	return w
}

// invert returns the t that the transform of [Log] maps to x.
func invert(x, a, b, s, c float64) float64 {
	switch {
	case math.IsInf(a, -1) && math.IsInf(b, 1):
		// x - c = s t/(1-t²): solve u t² + t - u = 0 with u = (x-c)/s.
		u := (x - c) / s
		if u == 0 {
			return 0
		}
		return 2 * u / (1 + math.Sqrt(1+4*u*u))
	case math.IsInf(b, 1):
		u := (x - a) / s
		return u / (1 + u)
	case math.IsInf(a, -1):
		u := (b - x) / s
		return u / (1 + u)
	}
	return x
}

// logRelToAbs converts a relative error bound r on a positive value into a
// bound on the error of its logarithm: max(log(1+r), -log(1-r)).
func logRelToAbs(r float64) float64 {
	if r >= 1 {
		return math.Inf(1)
	}
	return -math.Log1p(-r)
}

// totals returns log Σ e^{logVal} and log Σ e^{logErr}, each summed with
// Neumaier compensation in the current (deterministic) order.
func totals(ivs []interval) (logVal, logErr float64) {
	mv, me := math.Inf(-1), math.Inf(-1)
	for _, iv := range ivs {
		mv = math.Max(mv, iv.logVal)
		me = math.Max(me, iv.logErr)
	}
	var sv, cv, se, ce float64
	for _, iv := range ivs {
		if !math.IsInf(mv, -1) {
			sv, cv = search.Neumaier(sv, cv, math.Exp(iv.logVal-mv))
		}
		if !math.IsInf(me, -1) {
			se, ce = search.Neumaier(se, ce, math.Exp(iv.logErr-me))
		}
	}
	logVal, logErr = math.Inf(-1), math.Inf(-1)
	if !math.IsInf(mv, -1) {
		logVal = mv + math.Log(sv+cv)
	}
	if !math.IsInf(me, -1) {
		logErr = me + math.Log(se+ce)
	}
	return logVal, logErr
}

// gk15 applies the G7/K15 pair on [lo, hi] (in t) and returns the log of
// the Kronrod estimate and the log of |K15 − G7|; ok is false when the
// integrand is NaN or +Inf at a node.
func gk15(logf func(float64) float64, tr transform, lo, hi float64) (logK, logE float64, ok bool) {
	mid := 0.5 * (lo + hi)
	h := 0.5 * (hi - lo)
	var lv [15]float64
	m := math.Inf(-1)
	for i := 0; i < 15; i++ {
		var t float64
		switch {
		case i < 7:
			t = mid - h*gk15X[i]
		case i == 7:
			t = mid
		default:
			t = mid + h*gk15X[14-i]
		}
		x, lj := tr(t)
		v := logf(x)
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return math.NaN(), math.NaN(), false
		}
		if !math.IsInf(v, -1) {
			v += lj
		}
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return math.NaN(), math.NaN(), false
		}
		lv[i] = v
		m = math.Max(m, v)
	}
	if math.IsInf(m, -1) {
		return m, m, true
	}
	var k, g float64
	for i := 0; i < 15; i++ {
		j := i
		if i > 7 {
			j = 14 - i
		}
		e := math.Exp(lv[i] - m)
		k += gk15WK[j] * e
		if j%2 == 1 {
			g += gk15WG[j/2] * e
		} else if j == 7 {
			g += gk15WG[3] * e
		}
	}
	lh := math.Log(h)
	logK = m + lh + math.Log(k)
	d := math.Abs(k - g)
	logE = m + lh + math.Log(d)
	return logK, logE, true
}

// GaussKronrod15 returns the G7/K15 rule on [-1, 1]: the 15 Kronrod nodes
// in increasing order, their Kronrod weights, and the Gauss weights (zero at
// the 8 nodes that are Kronrod-only). Callers that integrate many related
// functions on one shared partition (the moments accountant) use it to
// build their own nodes.
func GaussKronrod15() (x, wKronrod, wGauss [15]float64) {
	for i := 0; i < 15; i++ {
		j := i
		sign := -1.0
		if i > 7 {
			j = 14 - i
			sign = 1
		}
		x[i] = sign * gk15X[j]
		if j == 7 {
			x[i] = 0
		}
		wKronrod[i] = gk15WK[j]
		switch {
		case j == 7:
			wGauss[i] = gk15WG[3]
		case j%2 == 1:
			wGauss[i] = gk15WG[j/2]
		}
	}
	return x, wKronrod, wGauss
}
