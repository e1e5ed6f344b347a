package registry

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/zcdp"
	"github.com/dpcalc/dpcalc/internal/testenv"
	"github.com/dpcalc/dpcalc/internal/work"
)

// TestNewEventsRefused: until a method bounds them, Laplace (in ma),
// fixed-size and shuffled (under add-remove) steps are an
// *UnsupportedEventError naming the path, never a guess, and the method is
// unchanged.
func TestNewEventsRefused(t *testing.T) {
	g := accounting.Gaussian{NoiseMultiplier: 2}
	for _, e := range []struct {
		ev   accounting.Event
		path string
	}{
		{accounting.Laplace{NoiseMultiplier: 1}, "Laplace"},
		{accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.Laplace{NoiseMultiplier: 1}}, "PoissonSampled/Laplace"},
		{accounting.Shuffled{DatasetSize: 100, BatchSize: 10, Event: g}, "Shuffled/Gaussian"},
	} {
		for _, k := range Kinds() {
			if _, lap := laplaceKinds[k]; (lap || k == accounting.KindPLD || k == accounting.KindRDP) && e.path != "Shuffled/Gaussian" {
				continue // pld and rdp bound Laplace steps too (TestLaplaceReferences, TestLaplaceAlpha)
			}
			m, err := New(k, Options{})
			if err != nil {
				t.Fatal(err)
			}
			err = m.Compose(e.ev, 3)
			var ue *accounting.UnsupportedEventError
			if !errors.As(err, &ue) || ue.Path != e.path {
				t.Errorf("%s: Compose(%#v) = %v, want *UnsupportedEventError at %q", k, e.ev, err, e.path)
			}
			if eps, err := m.Epsilon(t.Context(), 1e-5); err != nil || eps != 0 {
				t.Errorf("%s: after a refused Compose ε = %v, %v; want 0 (unchanged)", k, eps, err)
			}
		}
	}
}

// TestReplaceOneShuffle: under replace-one every accountant bounds E
// shuffled epochs exactly as E unsampled releases (no amplification), and
// refuses Poisson sampling under it, and pld fixed-size sampling; the
// procedures are not made for replace-one. The relation is a constructor
// option: no method can change it later.
func TestReplaceOneShuffle(t *testing.T) {
	g := accounting.Gaussian{NoiseMultiplier: 2}
	shuffled := accounting.SelfComposed{Event: accounting.Shuffled{DatasetSize: 60000, BatchSize: 600, Event: g}, Count: 100}
	plain := accounting.SelfComposed{Event: g, Count: 100}
	for _, k := range Kinds() {
		ro, err := New(k, Options{Adjacency: accounting.ReplaceOne})
		if Procedural(k, Options{}) {
			if err == nil {
				t.Errorf("%s: New under replace-one succeeded", k)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		ar, err := New(k, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := ro.Compose(shuffled, 1); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if err := ar.Compose(plain, 1); err != nil {
			t.Fatal(err)
		}
		e1, err1 := ro.Epsilon(t.Context(), 1e-5)
		e2, err2 := ar.Epsilon(t.Context(), 1e-5)
		if err1 != nil || err2 != nil || e1 != e2 || !(e1 > 0) {
			t.Errorf("%s: shuffled under replace-one ε = %v (%v), unsampled ε = %v (%v); want equal", k, e1, err1, e2, err2)
		}
		var ue *accounting.UnsupportedEventError
		for _, bad := range []accounting.Event{
			accounting.PoissonSampled{SamplingRate: 0.01, Event: g},
			accounting.SampledWithoutReplacement{SourceDatasetSize: 100, SampleSize: 10, Event: g},
		} {
			if _, ok := bad.(accounting.SampledWithoutReplacement); ok {
				continue // ma, rdp (moments' TestFixedSizeRDP), ac and zcdp (TestFixedSizeAC), pld (TestWORAgainstMirror) bound it
			}
			if _, ok := bad.(accounting.PoissonSampled); ok && (k == accounting.KindPLD || k == accounting.KindRDP || k == accounting.KindZCDP || k == accounting.KindAC) {
				continue // pld (TestPoissonReplaceOneAgainstMpmath), rdp (TestReplaceRDPAboveExact), zcdp (TestZCDPPoissonReplaceOne), ac (TestACPoissonReplaceOne)
			}
			m, _ := New(k, Options{Adjacency: accounting.ReplaceOne})
			if err := m.Compose(bad, 1); !errors.As(err, &ue) {
				t.Errorf("%s: replace-one Compose(%#v) = %v, want *UnsupportedEventError", k, bad, err)
			}
		}
		if _, ok := ro.(interface {
			UseAdjacency(accounting.Adjacency) error
		}); ok {
			t.Errorf("%s: has a UseAdjacency method; the relation is a constructor option, fixed for the method's life", k)
		}
	}
}

// laplaceKinds bound Laplace steps, as pure (1/b, 0)-DP steps, and
// fixed-size sampling under replace-one.
var laplaceKinds = map[accounting.Kind]bool{accounting.KindAC: true, accounting.KindZCDP: true}

// TestLaplacePure: ac and zcdp bound k Laplace steps of scale b as k pure
// (1/b, 0)-DP steps: ε(0) is basic composition k/b exactly, ac's ε(δ) is
// never above it (up to its safe rounding), and zcdp's ρ is k/(2b²)
// (Bun–Steinke Prop. 1.4) with ε(δ) = EpsilonFromRho.
func TestLaplacePure(t *testing.T) {
	lap := accounting.SelfComposed{Event: accounting.Laplace{NoiseMultiplier: 2}, Count: 10}
	for k := range laplaceKinds {
		m, err := New(k, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Compose(lap, 1); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if e0, err := m.Epsilon(t.Context(), 0); err != nil || e0 != 5 {
			t.Errorf("%s: ε(0) = %v, %v; want 5 (basic composition 10 × 1/2)", k, e0, err)
		}
		eps, err := m.Epsilon(t.Context(), 1e-5)
		if err != nil || !(eps > 0) {
			t.Fatalf("%s: ε(1e-5) = %v, %v", k, eps, err)
		}
		want := 5 * (1 + 1e-14)
		if k == accounting.KindZCDP {
			want = zcdp.EpsilonFromRho(1.25, 0, 1e-5) * (1 + 1e-12)
		}
		if eps > want {
			t.Errorf("%s: ε(1e-5) = %v, want ≤ %v", k, eps, want)
		}
		if d, err := m.Delta(t.Context(), 1); err != nil || !(d > 0) {
			t.Errorf("%s: δ(1) = %v, %v; want > 0", k, d, err)
		}
	}
	z, _ := New(accounting.KindZCDP, Options{})
	if err := z.Compose(lap, 1); err != nil {
		t.Fatal(err)
	}
	if rho := z.(interface{ Rho() float64 }).Rho(); rho < 1.25 || rho > 1.25*(1+1e-15) {
		t.Errorf("zcdp ρ = %v, want 10·(1/2)²/2 = 1.25 rounded up", rho)
	}
}

// TestFixedSizeAC: fixed-size sampling of m of n under replace-one is
// bounded by ac exactly as Poisson sampling at γ = m/n under add-remove
// (Balle, Barthe and Gaboardi 2018, Theorem 10: both amplify (ε, δ) to
// (log(1 + γ(e^ε − 1)), γδ)), and by zcdp without amplification.
func TestFixedSizeAC(t *testing.T) {
	g := accounting.Gaussian{NoiseMultiplier: 2}
	// 1/8 is exact in float64, so the rates agree after rounding up.
	fixed := accounting.SelfComposed{Event: accounting.SampledWithoutReplacement{SourceDatasetSize: 800, SampleSize: 100, Event: g}, Count: 500}
	for _, c := range []struct {
		k    accounting.Kind
		same accounting.Event
	}{
		{accounting.KindAC, accounting.SelfComposed{Event: accounting.PoissonSampled{SamplingRate: math.Nextafter(0.125, 1), Event: g}, Count: 500}},
		{accounting.KindZCDP, accounting.SelfComposed{Event: g, Count: 500}},
	} {
		ro, err := New(c.k, Options{Adjacency: accounting.ReplaceOne})
		if err != nil {
			t.Fatal(err)
		}
		if err := ro.Compose(fixed, 1); err != nil {
			t.Fatalf("%s: %v", c.k, err)
		}
		ar, _ := New(c.k, Options{})
		if err := ar.Compose(c.same, 1); err != nil {
			t.Fatal(err)
		}
		e1, err1 := ro.Epsilon(t.Context(), 1e-5)
		e2, err2 := ar.Epsilon(t.Context(), 1e-5)
		if err1 != nil || err2 != nil || e1 != e2 || !(e1 > 0) {
			t.Errorf("%s: fixed-size ε = %v (%v), reference ε = %v (%v); want equal", c.k, e1, err1, e2, err2)
		}
	}
}

// TestNewEventsEdges: Laplace, fixed-size and shuffled steps from the
// smallest to the largest double σ, sizes from 1 to 2^53 and counts up to
// 1e12 either answer with a finite ε ≥ 0 or +Inf (no finite bound) or
// return an error; never NaN, a negative ε or a panic, and quickly: within
// newEventsWork units of work (internal/work) for the seven questions of a
// case, on any machine. The default run takes one case in 24: for every
// method and σ, 5 of the 120 size × count × adjacency × event cases,
// shifted from one σ and method to the next so that every value comes up;
// the long test step takes all of them (about 5 minutes of work).
func TestNewEventsEdges(t *testing.T) {
	sigmas := []float64{5e-324, 1e-300, 1e-150, 1e-3, 0.5, 4, 1e6, 1e150, 1e300, math.MaxFloat64}
	sizes := [][2]int{{1, 1}, {2, 1}, {60000, 600}, {1 << 40, 1}, {1 << 53, 1 << 52}}
	counts := []int{1, 1000, 1e12}
	var mu sync.Mutex
	var most int64
	mostAt := ""
	// One parallel subtest per σ: the whole table takes minutes of pld.
	t.Run("sigma", func(t *testing.T) {
		for is, s := range sigmas {
			t.Run(fmt.Sprint(s), func(t *testing.T) {
				t.Parallel()
				for ik, k := range Kinds() {
					if Procedural(k, Options{}) {
						continue
					}
					for in, nm := range sizes {
						for ic, c := range counts {
							for ia, adj := range []accounting.Adjacency{accounting.AddRemove, accounting.ReplaceOne} {
								for ie, e := range []accounting.Event{
									accounting.Laplace{NoiseMultiplier: s},
									accounting.PoissonSampled{SamplingRate: float64(nm[1]) / float64(nm[0]), Event: accounting.Laplace{NoiseMultiplier: s}},
									accounting.SampledWithoutReplacement{SourceDatasetSize: nm[0], SampleSize: nm[1], Event: accounting.Gaussian{NoiseMultiplier: s}},
									accounting.Shuffled{DatasetSize: nm[0], BatchSize: nm[1], Event: accounting.Gaussian{NoiseMultiplier: s}},
								} {
									// Default: 5 of the 120 cases of each method and σ,
									// shifted with both so that every size, count,
									// adjacency and event comes up.
									if j := ((in*3+ic)*2+ia)*4 + ie; !testenv.Long() && j%24 != (is*5+ik)%24 {
										continue
									}
									m, err := New(k, Options{Adjacency: adj})
									if err != nil {
										t.Fatal(err)
									}
									if m.Compose(e, c) != nil {
										continue
									}
									meter := work.NewMeter(newEventsWork)
									ctx := work.With(t.Context(), meter)
									for _, d := range []float64{5e-324, 1e-10, 0.5} {
										eps, err := m.Epsilon(ctx, d)
										if err == nil && (math.IsNaN(eps) || eps < 0) {
											t.Errorf("%s %v %#v ×%d: ε(%g) = %v", k, adj, e, c, d, eps)
										}
									}
									for _, x := range []float64{0, 1e-300, 1, 1e300} {
										dl, err := m.Delta(ctx, x)
										if err == nil && (math.IsNaN(dl) || dl < 0 || dl > 1) {
											t.Errorf("%s %v %#v ×%d: δ(%g) = %v", k, adj, e, c, x, dl)
										}
									}
									w := meter.Count()
									if w > newEventsWork {
										t.Errorf("%s %v %#v ×%d: more than %d units of work", k, adj, e, c, newEventsWork)
									}
									mu.Lock()
									if w > most {
										most, mostAt = w, fmt.Sprintf("%s %v %#v ×%d", k, adj, e, c)
									}
									mu.Unlock()
								}
							}
						}
					}
				}
			})
		}
	})
	t.Logf("the most work: %d units (limit %d) at %s", most, newEventsWork, mostAt)
}

// newEventsWork bounds the work of one case of TestNewEventsEdges: 4× the
// most of the whole table (73,691 units: pld, Laplace steps at σ ≥ 1e150,
// 1e12 times, under replace-one).
const newEventsWork = 300000
