package accounting

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestCustomEventErrors: every malformed field of a custom event is one
// error naming the field and its valid range; sampling one, or stating a
// relation other than the plan's, is refused naming the event.
func TestCustomEventErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	curve := func(o, v []float64) Event { return RdpCurve{Orders: o, RDP: v} }
	side := func(lo int, p []float64, inf float64) PmfSide {
		return PmfSide{LowerLoss: lo, Probs: p, InfinityMass: inf}
	}
	pmf := func(h float64, r PmfSide) Event {
		return PldPmf{DiscretizationInterval: h, Remove: r, Symmetric: true, Pessimistic: true}
	}
	prof := func(e, d []float64) Event { return PrivacyProfile{Epsilons: e, Deltas: d} }
	big := make([]float64, MaxCustomPoints+1)
	for i := range big {
		big[i] = 2 + float64(i)
	}
	for _, c := range []struct {
		name string
		e    Event
		want string // substring of the error
	}{
		{"no orders", curve(nil, nil), "orders = 0 at RdpCurve, want a non-empty list"},
		{"too many orders", curve(big, big), "orders = 10001 at RdpCurve, want at most 10000 orders"},
		{"length mismatch", curve([]float64{2, 3}, []float64{1}), "rdp = 1 at RdpCurve, want 2 values, one per order"},
		{"order 1", curve([]float64{1}, []float64{1}), "orders = 1 at RdpCurve, want finite and > 1 each"},
		{"order inf", curve([]float64{inf}, []float64{1}), "orders = infinite at RdpCurve, want finite and > 1 each"},
		{"order NaN", curve([]float64{nan}, []float64{1}), "orders = not a number at RdpCurve"},
		{"unsorted orders", curve([]float64{3, 2}, []float64{1, 1}), "orders = 2 at RdpCurve, want increasing (after 3)"},
		{"negative rdp", curve([]float64{2}, []float64{-1}), "rdp = -1 at RdpCurve, want finite and >= 0 each"},
		{"inf rdp", curve([]float64{2}, []float64{inf}), "rdp = infinite at RdpCurve"},
		{"interval 0", pmf(0, side(0, []float64{1}, 0)), "value_discretization_interval = 0 at PldPmf, want finite and > 0"},
		{"no probs", pmf(0.1, side(0, nil, 0)), "remove_probs = 0 at PldPmf, want a non-empty list"},
		{"negative prob", pmf(0.1, side(0, []float64{-0.1, 1}, 0)), "remove_probs = -0.1 at PldPmf, want in [0, 1] each"},
		{"NaN prob", pmf(0.1, side(0, []float64{nan}, 0)), "remove_probs = not a number at PldPmf"},
		{"mass above 1", pmf(0.1, side(0, []float64{0.6, 0.5}, 0)), "remove_probs = 1.1 at PldPmf, want a total mass (with remove_infinity_mass) of at most 1"},
		{"infinity mass", pmf(0.1, side(0, []float64{0.5}, 2)), "remove_infinity_mass = 2 at PldPmf, want in [0, 1]"},
		{"Q above 1", pmf(0.1, side(-5, []float64{1}, 0)), "want Σ p·e^(−loss) at most 1"},
		{"loss too large", pmf(1, side(800, []float64{1}, 0)), "remove_lower_loss = 800 at PldPmf, want losses with mass within ±700"},
		{"too many probs", pmf(0.1, side(0, make([]float64, MaxPmfPoints+1), 0)), "remove_probs = 1048577 at PldPmf, want at most 1048576 probabilities"},
		{"no add", PldPmf{DiscretizationInterval: 0.1, Remove: side(0, []float64{1}, 0)}, "add_probs = 0 at PldPmf, want the add direction's PMF, or symmetric: true"},
		{"add and symmetric", PldPmf{DiscretizationInterval: 0.1, Symmetric: true, Remove: side(0, []float64{1}, 0), Add: side(0, []float64{1}, 0)}, "add_probs = 1 at PldPmf, want none when symmetric is true"},
		{"bad add", PldPmf{DiscretizationInterval: 0.1, Remove: side(0, []float64{1}, 0), Add: side(0, []float64{2}, 0)}, "add_probs = 2 at PldPmf, want in [0, 1] each"},
		{"no points", prof(nil, nil), "epsilons = 0 at PrivacyProfile, want a non-empty list"},
		{"eps negative", prof([]float64{-1}, []float64{0.1}), "epsilons = -1 at PrivacyProfile, want in [0, 500] each"},
		{"eps huge", prof([]float64{600}, []float64{0.1}), "epsilons = 600"},
		{"eps unsorted", prof([]float64{1, 0.5}, []float64{0.1, 0.1}), "epsilons = 0.5 at PrivacyProfile, want increasing (after 1)"},
		{"delta above 1", prof([]float64{1}, []float64{1.5}), "deltas = 1.5 at PrivacyProfile, want in [0, 1] each"},
		{"delta rising", prof([]float64{1, 2}, []float64{1e-6, 1e-5}), "deltas = 1e-05 at PrivacyProfile, want nonincreasing (after 1e-06)"},
		{"delta mismatch", prof([]float64{1, 2}, []float64{1e-6}), "deltas = 1 at PrivacyProfile, want 2 values, one per epsilon"},
		{"sampled", PoissonSampled{SamplingRate: 0.1, Event: curve([]float64{2}, []float64{1})}, "sampling of a custom RDP curve is not supported"},
		{"other relation", PrivacyProfile{Epsilons: []float64{1}, Deltas: []float64{0}, Adjacency: "replace-one"}, "stated for replace-one adjacency, and the accounting runs under add-remove"},
		{"bad relation", RdpCurve{Orders: []float64{2}, RDP: []float64{1}, Adjacency: "swap"}, `adjacency "swap"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Normalize(c.e, 1)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line with %q", err, c.want)
			}
		})
	}
}

// TestCustomEventSteps: a zero RDP value or a (0, 0) profile point is
// free, a profile of δ = 1 only is unbounded, equal custom events merge
// into one step, and a profile with δ = 0 states its pure ε.
func TestCustomEventSteps(t *testing.T) {
	p, err := Normalize(Composed{Events: []Event{
		RdpCurve{Orders: []float64{2, 3}, RDP: []float64{0, 1}},
		PrivacyProfile{Epsilons: []float64{0}, Deltas: []float64{0}},
	}}, 1)
	if err != nil || len(p.Steps) != 0 || p.Unbounded {
		t.Errorf("free events: %+v, %v", p, err)
	}
	if p, err := Normalize(PrivacyProfile{Epsilons: []float64{1}, Deltas: []float64{1}}, 1); err != nil || !p.Unbounded {
		t.Errorf("δ = 1: %+v, %v", p, err)
	}
	c := RdpCurve{Orders: []float64{2, 3}, RDP: []float64{0.5, 1}}
	pr := PrivacyProfile{Epsilons: []float64{0.5, 1}, Deltas: []float64{1e-6, 0}}
	p, err = Normalize(Composed{Events: []Event{c, SelfComposed{Event: c, Count: 2}, pr, pr}}, 1)
	if err != nil || len(p.Steps) != 2 || p.Steps[0].Count != 3 || p.Steps[1].Count != 2 {
		t.Fatalf("plan %+v, %v; want 3 of the curve, 2 of the profile", p, err)
	}
	if e, ok := pr.pureEpsilon(); !ok || e != 1 {
		t.Errorf("profile's pure ε %g %v, want 1", e, ok)
	}
	// A pessimistic PMF with no mass at infinite loss is ε-DP at its
	// largest loss with mass (0.5 here, the add direction's), plus the
	// 1e-9 of Q's normalisation.
	pmf := PldPmf{DiscretizationInterval: 0.25, Pessimistic: true,
		Remove: PmfSide{LowerLoss: -1, Probs: []float64{0.4, 0.6, 0}}, Add: PmfSide{LowerLoss: -2, Probs: []float64{0.3, 0, 0, 0, 0.7}}}
	if e, ok := pmf.pureEpsilon(); !ok || e < 0.5+1e-9 || e > 0.5+2e-9 {
		t.Errorf("PMF's pure ε %.12g %v, want 0.500000001", e, ok)
	}
	for name, p := range map[string]PldPmf{
		"not pessimistic": {DiscretizationInterval: 0.25, Symmetric: true, Remove: pmf.Remove},
		"infinity mass":   {DiscretizationInterval: 0.25, Pessimistic: true, Symmetric: true, Remove: PmfSide{Probs: []float64{0.9}, InfinityMass: 0.1}},
		"missing mass":    {DiscretizationInterval: 0.25, Pessimistic: true, Symmetric: true, Remove: PmfSide{Probs: []float64{0.9}}},
	} {
		if e, ok := p.pureEpsilon(); ok {
			t.Errorf("%s: pure ε %g, want none", name, e)
		}
	}
}

// TestCustomEventJSON: each custom class is written and read back as the
// same event, in module "dpcalc"; a PMF's add direction is written only
// when it is not symmetric; booleans and the relation are type-checked.
func TestCustomEventJSON(t *testing.T) {
	for _, e := range []Event{
		RdpCurve{Orders: []float64{1.5, 2, 32}, RDP: []float64{0.1, 0.2, 3}},
		RdpCurve{Orders: []float64{2}, RDP: []float64{1}, Adjacency: "replace-one"},
		PldPmf{DiscretizationInterval: 0.01, Pessimistic: true, Symmetric: true,
			Remove: PmfSide{LowerLoss: -50, Probs: []float64{0.25, 0, 0.75}, InfinityMass: 1e-9}},
		PldPmf{DiscretizationInterval: 0.5, Remove: PmfSide{LowerLoss: -1, Probs: []float64{0.3, 0.7}},
			Add: PmfSide{LowerLoss: 0, Probs: []float64{0.5, 0.5}}},
		PrivacyProfile{Epsilons: []float64{0.5, 1}, Deltas: []float64{1e-6, 0}},
	} {
		b, err := MarshalEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"module_name":"dpcalc"`) {
			t.Errorf("%s: want module dpcalc", b)
		}
		got, err := UnmarshalEvent(b)
		if err != nil || !reflect.DeepEqual(got, e) {
			t.Errorf("%s read back as %+v, %v", b, got, err)
		}
		if p, ok := e.(PldPmf); ok && p.Symmetric && strings.Contains(string(b), "add_probs") {
			t.Errorf("%s: symmetric PMF written with an add direction", b)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`{"module_name":"dpcalc","class_name":"PldPmfDpEvent","value_discretization_interval":0.1,"pessimistic_estimate":"yes","symmetric":true,"remove_lower_loss":0,"remove_probs":[1],"remove_infinity_mass":0}`,
			"pessimistic_estimate (PldPmfDpEvent): want true or false, got a string"},
		{`{"module_name":"dpcalc","class_name":"RdpCurveDpEvent","orders":[2],"rdp":[1],"adjacency":1}`,
			"adjacency (RdpCurveDpEvent): want a string, got a number"},
		{`{"module_name":"dpcalc","class_name":"PrivacyProfileDpEvent","epsilons":[1],"deltas":[0],"sigma":1}`,
			`unknown field "sigma"`},
		{`{"module_name":"dp_accounting.dp_event","class_name":"RdpCurveDpEvent","orders":[2],"rdp":[1]}`,
			`module_name "dp_accounting.dp_event", want "dpcalc"`},
		{`{"module_name":"dpcalc","class_name":"PldPmfDpEvent","value_discretization_interval":0.1,"symmetric":true,"remove_lower_loss":0.5,"remove_probs":[1],"remove_infinity_mass":0}`,
			"remove_lower_loss (PldPmfDpEvent): 0.5 is not an integer"},
		{`{"module_name":"dpcalc","class_name":"PldPmfDpEvent","value_discretization_interval":0.1,"symmetric":true,"remove_lower_loss":0,"remove_probs":[1],"remove_infinity_mass":0,"add_lower_loss":3}`,
			`missing field "add_probs"`},
		{`{"module_name":"dpcalc","class_name":"PldPmfDpEvent","value_discretization_interval":0.1,"remove_lower_loss":0,"remove_probs":[1],"remove_infinity_mass":0}`,
			`missing field "add_lower_loss"`},
	} {
		if _, err := UnmarshalEvent([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
}
