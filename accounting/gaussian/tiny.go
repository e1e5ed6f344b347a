package gaussian

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// millsFrom is the μ = Δ/σ from which LogDelta and LogDeltaBounds use
// the Mills-ratio form of the profile (logDeltaMills). Below it the
// argument a = μ/2 − εσ/Δ of Φ is known to within a few ulps of μ, which
// moves log δ by less than 1e-11 relative; above, the cancellation in a
// costs more (1e-4 absolute at σ = 1e-12, ε ≈ 5e23) and the bounds
// account for it.
const millsFrom = 0x1p16

// LogDeltaBounds returns a lower and an upper bound on log δ(ε) of the
// Gaussian mechanism (see [LogDelta]). For μ = sens/sigma ≤ 2^16 both are
// LogDelta's value (relative error about 1e-12: callers add their own
// slack). For larger μ (σ/Δ below about 1.5e-5, where ε ≈ μ²/2 can reach
// 1e300) the argument a = μ/2 − εσ/Δ of Φ is a difference of two numbers
// near μ/2: formed naively it carries an absolute rounding error of a few
// ulps of μ (1e-4 at σ = 1e-12), more than the answer can ignore. It is
// formed with the rounding errors of 1/σ and εσ recovered (FMA), and δ is
// increasing in a, so the bounds are the profile's lower bound at a − e
// and its upper bound at a + e, e bounding what rounding remains (see
// logDeltaMills for the profile itself).
func LogDeltaBounds(sigma, sens, eps float64) (lo, hi float64) {
	s := sigma / sens
	mu := 1 / s
	if !(mu > millsFrom) || math.IsInf(mu, 1) || eps*s > math.MaxFloat64/4 {
		v := LogDelta(sigma, sens, eps)
		return v, v
	}
	// a = 1/(2s) − εs, with the rounding of 1/s and of εs recovered by
	// FMA (both residuals are exact), so that a is a few ulps of itself
	// from its exact value rather than a few ulps of 1/s.
	c, d := 0.5*mu, eps*s
	cLo := 0.5 * mu * math.FMA(-s, mu, 1) // 1/(2s) − c, to 2^-50 of itself
	dLo := math.FMA(eps, s, -d)           // εs − d, exactly
	a := (c - d) + (cLo - dLo)
	e := math.Abs(a)*0x1p-50 + (math.Abs(c)+math.Abs(d))*0x1p-98 + 0x1p-1074
	if sens != 1 {
		// s = sigma/sens is itself rounded (2^-53 relative), which moves
		// a by up to (c + d)·2^-53 and no FMA recovers it.
		e += (math.Abs(c) + math.Abs(d)) * 0x1p-51
	}
	lo, _ = logDeltaMills(a-e, mu)
	_, hi = logDeltaMills(a+e, mu)
	return math.Min(lo, 0), math.Min(hi, 0)
}

// logDeltaMills returns a lower and an upper bound on log δ for the
// Gaussian mechanism at the argument a = μ/2 − ε/μ of Φ (noise multiplier
// 1/μ, sensitivity 1), μ ≥ 2^16. With b = a − μ and ε = μ²/2 − aμ,
// e^ε φ(b) = φ(a) exactly, so
//
//	δ = Φ(a) − e^ε Φ(b) = Φ(a) − φ(a)·R(μ − a),
//
// R the Mills ratio Φ(−t)/φ(t); for a < −5 also Φ(a) = φ(a)·R(−a), and
// δ = φ(a)·(R(−a) − R(μ − a)). Neither form has the cancellation of
// ε + log Φ(b) (two numbers near ±μ²/2): every term is a function of a and
// of μ − a ≥ μ/2 directly. Each term is widened by its rounding error
// (a few ulps of its own size, and of a²/2 for log φ(a)) before the
// difference, so the bounds hold whatever the cancellation.
func logDeltaMills(a, mu float64) (lo, hi float64) {
	logPhi := -0.5*a*a - 0.5*math.Log(2*math.Pi) // log φ(a)
	ePhi := 1e-13 + (math.Abs(logPhi)+1)*0x1p-48
	if math.IsInf(logPhi, -1) {
		ePhi = 0
	}
	rz := mills(mu - a)
	if a < -5 {
		ra := mills(-a)
		diff := ra - rz
		if !(diff > 0) {
			return math.Inf(-1), math.Inf(-1)
		}
		rel := 1e-14 * (ra + rz) / diff // the continued fractions' rounding
		hi = logPhi + ePhi + math.Log(diff) + rel
		lo = math.Inf(-1)
		if rel < 0.5 {
			lo = logPhi - ePhi + math.Log(diff) - 2*rel
		}
		return lo, hi
	}
	t1 := logmath.NormCDF(a)
	e1 := (1 + math.Abs(t1)) * 0x1p-48
	t2 := logPhi + math.Log(rz)
	hi = t1 + e1
	if t2-ePhi < hi {
		hi = logmath.Sub(hi, t2-ePhi)
	}
	lo = math.Inf(-1)
	if t2+ePhi < t1-e1 {
		lo = logmath.Sub(t1-e1, t2+ePhi)
	}
	return lo, hi
}

// mills returns the Mills ratio R(t) = Φ(−t)/φ(t) for t ≥ 5, as 1/(t + h)
// with h = 1/R(t) − t from millsExcess's continued fraction.
func mills(t float64) float64 { return 1 / (t + millsExcess(-t)) }
