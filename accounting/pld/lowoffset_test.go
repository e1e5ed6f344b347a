package pld

import (
	"math"
	"sync/atomic"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/accounting/mechanism"
	"github.com/dpcalc/dpcalc/internal/testenv"
)

// countedPair counts its pair's evaluations in n, and those of all four
// tails in full (safe for the offsets' goroutines).
type countedPair struct {
	mechanism.Pair
	n, full *atomic.Int64
}

func (p countedPair) Tails(l float64) mechanism.Tails {
	p.n.Add(1)
	p.full.Add(1)
	return p.Pair.Tails(l)
}

// countedAbove is countedPair for a pair with mechanism.AboveTails,
// counting each TailsAbove as an evaluation too.
type countedAbove struct{ countedPair }

func (p countedAbove) TailsAbove(l float64) (pAbove, qAbove float64) {
	p.n.Add(1)
	return p.Pair.(mechanism.AboveTails).TailsAbove(l)
}

// counted wraps p in countedPair or countedAbove.
func counted(p mechanism.Pair, n, full *atomic.Int64) mechanism.Pair {
	if _, ok := p.(mechanism.AboveTails); ok {
		return countedAbove{countedPair{p, n, full}}
	}
	return countedPair{p, n, full}
}

// lowerCase is one grid of lowerBestOffset.
type lowerCase struct {
	name        string
	e           accounting.Event
	add, cut    bool
	h, eta      float64
	count, offs int
	want        uint64 // the pmf's hash (pmfHash), as before the pause
	skips       bool   // the retry wins against the first merge's bound
}

func (c lowerCase) pair(t *testing.T) mechanism.Pair {
	pl := pairsOf(t, c.e, accounting.AddRemove)
	p := pl.Remove
	if c.add {
		p = pl.Add
	}
	if c.cut {
		p = &cutPair{p}
	}
	return p
}

var lowerCases = []lowerCase{
	// The grids of `dpcalc sigma --eps 2.05838 --q 1e-4 --steps 100000
	// --delta 1e-5` (its first grid and the refined one, tails cut at δ)
	// and of the δ 1e-15 one (uncut, eight offsets): the retry wins.
	{"σ0.5 q1e-4 cut h1.585e-4", sampled(1e-4, gauss(0.50000020818605539)), false, true, 0.0001585259324495033, 2.842170943040401e-14, 100000, 2, 0x78b5c04bf793eeea, true},
	{"σ0.5 q1e-4 cut h1.121e-4", sampled(1e-4, gauss(0.50000020818605539)), false, true, 0.00011209476182896435, 2.842170943040401e-14, 100000, 2, 0xba60619cdb3e4830, true},
	{"σ0.5 q1e-4 h4.349e-4", sampled(1e-4, gauss(0.5)), false, false, 0.0004348583036633218, 9.999999999999999e-26, 100000, 8, 0x91463afb0a0e6953, true},
	{"σ1 q0.01 h0.01", sampled(0.01, gauss(1)), false, false, 0.01, 1e-14, 10000, 8, 0x8cd7ec2c0c2eaf87, true},
	// The add direction rounds little down: no retry.
	{"σ0.5 q1e-4 add h4.349e-4", sampled(1e-4, gauss(0.5)), true, false, 0.0004348583036633218, 9.999999999999999e-26, 100000, 8, 0x23dec4870b544bc4, false},
	// The retry rounds too much down: the first merge is finished and the
	// eight offsets are tried (two with the tails cut).
	{"σ2 q1e-4 h1e-4", sampled(1e-4, gauss(2)), false, false, 1e-4, 1e-14, 10000, 8, 0x41b3365c6954308e, false},
	{"σ1 q1e-4 cut h0.01", sampled(1e-4, gauss(1)), false, true, 0.01, 1e-14, 10000, 2, 0x28260dafc0e4859c, false},
	// Laplace: grids through its atoms, no pause.
	{"Laplace 2 q0.1 h1e-3", sampled(0.1, accounting.Laplace{NoiseMultiplier: 2}), false, false, 1e-3, 1e-14, 50, 8, 0x54d3313c3eeb313d, false},
}

// TestLowerBestOffsetPinned: lowerBestOffset's pmf is the one it was
// before the first merge could pause for the retry, bit for bit (hashes
// from before), on grids where the retry wins, loses to the offsets or is
// not tried; and where the retry wins, the first merge stops after its
// first cells: the Tails evaluations are the retry's (its grid and
// merge) and at most 64 more, where they were the first merge's as well
// (σ 0.5, q 1e-4, h 1.585e-4, tails cut: 81,698 evaluations, 130,585
// before), and all but 1% of them (the bulk's few points, 79) give the
// two tails above alone (mechanism.AboveTails), where all four were
// evaluated.
func TestLowerBestOffsetPinned(t *testing.T) {
	for _, c := range lowerCases {
		t.Run(c.name, func(t *testing.T) {
			var n, full atomic.Int64
			p := c.pair(t)
			if cp, ok := p.(*cutPair); ok {
				p = &cutPair{counted(cp.Pair, &n, &full)}
			} else if gridAtoms(p) == nil { // a wrapper would hide the atoms
				p = counted(p, &n, &full)
			}
			g, err := newGrid(t.Context(), p, c.h, c.eta)
			if err != nil {
				t.Fatal(err)
			}
			n.Store(0)
			full.Store(0)
			low, err := lowerBestOffset(t.Context(), g, c.count, c.eta, c.offs)
			if err != nil {
				t.Fatal(err)
			}
			if got := pmfHash(&low); got != c.want {
				t.Errorf("hash %#x, want %#x", got, c.want)
			}
			if !c.skips {
				return
			}
			evals, fullEvals := n.Load(), full.Load()
			n.Store(0)
			first, err := g.lower(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			firstEvals := n.Load()
			n.Store(0)
			l := first.fallbackAt - 1e-9*math.Max(g.h, math.Abs(first.fallbackAt))
			ga, err := newLowerGrid(t.Context(), g.pair, g.h, c.eta, l-math.Floor(l/g.h)*g.h)
			if err != nil {
				t.Fatal(err)
			}
			retry, err := ga.lower(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			retryEvals := n.Load()
			t.Logf("%d Tails evaluations; the first merge takes %d, the retry %d", evals, firstEvals, retryEvals)
			if pmfHash(&retry) != c.want {
				t.Errorf("the retry's pmf is not the one returned")
			}
			if evals > retryEvals+64 {
				t.Errorf("%d Tails evaluations, want at most the retry's %d + 64 (the first merge's: %d)", evals, retryEvals, firstEvals)
			}
			if fullEvals > evals/100 {
				t.Errorf("%d of %d evaluations of all four tails, want at most 1%% (the rest above alone)", fullEvals, evals)
			}
		})
	}
}

// TestLowerMeanBound: paused after any number of cells, the merge's
// meanBound is at least the mean loss of the pmf it finishes with
// (within the margin lowerBestOffset allows for rounding), on sampled
// Gaussians of both directions, cut and not, and a sampled Laplace (the
// long test step adds grids ten times as fine).
func TestLowerMeanBound(t *testing.T) {
	hs := []float64{1e-3, 1e-2}
	if testenv.Long() {
		hs = append(hs, 1e-4)
	}
	var events []accounting.Event
	for _, s := range []float64{0.5, 1, 3} {
		for _, q := range []float64{1e-4, 0.01, 0.3} {
			events = append(events, sampled(q, gauss(s)))
		}
	}
	events = append(events, sampled(0.1, accounting.Laplace{NoiseMultiplier: 2}), gauss(2))
	pauses := []int{1, 2, 3, 10, 100, 1000, 10000}
	for _, e := range events {
		for _, h := range hs {
			for _, add := range []bool{false, true} {
				for _, cut := range []bool{false, true} {
					c := lowerCase{e: e, add: add, cut: cut}
					g, err := newGrid(t.Context(), c.pair(t), h, 1e-14)
					if err != nil {
						t.Fatal(err)
					}
					m := g.newLowerMerge()
					cells := 0
					var bounds, scales []float64
					done, err := m.run(t.Context(), func() bool {
						cells++
						return len(bounds) < len(pauses) && cells == pauses[len(bounds)]
					})
					for err == nil && !done {
						b, s := m.meanBound()
						bounds, scales = append(bounds, b), append(scales, s)
						done, err = m.run(t.Context(), func() bool {
							cells++
							return len(bounds) < len(pauses) && cells == pauses[len(bounds)]
						})
					}
					if err != nil {
						t.Fatal(err)
					}
					var mean float64
					for i, v := range m.low.p {
						mean += v * (float64(m.low.lo+i)*g.h + m.low.off)
					}
					for i, b := range bounds {
						if !(mean <= b+1e-8*scales[i]) {
							t.Errorf("%v h %g add %v cut %v: after %d cells the bound %g is below the mean %g", e, h, add, cut, pauses[i], b, mean)
						}
					}
				}
			}
		}
	}
}
