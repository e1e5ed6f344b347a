package accounting

import (
	"fmt"
	"math"
)

// Custom mechanisms: events that carry a mechanism's privacy description
// itself, for a mechanism dpcalc does not know (PATE's data-dependent
// release, say). dp_accounting has no class for them; their JSON classes
// are dpcalc's own (module "dpcalc"). Each holds for both orders of every
// pair of neighbouring data sets under Adjacency ("" means the plan's
// relation; a stated relation other than the plan's is refused), and
// describes one unsampled release: sampling one is refused (dpcalc knows
// no amplification for a curve alone; supply the sampled mechanism's).

// MaxCustomPoints is the most orders of an [RdpCurve] and points of a
// [PrivacyProfile]; MaxPmfPoints the most probabilities of one direction
// of a [PldPmf].
const (
	MaxCustomPoints = 10000
	MaxPmfPoints    = 1 << 20
)

// MaxProfileEpsilon is the largest ε of a [PrivacyProfile] point (e^ε must
// stay far from overflow).
const MaxProfileEpsilon = 500

// RdpCurve is a mechanism known by its Rényi curve: for every pair of
// neighbouring data sets, in either order, D_α(M(x)‖M(x')) ≤ RDP[i] at
// α = Orders[i] (Mironov 2017, Definition 4). Orders are finite, > 1 and
// increasing; values finite and ≥ 0.
//
// The accountants use only what follows from these facts: between and
// below the given orders, (α−1)·D_α is convex in α and D_α nondecreasing
// (van Erven and Harremoës 2014, Theorems 3 and 11); above the largest
// order nothing is known. A value of 0 at any order makes the release free
// (D_α = 0 only when the two distributions are equal).
type RdpCurve struct {
	Orders    []float64 `json:"orders"`
	RDP       []float64 `json:"rdp"`
	Adjacency string    `json:"adjacency,omitempty"`
}

// PldPmf is a mechanism known by the privacy loss distributions of a
// dominating pair (Zhu, Dong and Wang 2022, Definition 7), discretised on a
// grid as dp_accounting's DensePLDPmf: in each direction, loss
// (LowerLoss + i)·DiscretizationInterval has probability Probs[i] under P,
// and InfinityMass is P's mass at loss +∞ (beyond the grid). Remove is the
// direction with P the output on the data set with the differing record;
// Add the reverse, required unless Symmetric says Remove serves both.
//
// Pessimistic is the user's assertion that the pairs dominate the
// mechanism (every hockey-stick divergence of the mechanism is at most the
// PMF's, as dp_accounting's pessimistic_estimate PMFs do): the accountants
// bound the event only then. Mass missing from a direction (probabilities
// and infinity mass summing below 1) is read as mass at +∞ (the pessimistic
// reading); Q is P·e^(−loss) on the grid and the rest at loss −∞, so
// Σ Probs[i]·e^(−loss_i) must be at most 1.
type PldPmf struct {
	DiscretizationInterval float64 `json:"value_discretization_interval"`
	Remove                 PmfSide `json:"remove"`
	Add                    PmfSide `json:"add"`
	Symmetric              bool    `json:"symmetric"`
	Pessimistic            bool    `json:"pessimistic_estimate"`
	Adjacency              string  `json:"adjacency,omitempty"`
}

// PmfSide is one direction of a [PldPmf].
type PmfSide struct {
	LowerLoss    int       `json:"lower_loss"`
	Probs        []float64 `json:"probs"`
	InfinityMass float64   `json:"infinity_mass"`
}

// PrivacyProfile is a mechanism known by points of its privacy profile:
// it is (Epsilons[i], Deltas[i])-DP for every i, for every pair of
// neighbouring data sets in either order (Balle, Barthe and Gaboardi 2018).
// Epsilons are increasing, finite, in [0, MaxProfileEpsilon]; Deltas in
// [0, 1] and nonincreasing. Between points the profile is read
// pessimistically: δ(ε) ≤ Deltas[i] for ε ≥ Epsilons[i], and the
// accountants use no more than the guarantees themselves imply.
type PrivacyProfile struct {
	Epsilons  []float64 `json:"epsilons"`
	Deltas    []float64 `json:"deltas"`
	Adjacency string    `json:"adjacency,omitempty"`
}

func (RdpCurve) isEvent()       {}
func (PldPmf) isEvent()         {}
func (PrivacyProfile) isEvent() {}

// customUnder refuses a custom event that is sampled or stated for another
// relation than the plan's.
func customUnder(e Event, name, stated, at string, kind Sampling, adj Adjacency) error {
	if kind != SamplingNone {
		return &UnsupportedEventError{Event: e, Path: at, Reason: "sampling of a " + name +
			" is not supported: no amplification follows from it alone; give the sampled mechanism's own"}
	}
	if stated == "" {
		return nil
	}
	a, err := ParseAdjacency(stated)
	if err != nil {
		return &UnsupportedEventError{Event: e, Path: at, Reason: fmt.Sprintf("adjacency %q: want \"add-remove\" or \"replace-one\"", stated)}
	}
	if a != adj {
		return &UnsupportedEventError{Event: e, Path: at, Reason: "the " + name + " is stated for " + a.String() +
			" adjacency, and the accounting runs under " + adj.String()}
	}
	return nil
}

func (c RdpCurve) step(at string) (Step, bool, bool, error) {
	return c.stepUnder(at, SamplingNone, AddRemove)
}

// stepUnder: no orders, a length mismatch, more than MaxCustomPoints
// orders, an order not finite or ≤ 1 or not above the previous one, a
// value NaN, infinite or < 0 are errors; a value 0 is free.
func (c RdpCurve) stepUnder(at string, kind Sampling, adj Adjacency) (Step, bool, bool, error) {
	switch {
	case len(c.Orders) == 0:
		return Step{}, false, false, &ParamError{Name: "orders", Value: 0, Path: at, Want: "a non-empty list"}
	case len(c.Orders) > MaxCustomPoints:
		return Step{}, false, false, &ParamError{Name: "orders", Value: float64(len(c.Orders)), Path: at, Want: fmt.Sprintf("at most %d orders", MaxCustomPoints)}
	case len(c.RDP) != len(c.Orders):
		return Step{}, false, false, &ParamError{Name: "rdp", Value: float64(len(c.RDP)), Path: at, Want: fmt.Sprintf("%d values, one per order", len(c.Orders))}
	}
	free := false
	for i, a := range c.Orders {
		if !finite(a) || a <= 1 {
			return Step{}, false, false, &ParamError{Name: "orders", Value: a, Path: at, Want: "finite and > 1 each"}
		}
		if i > 0 && a <= c.Orders[i-1] {
			return Step{}, false, false, &ParamError{Name: "orders", Value: a, Path: at, Want: fmt.Sprintf("increasing (after %s)", FormatValue(c.Orders[i-1]))}
		}
		if v := c.RDP[i]; !finite(v) || v < 0 {
			return Step{}, false, false, &ParamError{Name: "rdp", Value: v, Path: at, Want: "finite and >= 0 each"}
		}
		free = free || c.RDP[i] == 0
	}
	if err := customUnder(c, "custom RDP curve", c.Adjacency, at, kind, adj); err != nil {
		return Step{}, false, false, err
	}
	if free {
		return Step{}, true, false, nil
	}
	return Step{Mechanism: MechOther, Leaf: c}, false, false, nil
}

func (RdpCurve) pureEpsilon() (float64, bool) { return 0, false }

// rdpCurveKey is an RdpCurve's comparable stand-in in a plan.
type rdpCurveKey struct{ orders, rdp, adj string }

func (c RdpCurve) key() any {
	return rdpCurveKey{fmt.Sprint(c.Orders), fmt.Sprint(c.RDP), c.Adjacency}
}

func (p PldPmf) step(at string) (Step, bool, bool, error) {
	return p.stepUnder(at, SamplingNone, AddRemove)
}

// side validates one direction named name ("remove" or "add").
func (s PmfSide) check(name, at string, h float64) error {
	switch {
	case len(s.Probs) == 0:
		return &ParamError{Name: name + "_probs", Value: 0, Path: at, Want: "a non-empty list"}
	case len(s.Probs) > MaxPmfPoints:
		return &ParamError{Name: name + "_probs", Value: float64(len(s.Probs)), Path: at, Want: fmt.Sprintf("at most %d probabilities", MaxPmfPoints)}
	case s.LowerLoss < -MaxCount || s.LowerLoss > MaxCount:
		return &ParamError{Name: name + "_lower_loss", Value: float64(s.LowerLoss), Path: at, Want: fmt.Sprintf("in [-%d, %d]", MaxCount, MaxCount)}
	case math.IsNaN(s.InfinityMass) || s.InfinityMass < 0 || s.InfinityMass > 1:
		return &ParamError{Name: name + "_infinity_mass", Value: s.InfinityMass, Path: at, Want: "in [0, 1]"}
	}
	sum, qsum := s.InfinityMass, 0.0
	for i, x := range s.Probs {
		if math.IsNaN(x) || x < 0 || x > 1 {
			return &ParamError{Name: name + "_probs", Value: x, Path: at, Want: "in [0, 1] each"}
		}
		if x > 0 {
			l := float64(s.LowerLoss+i) * h
			if !finite(l) || math.Abs(l) > maxPmfLoss {
				return &ParamError{Name: name + "_lower_loss", Value: float64(s.LowerLoss), Path: at,
					Want: fmt.Sprintf("losses with mass within ±%g (a loss of %g has mass %g)", float64(maxPmfLoss), l, x)}
			}
			qsum += math.Exp(math.Log(x) - l)
		}
		sum += x
	}
	if sum > 1+pmfMassSlack {
		return &ParamError{Name: name + "_probs", Value: sum, Path: at, Want: fmt.Sprintf("a total mass (with %s_infinity_mass) of at most 1 (within %g)", name, pmfMassSlack)}
	}
	if !(qsum <= 1+pmfMassSlack) {
		return &ParamError{Name: name + "_probs", Value: qsum, Path: at,
			Want: fmt.Sprintf("Σ p·e^(−loss) at most 1 (within %g): the mass of Q; a larger one is not a privacy loss distribution", pmfMassSlack)}
	}
	return nil
}

// maxPmfLoss is the largest |loss| with mass of a PMF (e^loss must not
// overflow), and pmfMassSlack the rounding a PMF's total masses may carry
// above 1.
const (
	maxPmfLoss   = 700
	pmfMassSlack = 1e-9
)

// stepUnder: the interval not finite or ≤ 0, a direction's probabilities
// empty, too many, NaN, negative, above 1 or summing (with its infinity
// mass) above 1, a direction whose Q would have mass above 1, a missing add
// direction when not symmetric are errors; the step keeps the PMF as given
// (the accountants refuse one that is not stated pessimistic).
func (p PldPmf) stepUnder(at string, kind Sampling, adj Adjacency) (Step, bool, bool, error) {
	h := p.DiscretizationInterval
	if !finite(h) || h <= 0 {
		return Step{}, false, false, &ParamError{Name: "value_discretization_interval", Value: h, Path: at, Want: "finite and > 0"}
	}
	if err := p.Remove.check("remove", at, h); err != nil {
		return Step{}, false, false, err
	}
	if p.Symmetric {
		if len(p.Add.Probs) > 0 || p.Add.InfinityMass != 0 || p.Add.LowerLoss != 0 {
			return Step{}, false, false, &ParamError{Name: "add_probs", Value: float64(len(p.Add.Probs)), Path: at, Want: "none when symmetric is true (remove serves both directions)"}
		}
	} else {
		if len(p.Add.Probs) == 0 {
			return Step{}, false, false, &ParamError{Name: "add_probs", Value: 0, Path: at, Want: "the add direction's PMF, or symmetric: true"}
		}
		if err := p.Add.check("add", at, h); err != nil {
			return Step{}, false, false, err
		}
	}
	if err := customUnder(p, "PLD PMF", p.Adjacency, at, kind, adj); err != nil {
		return Step{}, false, false, err
	}
	return Step{Mechanism: MechOther, Leaf: p}, false, false, nil
}

// pureEpsilon: a pessimistic PMF with no mass at infinite loss in either
// direction (infinity masses 0, probabilities summing to 1 within the
// rounding slack) is ε-DP at its largest loss with mass (a dominating pair
// whose loss under P is at most ε has δ(ε) = 0), plus 1e-9 for the
// normalisation of a Q-mass up to 1 + 1e-9, and at least 0.
func (p PldPmf) pureEpsilon() (float64, bool) {
	if !p.Pessimistic {
		return 0, false
	}
	sides := []PmfSide{p.Remove}
	if !p.Symmetric {
		sides = append(sides, p.Add)
	}
	eps := 0.0
	for _, s := range sides {
		total, top := s.InfinityMass, -1
		for i, x := range s.Probs {
			total += x
			if x > 0 {
				top = i
			}
		}
		if s.InfinityMass > 0 || top < 0 || total < 1-pmfMassSlack {
			return 0, false
		}
		eps = math.Max(eps, float64(s.LowerLoss+top)*p.DiscretizationInterval)
	}
	return math.Nextafter(eps*(1+4*0x1p-52)+pmfMassSlack, math.Inf(1)), true
}

// pldPmfKey is a PldPmf's comparable stand-in in a plan.
type pldPmfKey struct {
	h              float64
	r, a           string
	sym, pess      bool
	adj            string
	rLower, aLower int
	rInf, aInf     float64
}

func (p PldPmf) key() any {
	return pldPmfKey{p.DiscretizationInterval, fmt.Sprint(p.Remove.Probs), fmt.Sprint(p.Add.Probs), p.Symmetric, p.Pessimistic,
		p.Adjacency, p.Remove.LowerLoss, p.Add.LowerLoss, p.Remove.InfinityMass, p.Add.InfinityMass}
}

func (p PrivacyProfile) step(at string) (Step, bool, bool, error) {
	return p.stepUnder(at, SamplingNone, AddRemove)
}

// stepUnder: no points, a length mismatch, more than MaxCustomPoints
// points, an ε not finite, outside [0, MaxProfileEpsilon] or not above the
// previous one, a δ NaN or outside [0, 1] or above the previous one are
// errors; (0, 0) is free; a profile of δ = 1 only is unbounded.
func (p PrivacyProfile) stepUnder(at string, kind Sampling, adj Adjacency) (Step, bool, bool, error) {
	switch {
	case len(p.Epsilons) == 0:
		return Step{}, false, false, &ParamError{Name: "epsilons", Value: 0, Path: at, Want: "a non-empty list"}
	case len(p.Epsilons) > MaxCustomPoints:
		return Step{}, false, false, &ParamError{Name: "epsilons", Value: float64(len(p.Epsilons)), Path: at, Want: fmt.Sprintf("at most %d points", MaxCustomPoints)}
	case len(p.Deltas) != len(p.Epsilons):
		return Step{}, false, false, &ParamError{Name: "deltas", Value: float64(len(p.Deltas)), Path: at, Want: fmt.Sprintf("%d values, one per epsilon", len(p.Epsilons))}
	}
	for i, e := range p.Epsilons {
		if !finite(e) || e < 0 || e > MaxProfileEpsilon {
			return Step{}, false, false, &ParamError{Name: "epsilons", Value: e, Path: at, Want: fmt.Sprintf("in [0, %d] each", MaxProfileEpsilon)}
		}
		if i > 0 && e <= p.Epsilons[i-1] {
			return Step{}, false, false, &ParamError{Name: "epsilons", Value: e, Path: at, Want: fmt.Sprintf("increasing (after %s)", FormatValue(p.Epsilons[i-1]))}
		}
		d := p.Deltas[i]
		if math.IsNaN(d) || d < 0 || d > 1 {
			return Step{}, false, false, &ParamError{Name: "deltas", Value: d, Path: at, Want: "in [0, 1] each"}
		}
		if i > 0 && d > p.Deltas[i-1] {
			return Step{}, false, false, &ParamError{Name: "deltas", Value: d, Path: at, Want: fmt.Sprintf("nonincreasing (after %s)", FormatValue(p.Deltas[i-1]))}
		}
	}
	if err := customUnder(p, "privacy profile", p.Adjacency, at, kind, adj); err != nil {
		return Step{}, false, false, err
	}
	if p.Epsilons[0] == 0 && p.Deltas[0] == 0 {
		return Step{}, true, false, nil
	}
	if p.Deltas[len(p.Deltas)-1] == 1 {
		return Step{}, false, true, nil
	}
	return Step{Mechanism: MechOther, Leaf: p}, false, false, nil
}

// pureEpsilon: the smallest ε with δ = 0, if any.
func (p PrivacyProfile) pureEpsilon() (float64, bool) {
	for i, d := range p.Deltas {
		if d == 0 && i < len(p.Epsilons) {
			return p.Epsilons[i], true
		}
	}
	return 0, false
}

// profileKey is a PrivacyProfile's comparable stand-in in a plan.
type profileKey struct{ eps, delta, adj string }

func (p PrivacyProfile) key() any {
	return profileKey{fmt.Sprint(p.Epsilons), fmt.Sprint(p.Deltas), p.Adjacency}
}
