package trainer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// blobs returns n examples of d features in [0, 1] drawn around `classes`
// random centres (std spread), a learnable toy problem.
func blobs(n, d, classes int, spread float64, seed uint64) *data.Dataset {
	r := rand.New(rand.NewPCG(seed, 99))
	centres := make([][]float64, classes)
	for c := range centres {
		centres[c] = make([]float64, d)
		for j := range centres[c] {
			centres[c][j] = 0.2 + 0.6*r.Float64()
		}
	}
	ds := &data.Dataset{Name: "blobs", X: make([]float32, n*d), Y: make([]uint8, n), N: n, D: d, Classes: classes}
	for i := 0; i < n; i++ {
		c := i % classes
		ds.Y[i] = uint8(c)
		for j := 0; j < d; j++ {
			v := centres[c][j] + spread*r.NormFloat64()
			ds.X[i*d+j] = float32(min(1, max(0, v)))
		}
	}
	return ds
}

// zcdpTestAccountant is a closed-form accountant for tests: it treats
// Gaussian{σ} as ρ = 1/(2σ²)-zCDP and ignores subsampling amplification
// (PoissonSampled costs as much as its inner event, which is a valid upper
// bound), and converts with ε = ρ + 2√(ρ ln(1/δ)) (Bun and Steinke 2016,
// Prop. 1.3).
type zcdpTestAccountant struct{ rho float64 }

func (a *zcdpTestAccountant) Kind() accounting.Kind { return "test-zcdp" }

func (a *zcdpTestAccountant) cost(e accounting.Event) (float64, error) {
	switch e := e.(type) {
	case accounting.Gaussian:
		return 1 / (2 * e.NoiseMultiplier * e.NoiseMultiplier), nil
	case accounting.PoissonSampled:
		return a.cost(e.Event)
	case accounting.SelfComposed:
		r, err := a.cost(e.Event)
		return r * float64(e.Count), err
	case accounting.Composed:
		s := 0.0
		for _, x := range e.Events {
			r, err := a.cost(x)
			if err != nil {
				return 0, err
			}
			s += r
		}
		return s, nil
	case accounting.NoOp:
		return 0, nil
	case accounting.NonPrivate:
		return math.Inf(1), nil
	}
	return 0, fmt.Errorf("unsupported %T", e)
}

func (a *zcdpTestAccountant) Compose(e accounting.Event, n int) error {
	r, err := a.cost(e)
	if err != nil {
		return err
	}
	a.rho += r * float64(n)
	return nil
}

func (a *zcdpTestAccountant) Supports(accounting.Step) error { return nil }

func (a *zcdpTestAccountant) Epsilon(_ context.Context, delta float64) (float64, error) {
	return a.rho + 2*math.Sqrt(a.rho*math.Log(1/delta)), nil
}

func (a *zcdpTestAccountant) Delta(_ context.Context, eps float64) (float64, error) {
	return 0, fmt.Errorf("not implemented")
}

func newTestAccountant() (accounting.Method, error) { return new(zcdpTestAccountant), nil }

func u64(v uint64) *uint64 { return &v }
