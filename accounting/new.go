package accounting

import "fmt"

// Options configures the accountants New makes. The zero value gives every
// accountant its documented defaults.
type Options struct {
	// Orders are the moment orders λ used by KindMA and KindRDP; nil means
	// DefaultOrders.
	Orders []float64
	// PLDGridWidth is the discretisation width of KindPLD's privacy loss
	// grid; 0 means the accountant's adaptive default.
	PLDGridWidth float64
	// ACAmplification selects how KindAC bounds Poisson subsampling:
	// AmplificationLog (the default, a proven bound) or AmplificationLinear
	// (Abadi et al. 2016 §3.1's (qε, qδ) reading, which reproduces their
	// §5.1 numbers but is not a proven bound).
	ACAmplification Amplification
}

// New returns a fresh accountant of the given kind.
func New(kind Kind, opt Options) (Accountant, error) {
	switch kind {
	case KindMA:
		return NewMA(opt.Orders), nil
	case KindRDP:
		return NewRDP(opt.Orders), nil
	case KindZCDP:
		return NewZCDP(), nil
	case KindAC:
		return NewAC(ACOptions{Amplification: opt.ACAmplification}), nil
	case KindDPDAC:
		return NewDPDAC(), nil
	case KindDPDZCDP:
		return NewDPDZCDP(), nil
	case KindPLD:
		return NewPLD(PLDOptions{GridWidth: opt.PLDGridWidth})
	}
	return nil, fmt.Errorf("accounting: accountant %q is not available in this build", kind)
}

// OrderReporter is implemented by accountants that minimise over moment
// orders (KindMA, KindRDP): they also report the optimal order λ.
type OrderReporter interface {
	EpsilonAndOrder(delta float64) (epsilon, lambda float64, err error)
	DeltaAndOrder(epsilon float64) (delta, lambda float64, err error)
}

// BoundsReporter is implemented by accountants that certify both a lower
// and an upper bound (KindPLD). Epsilon returns the upper bound.
type BoundsReporter interface {
	EpsilonBounds(delta float64) (lower, upper float64, err error)
	DeltaBounds(epsilon float64) (lower, upper float64, err error)
}
