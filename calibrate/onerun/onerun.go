package onerun

import (
	"fmt"
	"math"

	"github.com/dpcalc/dpcalc/internal/search"
)

// Counts is the outcome of the guessing game: Canaries (m) canaries each
// included with probability ½, Guesses (r) of them guessed, Correct (v) of
// the guesses right.
type Counts struct {
	Canaries int `json:"canaries"`
	Guesses  int `json:"guesses"`
	Correct  int `json:"correct"`
}

// Check reports counts that are not 0 ≤ Correct ≤ Guesses ≤ Canaries with
// Canaries ≥ 1, naming the field.
func (c Counts) Check() error {
	switch {
	case c.Canaries < 1:
		return fmt.Errorf("onerun: canaries = %d, want >= 1", c.Canaries)
	case c.Guesses < 0 || c.Guesses > c.Canaries:
		return fmt.Errorf("onerun: guesses = %d, want in [0, canaries = %d]", c.Guesses, c.Canaries)
	case c.Correct < 0 || c.Correct > c.Guesses:
		return fmt.Errorf("onerun: correct = %d, want in [0, guesses = %d]", c.Correct, c.Guesses)
	}
	return nil
}

func checkLevel(confidence, delta float64) error {
	if !(confidence > 0 && confidence < 1) {
		return fmt.Errorf("onerun: confidence = %g, want in (0, 1)", confidence)
	}
	if !(delta >= 0 && delta < 1) {
		return fmt.Errorf("onerun: delta = %g, want in [0, 1)", delta)
	}
	return nil
}

// PValue returns the p-value of c under the hypothesis that training is
// (eps, delta)-DP with respect to each canary: an upper bound on the
// probability of at least c.Correct correct guesses out of c.Guesses,
// min(1, β + 2mδ·α) (arXiv 2305.08846v1, Corollary 5.4; the computation
// of its Appendix D). It errs high (see the package doc). eps must be ≥ 0 and
// finite (+Inf gives 1), delta in [0, 1).
func PValue(c Counts, eps, delta float64) (float64, error) {
	if err := c.Check(); err != nil {
		return 0, err
	}
	if !(eps >= 0) {
		return 0, fmt.Errorf("onerun: eps = %g, want >= 0", eps)
	}
	if !(delta >= 0 && delta < 1) {
		return 0, fmt.Errorf("onerun: delta = %g, want in [0, 1)", delta)
	}
	return pValue(c, eps, delta), nil
}

func pValue(c Counts, eps, delta float64) float64 {
	if math.IsInf(eps, 1) {
		return 1
	}
	lp, lq := logOdds(eps)
	beta := upperTail(c.Guesses, c.Correct, lp, lq, true)
	if delta == 0 || beta >= 1 {
		return math.Min(beta, 1)
	}
	alpha := alphaTerm(c.Guesses, c.Correct, lp, lq)
	return math.Min(1, beta+2*float64(c.Canaries)*delta*alpha)
}

// EpsilonLower returns the one-run lower bound on ε at delta: the largest
// ε whose [PValue] for c is at most 1 − confidence (0 if even ε = 0 is
// not rejected). With probability at least confidence over the canaries'
// coin flips, a training algorithm that is (ε′, delta)-DP with respect to
// each canary has ε′ ≥ the returned value (arXiv 2305.08846v1, the main
// theorem of §3 and Corollary 5.4). The guesses must have been chosen without knowing which canaries
// were included.
//
// The root is bracketed by doubling from 1 and bisected to a relative
// 1e-12; the end returned is one where the p-value was evaluated and
// found ≤ 1 − confidence, so the bound errs low.
func EpsilonLower(c Counts, confidence, delta float64) (float64, error) {
	if err := c.Check(); err != nil {
		return 0, err
	}
	if err := checkLevel(confidence, delta); err != nil {
		return 0, err
	}
	return epsilonLower(c, 1-confidence, delta, 0), nil
}

// epsilonLower is EpsilonLower at significance sig, searching only above
// lo (the answer is lo when ε = lo is not rejected).
func epsilonLower(c Counts, sig, delta, lo float64) float64 {
	rejected := func(eps float64) bool { return pValue(c, eps, delta) <= sig }
	// Cheap first look: with δ = 0 the p-value is smaller, so if even that
	// does not reject lo, nothing above lo is rejected.
	if pValue(c, lo, 0) > sig || !rejected(lo) {
		return lo
	}
	return bracketUp(rejected, lo)
}

// bracketUp returns the largest x ≥ lo (within a relative 1e-12) with
// rejected(x), given rejected(lo): hi doubles from max(1, 2lo) until it is
// not rejected, then [lo, hi] is bisected keeping rejected(lo). It gives up
// at 2^60 and returns the last rejected point (a valid, if loose, bound).
func bracketUp(rejected func(float64) bool, lo float64) float64 {
	n := 0
	o, _ := search.Solve(search.Problem[float64]{
		Holds:   func(x float64) (bool, error) { return rejected(x), nil },
		Side:    search.Lower,
		Lo:      lo,
		Hi:      math.Max(1, 2*lo),
		LoKnown: true,
		Up: func(x float64) (float64, bool) {
			n++
			return 2 * x, n <= 61
		},
		Done: func(lo, hi float64) bool { return !(hi-lo > 1e-12*hi) },
	})
	return o.X // AtUpperBound past 2^60: the last rejected point
}
