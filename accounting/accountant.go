package accounting

import (
	"context"
	"fmt"

	"github.com/dpcalc/dpcalc/internal/work"
)

// Method composes events and answers ε(δ) and δ(ε) for the composition. It
// is what an [Accountant] and a [Procedure] share; only an Accountant
// promises upper bounds.
//
// Compose normalises e with [Normalize], checks every step with Supports and
// only then changes state: on error the method is as it was. Compose does no
// numerical work; Epsilon and Delta do, and return ctx.Err() (wrapped) when
// ctx is done before they finish. Epsilon takes δ ∈ [0, 1) and Delta ε ≥ 0
// (+Inf allowed). Where a composition has no finite bound, Epsilon returns
// +Inf and Delta returns 1 with a nil error.
//
// Implementations are not safe for concurrent use unless their doc says so.
type Method interface {
	// Kind names the accounting method.
	Kind() Kind
	// Supports returns nil if the method can bound s, and an
	// *UnsupportedEventError naming s's path otherwise.
	Supports(s Step) error
	// Compose adds count adaptive repetitions of e.
	Compose(e Event, count int) error
	// Epsilon returns ε(δ).
	Epsilon(ctx context.Context, delta float64) (float64, error)
	// Delta returns δ(ε).
	Delta(ctx context.Context, epsilon float64) (float64, error)
}

// Accountant is a [Method] that never under-reports: Epsilon returns an
// upper bound on the smallest ε for which the composition is (ε, δ)-DP,
// Delta an upper bound on the smallest such δ, and rounding errs toward more
// privacy loss. A Gaussian step is never pure DP, so Delta of a composition
// holding one is never 0 for a finite ε: a δ below the smallest float64
// rounds up to it.
type Accountant interface {
	Method
	// UpperBound does nothing; it marks implementations that keep the
	// Accountant contract.
	UpperBound()
}

// Procedure is a [Method] that evaluates a published procedure whose
// numbers are not proven bounds (the DPD paper's calibrations, Abadi et
// al.'s linear amplification). It has the same inputs and outputs as an
// Accountant, and its Caveat says why it is not one.
type Procedure interface {
	Method
	// Caveat says in a sentence why the numbers are not proven bounds.
	Caveat() string
}

// Kind names an accounting method. Its string is the name used on the
// command line and in JSON.
type Kind string

// The accounting methods of this module. [KindDPDAC] and [KindDPDZCDP] are
// procedures; the others are accountants (KindAC with linear amplification
// is a procedure). The list of methods, in display order, is
// accounting/registry's.
const (
	// KindMA is the moments accountant with Abadi et al. (2016) Theorem 2.2's
	// tail bound, exactly as the paper states it.
	KindMA Kind = "ma"
	// KindRDP uses the same moments as Rényi divergences (Mironov 2017) with the
	// improved RDP→(ε, δ) conversion (Canonne, Kamath, Steinke 2020).
	KindRDP Kind = "rdp"
	// KindZCDP is zero-concentrated DP (Bun and Steinke 2016).
	KindZCDP Kind = "zcdp"
	// KindAC is advanced composition (Dwork and Roth 2014, Theorem 3.20).
	KindAC Kind = "ac"
	// KindDPDAC is the DPD paper's advanced-composition calibration (§4.3).
	KindDPDAC Kind = "dpd-ac"
	// KindDPDZCDP is the DPD paper's zCDP calibration (§4.3, eqs. 6–7).
	KindDPDZCDP Kind = "dpd-zcdp"
	// KindPLD is the privacy loss distribution accountant with certified
	// discretisation bounds.
	KindPLD Kind = "pld"
)

// OrderReporter is implemented by accountants that minimise over Rényi or
// moment orders (KindMA, KindRDP): they also report the optimal order λ.
type OrderReporter interface {
	EpsilonAndOrder(ctx context.Context, delta float64) (epsilon, lambda float64, err error)
	DeltaAndOrder(ctx context.Context, epsilon float64) (delta, lambda float64, err error)
}

// BoundsReporter is implemented by accountants that certify both a lower
// and an upper bound (KindPLD). Epsilon returns the upper bound of
// EpsilonBounds, and Delta that of DeltaBounds, exactly.
type BoundsReporter interface {
	EpsilonBounds(ctx context.Context, delta float64) (lower, upper float64, err error)
	DeltaBounds(ctx context.Context, epsilon float64) (lower, upper float64, err error)
}

// CurveReporter is implemented by accountants that answer a whole ε curve
// faster than one Compose and Epsilon per point (KindPLD).
//
// EpsilonCurve returns, for each i, an upper bound on the smallest ε for
// which the accountant's current composition followed by steps[i] adaptive
// repetitions of step is (ε, delta)-DP. steps must be non-decreasing and
// each at least 1. It validates step, steps and delta before any work and
// does not change the accountant's state. Each value is a certified upper
// bound in the sense of [Accountant.Epsilon]; an implementation documents
// how it compares with the value Epsilon would return after the same
// composition.
type CurveReporter interface {
	EpsilonCurve(ctx context.Context, step Event, steps []int, delta float64) ([]float64, error)
}

// Option configures what every accountant is made with besides its own
// options: the neighbouring relation ([WithAdjacency]). Constructors take
// options last, as in moments.NewRDP(nil, accounting.WithAdjacency(adj)).
type Option func(*Config)

// Config is what the options of a constructor set. Its zero value is the
// default: add-remove adjacency.
type Config struct {
	// Adjacency is the neighbouring relation the method bounds under, fixed
	// for its lifetime: every event it composes is normalised under it
	// ([NormalizeUnder]), and noise multipliers are relative to its
	// sensitivity.
	Adjacency Adjacency
}

// WithAdjacency makes the method bound under adj (the default is
// [AddRemove]).
func WithAdjacency(adj Adjacency) Option { return func(c *Config) { c.Adjacency = adj } }

// NewConfig applies opts to the default configuration and validates the
// result: an unknown relation is an error (see [CheckAdjacency]).
func NewConfig(opts ...Option) (Config, error) {
	var c Config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c, CheckAdjacency(c.Adjacency)
}

// Plan returns the empty plan a method made with c starts from.
func (c Config) Plan() Plan { return Plan{Adjacency: c.Adjacency} }

// Canceled wraps ctx.Err() with the package prefix, or returns nil while
// ctx is live. Long computations call it between units of work; it reports
// one unit to ctx's [work.Meter], if any, and stops the work with an error
// wrapping [work.ErrLimit] past the meter's limit (tests bound calls by
// work done, not by time).
func Canceled(ctx context.Context) error {
	err := work.Add(ctx, 1)
	if cerr := ctx.Err(); cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("accounting: stopped: %w", err)
	}
	return nil
}
