package onerun

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

var errDeltaFDP = errors.New("onerun: the f-DP bound needs delta in (0, 1): no Gaussian curve is (ε, 0)-DP")

// Canary is one canary's audit score (higher: more likely a member) and
// whether it was included in training.
type Canary struct {
	Score  float64 `json:"score"`
	Member bool    `json:"member"`
}

// Options configure [Audit].
type Options struct {
	// Confidence of the bounds, in (0, 1); 0 means 0.95.
	Confidence float64
	// Delta at which ε is bounded, in [0, 1). The f-DP bound needs δ > 0
	// and is omitted at δ = 0.
	Delta float64
	// Guesses, if > 0, guesses "member" for the Guesses highest scores (and
	// every canary tied with the lowest of them). If 0, every threshold on
	// the upper concave hull of the ROC curve is tried and the confidence
	// is Bonferroni-corrected for their number.
	Guesses int
}

// Bound is one lower bound on ε and the guesses that gave it: "member"
// for every canary with score ≥ Threshold. Threshold is nil when no
// threshold rejected any ε > 0 (Epsilon is then 0).
type Bound struct {
	Epsilon   float64  `json:"epsilon"`
	Threshold *float64 `json:"threshold"`
	Counts
}

// Result is what [Audit] found.
type Result struct {
	Canaries   int     `json:"canaries"`
	Members    int     `json:"members"`
	Confidence float64 `json:"confidence"`
	Delta      float64 `json:"delta"`
	// Thresholds is the number of thresholds tested (the Bonferroni
	// factor; 1 with Options.Guesses).
	Thresholds int `json:"thresholds"`
	// OneRun is the binomial bound of [EpsilonLower].
	OneRun Bound `json:"one_run"`
	// FDP is the Gaussian f-DP bound of [EpsilonLowerFDP]; nil at δ = 0.
	FDP *Bound `json:"fdp,omitempty"`
	// ClopperPearson is the classical many-run bound: not a proven bound
	// for one run (see the package doc). Its Counts are the guesses made
	// at its threshold.
	ClopperPearson Bound `json:"clopper_pearson"`
}

// point is one threshold's confusion counts: guess "member" for score ≥
// threshold.
type point struct {
	threshold float64 // +Inf: no guesses
	tp, fp    int
}

// Audit bounds ε from canary scores and inclusion bits: it chooses the
// guesses (see [Options]) and returns the one-run bound of
// [EpsilonLower], the f-DP bound of [EpsilonLowerFDP] and the classical
// Clopper–Pearson bound, each the largest over the thresholds tried at
// the corrected confidence. Scores must be finite.
//
// With every threshold tried (Guesses = 0), thresholds are visited in
// decreasing order of precision and one whose precision is at most
// e^ε/(1+e^ε) for the best ε so far is skipped: for the binomial bound
// such a threshold cannot do better; for the f-DP bound skipping can only
// make the bound smaller, never invalid. O(n log n + T·v) time for n
// canaries, T thresholds evaluated and v correct guesses.
func Audit(canaries []Canary, opt Options) (*Result, error) {
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	if err := checkLevel(opt.Confidence, opt.Delta); err != nil {
		return nil, err
	}
	if len(canaries) == 0 {
		return nil, errors.New("onerun: no canaries")
	}
	if opt.Guesses < 0 || opt.Guesses > len(canaries) {
		return nil, fmt.Errorf("onerun: guesses = %d, want in [0, %d] (0: try every threshold)", opt.Guesses, len(canaries))
	}
	nPos := 0
	for i, c := range canaries {
		if math.IsNaN(c.Score) || math.IsInf(c.Score, 0) {
			return nil, fmt.Errorf("onerun: canary %d: score %g, want a finite number", i, c.Score)
		}
		if c.Member {
			nPos++
		}
	}
	m := len(canaries)
	nNeg := m - nPos
	res := &Result{Canaries: m, Members: nPos, Confidence: opt.Confidence, Delta: opt.Delta}
	sig := 1 - opt.Confidence

	var pts []point
	if opt.Guesses > 0 {
		pts = []point{explicitPoint(canaries, opt.Guesses)}
	} else {
		pts = hull(canaries)
	}
	res.Thresholds = len(pts)
	sigB := sig / float64(len(pts))

	// Visit in decreasing precision (ties: in hull order).
	order := make([]int, len(pts))
	for i := range order {
		order[i] = i
	}
	prec := func(p point) float64 {
		if p.tp+p.fp == 0 {
			return 0
		}
		return float64(p.tp) / float64(p.tp+p.fp)
	}
	sort.SliceStable(order, func(a, b int) bool { return prec(pts[order[a]]) > prec(pts[order[b]]) })

	bound := func(p point, eps float64) Bound {
		t := p.threshold
		return Bound{Epsilon: eps, Threshold: &t, Counts: Counts{Canaries: m, Guesses: p.tp + p.fp, Correct: p.tp}}
	}
	search := func(eval func(c Counts, lo float64) float64) Bound {
		best := Bound{}
		bestQ := 0.5
		for _, i := range order {
			p := pts[i]
			g := p.tp + p.fp
			if g == 0 || prec(p) <= bestQ {
				continue
			}
			c := Counts{Canaries: m, Guesses: g, Correct: p.tp}
			if eps := eval(c, best.Epsilon); eps > best.Epsilon {
				best = bound(p, eps)
				bestQ = 1 / (1 + math.Exp(-eps))
			}
		}
		best.Canaries = m
		return best
	}
	res.OneRun = search(func(c Counts, lo float64) float64 { return epsilonLower(c, sigB, opt.Delta, lo) })
	if opt.Delta > 0 {
		b := search(func(c Counts, lo float64) float64 { return epsilonLowerFDP(c, sigB, opt.Delta, lo) })
		res.FDP = &b
	}
	res.ClopperPearson = clopperPearson(pts, nPos, nNeg, sigB, opt.Delta)
	res.ClopperPearson.Canaries = m
	return res, nil
}

// clopperPearson is the classical audit's bound at each point: TPR ≥ 1 −
// CP(fn, nPos), FPR ≤ CP(fp, nNeg), each at significance sig/2, and ε ≥
// log(TPR − δ) − log FPR, the largest over the points (0 if none is
// positive or a class is empty).
func clopperPearson(pts []point, nPos, nNeg int, sig, delta float64) Bound {
	best := Bound{}
	if nPos == 0 || nNeg == 0 {
		return best
	}
	for _, p := range pts {
		tpr := 1 - ClopperPearsonUpper(nPos-p.tp, nPos, sig/2)
		if !(tpr > delta) {
			continue
		}
		fpr := ClopperPearsonUpper(p.fp, nNeg, sig/2)
		eps := math.Log(tpr-delta) - math.Log(fpr)
		if eps > best.Epsilon {
			t := p.threshold
			best = Bound{Epsilon: eps, Threshold: &t, Counts: Counts{Guesses: p.tp + p.fp, Correct: p.tp}}
		}
	}
	return best
}

// explicitPoint guesses "member" for every canary scoring at least the
// k-th highest score.
func explicitPoint(canaries []Canary, k int) point {
	s := make([]float64, len(canaries))
	for i, c := range canaries {
		s[i] = c.Score
	}
	slices.Sort(s)
	t := s[len(s)-k]
	p := point{threshold: t}
	for _, c := range canaries {
		if c.Score >= t {
			if c.Member {
				p.tp++
			} else {
				p.fp++
			}
		}
	}
	return p
}

// hull returns the thresholds on the upper concave hull of the points
// (FN(t), TN(t)) (FN, TN: members and non-members scoring below t) over t
// in the distinct scores and +Inf, with strict turns only (collinear and
// dominated points dropped): the thresholds no mixture of two others
// beats. Monotone chain, O(n log n).
func hull(canaries []Canary) []point {
	c := slices.Clone(canaries)
	slices.SortFunc(c, func(a, b Canary) int { return cmpFloat(a.Score, b.Score) })
	nPos, nNeg := 0, 0
	for _, x := range c {
		if x.Member {
			nPos++
		} else {
			nNeg++
		}
	}
	type pt struct {
		fn, tn int
		t      float64
	}
	var all []pt
	fn, tn := 0, 0
	for i := 0; i < len(c); {
		t := c[i].Score
		all = append(all, pt{fn, tn, t}) // counts strictly below t
		for ; i < len(c) && c[i].Score == t; i++ {
			if c[i].Member {
				fn++
			} else {
				tn++
			}
		}
	}
	all = append(all, pt{fn, tn, math.Inf(1)})
	var h []pt
	for _, p := range all {
		for len(h) >= 2 {
			a, b := h[len(h)-2], h[len(h)-1]
			cross := (b.fn-a.fn)*(p.tn-b.tn) - (b.tn-a.tn)*(p.fn-b.fn)
			if cross < 0 {
				break
			}
			h = h[:len(h)-1] // b is on or below the chord a–p
		}
		h = append(h, p)
	}
	out := make([]point, len(h))
	for i, p := range h {
		out[i] = point{threshold: p.t, tp: nPos - p.fn, fp: nNeg - p.tn}
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
