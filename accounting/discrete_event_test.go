package accounting

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestDiscreteEventBoundaries: the boundary table of the discrete Gaussian
// and discrete Laplace events, row by row, alone and Poisson-sampled.
func TestDiscreteEventBoundaries(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		name  string
		e     Event
		out   string // "step", "free", "unbounded" or the ParamError's name
		leaf  Event  // the step's leaf, for "step"
		pure  float64
		path  string
		isPur bool
	}{
		{name: "dg", e: DiscreteGaussian{Sigma: 2, Sensitivity: 1, Dimension: 1}, out: "step", leaf: DiscreteGaussian{Sigma: 2, Sensitivity: 1, Dimension: 1}, path: "DiscreteGaussian"},
		{name: "dg unknown dimension", e: DiscreteGaussian{Sigma: 2, Sensitivity: 3}, out: "step", leaf: DiscreteGaussian{Sigma: 2, Sensitivity: 3}, path: "DiscreteGaussian"},
		{name: "dg sigma negative", e: DiscreteGaussian{Sigma: -1, Sensitivity: 1}, out: "sigma"},
		{name: "dg sigma NaN", e: DiscreteGaussian{Sigma: math.NaN(), Sensitivity: 1}, out: "sigma"},
		{name: "dg sensitivity negative", e: DiscreteGaussian{Sigma: 1, Sensitivity: -1}, out: "sensitivity"},
		{name: "dg sensitivity infinite", e: DiscreteGaussian{Sigma: 1, Sensitivity: inf}, out: "sensitivity"},
		{name: "dg dimension negative", e: DiscreteGaussian{Sigma: 1, Sensitivity: 1, Dimension: -2}, out: "dimension"},
		{name: "dg sigma inf", e: DiscreteGaussian{Sigma: inf, Sensitivity: 1}, out: "free"},
		{name: "dg sensitivity 0", e: DiscreteGaussian{Sigma: 1, Sensitivity: 0}, out: "free"},
		{name: "dg sigma 0", e: DiscreteGaussian{Sigma: 0, Sensitivity: 1}, out: "unbounded"},
		{name: "dg sigma tiny", e: DiscreteGaussian{Sigma: 1e-160, Sensitivity: 1}, out: "unbounded"},
		{name: "dg sigma huge", e: DiscreteGaussian{Sigma: 1e300, Sensitivity: 2}, out: "step", leaf: DiscreteGaussian{Sigma: SigmaCeiling * 2, Sensitivity: 2}, path: "DiscreteGaussian"},
		// a·Δ = 0.1·3 rounded up: the float 0.1 times 3 is 0.30000000000000001665.
		{name: "dlap", e: DiscreteLaplace{NoiseParameter: 0.1, Sensitivity: 3}, out: "step", leaf: DiscreteLaplace{NoiseParameter: 0.1, Sensitivity: 3}, pure: 0.30000000000000004, isPur: true, path: "DiscreteLaplace"},
		{name: "dlap a negative", e: DiscreteLaplace{NoiseParameter: -1, Sensitivity: 1}, out: "noise_parameter"},
		{name: "dlap a NaN", e: DiscreteLaplace{NoiseParameter: math.NaN(), Sensitivity: 1}, out: "noise_parameter"},
		{name: "dlap sensitivity negative", e: DiscreteLaplace{NoiseParameter: 1, Sensitivity: -1}, out: "sensitivity"},
		{name: "dlap sensitivity 0", e: DiscreteLaplace{NoiseParameter: 1, Sensitivity: 0}, out: "free"},
		{name: "dlap a 0", e: DiscreteLaplace{NoiseParameter: 0, Sensitivity: 1}, out: "unbounded"},
		{name: "dlap a inf", e: DiscreteLaplace{NoiseParameter: inf, Sensitivity: 1}, out: "unbounded"},
		{name: "dlap a huge", e: DiscreteLaplace{NoiseParameter: 1e300, Sensitivity: 1}, out: "unbounded"},
		{name: "dlap a tiny", e: DiscreteLaplace{NoiseParameter: 1e-300, Sensitivity: 1}, out: "step", leaf: DiscreteLaplace{NoiseParameter: math.Nextafter(1/SigmaCeiling, 1), Sensitivity: 1}, pure: math.Nextafter(1/SigmaCeiling, 1), isPur: true, path: "DiscreteLaplace"},
	} {
		for _, sampled := range []bool{false, true} {
			e, path := c.e, c.path
			if sampled {
				e, path = PoissonSampled{SamplingRate: 0.1, Event: e}, "PoissonSampled/"+path
			}
			p, err := Normalize(SelfComposed{Event: e, Count: 3}, 1)
			path = "SelfComposed/" + path
			var pe *ParamError
			switch {
			case c.out == "free":
				if err != nil || !p.Empty() {
					t.Errorf("%s (sampled %v): %+v, %v; want an empty plan", c.name, sampled, p, err)
				}
			case c.out == "unbounded":
				if err != nil || !p.Unbounded {
					t.Errorf("%s (sampled %v): %+v, %v; want unbounded", c.name, sampled, p, err)
				}
			case c.out == "step":
				if err != nil || len(p.Steps) != 1 {
					t.Fatalf("%s (sampled %v): %+v, %v; want one step", c.name, sampled, p, err)
				}
				s := p.Steps[0]
				if s.Leaf != c.leaf || s.Count != 3 || s.Path != path || s.Mechanism != MechOther || s.Classic() {
					t.Errorf("%s (sampled %v): step %+v, want leaf %#v at %s, 3 times", c.name, sampled, s, c.leaf, path)
				}
				if pe, ok := s.PureEpsilon(); ok != c.isPur || pe != c.pure {
					t.Errorf("%s (sampled %v): pure ε %v, %v; want %v, %v", c.name, sampled, pe, ok, c.pure, c.isPur)
				}
				if ev := s.Event(); sampled != (ev != s.Leaf) {
					t.Errorf("%s (sampled %v): Event() %#v", c.name, sampled, ev)
				}
			case !errors.As(err, &pe) || pe.Name != c.out:
				t.Errorf("%s (sampled %v): error %v, want a ParamError naming %s", c.name, sampled, err, c.out)
			default:
				checkOneLine(t, err)
			}
		}
	}
}

// TestDiscreteEventJSON: dp_accounting's defaults and its null dimension
// are read, and a fractional or missing sensitivity of the discrete
// Laplace is refused naming the field.
func TestDiscreteEventJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Event
		err  string
	}{
		{in: `{"class_name":"DiscreteGaussianDpEvent","sigma":3}`, want: DiscreteGaussian{Sigma: 3, Sensitivity: 1}},
		{in: `{"class_name":"DiscreteGaussianDpEvent","sigma":3,"sensitivity":2.5,"dimension":null}`, want: DiscreteGaussian{Sigma: 3, Sensitivity: 2.5}},
		{in: `{"class_name":"DiscreteGaussianDpEvent","sigma":3,"sensitivity":2,"dimension":4}`, want: DiscreteGaussian{Sigma: 3, Sensitivity: 2, Dimension: 4}},
		{in: `{"class_name":"DiscreteGaussianDpEvent","sigma":3,"dimension":1.5}`, err: `$.dimension (DiscreteGaussianDpEvent): 1.5 is not an integer`},
		{in: `{"class_name":"DiscreteGaussianDpEvent","sigma":null}`, err: `$.sigma (DiscreteGaussianDpEvent): want a number, got null`},
		{in: `{"class_name":"DiscreteLaplaceDpEvent","noise_parameter":0.5,"sensitivity":2}`, want: DiscreteLaplace{NoiseParameter: 0.5, Sensitivity: 2}},
		{in: `{"class_name":"DiscreteLaplaceDpEvent","noise_parameter":0.5,"sensitivity":1.5}`, err: `$.sensitivity (DiscreteLaplaceDpEvent): 1.5 is not an integer`},
		{in: `{"class_name":"DiscreteLaplaceDpEvent","noise_parameter":0.5}`, err: `$ (DiscreteLaplaceDpEvent): missing field "sensitivity"`},
	} {
		got, err := UnmarshalEvent([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			} else {
				checkOneLine(t, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %#v, %v; want %#v", c.in, got, err, c.want)
		}
		b, err := MarshalEvent(got)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := UnmarshalEvent(b); err != nil || back != got {
			t.Errorf("round trip of %s: %#v, %v", b, back, err)
		}
	}
}
