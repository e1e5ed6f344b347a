// Package registry makes accounting methods by [accounting.Kind]: the
// accountants of the moments, pld, zcdp and advcomp packages and the
// procedures of package procedure. It sits above those packages so that the
// root accounting package never imports its children.
package registry

import (
	"fmt"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/advcomp"
	"github.com/dpcalc/dpcalc/accounting/moments"
	"github.com/dpcalc/dpcalc/accounting/pld"
	"github.com/dpcalc/dpcalc/accounting/procedure"
	"github.com/dpcalc/dpcalc/accounting/zcdp"
)

// Options configures the methods New makes. The zero value gives every
// method its documented defaults.
type Options struct {
	// Orders are the moment orders λ used by KindMA and KindRDP; nil means
	// the continuous order search (moments.NewMA(nil), moments.NewRDP(nil)).
	Orders []float64
	// PLDGridWidth is the discretisation width of KindPLD's privacy loss
	// grid; 0 means the accountant's adaptive default.
	PLDGridWidth float64
	// ACAmplification selects how KindAC bounds Poisson subsampling:
	// advcomp.AmplificationLog (the default, a proven bound: New returns an
	// accountant) or advcomp.AmplificationLinear (Abadi et al. 2016 §3.1's
	// (qε, qδ) reading: New returns a procedure).
	ACAmplification advcomp.Amplification
	// Adjacency is the neighbouring relation the method bounds under; the
	// zero value is accounting.AddRemove. A method that cannot bound under
	// the relation is an error from New.
	Adjacency accounting.Adjacency
}

// New returns a fresh method of the given kind: an [accounting.Accountant]
// or an [accounting.Procedure] (see [Procedural]). It returns an error for
// an unknown kind or invalid options; it never panics.
func New(kind accounting.Kind, opt Options) (accounting.Method, error) {
	if err := accounting.CheckAdjacency(opt.Adjacency); err != nil {
		return nil, err
	}
	adj := accounting.WithAdjacency(opt.Adjacency)
	switch kind {
	case accounting.KindMA:
		return moments.NewMA(opt.Orders, adj)
	case accounting.KindRDP:
		return moments.NewRDP(opt.Orders, adj)
	case accounting.KindZCDP:
		return zcdp.New(adj), nil
	case accounting.KindAC:
		switch opt.ACAmplification {
		case "", advcomp.AmplificationLog:
			return advcomp.New(adj), nil
		case advcomp.AmplificationLinear:
			return advcomp.NewLinear(adj), nil
		}
		_, err := advcomp.ParseAmplification(string(opt.ACAmplification))
		return nil, err
	case accounting.KindDPDAC, accounting.KindDPDZCDP:
		// The DPD paper's procedures are stated under add-remove only.
		if opt.Adjacency != accounting.AddRemove {
			return nil, fmt.Errorf("registry: %s does not bound under %s adjacency", kind, opt.Adjacency)
		}
		if kind == accounting.KindDPDAC {
			return procedure.NewDPDAC(), nil
		}
		return procedure.NewDPDZCDP(), nil
	case accounting.KindPLD:
		return pld.New(pld.Options{GridWidth: opt.PLDGridWidth}, adj)
	}
	return nil, fmt.Errorf("registry: accountant %q is not available in this build", kind)
}

// NewAccountant is [New] for callers that need the upper-bound contract: it
// returns an error, naming the caveat, when kind with opt is a procedure.
func NewAccountant(kind accounting.Kind, opt Options) (accounting.Accountant, error) {
	m, err := New(kind, opt)
	if err != nil {
		return nil, err
	}
	a, ok := m.(accounting.Accountant)
	if !ok {
		return nil, fmt.Errorf("registry: %s is a procedure, not an accountant (%s)", kind, Caveat(m))
	}
	return a, nil
}

// Procedural reports whether kind with opt makes a procedure.
func Procedural(kind accounting.Kind, opt Options) bool {
	return kind.Procedural() || (kind == accounting.KindAC && opt.ACAmplification == advcomp.AmplificationLinear)
}

// Caveat returns the caveat of a procedure, or "" for an accountant.
func Caveat(m accounting.Method) string {
	if p, ok := m.(accounting.Procedure); ok {
		return p.Caveat()
	}
	return ""
}
