package mechanism

import (
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/logmath"
)

// TestMixturePairs: the mixture's pairs are distributions (above and
// below sum to 1 under P and Q), monotone in l, and a mixture of shifts 0
// and 1 of probabilities 1−q and q has the Poisson-sampled Gaussian's
// tails in both directions (to 1e-12 relative: the mixture inverts its
// loss by bisection, the Gaussian in closed form).
func TestMixturePairs(t *testing.T) {
	const sigma, q = 1.3, 0.05
	mixMech := func(c, probs []float64) *PLD {
		leaf := accounting.MixtureOfGaussians{StandardDeviation: sigma, Sensitivities: c, SamplingProbs: probs}
		m, err := Of(accounting.Step{Mechanism: accounting.MechOther, Leaf: leaf, Rate: 1, Count: 1})
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.PLD()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	mix := mixMech([]float64{0, 1}, []float64{0.95, 0.05})
	g, err := gaussian{sigma: sigma, sampling: poisson(q, accounting.AddRemove)}.PLD()
	if err != nil {
		t.Fatal(err)
	}
	close := func(a, b float64) bool {
		if math.IsInf(a, -1) || math.IsInf(b, -1) {
			return a == b || math.Max(a, b) < -700
		}
		return math.Abs(math.Exp(a)-math.Exp(b)) <= 1e-12*math.Max(math.Exp(a), math.Exp(b))+1e-300
	}
	for _, dir := range []struct {
		name string
		m, g Pair
	}{{"remove", mix.Remove, g.Remove}, {"add", mix.Add, g.Add}} {
		prev := Tails{}
		for i, l := range []float64{-20, -3, -0.06, -0.04, -0.01, 0, 0.01, 0.1, 0.5, 1, 3, 10, 30} {
			a, b := dir.m.Tails(l), dir.g.Tails(l)
			if !close(a.PAbove, b.PAbove) || !close(a.QAbove, b.QAbove) || !close(a.PBelow, b.PBelow) || !close(a.QBelow, b.QBelow) {
				t.Errorf("%s l = %g: mixture %+v, Gaussian %+v", dir.name, l, a, b)
			}
			if s := logmath.Add(a.PAbove, a.PBelow); math.Abs(s) > 1e-12 {
				t.Errorf("%s l = %g: P masses sum to e^%g", dir.name, l, s)
			}
			if s := logmath.Add(a.QAbove, a.QBelow); math.Abs(s) > 1e-12 {
				t.Errorf("%s l = %g: Q masses sum to e^%g", dir.name, l, s)
			}
			if i > 0 && (a.PAbove > prev.PAbove || a.QAbove > prev.QAbove) {
				t.Errorf("%s l = %g: tails grow with l", dir.name, l)
			}
			prev = a
		}
	}
	// One component of shift c is the Gaussian of σ/c, in closed form.
	one := mixMech([]float64{2}, []float64{1})
	if one.GaussianSigma != sigma/2 || !one.Symmetric {
		t.Errorf("one component: GaussianSigma %v, symmetric %v", one.GaussianSigma, one.Symmetric)
	}
}

// TestPurePair: R_ε has atoms ±ε with masses e^ε/(1+e^ε) and 1/(1+e^ε),
// and its Rényi curve is at most ε per order and at least 0.
func TestPurePair(t *testing.T) {
	p := newPurePair(0.7)
	a := math.Exp(0.7) / (1 + math.Exp(0.7))
	tl := p.Tails(0)
	if math.Abs(math.Exp(tl.PAbove)-a) > 1e-15 || math.Abs(math.Exp(tl.QAbove)-(1-a)) > 1e-15 {
		t.Errorf("tails at 0: %+v, want P(L = ε) = %v", tl, a)
	}
	if tl := p.Tails(0.7); !math.IsInf(tl.PAbove, -1) || tl.PBelow != 0 {
		t.Errorf("tails at ε: %+v, want nothing above", tl)
	}
	if tl := p.Tails(-0.7); math.Abs(tl.PAbove-math.Log(a)) > 1e-15 || math.Abs(tl.PBelow-math.Log(1-a)) > 1e-15 {
		t.Errorf("tails at −ε: %+v, want only the atom +ε above", tl)
	}
	r := pureRDP{eps: 0.7}
	for _, l := range []float64{0.01, 1, 10, 1000} {
		k := r.at(l)
		// Exact: log(a e^{λε} + (1−a) e^{−λε}).
		want := math.Log(a*math.Exp(l*0.7) + (1-a)*math.Exp(-l*0.7))
		if l > 100 {
			want = l*0.7 + math.Log(a)
		}
		if k < want || k > math.Min(l*0.7, want*(1+1e-12)+1e-300) {
			t.Errorf("λ = %g: %v, want %v (at most λε)", l, k, want)
		}
	}
}
