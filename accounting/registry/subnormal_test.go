package registry_test

import (
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
)

// TestSubnormalDelta checks every method at subnormal δ, where Go's
// math.Log on amd64 returns about −709.09 for any argument
// (golang/go#56600) and so once made δ = 1e-320 look like δ ≈ 2e-308: a
// smaller ε than the truth. ε must keep growing as δ falls through the
// subnormal range, finite (ac once flushed its per-step δ share to 0 and
// returned +Inf below δ ≈ 1e-318), and zcdp's ε must match its closed form
// there.
func TestSubnormalDelta(t *testing.T) {
	deltas := []float64{1e-300, 2e-308, 1e-310, 1e-315, 1e-320, 5e-324}
	for _, k := range registry.Kinds() {
		a, err := registry.New(k, registry.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(accounting.SubsampledGaussian(2, 0.01, 1000), 1); err != nil {
			t.Fatal(err)
		}
		prev := 0.0
		for _, d := range deltas {
			eps, err := a.Epsilon(t.Context(), d)
			if err != nil {
				t.Errorf("%s: Epsilon(%g): %v", k, d, err)
				continue
			}
			if math.IsNaN(eps) || math.IsInf(eps, 0) || eps <= prev {
				t.Errorf("%s: Epsilon(%g) = %.10g, want finite and > %.10g (ε at the larger δ before it)", k, d, eps, prev)
			}
			prev = eps
		}
	}

	// zcdp on one Gaussian: ε = ρ + 2√(ρ·log(1/δ)) with ρ = 1/(2σ²)
	// (Bun & Steinke 2016, Proposition 1.3); at δ = 2^-1070, log(1/δ) is
	// 1070·ln 2 = 741.67, where math.Log gave 709.09.
	const sigma = 10.0
	a, _ := registry.New(accounting.KindZCDP, registry.Options{})
	if err := a.Compose(accounting.Gaussian{NoiseMultiplier: sigma}, 1); err != nil {
		t.Fatal(err)
	}
	delta := math.Ldexp(1, -1070)
	rho := 1 / (2 * sigma * sigma)
	want := rho + 2*math.Sqrt(rho*1070*math.Ln2)
	got, err := a.Epsilon(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-12*want || got < want {
		t.Errorf("zcdp Epsilon(2^-1070) = %.17g, want %.17g (rounded up)", got, want)
	}
}
