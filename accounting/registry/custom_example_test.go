package registry_test

import (
	"context"
	"fmt"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/registry"
)

// A mechanism dpcalc does not know, described by its Rényi curve (here
// the Gaussian's α/8, σ = 2, at a few orders), composed with 1000
// Poisson-sampled Gaussian steps (rdp gives 3.029 with the Gaussian itself:
// the curve is bounded between the given orders by chords); and a pure 0.3-DP mechanism given as a
// privacy profile, composed 25 times (pld's upper end is above the exact
// 6.29204 of the optimal composition theorem).
func Example_customMechanisms() {
	orders := []float64{1.5, 2, 3, 4, 6, 8, 16, 32, 64}
	rdp := make([]float64, len(orders))
	for i, a := range orders {
		rdp[i] = a / 8
	}
	ctx := context.Background()
	a, _ := registry.NewAccountant(accounting.KindRDP, registry.Options{})
	if err := a.Compose(accounting.Composed{Events: []accounting.Event{
		accounting.RdpCurve{Orders: orders, RDP: rdp},
		accounting.SubsampledGaussian(1, 0.01, 1000),
	}}, 1); err != nil {
		fmt.Println(err)
		return
	}
	eps, _ := a.Epsilon(ctx, 1e-5)
	fmt.Printf("rdp: %.3f\n", eps)

	p, _ := registry.NewAccountant(accounting.KindPLD, registry.Options{})
	if err := p.Compose(accounting.PrivacyProfile{Epsilons: []float64{0.3}, Deltas: []float64{0}}, 25); err != nil {
		fmt.Println(err)
		return
	}
	eps, _ = p.Epsilon(ctx, 1e-5)
	fmt.Printf("pld: %.3f\n", eps)

	z, _ := registry.NewAccountant(accounting.KindZCDP, registry.Options{})
	fmt.Println(z.Compose(accounting.RdpCurve{Orders: orders, RDP: rdp}, 1))
	// Output:
	// rdp: 3.050
	// pld: 6.294
	// accounting: unsupported event accounting.RdpCurve at RdpCurve: zcdp: no zCDP bound for the custom event RdpCurve (its Rényi curve need not be of the form ξ + ρα, and nothing bounds it above its largest order)
}
