package onerun

import (
	"math"

	"github.com/dpcalc/dpcalc/internal/search"
)

// logPMF returns log P[Binomial(n, p) = k] for 0 ≤ k ≤ n, given lp = log p
// and lq = log(1 − p), and a bound on its rounding error: a few ulps of
// the largest magnitudes summed (log-gamma of n + 1 is about n log n, so
// for n = 10⁵ the pmf is good to about 1e-10 relative, not 1e-16).
func logPMF(n, k int, lp, lq float64) (v, err float64) {
	ln := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	a, b, c := ln(n), ln(k), ln(n-k)
	s := a - b - c
	mag := a + b + c
	if k > 0 {
		s += float64(k) * lp
		mag += math.Abs(float64(k) * lp)
	}
	if n-k > 0 {
		s += float64(n-k) * lq
		mag += math.Abs(float64(n-k) * lq)
	}
	return s, 8 * 0x1p-52 * (mag + 1)
}

// logOdds returns log p and log(1 − p) for p = e^ε/(1 + e^ε), without
// cancellation for large ε.
func logOdds(eps float64) (lp, lq float64) {
	lp = -math.Log1p(math.Exp(-eps))
	lq = -eps + lp
	return lp, lq
}

// upperTail returns β = P[Binomial(n, p) ≥ v] rounded up (up) or down,
// by a relative error of about the pmf's rounding (see logPMF), given lp =
// log p and lq = log(1 − p). Above the mean the terms from v upward are
// summed until the geometric bound on the rest (the ratio of successive
// terms only falls) is negligible, and rounding up adds that bound; at or
// below the mean it is 1 minus the lower tail summed downward from v − 1,
// rounded the other way.
func upperTail(n, v int, lp, lq float64, up bool) float64 {
	switch {
	case v <= 0:
		return 1
	case v > n:
		return 0
	}
	if float64(v) <= float64(n)*math.Exp(lp) {
		return 1 - lowerTail(n, v-1, lp, lq, !up)
	}
	odds := math.Exp(lp - lq) // p/(1 − p)
	// Terms t_k/t_v from k = v upward; the ratio (n−k)/(k+1)·odds is < 1
	// and falls as k grows, for k > np.
	sum, t := 1.0, 1.0
	for k := v; k < n; k++ {
		rho := float64(n-k) / float64(k+1) * odds
		t *= rho
		sum += t
		// Later ratios are at most rho, so the terms after this one sum to
		// at most t·rho/(1 − rho).
		if rest := t * rho / (1 - rho); rest < 1e-17*sum {
			if up {
				sum += rest
			}
			break
		}
	}
	return roundTail(n, v, lp, lq, sum, up)
}

// lowerTail returns P[Binomial(n, p) ≤ j] rounded up (up) or down, summed
// downward from j; called for j below the mean, where the terms fall as k
// decreases and their ratio k/(n−k+1)·(1−p)/p falls too, so the rest of a
// truncated sum is bounded geometrically (and added when rounding up).
func lowerTail(n, j int, lp, lq float64, up bool) float64 {
	if j < 0 {
		return 0
	}
	if j >= n {
		return 1
	}
	inv := math.Exp(lq - lp) // (1 − p)/p
	sum, t := 1.0, 1.0
	for k := j; k > 0; k-- {
		rho := float64(k) / float64(n-k+1) * inv // t_{k−1}/t_k
		t *= rho
		sum += t
		if rest := t * rho / (1 - rho); rho < 1 && rest < 1e-17*sum {
			if up {
				sum += rest
			}
			break
		}
	}
	return roundTail(n, j, lp, lq, sum, up)
}

// roundTail returns pmf(k)·sum, capped at 1, rounded up or down by the
// pmf's rounding bound and a few ulps of the product.
func roundTail(n, k int, lp, lq, sum float64, up bool) float64 {
	l, e := logPMF(n, k, lp, lq)
	if up {
		return math.Min(1, math.Exp(l+e+math.Log(sum))*(1+1e-15))
	}
	return math.Min(1, math.Exp(l-e+math.Log(sum))*(1-1e-15))
}

// alphaTerm returns α = max_{1≤i≤v} P[v−i ≤ Binomial(n, p) ≤ v−1]/i, the
// δ coefficient of the one-run p-value (arXiv 2305.08846v1, Corollary 5.4).
// The partial sums S_i are accumulated downward from k = v − 1 relative to
// the pmf at v − 1 (rescaled when they grow large), and the scan stops
// early once no later i can beat the maximum: below the mode the rest of
// the lower tail is bounded geometrically by R, and S_{i'}/i' ≤ (S_i +
// R)/(i+1) for every i' > i. O(v) time at most.
func alphaTerm(n, v int, lp, lq float64) float64 {
	if v <= 0 {
		return 0
	}
	inv := math.Exp(lq - lp) // (1 − p)/p
	logScale, e := logPMF(n, v-1, lp, lq)
	logScale += e      // α errs high, as β does
	t, sum := 1.0, 1.0 // t_1 = pmf(v−1)/scale, S_1
	best := 1.0        // S_1/1
	for i := 1; i < v; i++ {
		k := v - i // next term is pmf(k−1)
		rho := float64(k) / float64(n-k+1) * inv
		if rho < 1 {
			rest := t * rho / (1 - rho) // ≥ Σ_{j≥i+1} terms (ratios keep falling)
			if (sum+rest)/float64(i+1) <= best {
				break
			}
		}
		t *= rho
		sum += t
		if s := sum / float64(i+1); s > best {
			best = s
		}
		if sum > 1e250 { // rescale to stay finite
			t *= 1e-250
			sum *= 1e-250
			best *= 1e-250
			logScale += 250 * math.Ln10
		}
	}
	return math.Exp(logScale + math.Log(best))
}

// ClopperPearsonUpper returns the one-sided Clopper–Pearson upper
// confidence bound on a binomial proportion after k successes in n
// trials: the p with P[Binomial(n, p) ≤ k] = significance, or 1 for
// k = n (Clopper and Pearson 1934). It is found by bisection on p with
// the CDF rounded up, and the upper end of the final bracket is returned,
// so it errs high. It
// panics unless 0 ≤ k ≤ n and 0 < significance < 1.
func ClopperPearsonUpper(k, n int, significance float64) float64 {
	if k < 0 || k > n || !(significance > 0 && significance < 1) {
		panic("onerun: ClopperPearsonUpper: need 0 <= k <= n and significance in (0, 1)")
	}
	if k == n {
		return 1
	}
	cdf := func(p float64) float64 { // P[Binomial(n, p) ≤ k] rounded up; decreasing in p
		if p <= 0 {
			return 1
		}
		return 1 - upperTail(n, k+1, math.Log(p), math.Log1p(-p), false)
	}
	o, _ := search.Solve(search.Problem[float64]{
		Holds:   func(p float64) (bool, error) { return !(cdf(p) > significance), nil },
		Lo:      0, // cdf(0) = 1 > significance
		Hi:      1, // cdf(1) = 0 ≤ significance
		LoKnown: true,
		HiKnown: true,
		Done:    func(lo, hi float64) bool { return !(hi-lo > 1e-15*hi) },
	})
	return o.X
}
