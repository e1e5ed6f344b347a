package mechanism

import (
	"context"

	"github.com/dpcalc/dpcalc/accounting"
)

// RDP is a mechanism's Rényi curve, as log moments: at moment order
// λ ≥ [MinOrder] (Rényi order λ+1), K(λ) = λ·D_{λ+1}(P‖Q) for the worse
// order of the neighbouring data sets, Abadi et al. (2016) §3.2's α(λ)
// (Mironov 2017). Log moments add under adaptive composition (Abadi et al.
// 2016, Theorem 2.1).
type RDP interface {
	// LogMoments returns upper bounds on count·K(λ) at every λ of orders
	// (+Inf where no finite bound is known). c (not nil) caches work for
	// one grid of orders across calls and mechanisms.
	LogMoments(ctx context.Context, c *Cache, count float64, orders []float64) ([]float64, error)
	// LogMomentAt returns an upper bound on count·K(λ) at one order,
	// evaluated on its own: at a grid order it may differ from LogMoments'
	// value (both are bounds).
	LogMomentAt(ctx context.Context, c *Cache, count, lambda float64) (float64, error)
	// AbadiMoments reports whether the curve is the Gaussian mechanism's,
	// the only one the moments accountant of Abadi et al. tracks.
	AbadiMoments() bool
}

// MinOrder is the smallest moment order λ that Rényi curves and the
// accountants accept (Rényi order 1 + 2⁻¹⁰). Below it the conversions to
// (ε, δ) divide log(1/δ) by λ and give no useful bound.
const MinOrder = 0x1p-10

// SplitOrder is the moment order at which a Rényi curve may change how it
// is computed: above it, a closed-form bound (the Gaussian's λ(λ+1)/(2σ²),
// far above its integrated α for q < 1), so a curve need not be
// quasi-convex across it; at or below it, at an integer order, a curve
// evaluated alone ([RDP.LogMomentAt]) may be tighter than over a grid (the
// Gaussian's exact binomial E2).
const SplitOrder = momentBinomialMax

// Cache holds what Rényi curves computed for one accountant, whose grid of
// orders is fixed: the Gaussian's log moments over the grid per (σ, q),
// at single orders per (σ, q, λ), and the integrator's partitions, each
// capped. A Cache is not safe for concurrent use.
type Cache struct {
	grid   map[[2]float64][]float64
	single map[[3]float64]float64
	parts  map[[3]float64]*momentGrid
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{grid: make(map[[2]float64][]float64)} }

// The cache caps: gridCacheSize (σ, q) vectors over the grid (a calibrator
// that tries many σ should not grow it without bound), singleCacheSize
// single orders and partsCacheSize partitions (see logMomentOne).
const (
	gridCacheSize   = 64
	singleCacheSize = 4096
	partsCacheSize  = 64
)

// gaussianAlphas returns the rounded-up α(λ) of one Gaussian step at every
// order of the grid, cached per (σ, q).
func (c *Cache) gaussianAlphas(ctx context.Context, sigma, q float64, orders []float64) ([]float64, error) {
	key := [2]float64{sigma, q}
	if a, ok := c.grid[key]; ok {
		return a, nil
	}
	ms, err := logMoments(ctx, sigma, q, orders)
	if err != nil {
		return nil, err // canceled; the plan holds valid σ and q
	}
	a := make([]float64, len(orders))
	for i := range a {
		a[i] = ms[i].Upper()
	}
	if len(c.grid) >= gridCacheSize {
		clear(c.grid)
	}
	c.grid[key] = a
	return a, nil
}

// gaussianAlpha returns the rounded-up α(l) of one Gaussian step,
// evaluated alone, cached per (σ, q, l).
func (c *Cache) gaussianAlpha(ctx context.Context, sigma, q, l float64) (float64, error) {
	key := [3]float64{sigma, q, l}
	if a, ok := c.single[key]; ok {
		return a, nil
	}
	if err := accounting.Canceled(ctx); err != nil {
		return 0, err
	}
	if c.parts == nil {
		c.parts = make(map[[3]float64]*momentGrid)
	}
	m, err := logMomentOne(ctx, sigma, q, l, c.parts)
	if err != nil {
		return 0, err
	}
	a := m.Upper()
	if c.single == nil || len(c.single) >= singleCacheSize {
		c.single = make(map[[3]float64]float64)
	}
	c.single[key] = a
	return a, nil
}
