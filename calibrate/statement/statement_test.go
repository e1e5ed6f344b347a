package statement

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/gaussian"
	"github.com/dpcalc/dpcalc/accounting/registry"
	"github.com/dpcalc/dpcalc/internal/testenv"
)

// TestGaussianDelta: δ_μ(ε) is the Gaussian mechanism's profile with
// sensitivity μ and unit noise (Balle–Wang's exact δ).
func TestGaussianDelta(t *testing.T) {
	for _, c := range []struct{ mu, eps float64 }{{1, 0}, {1, 1}, {0.25, 0.5}, {3, 4}, {0.01, 0.001}} {
		want, err := gaussian.Delta(1/c.mu, 1, c.eps)
		if err != nil {
			t.Fatal(err)
		}
		if got := GaussianDelta(c.mu, c.eps); math.Abs(got-want) > 1e-12*want {
			t.Errorf("δ_%g(%g) = %g, want %g", c.mu, c.eps, got, want)
		}
	}
	if GaussianDelta(0, 1) != 0 || GaussianDelta(math.Inf(1), 1) != 1 {
		t.Error("δ_0 must be 0 and δ_∞ 1")
	}
}

// TestGDPClosedForms: one unsampled Gaussian release of noise multiplier σ
// is exactly 1/σ-GDP, T of them √T/σ-GDP (Dong, Roth and Su 2022,
// Corollary 3.3): the certified interval [MuLower, Mu] contains it, and Mu
// is within 1e-3 of it (the chord error of the default queries: 4e-4 at
// σ = 1, where μ(ε) is the same at every ε and no refinement helps).
func TestGDPClosedForms(t *testing.T) {
	for _, c := range []struct {
		name string
		e    accounting.Event
		mu   float64
	}{
		{"σ 1", accounting.Gaussian{NoiseMultiplier: 1}, 1},
		{"σ 2", accounting.Gaussian{NoiseMultiplier: 2}, 0.5},
		{"σ 0.5", accounting.Gaussian{NoiseMultiplier: 0.5}, 2},
		{"σ 10, T 100", accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: 10}, Count: 100}, 1},
		{"σ 5, T 16", accounting.SelfComposed{Event: accounting.Gaussian{NoiseMultiplier: 5}, Count: 16}, 0.8},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Compute(context.Background(), Run{Training: c.e}, Options{Delta: 1e-5})
			if err != nil {
				t.Fatal(err)
			}
			g := s.GDP
			if !(g.MuLower <= c.mu && c.mu <= g.Mu && g.Mu <= c.mu*(1+1e-3)) {
				t.Errorf("μ in [%g, %g], want %g inside and the upper end within 1e-3", g.MuLower, g.Mu, c.mu)
			}
			// Exactly Gaussian: the GDP curve's ε at δ is the run's, up to
			// the μ's own slack.
			if r := g.EpsilonAtDelta / s.Example.Upper; r < 1 || r > 1+1e-3 {
				t.Errorf("ε of μ-GDP at δ %g, the run's %g", g.EpsilonAtDelta, s.Example.Upper)
			}
		})
	}
}

// TestGDPPoissonCLT: for Poisson-subsampled Gaussian steps the CLT
// μ ≈ q√(T(e^{1/σ²} − 1)) (Bu, Dong, Long and Su 2020, arXiv:1911.11607)
// is an approximation that is known to be optimistic at small δ, so it is
// a sanity band, not an equality: the certified interval lies within
// [1, 1.1] times it for these runs (measured, q 0.01, T 10000: σ 1:
// [1.3847, 1.3854] against 1.3108; σ 4: [0.25597, 0.256144] against
// 0.25396; σ 1 at T 10000 only in the long test step, 2 s).
func TestGDPPoissonCLT(t *testing.T) {
	cases := []struct {
		sigma, q float64
		T        int
	}{{4, 0.01, 10000}}
	if testenv.Long() {
		cases = append(cases, struct {
			sigma, q float64
			T        int
		}{1, 0.01, 10000})
	}
	for _, c := range cases {
		T := float64(c.T)
		clt := c.q * math.Sqrt(T*math.Expm1(1/(c.sigma*c.sigma)))
		s, err := Compute(context.Background(), Run{Training: accounting.SubsampledGaussian(c.sigma, c.q, c.T)}, Options{Delta: 1e-5})
		if err != nil {
			t.Fatal(err)
		}
		if g := s.GDP; !(g.MuLower >= clt && g.Mu <= 1.1*clt && g.MuLower <= g.Mu) {
			t.Errorf("σ %g, T %d: μ in [%g, %g], CLT %g", c.sigma, c.T, g.MuLower, g.Mu, clt)
		}
	}
}

// TestGDPCoversProfile: between the queried ε too, the Mu-GDP profile lies
// above pld's certified upper δ(ε) of the run (the chord argument), and at
// EpsilonMax the run's δ is at most TailDelta.
func TestGDPCoversProfile(t *testing.T) {
	ctx := context.Background()
	e := accounting.SubsampledGaussian(2, 0.1, 100)
	s, err := Compute(ctx, Run{Training: e}, Options{Delta: 1e-5, GridPoints: 9, Refinements: -1})
	if err != nil {
		t.Fatal(err)
	}
	m, err := registry.New(accounting.KindPLD, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compose(e, 1); err != nil {
		t.Fatal(err)
	}
	g := s.GDP
	const n = 60 // off the grid of 9 (and of the refinements)
	for i := 0; i <= n; i++ {
		eps := g.EpsilonMax * (float64(i) + 0.37) / (n + 1)
		d, err := m.Delta(ctx, eps)
		if err != nil {
			t.Fatal(err)
		}
		if GaussianDelta(g.Mu, eps) < d {
			t.Fatalf("at ε %g the run's δ %g is above δ_μ %g (μ %g)", eps, d, GaussianDelta(g.Mu, eps), g.Mu)
		}
	}
	if d, _ := m.Delta(ctx, g.EpsilonMax); d > g.TailDelta {
		t.Errorf("δ(EpsilonMax) %g above TailDelta %g", d, g.TailDelta)
	}
	// Fewer queries give a larger, still sound, μ.
	fine, err := Compute(ctx, Run{Training: e}, Options{Delta: 1e-5, GridPoints: 9, Refinements: 24})
	if err != nil {
		t.Fatal(err)
	}
	if !(fine.GDP.Mu <= g.Mu && fine.GDP.MuLower >= g.MuLower) {
		t.Errorf("refined [%g, %g] is not inside the coarse [%g, %g]", fine.GDP.MuLower, fine.GDP.Mu, g.MuLower, g.Mu)
	}
}

// TestComputeRun: the statement's ε is the accountants' for the same run;
// a Poisson reading and a user-level run are stated beside it.
func TestComputeRun(t *testing.T) {
	ctx := context.Background()
	e := accounting.SubsampledGaussian(2, 0.02, 500)
	s, err := Compute(ctx, Run{Training: e, PoissonReading: e, UserTraining: accounting.SubsampledGaussian(1, 0.02, 500), ExamplesPerUser: 2},
		Options{Delta: 1e-6, GridPoints: 5, Refinements: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		k   accounting.Kind
		got float64
	}{{accounting.KindPLD, s.Example.Upper}, {accounting.KindRDP, s.RDP.Upper}} {
		m, _ := registry.New(c.k, registry.Options{})
		if err := m.Compose(e, 1); err != nil {
			t.Fatal(err)
		}
		want, err := m.Epsilon(ctx, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if c.got != want {
			t.Errorf("%s: ε %g, want %g", c.k, c.got, want)
		}
	}
	if s.Poisson == nil || s.Poisson.Upper != s.Example.Upper {
		t.Errorf("Poisson reading %+v, want the same run's ε %g", s.Poisson, s.Example.Upper)
	}
	if s.User == nil || s.UserRDP == nil || !(s.User.Upper > s.Example.Upper) || s.ExamplesPerUser != 2 {
		t.Errorf("user level %+v, want above the example level %g", s.User, s.Example.Upper)
	}
}

// TestComputeErrors: bad options name the parameter; a run pld cannot
// bound is an unsupported-event error.
func TestComputeErrors(t *testing.T) {
	ctx := context.Background()
	e := accounting.Gaussian{NoiseMultiplier: 1}
	for _, c := range []struct {
		name string
		run  Run
		opt  Options
		want string
	}{
		{"delta 0", Run{Training: e}, Options{}, "delta"},
		{"delta nan", Run{Training: e}, Options{Delta: math.NaN()}, "delta"},
		{"grid 1", Run{Training: e}, Options{Delta: 1e-5, GridPoints: 1}, "GridPoints"},
		{"refine -2", Run{Training: e}, Options{Delta: 1e-5, Refinements: -2}, "Refinements"},
		{"tail 1", Run{Training: e}, Options{Delta: 1e-5, TailDelta: 1}, "TailDelta"},
		{"no run", Run{}, Options{Delta: 1e-5}, "Training"},
		{"user without k", Run{Training: e, UserTraining: e}, Options{Delta: 1e-5}, "ExamplesPerUser"},
	} {
		_, err := Compute(ctx, c.run, c.opt)
		var pe *accounting.ParamError
		if !errors.As(err, &pe) || pe.Name != c.want {
			t.Errorf("%s: %v, want a ParamError naming %s", c.name, err, c.want)
		}
	}
	// No privacy: no finite ε, no μ.
	s, err := Compute(ctx, Run{Training: accounting.NonPrivate{}}, Options{Delta: 1e-5})
	if err != nil || !math.IsInf(s.Example.Upper, 1) || !math.IsInf(s.GDP.Mu, 1) {
		t.Errorf("non-private run: %+v, %v; want ε and μ +Inf", s, err)
	}
}

// TestMuCoversChord: the μ of an interval lies above the whole chord (in
// t = e^ε) of the upper bounds at its ends, not only at the ends: a
// profile linear in e^ε between them is possible (a mixture of two
// randomized responses), and the run's is below that chord. The chord
// between two points of a GDP profile needs a larger μ than the profile's
// own; its minimum over the interval is inside it.
func TestMuCoversChord(t *testing.T) {
	for _, c := range []struct{ a, b, ua, ub float64 }{
		{0, 1, GaussianDelta(1, 0), GaussianDelta(1, 1)},
		{0.5, 2.5, GaussianDelta(0.7, 0.5), GaussianDelta(0.7, 2.5)},
		{2, 6, GaussianDelta(1.5, 2), GaussianDelta(1.5, 6)},
		{0, 0.2, 0.3, 0.25},
		{1, 1.5, 1e-3, 1e-6},
	} {
		mu := muCovering(c.a, c.b, c.ua, c.ub)
		worst := math.Inf(1)
		for i := 0; i <= 2000; i++ {
			eps := c.a + (c.b-c.a)*float64(i)/2000
			lam := math.Expm1(eps-c.a) / math.Expm1(c.b-c.a)
			chord := c.ua + (c.ub-c.ua)*lam
			worst = math.Min(worst, GaussianDelta(mu, eps)-chord)
		}
		if worst < 0 {
			t.Errorf("[%g, %g]: δ_μ falls %g below the chord (μ %g)", c.a, c.b, -worst, mu)
		}
		// And μ is the smallest: a little less falls below somewhere.
		lower := mu * (1 - 1e-6)
		below := false
		for i := 0; i <= 2000 && !below; i++ {
			eps := c.a + (c.b-c.a)*float64(i)/2000
			lam := math.Expm1(eps-c.a) / math.Expm1(c.b-c.a)
			below = GaussianDelta(lower, eps) < c.ua+(c.ub-c.ua)*lam
		}
		if !below {
			t.Errorf("[%g, %g]: μ %g is not the smallest", c.a, c.b, mu)
		}
	}
}
