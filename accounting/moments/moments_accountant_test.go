package moments

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// momentsAccountant is what both accountants of this file family offer.
type momentsAccountant interface {
	accounting.Accountant
	accounting.OrderReporter
	AtGridEdge(lambda float64) bool
	Orders() []float64
}

var momentsKinds = []struct {
	name string
	make func(orders []float64) momentsAccountant
}{
	{"ma", func(o []float64) momentsAccountant { return must(NewMA(o)) }},
	{"rdp", func(o []float64) momentsAccountant { return must(NewRDP(o)) }},
}

// relDiff returns |got − want| / |want| (or |got| when want is 0).
func relDiff(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// must returns a, panicking on err (the orders of these tests are valid).
func must[A any](a A, err error) A {
	if err != nil {
		panic(err)
	}
	return a
}

func mustEps(t *testing.T, a accounting.Accountant, delta float64) float64 {
	t.Helper()
	e, err := a.Epsilon(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestAbadiSection51 reproduces Abadi et al. (2016) §5.1: q = 0.01, σ = 4,
// δ = 1e-5 gives ε ≈ 1.26 after E = 100 epochs (T = 10,000) and ε ≈ 2.55
// after E = 400 (T = 40,000) with the moments accountant.
func TestAbadiSection51(t *testing.T) {
	t.Parallel()
	var upTo32 []float64
	for l := 1.0; l <= 32; l++ {
		upTo32 = append(upTo32, l)
	}
	for _, c := range []struct {
		steps int
		paper float64
	}{{10000, 1.26}, {40000, 2.55}} {
		ma := must(NewMA(nil))
		if err := ma.Compose(accounting.SubsampledGaussian(4, 0.01, c.steps), 1); err != nil {
			t.Fatal(err)
		}
		eps, lambda, err := ma.EpsilonAndOrder(t.Context(), 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		// The paper prints two decimals and its own grid (integer λ ≤ 32,
		// §4); 1.5% covers rounding and the grid.
		if relDiff(eps, c.paper) > 0.015 {
			t.Errorf("T=%d: ma ε = %.6g (λ=%g), paper %g", c.steps, eps, lambda, c.paper)
		}
		if ma.AtGridEdge(lambda) {
			t.Errorf("T=%d: optimum λ=%g on the grid edge", c.steps, lambda)
		}
		mi := must(NewMA(upTo32))
		mi.Compose(accounting.SubsampledGaussian(4, 0.01, c.steps), 1)
		ei, li, _ := mi.EpsilonAndOrder(t.Context(), 1e-5)
		rdp := must(NewRDP(nil))
		rdp.Compose(accounting.SubsampledGaussian(4, 0.01, c.steps), 1)
		er, lr, _ := rdp.EpsilonAndOrder(t.Context(), 1e-5)
		t.Logf("T=%d: ma ε=%.6f (λ=%g), ma integer λ≤32 ε=%.6f (λ=%g), rdp ε=%.6f (λ=%g), paper %g",
			c.steps, eps, lambda, ei, li, er, lr, c.paper)
	}
}

// TestMomentsProperties checks, on seeded random parameters, that rdp ε ≤
// ma ε, that ε decreases in σ and increases in T and q, and that δ(ε(δ))
// round-trips.
func TestMomentsProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 25; i++ {
		sigma := 0.6 + 6*rng.Float64()
		q := math.Exp(math.Log(1e-4) + rng.Float64()*math.Log(0.3/1e-4))
		steps := 1 + rng.IntN(20000)
		delta := math.Exp(math.Log(1e-10) + rng.Float64()*math.Log(1e-2/1e-10))
		eps := func(k int, s, qq float64, n int) float64 {
			a := momentsKinds[k].make(nil)
			if err := a.Compose(accounting.SubsampledGaussian(s, qq, n), 1); err != nil {
				t.Fatal(err)
			}
			return mustEps(t, a, delta)
		}
		name := fmt.Sprintf("σ=%.4g q=%.4g T=%d δ=%.3g", sigma, q, steps, delta)
		ma, rdp := eps(0, sigma, q, steps), eps(1, sigma, q, steps)
		if !(rdp <= ma) {
			t.Errorf("%s: rdp ε %g > ma ε %g", name, rdp, ma)
		}
		for k := range momentsKinds {
			base := eps(k, sigma, q, steps)
			if e := eps(k, sigma*1.1, q, steps); !(e <= base) {
				t.Errorf("%s %s: ε(1.1σ) = %g > ε(σ) = %g", name, momentsKinds[k].name, e, base)
			}
			if e := eps(k, sigma, q, steps*2); !(e >= base) {
				t.Errorf("%s %s: ε(2T) = %g < ε(T) = %g", name, momentsKinds[k].name, e, base)
			}
			if e := eps(k, sigma, math.Min(1, q*1.5), steps); !(e >= base) {
				t.Errorf("%s %s: ε(1.5q) = %g < ε(q) = %g", name, momentsKinds[k].name, e, base)
			}
			a := momentsKinds[k].make(nil)
			a.Compose(accounting.SubsampledGaussian(sigma, q, steps), 1)
			if base > 0 && !math.IsInf(base, 1) {
				d, err := a.Delta(t.Context(), base)
				if err != nil || d > delta*(1+1e-9) {
					t.Errorf("%s %s: δ(ε(δ)) = %g (%v), want <= %g", name, momentsKinds[k].name, d, err, delta)
				}
			}
		}
	}
}

// TestMomentsCountLinearity: Compose(e, k) ≡ Compose(SelfComposed{e, k}, 1)
// ≡ k × Compose(e, 1), for every supported event type.
func TestMomentsCountLinearity(t *testing.T) {
	t.Parallel()
	events := []accounting.Event{
		accounting.Gaussian{NoiseMultiplier: 3},
		accounting.PoissonSampled{SamplingRate: 0.02, Event: accounting.Gaussian{NoiseMultiplier: 1.5}},
		accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: 20}, Count: 3},
		accounting.Composed{Events: []accounting.Event{accounting.Gaussian{NoiseMultiplier: 8}, accounting.NoOp{}, accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.Gaussian{NoiseMultiplier: 2}}}},
		accounting.NoOp{},
		accounting.NonPrivate{},
		accounting.ZCDP{Rho: 0.01, Xi: 0.001},
	}
	const k = 7
	for _, kind := range momentsKinds {
		for _, e := range events {
			if _, ok := e.(accounting.ZCDP); ok && kind.name == "ma" {
				continue
			}
			a, b, c := kind.make(nil), kind.make(nil), kind.make(nil)
			if err := a.Compose(e, k); err != nil {
				t.Fatalf("%s %T: %v", kind.name, e, err)
			}
			if err := b.Compose(accounting.SelfComposed{Event: e, Count: k}, 1); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < k; i++ {
				if err := c.Compose(e, 1); err != nil {
					t.Fatal(err)
				}
			}
			for _, delta := range []float64{1e-3, 1e-6, 1e-9} {
				ea, eb, ec := mustEps(t, a, delta), mustEps(t, b, delta), mustEps(t, c, delta)
				// Repeated addition rounds differently from k·α: 1e-13.
				if !(ea == eb || relDiff(eb, ea) < 1e-13) || !(ea == ec || relDiff(ec, ea) < 1e-13) {
					t.Errorf("%s %T δ=%g: ε = %v, %v, %v", kind.name, e, delta, ea, eb, ec)
				}
			}
		}
	}
}

// TestMomentsBoundaries is the boundary table of STYLE §7, row by row.
func TestMomentsBoundaries(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	for _, kind := range momentsKinds {
		tests := []struct {
			name   string
			events []accounting.Event
			delta  float64
			eps    float64
			wantE  float64 // ε(delta)
			wantD  float64 // δ(eps)
		}{
			{"empty", nil, 1e-5, 1, 0, 0},
			{"noop", []accounting.Event{accounting.NoOp{}}, 1e-5, 1, 0, 0},
			{"q zero", []accounting.Event{accounting.PoissonSampled{SamplingRate: 0, Event: accounting.Gaussian{NoiseMultiplier: 1}}}, 1e-5, 1, 0, 0},
			{"sigma inf", []accounting.Event{accounting.Gaussian{NoiseMultiplier: inf}}, 1e-5, 1, 0, 0},
			{"sigma zero", []accounting.Event{accounting.Gaussian{NoiseMultiplier: 0}}, 1e-5, 1, inf, 1},
			{"non-private", []accounting.Event{accounting.NonPrivate{}, accounting.Gaussian{NoiseMultiplier: 5}}, 1e-5, 1, inf, 1},
			{"delta zero", []accounting.Event{accounting.Gaussian{NoiseMultiplier: 5}}, 0, inf, inf, 0},
			{"sampled non-private", []accounting.Event{accounting.PoissonSampled{SamplingRate: 0.5, Event: accounting.NonPrivate{}}}, 1e-5, 1, inf, 1},
		}
		for _, tt := range tests {
			a := kind.make(nil)
			for _, e := range tt.events {
				if err := a.Compose(e, 3); err != nil {
					t.Fatalf("%s %s: %v", kind.name, tt.name, err)
				}
			}
			if e := mustEps(t, a, tt.delta); e != tt.wantE {
				t.Errorf("%s %s: ε(%g) = %v, want %v", kind.name, tt.name, tt.delta, e, tt.wantE)
			}
			if d, err := a.Delta(t.Context(), tt.eps); err != nil || d != tt.wantD {
				t.Errorf("%s %s: δ(%g) = %v, %v, want %v", kind.name, tt.name, tt.eps, d, err, tt.wantD)
			}
		}
	}
}

// TestMomentsErrors: bad input and unsupported events fail with the right
// error, name the sub-event, and leave the accountant unchanged.
func TestMomentsErrors(t *testing.T) {
	t.Parallel()
	deep := accounting.Composed{Events: []accounting.Event{
		accounting.Gaussian{NoiseMultiplier: 2},
		accounting.SelfComposed{Event: accounting.Composed{Events: []accounting.Event{accounting.NoOp{}, accounting.EpsilonDelta{Epsilon: 1, Delta: 1e-6}}}, Count: 2},
	}}
	for _, kind := range momentsKinds {
		a := kind.make(nil)
		if err := a.Compose(accounting.SubsampledGaussian(2, 0.01, 100), 1); err != nil {
			t.Fatal(err)
		}
		before := mustEps(t, a, 1e-5)
		err := a.Compose(deep, 1)
		var ue *accounting.UnsupportedEventError
		if !errors.As(err, &ue) || ue.Path != "Composed[1]/SelfComposed/Composed[1]/EpsilonDelta" || !errors.Is(err, accounting.ErrUnsupportedEvent) {
			t.Errorf("%s: err = %v, want unsupported EpsilonDelta at Composed[1]/SelfComposed/Composed[1]/EpsilonDelta", kind.name, err)
		}
		bad := []struct {
			name  string
			e     accounting.Event
			count int
		}{
			{"negative sigma", accounting.Composed{Events: []accounting.Event{accounting.Gaussian{NoiseMultiplier: 1}, accounting.Gaussian{NoiseMultiplier: -1}}}, 1},
			{"nan q", accounting.PoissonSampled{SamplingRate: math.NaN(), Event: accounting.Gaussian{NoiseMultiplier: 1}}, 1},
			{"q above one", accounting.PoissonSampled{SamplingRate: 1.5, Event: accounting.Gaussian{NoiseMultiplier: 1}}, 1},
			{"zero count", accounting.Gaussian{NoiseMultiplier: 1}, 0},
			{"zero inner count", accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: 1}, Count: 0}, 1},
			{"bad zcdp", accounting.ZCDP{Rho: -1}, 1},
		}
		for _, b := range bad {
			err := a.Compose(b.e, b.count)
			if !errors.Is(err, accounting.ErrInvalidParameter) && !(kind.name == "ma" && errors.Is(err, accounting.ErrUnsupportedEvent)) {
				t.Errorf("%s %s: err = %v", kind.name, b.name, err)
			}
		}
		if err := a.Compose(accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.Composed{}}, 1); !errors.As(err, &ue) || ue.Path != "PoissonSampled/Composed" {
			t.Errorf("%s: sampled composite: err = %v", kind.name, err)
		}
		if after := mustEps(t, a, 1e-5); after != before {
			t.Errorf("%s: failed Compose changed ε from %v to %v", kind.name, before, after)
		}
		for _, d := range []float64{-1, 1, 2, math.NaN()} {
			if _, err := a.Epsilon(t.Context(), d); !errors.Is(err, accounting.ErrInvalidParameter) {
				t.Errorf("%s: Epsilon(%v) err = %v", kind.name, d, err)
			}
		}
		for _, e := range []float64{-1, math.NaN()} {
			if _, err := a.Delta(t.Context(), e); !errors.Is(err, accounting.ErrInvalidParameter) {
				t.Errorf("%s: Delta(%v) err = %v", kind.name, e, err)
			}
		}
	}
	if err := must(NewMA(nil)).Compose(accounting.ZCDP{Rho: 1}, 1); !errors.Is(err, accounting.ErrUnsupportedEvent) {
		t.Errorf("ma zCDP: err = %v, want unsupported", err)
	}
}

// TestRDPZCDP: a Gaussian with q = 1 and ZCDP{1/(2σ²), 0} have the same RDP
// curve, and ε matches the conversion formula evaluated directly: on the
// grid for explicit orders, and at its minimum over the grid and the
// lattice 2^(k/1024) for the default search, which is within 6e-8 of the
// continuous minimum (a scan of 10⁶ Rényi orders).
func TestRDPZCDP(t *testing.T) {
	t.Parallel()
	const sigma, delta = 3.0, 1e-6
	conv := func(l float64) float64 {
		a := l + 1
		rdp := 10 * a / (2 * sigma * sigma)
		return rdp + math.Log((a-1)/a) - (math.Log(delta)+math.Log(a))/(a-1)
	}
	grid, cont := math.Inf(1), math.Inf(1)
	for _, l := range DefaultOrders {
		grid = math.Min(grid, conv(l))
	}
	for i := range 1000000 {
		cont = math.Min(cont, conv(0.5*math.Pow(1000, float64(i)/1e6)))
	}
	lattice := grid
	for k := -10 * 1024; k <= 20*1024; k++ {
		lattice = math.Min(lattice, conv(math.Exp2(float64(k)/1024)))
	}
	if !(lattice >= cont*(1-1e-12) && lattice <= cont*(1+6e-8)) {
		t.Errorf("lattice minimum %.17g, continuous %.17g: want within 6e-8 above", lattice, cont)
	}
	for _, c := range []struct {
		orders []float64
		want   float64
	}{{DefaultOrders, grid}, {nil, lattice}} {
		g, z := must(NewRDP(c.orders)), must(NewRDP(c.orders))
		g.Compose(accounting.Gaussian{NoiseMultiplier: sigma}, 10)
		z.Compose(accounting.ZCDP{Rho: 1 / (2 * sigma * sigma)}, 10)
		eg, ez := mustEps(t, g, delta), mustEps(t, z, delta)
		if relDiff(eg, c.want) > 1e-12 || relDiff(ez, c.want) > 1e-12 {
			t.Errorf("orders %v: ε accounting.Gaussian %.17g, zCDP %.17g, formula %.17g", c.orders == nil, eg, ez, c.want)
		}
	}
	if !(cont < grid) {
		t.Errorf("continuous minimum %v not below the grid's %v", cont, grid)
	}
}

// TestMomentsOrders: the grid is sorted and deduplicated, reaches 256 and
// holds fractional orders; invalid orders are a *accounting.ParamError (the
// constructors used to panic).
func TestMomentsOrders(t *testing.T) {
	t.Parallel()
	o := must(NewRDP([]float64{4, 2, 2, 8})).Orders()
	if fmt.Sprint(o) != "[2 4 8]" {
		t.Errorf("orders %v", o)
	}
	last, frac := DefaultOrders[len(DefaultOrders)-1], 0
	for _, l := range DefaultOrders {
		if l != math.Trunc(l) {
			frac++
		}
	}
	if last < 256 || frac < 10 || DefaultOrders[0] != 1 {
		t.Errorf("DefaultOrders: last %v, %d fractional", last, frac)
	}
	for _, orders := range [][]float64{{MinOrder / 2}, {0}, {2, math.NaN()}, {math.Inf(1)}, {}} {
		if a, err := NewMA(orders); a != nil || !errors.Is(err, accounting.ErrInvalidParameter) {
			t.Errorf("NewMA(%v) = %v, %v; want a ParamError", orders, a, err)
		}
		if a, err := NewRDP(orders); a != nil || !errors.Is(err, accounting.ErrInvalidParameter) {
			t.Errorf("NewRDP(%v) = %v, %v; want a ParamError", orders, a, err)
		}
	}
}

func ExampleNewMA() {
	ma := must(NewMA(nil))
	// Abadi et al. (2016) §5.1: 100 epochs at q = 0.01 are 10,000 steps.
	if err := ma.Compose(accounting.SubsampledGaussian(4, 0.01, 10000), 1); err != nil {
		fmt.Println(err)
		return
	}
	eps, lambda, _ := ma.EpsilonAndOrder(context.Background(), 1e-5)
	fmt.Printf("ε = %.2f at λ = %.3g\n", eps, lambda)
	// Output:
	// ε = 1.26 at λ = 18.7
}

func ExampleNewRDP() {
	rdp := must(NewRDP(nil))
	if err := rdp.Compose(accounting.SubsampledGaussian(4, 0.01, 10000), 1); err != nil {
		fmt.Println(err)
		return
	}
	eps, lambda, _ := rdp.EpsilonAndOrder(context.Background(), 1e-5)
	delta, _ := rdp.Delta(context.Background(), eps)
	fmt.Printf("ε = %.3f at Rényi order %.3g; δ(ε) = %.1e\n", eps, lambda+1, delta)
	// Output:
	// ε = 1.035 at Rényi order 17.2; δ(ε) = 1.0e-05
}

func ExampleLogMoments() {
	ms, _ := LogMoments(4, 0.01, []float64{2.5, 32})
	for _, m := range ms {
		fmt.Printf("λ = %g: α = %.6e (relative error bound < 1e-6: %v)\n", m.Lambda, m.Alpha, m.AbsError < 1e-6*m.Alpha)
	}
	// Output:
	// λ = 2.5: α = 2.824386e-05 (relative error bound < 1e-6: true)
	// λ = 32: α = 3.476044e-03 (relative error bound < 1e-6: true)
}

var benchEpsSink float64

// BenchmarkEpsilonGrid is ε for a fresh σ (σ = 4, q = 0.01, T = 10,000):
// what a calibrator pays per trial σ, on DefaultOrders ("grid", the old
// default) and with the continuous search (orders nil, the default).
func BenchmarkEpsilonGrid(b *testing.B) {
	for _, kind := range momentsKinds {
		for _, mode := range benchModes {
			b.Run(kind.name+"/"+mode.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					a := kind.make(mode.orders)
					a.Compose(accounting.SubsampledGaussian(4, 0.01, 10000), 1)
					benchEpsSink, _ = a.Epsilon(b.Context(), 1e-5)
				}
			})
		}
	}
}

var benchModes = []struct {
	name   string
	orders []float64
}{{"grid", DefaultOrders}, {"continuous", nil}}

// BenchmarkEpsilonCached is an ε query on an accountant whose α are known.
func BenchmarkEpsilonCached(b *testing.B) {
	for _, mode := range benchModes {
		b.Run(mode.name, func(b *testing.B) {
			a := must(NewRDP(mode.orders))
			a.Compose(accounting.SubsampledGaussian(4, 0.01, 10000), 1)
			for i := 0; i < b.N; i++ {
				benchEpsSink, _ = a.Epsilon(b.Context(), 1e-5)
			}
		})
	}
}

// BenchmarkCalibrateSigma mimics a σ calibration: bisection on σ over
// [0.5, 50] for ε(1e-5) = 1 at q = 0.01, T = 10,000, 25 fresh accountants.
func BenchmarkCalibrateSigma(b *testing.B) {
	for _, mode := range benchModes {
		b.Run(mode.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				lo, hi := 0.5, 50.0
				for j := 0; j < 25; j++ {
					mid := math.Sqrt(lo * hi)
					a := must(NewRDP(mode.orders))
					a.Compose(accounting.SubsampledGaussian(mid, 0.01, 10000), 1)
					if e, _ := a.Epsilon(b.Context(), 1e-5); e > 1 {
						lo = mid
					} else {
						hi = mid
					}
				}
				benchEpsSink = hi
			}
		})
	}
}
