package zcdp_test

import (
	"context"
	"fmt"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/zcdp"
)

// One Gaussian mechanism with σ = 1 is ½-zCDP (Bun and Steinke 2016,
// Prop. 1.6), hence (½ + 2√(½ ln 1e5), 1e-5)-DP (Prop. 1.3).
func ExampleNew() {
	a := zcdp.New()
	if err := a.Compose(accounting.Gaussian{NoiseMultiplier: 1}, 1); err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	eps, _ := a.Epsilon(ctx, 1e-5)
	delta, _ := a.Delta(ctx, 3)
	fmt.Printf("rho = %g, eps(1e-5) = %.4f, delta(3) = %.4f\n", a.Rho(), eps, delta)
	// Output: rho = 0.5, eps(1e-5) = 5.2985, delta(3) = 0.0439
}
