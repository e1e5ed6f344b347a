package onerun

import "math"

// logPMF returns log P[Binomial(n, p) = k] for 0 ≤ k ≤ n, given lp = log p
// and lq = log(1 − p).
func logPMF(n, k int, lp, lq float64) float64 {
	ln := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	s := ln(n) - ln(k) - ln(n-k)
	if k > 0 {
		s += float64(k) * lp
	}
	if n-k > 0 {
		s += float64(n-k) * lq
	}
	return s
}

// logOdds returns log p and log(1 − p) for p = e^ε/(1 + e^ε), without
// cancellation for large ε.
func logOdds(eps float64) (lp, lq float64) {
	lp = -math.Log1p(math.Exp(-eps))
	lq = -eps + lp
	return lp, lq
}

// upperTail returns an upper bound on β = P[Binomial(n, p) ≥ v] that
// exceeds it by at most a relative 1e-16 (p = e^ε/(1+e^ε), lp = log p, lq
// = log(1 − p)). Above the mean the terms from v upward are summed until
// the geometric bound on the rest (the ratio of successive terms only
// falls) is negligible, and that bound is added; at or below the mean it is
// 1 minus the lower tail summed downward from v − 1, whose truncation can
// only raise β.
func upperTail(n, v int, lp, lq float64) float64 {
	switch {
	case v <= 0:
		return 1
	case v > n:
		return 0
	}
	odds := math.Exp(lp - lq) // p/(1 − p)
	if float64(v) > float64(n)*math.Exp(lp) {
		// Terms t_k/t_v from k = v upward; ratio (n−k)/(k+1)·odds < 1 and
		// decreasing in k for k > np.
		sum, t := 1.0, 1.0
		for k := v; k < n; k++ {
			rho := float64(n-k) / float64(k+1) * odds
			t *= rho
			sum += t
			// Later ratios are at most rho, so the terms after this one sum
			// to at most t·rho/(1 − rho): once that is negligible, add it
			// and stop.
			if rest := t * rho / (1 - rho); rest < 1e-17*sum {
				sum += rest
				break
			}
		}
		return math.Min(1, math.Exp(logPMF(n, v, lp, lq)+math.Log(sum))*(1+1e-15))
	}
	return 1 - lowerTail(n, v-1, lp, lq)
}

// lowerTail returns P[Binomial(n, p) ≤ j] summed downward from j (called
// for j below the mean, where terms fall as k decreases); truncation only
// lowers it.
func lowerTail(n, j int, lp, lq float64) float64 {
	if j < 0 {
		return 0
	}
	if j >= n {
		return 1
	}
	inv := math.Exp(lq - lp) // (1 − p)/p
	sum, t := 1.0, 1.0
	for k := j; k > 0; k-- {
		t *= float64(k) / float64(n-k+1) * inv // t_{k−1}/t_j
		sum += t
		if t < 1e-18*sum || t == 0 {
			break
		}
	}
	return math.Min(1, math.Exp(logPMF(n, j, lp, lq)+math.Log(sum)))
}

// alphaTerm returns α = max_{1≤i≤v} P[v−i ≤ Binomial(n, p) ≤ v−1]/i, the
// δ coefficient of the one-run p-value (arXiv 2305.08846v1, Theorem 3.1).
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
	logScale := logPMF(n, v-1, lp, lq)
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
// k = n (Clopper and Pearson 1934). It is found by bisection on p and
// the upper end of the final bracket is returned, so it errs high. It
// panics unless 0 ≤ k ≤ n and 0 < significance < 1.
func ClopperPearsonUpper(k, n int, significance float64) float64 {
	if k < 0 || k > n || !(significance > 0 && significance < 1) {
		panic("onerun: ClopperPearsonUpper: need 0 <= k <= n and significance in (0, 1)")
	}
	if k == n {
		return 1
	}
	cdf := func(p float64) float64 { // P[Binomial(n, p) ≤ k], decreasing in p
		if p <= 0 {
			return 1
		}
		lp, lq := math.Log(p), math.Log1p(-p)
		if float64(k) < float64(n)*p {
			return lowerTail(n, k, lp, lq)
		}
		// At or above the mean: 1 − P[≥ k+1] (both sums stay accurate).
		return 1 - upperTail(n, k+1, lp, lq)
	}
	lo, hi := 0.0, 1.0 // cdf(lo) > significance ≥ cdf(hi)
	for hi-lo > 1e-15*hi {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if cdf(mid) > significance {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
