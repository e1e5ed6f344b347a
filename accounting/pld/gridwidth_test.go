package pld_test

import (
	"context"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/pld"
)

// TestGridWidthDeltaFirst: with a set GridWidth, a first query by δ(ε)
// probes the width before any composition is cached; it panicked on a nil
// map (dpcalc delta --eps 2 --sigma 1 --q 0.1 --steps 10 --accountant pld
// --pld-grid 0.01). Its certified bracket overlaps the default grid's.
func TestGridWidthDeltaFirst(t *testing.T) {
	ctx := context.Background()
	e := accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.Gaussian{NoiseMultiplier: 1}}
	ref, err := pld.New(pld.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Compose(e, 10); err != nil {
		t.Fatal(err)
	}
	rlo, rhi, err := ref.DeltaBounds(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	a, err := pld.New(pld.Options{GridWidth: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose(e, 10); err != nil {
		t.Fatal(err)
	}
	lo, hi, err := a.DeltaBounds(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !(lo <= rhi && rlo <= hi && lo > 0 && hi < 1e-3) {
		t.Errorf("δ(2) on grid 0.01 in [%g, %g], on the default grid [%g, %g]: the brackets should overlap", lo, hi, rlo, rhi)
	}
}
