package accounting

import (
	"fmt"
	"math"
	"strings"

	"github.com/dpcalc/dpcalc/internal/logmath"
)

// ZCDPAccountant composes events under zero-concentrated differential
// privacy (Bun and Steinke 2016, arXiv:1605.02065) and converts the total
// (ξ, ρ)-zCDP guarantee to (ε, δ)-DP.
//
// Per-event bounds:
//   - Gaussian{σ}: ρ = Δ²/(2τ) with Δ = 1 and τ = σ² (Proposition 1.6).
//   - PoissonSampled{q, e}: bounded by e itself. Bun and Steinke give no
//     amplification by subsampling for zCDP, so none is claimed. The bound
//     is sound under add/remove adjacency: with Poisson sampling the two
//     output distributions are mixtures, with equal weights, of the outputs
//     of e on identical or on neighbouring subsamples, and Rényi divergence
//     is jointly quasi-convex (van Erven and Harremoës 2014), so
//     sampling never increases any D_α.
//   - EpsilonDelta{ε, 0} (pure ε-DP): ρ = ε²/2 (Proposition 1.4).
//     EpsilonDelta with δ > 0 has no zCDP bound and is rejected.
//   - ZCDP{ρ, ξ}: taken as is.
//   - NoOp: ρ = 0. NonPrivate: no bound (ε = +Inf, δ = 1).
//
// Composition adds ξ and ρ (Lemma 1.7, which holds for (ξ, ρ)-zCDP as well).
// The conversion is Proposition 1.3: (ξ, ρ)-zCDP implies
// (ξ + ρ + 2√(ρ log(1/δ)), δ)-DP for every δ > 0; Delta inverts it in closed
// form. This conversion is not the tightest known (Canonne, Kamath and
// Steinke 2020 give a better one), but it is the one the DPD paper uses.
//
// A ZCDPAccountant is not safe for concurrent use.
type ZCDPAccountant struct {
	rho, xi    float64
	nonPrivate bool
}

// NewZCDP returns an empty zCDP accountant (ρ = ξ = 0).
func NewZCDP() *ZCDPAccountant { return &ZCDPAccountant{} }

// Kind returns KindZCDP.
func (a *ZCDPAccountant) Kind() Kind { return KindZCDP }

// Rho returns the composed ρ, or +Inf after a NonPrivate event.
func (a *ZCDPAccountant) Rho() float64 {
	if a.nonPrivate {
		return math.Inf(1)
	}
	return a.rho
}

// Xi returns the composed ξ, or +Inf after a NonPrivate event.
func (a *ZCDPAccountant) Xi() float64 {
	if a.nonPrivate {
		return math.Inf(1)
	}
	return a.xi
}

// Compose adds count adaptive repetitions of e. It validates the whole event
// tree before changing state; on error the accountant is unchanged.
func (a *ZCDPAccountant) Compose(e Event, count int) error {
	if count < 1 {
		return &ParamError{Name: "count", Value: float64(count), Want: ">= 1"}
	}
	rho, xi, np, err := zcdpOf(e, "")
	if err != nil {
		return err
	}
	c := float64(count)
	// Adding a non-negative product: round-to-nearest may lose at most half
	// an ulp; the conversion below rounds its result upward by more than that.
	a.rho += c * rho
	a.xi += c * xi
	a.nonPrivate = a.nonPrivate || np
	return nil
}

// Epsilon returns ε(δ) = ξ + ρ + 2√(ρ log(1/δ)) (Bun and Steinke 2016,
// Proposition 1.3), rounded up by a few ulps so that floating-point error
// never under-reports.
func (a *ZCDPAccountant) Epsilon(delta float64) (float64, error) {
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if a.nonPrivate || math.IsInf(a.rho, 1) || math.IsInf(a.xi, 1) {
		return math.Inf(1), nil
	}
	return zcdpEpsilon(a.rho, a.xi, delta), nil
}

// Delta returns δ(ε), the inverse of Proposition 1.3 of Bun and Steinke
// (2016): δ = exp(−(ε−ξ−ρ)²/(4ρ)) for ε ≥ ξ + ρ and δ = 1 below. With ρ = 0
// it is 0 for ε ≥ ξ and 1 below. The result is rounded up by a few ulps.
func (a *ZCDPAccountant) Delta(epsilon float64) (float64, error) {
	if math.IsNaN(epsilon) || epsilon < 0 {
		return 0, &ParamError{Name: "eps", Value: epsilon, Want: ">= 0"}
	}
	if a.nonPrivate || math.IsInf(a.rho, 1) || math.IsInf(a.xi, 1) {
		return 1, nil
	}
	return zcdpDelta(a.rho, a.xi, epsilon), nil
}

// zcdpEpsilon returns ξ + ρ + 2√(ρ log(1/δ)), the ε of Bun and Steinke (2016)
// Proposition 1.3 for (ξ, ρ)-zCDP, rounded up by four ulps. The caller
// validates ρ, ξ ≥ 0 and δ ∈ (0, 1).
func zcdpEpsilon(rho, xi, delta float64) float64 {
	return zcUp(xi + rho + 2*math.Sqrt(rho*-logmath.Log(delta)))
}

// zcdpDelta returns exp(−(ε−ξ−ρ)²/(4ρ)) for ε ≥ ξ + ρ and 1 otherwise, the
// inverse of Bun and Steinke (2016) Proposition 1.3, rounded up by four
// ulps. The caller validates ρ, ξ ≥ 0 and ε ≥ 0.
func zcdpDelta(rho, xi, epsilon float64) float64 {
	if math.IsInf(epsilon, 1) {
		return 0
	}
	t := epsilon - xi - rho
	if t < 0 || (t == 0 && rho > 0) {
		return 1
	}
	if rho == 0 {
		return 0
	}
	return math.Min(1, zcUp(math.Exp(-t*t/(4*rho))))
}

// zcUp rounds x > 0 up by four ulps (0 stays 0), covering the rounding error of the
// few floating-point operations in a closed-form bound.
func zcUp(x float64) float64 {
	if x == 0 {
		return 0
	}
	for i := 0; i < 4; i++ {
		x = math.Nextafter(x, math.Inf(1))
	}
	return x
}

// zcdpOf validates e and returns its (ρ, ξ) and whether it is non-private.
// path locates e in the event passed to Compose ("" for the root).
func zcdpOf(e Event, path string) (rho, xi float64, nonPrivate bool, err error) {
	switch ev := e.(type) {
	case Gaussian:
		if err := CheckNoiseMultiplier(ev.NoiseMultiplier); err != nil {
			return 0, 0, false, zcAt(err, path)
		}
		s := ev.NoiseMultiplier
		// 1/(2σ²) overflows to +Inf only for σ < ~1e-154; +Inf is the safe value.
		return 1 / (2 * s * s), 0, false, nil
	case PoissonSampled:
		if err := CheckSamplingRate(ev.SamplingRate); err != nil {
			return 0, 0, false, zcAt(err, path)
		}
		// No amplification for zCDP: the subsampled mechanism is bounded by
		// the unsampled one (see the ZCDPAccountant doc).
		return zcdpOf(ev.Event, zcChildPath(path, e, "Event"))
	case SelfComposed:
		if ev.Count < 1 {
			return 0, 0, false, zcAt(&ParamError{Name: "count", Value: float64(ev.Count), Want: ">= 1"}, path)
		}
		r, x, np, err := zcdpOf(ev.Event, zcChildPath(path, e, "Event"))
		c := float64(ev.Count)
		return c * r, c * x, np, err
	case Composed:
		for i, sub := range ev.Events {
			r, x, np, err := zcdpOf(sub, zcChildPath(path, e, fmt.Sprintf("Events[%d]", i)))
			if err != nil {
				return 0, 0, false, err
			}
			rho += r
			xi += x
			nonPrivate = nonPrivate || np
		}
		return rho, xi, nonPrivate, nil
	case EpsilonDelta:
		if !finite(ev.Epsilon) || ev.Epsilon < 0 {
			return 0, 0, false, zcAt(&ParamError{Name: "eps", Value: ev.Epsilon, Want: "finite and >= 0"}, path)
		}
		if math.IsNaN(ev.Delta) || ev.Delta < 0 || ev.Delta > 1 {
			return 0, 0, false, zcAt(&ParamError{Name: "delta", Value: ev.Delta, Want: "in [0, 1]"}, path)
		}
		if ev.Delta > 0 {
			return 0, 0, false, &UnsupportedEventError{Event: e, Path: path,
				Reason: fmt.Sprintf("(ε, δ)-DP with δ = %g > 0 has no zCDP bound", ev.Delta)}
		}
		return ev.Epsilon * ev.Epsilon / 2, 0, false, nil
	case ZCDP:
		if !finite(ev.Rho) || ev.Rho < 0 {
			return 0, 0, false, zcAt(&ParamError{Name: "rho", Value: ev.Rho, Want: "finite and >= 0"}, path)
		}
		if !finite(ev.Xi) || ev.Xi < 0 {
			return 0, 0, false, zcAt(&ParamError{Name: "xi", Value: ev.Xi, Want: "finite and >= 0"}, path)
		}
		return ev.Rho, ev.Xi, false, nil
	case NoOp:
		return 0, 0, false, nil
	case NonPrivate:
		return 0, 0, true, nil
	case nil:
		return 0, 0, false, &UnsupportedEventError{Event: e, Path: path, Reason: "nil event"}
	}
	return 0, 0, false, &UnsupportedEventError{Event: e, Path: path, Reason: "unknown event type"}
}

// zcChildPath returns the path of the field field of parent, which sits at
// path: "Composed.Events[2]" for the third event of a root Composed, then
// "Composed.Events[2].Event" for the event inside it.
func zcChildPath(path string, parent Event, field string) string {
	if path == "" {
		path = strings.TrimPrefix(fmt.Sprintf("%T", parent), "accounting.")
	}
	return path + "." + field
}

// zcAt wraps a parameter error with the path of the event that holds it.
func zcAt(err error, path string) error {
	if path == "" {
		return err
	}
	return &zcParamError{ParamError: err.(*ParamError), Path: path}
}

// zcParamError is a ParamError found inside a nested event. errors.As
// finds the *ParamError through Unwrap.
type zcParamError struct {
	*ParamError
	Path string
}

func (e *zcParamError) Error() string {
	return fmt.Sprintf("accounting: %s = %g at %s, want %s", e.Name, e.Value, e.Path, e.Want)
}

func (e *zcParamError) Unwrap() error { return e.ParamError }

var _ Accountant = (*ZCDPAccountant)(nil)
