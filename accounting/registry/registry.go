// Package registry makes accounting methods by [accounting.Kind]: the
// accountants of the moments, pld, zcdp and advcomp packages and the
// procedures of package procedure. It sits above those packages so that the
// root accounting package never imports its children.
//
// The registry's table ([Kinds]) is the one list of accounting methods in
// dpcalc: the command line's choices, its help, the web page's menu and
// every "all accountants" table are read from it. Adding a method is one
// package that implements [accounting.Method] and one entry in that table.
package registry

import (
	"fmt"
	"strings"

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

// Default is the accountant used wherever one accountant answers and none
// is named: the command line's --accountant of sigma, eps, delta, epochs and
// profile, train's calibration, budget and reporting, and the web page's
// menu. It is pld, the tightest certified bound: its upper end is never
// above rdp's (rdp's bound is its cross-check), and it comes with a lower
// end, so the interval it prints contains the true ε. Every default is read
// from here.
const Default = accounting.KindPLD

// method is one entry of the table: a kind, what it is in a few words (the
// web page's menu), the note shown beside its numbers ("" for none), and
// how to make one.
type method struct {
	kind  accounting.Kind
	title string
	note  string
	make  func(Options) (accounting.Method, error)
}

// methods are every accounting method, in display order: the accountants,
// then the procedures.
var methods = []method{
	{kind: accounting.KindMA, title: "moments accountant",
		make: func(o Options) (accounting.Method, error) { return moments.NewMA(o.Orders, adj(o)) }},
	{kind: accounting.KindRDP, title: "Rényi DP",
		make: func(o Options) (accounting.Method, error) { return moments.NewRDP(o.Orders, adj(o)) }},
	{kind: accounting.KindZCDP, title: "zero-concentrated DP",
		note: "no amplification by sampling in zCDP: sound, loose when q < 1",
		make: func(o Options) (accounting.Method, error) { return zcdp.New(adj(o)), nil }},
	{kind: accounting.KindAC, title: "advanced composition", make: newAC},
	{kind: accounting.KindPLD, title: "privacy loss distribution (certified)",
		make: func(o Options) (accounting.Method, error) {
			return pld.New(pld.Options{GridWidth: o.PLDGridWidth}, adj(o))
		}},
	{kind: accounting.KindDPDAC, title: "DPD procedure (not proven)",
		make: func(o Options) (accounting.Method, error) { return dpd(o, procedure.NewDPDAC()) }},
	{kind: accounting.KindDPDZCDP, title: "DPD procedure (not valid)",
		make: func(o Options) (accounting.Method, error) { return dpd(o, procedure.NewDPDZCDP()) }},
}

func newAC(o Options) (accounting.Method, error) {
	switch o.ACAmplification {
	case "", advcomp.AmplificationLog:
		return advcomp.New(adj(o)), nil
	case advcomp.AmplificationLinear:
		return advcomp.NewLinear(adj(o)), nil
	}
	_, err := advcomp.ParseAmplification(string(o.ACAmplification))
	return nil, err
}

// adj is o's neighbouring relation as a constructor option.
func adj(o Options) accounting.Option { return accounting.WithAdjacency(o.Adjacency) }

// dpd returns the DPD paper's procedure m, which is stated under
// add-remove only.
func dpd(o Options, m accounting.Method) (accounting.Method, error) {
	if o.Adjacency != accounting.AddRemove {
		return nil, fmt.Errorf("registry: %s does not bound under %s adjacency", m.Kind(), o.Adjacency)
	}
	return m, nil
}

func lookup(kind accounting.Kind) (method, bool) {
	for _, m := range methods {
		if m.kind == kind {
			return m, true
		}
	}
	return method{}, false
}

// Kinds returns every accounting method in display order: the
// accountants, then the procedures. The slice is the caller's.
func Kinds() []accounting.Kind {
	out := make([]accounting.Kind, len(methods))
	for i, m := range methods {
		out[i] = m.kind
	}
	return out
}

// Names returns the names of [Kinds], in the same order.
func Names() []string {
	out := make([]string, len(methods))
	for i, m := range methods {
		out[i] = string(m.kind)
	}
	return out
}

// ParseKind returns the Kind named s.
func ParseKind(s string) (accounting.Kind, error) {
	if _, ok := lookup(accounting.Kind(s)); ok {
		return accounting.Kind(s), nil
	}
	return "", fmt.Errorf("accounting: unknown accountant %q, want one of %s", s, strings.Join(Names(), ", "))
}

// Title says in a few words what kind is ("Rényi DP"); "" for a kind not
// in the table.
func Title(kind accounting.Kind) string {
	m, _ := lookup(kind)
	return m.title
}

// Note returns what kind's bound leaves out, to be printed beside its
// numbers ("" for none); a procedure's caveat is [Caveat]'s.
func Note(kind accounting.Kind) string {
	m, _ := lookup(kind)
	return m.note
}

// New returns a fresh method of the given kind: an [accounting.Accountant]
// or an [accounting.Procedure] (see [Procedural]). It returns an error for
// an unknown kind or invalid options; it never panics.
func New(kind accounting.Kind, opt Options) (accounting.Method, error) {
	if err := accounting.CheckAdjacency(opt.Adjacency); err != nil {
		return nil, err
	}
	if m, ok := lookup(kind); ok {
		return m.make(opt)
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

// Alternatives returns the accountants to turn to, in order, where kind
// cannot bound a training (an event it does not support, more steps than
// it composes, more memory than there is): rdp, the tightest after pld
// and without a limit on the number of steps, then the other accountants
// in display order. Procedures are never alternatives: they are not
// proven bounds.
func Alternatives(kind accounting.Kind) []accounting.Kind {
	var out []accounting.Kind
	if kind != accounting.KindRDP {
		out = append(out, accounting.KindRDP)
	}
	for _, m := range methods {
		if m.kind != kind && m.kind != accounting.KindRDP && !Procedural(m.kind, Options{}) {
			out = append(out, m.kind)
		}
	}
	return out
}

// Procedural reports whether kind with opt makes a procedure (the
// neighbouring relation aside: a method that cannot bound under
// opt.Adjacency is still an accountant or a procedure).
func Procedural(kind accounting.Kind, opt Options) bool {
	opt.Adjacency = accounting.AddRemove
	m, err := New(kind, opt)
	if err != nil {
		return false
	}
	_, ok := m.(accounting.Procedure)
	return ok
}

// Caveat returns the caveat of a procedure, or "" for an accountant.
func Caveat(m accounting.Method) string {
	if p, ok := m.(accounting.Procedure); ok {
		return p.Caveat()
	}
	return ""
}
