package accounting

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrInvalidParameter is matched by errors.Is for every *ParamError.
var ErrInvalidParameter = errors.New("accounting: invalid parameter")

// ErrUnsupportedEvent is matched by errors.Is for every *UnsupportedEventError.
var ErrUnsupportedEvent = errors.New("accounting: unsupported event")

// ParamError reports a parameter outside its valid range. Name is the
// parameter's glossary name ("sigma", "q", "delta", ...); Want describes the
// valid range ("> 0", "in (0, 1]"). Path locates the event that holds the
// parameter, in the format of [Normalize] ("" for a parameter of a call).
//
// Exact, when set, is the value's exact decimal text, for an integer that
// a float64 cannot hold (a total of 2^53 + 1 steps); Value is then its
// nearest float64.
type ParamError struct {
	Name  string
	Value float64
	Path  string
	Want  string
	Exact string
}

func (e *ParamError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("accounting: %s = %s at %s, want %s", e.Name, e.ValueText(), e.Path, e.Want)
	}
	return fmt.Sprintf("accounting: %s = %s, want %s", e.Name, e.ValueText(), e.Want)
}

// ValueText is the value as messages print it: Exact when set, else
// [FormatValue] of Value.
func (e *ParamError) ValueText() string {
	if e.Exact != "" {
		return e.Exact
	}
	return FormatValue(e.Value)
}

// FormatValue writes x for a message: a whole number as an integer
// ("9007199254740992", not "9.007199254740992e+15"), other finite values
// as %g, and the non-finite ones in words ("infinite", "-infinite", "not a
// number"), so that no message spells Inf or NaN.
func FormatValue(x float64) string {
	switch {
	case math.IsNaN(x):
		return "not a number"
	case math.IsInf(x, 1):
		return "infinite"
	case math.IsInf(x, -1):
		return "-infinite"
	case x == math.Trunc(x) && math.Abs(x) < 1e21:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// Is reports whether target is ErrInvalidParameter.
func (e *ParamError) Is(target error) bool { return target == ErrInvalidParameter }

// UnsupportedEventError reports an event, possibly nested, that an accountant
// cannot bound. Path locates the event inside the event passed in, in the
// format of [Normalize]: "Composed[2]/PoissonSampled/Gaussian".
type UnsupportedEventError struct {
	Event  Event
	Path   string
	Reason string
}

func (e *UnsupportedEventError) Error() string {
	p := e.Path
	if p == "" {
		p = "event"
	}
	return fmt.Sprintf("accounting: unsupported event %T at %s: %s", e.Event, p, e.Reason)
}

// Is reports whether target is ErrUnsupportedEvent.
func (e *UnsupportedEventError) Is(target error) bool { return target == ErrUnsupportedEvent }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Finite reports whether x is neither NaN nor ±Inf.
func Finite(x float64) bool { return finite(x) }

// CheckNoiseMultiplier validates σ: finite and > 0.
func CheckNoiseMultiplier(sigma float64) error {
	if !finite(sigma) || sigma <= 0 {
		return &ParamError{Name: "sigma", Value: sigma, Want: "finite and > 0"}
	}
	return nil
}

// CheckSamplingRate validates q ∈ (0, 1].
func CheckSamplingRate(q float64) error {
	if !finite(q) || q <= 0 || q > 1 {
		return &ParamError{Name: "q", Value: q, Want: "in (0, 1]"}
	}
	return nil
}

// CheckDelta validates δ ∈ (0, 1).
func CheckDelta(delta float64) error {
	if !finite(delta) || delta <= 0 || delta >= 1 {
		return &ParamError{Name: "delta", Value: delta, Want: "in (0, 1)"}
	}
	return nil
}

// CheckDeltaQuery validates the δ of an Epsilon query: δ ∈ [0, 1) (δ = 0 is
// in range; see [Plan.EpsilonAtZeroDelta]).
func CheckDeltaQuery(delta float64) error {
	if math.IsNaN(delta) || delta < 0 || delta >= 1 {
		return &ParamError{Name: "delta", Value: delta, Want: "in [0, 1)"}
	}
	return nil
}

// CheckEpsilon validates ε: finite and > 0.
func CheckEpsilon(eps float64) error {
	if !finite(eps) || eps <= 0 {
		return &ParamError{Name: "eps", Value: eps, Want: "finite and > 0"}
	}
	return nil
}

// CheckSteps validates a step count T ≥ 1.
func CheckSteps(steps int) error {
	if steps < 1 {
		return &ParamError{Name: "steps", Value: float64(steps), Want: ">= 1"}
	}
	return nil
}

// CheckOrder validates a moment order λ: finite and ≥ minimum.
func CheckOrder(lambda, minimum float64) error {
	if !finite(lambda) || lambda < minimum {
		return &ParamError{Name: "lambda", Value: lambda, Want: fmt.Sprintf("finite and >= %g", minimum)}
	}
	return nil
}
