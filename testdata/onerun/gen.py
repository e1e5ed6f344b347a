#!/usr/bin/env python3
"""Reference values for calibrate/onerun, computed independently in mpmath.

Definitions (Steinke, Nasr and Jagielski, arXiv 2305.08846v1, Corollary 5.4
and Appendix D; Mahloujifar, Melis and Chaudhuri, arXiv 2410.22235):

  p = e^eps / (1 + e^eps)
  beta  = P[Binomial(r, p) >= v]                       (exact sum, mpmath)
  alpha = max_{1<=i<=v} P[v-i <= Binomial(r, p) < v] / i
  pvalue(m, r, v, eps, delta) = min(1, beta + 2 m delta alpha)
  eps_lower = sup{eps : pvalue <= 1 - confidence}        (bisection, 1e-14)

  Clopper-Pearson upper(k, n, s) = the p with P[Binomial(n, p) <= k] = s
  (bisection on p with the exact binomial sum, its terms by the recurrence
  pmf(j+1) = pmf(j) (n-j)/(j+1) p/(1-p); 1 for k = n).

  f-DP (Gaussian curves): mu(eps, delta) solves
    delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
  (Balle and Wang 2018), G^{-1}(x) = Phi(Phi^{-1}(x) - mu); with s = 1 -
  confidence, r = s v / m, h = s (g - v) / m, for i = v-1 .. 0:
    h' = max(h, G^{-1}(r)); stop if h' == h; r = min(1, r + i/(g-i) (h'-h));
  rejected iff r + h > g / m.  eps_fdp = sup of rejected eps (bisection).

  Scores: n = 10,000 non-member scores at the normal quantiles
  Phi^{-1}((i + 1/2)/n) and n member scores shifted by mu; "member" for
  score >= t; thresholds on the upper concave hull of (FN(t), TN(t)),
  Bonferroni over their number; the one-run bound is the max over all hull
  thresholds (no pruning), computed with scipy's binomial in float64 and
  scipy.optimize.brentq (xtol 1e-10); the Clopper-Pearson bound likewise.

Run:  /usr/bin/python3 testdata/onerun/gen.py [pvalue epsilon cp scores]
(writes the CSVs beside it; about 15 minutes on a loaded 2-core machine).
Tools: Debian's python3 with mpmath and scipy; provenance.txt records the
versions of each run.
"""
import csv
import os
import sys
import warnings

import mpmath as mp
import numpy as np
import scipy
import scipy.optimize
import scipy.special
import scipy.stats

mp.mp.dps = 40
HERE = os.path.dirname(os.path.abspath(__file__))


def pmf(n, k, p):
    if k < 0 or k > n:
        return mp.mpf(0)
    return mp.binomial(n, k) * p**k * (1 - p) ** (n - k)


def pvalue(m, r, v, eps, delta):
    p = mp.e**eps / (1 + mp.e**eps)
    terms = [pmf(r, k, p) for k in range(0, r + 1)]
    beta = mp.fsum(terms[v:])
    if delta == 0:
        return min(beta, mp.mpf(1))
    alpha = mp.mpf(0)
    s = mp.mpf(0)
    for i in range(1, v + 1):
        s += terms[v - i]
        alpha = max(alpha, s / i)
    return min(mp.mpf(1), beta + 2 * m * delta * alpha)


def bisect_up(rejected, tol=mp.mpf("1e-14")):
    if not rejected(mp.mpf(0)):
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(1)
    while rejected(hi):
        lo, hi = hi, hi * 2
    while hi - lo > tol * hi:
        mid = (lo + hi) / 2
        if rejected(mid):
            lo = mid
        else:
            hi = mid
    return lo


def eps_lower(m, r, v, conf, delta):
    sig = 1 - mp.mpf(conf)
    return bisect_up(lambda e: pvalue(m, r, v, e, delta) <= sig)


def cp_upper(k, n, s):
    if k == n:
        return mp.mpf(1)
    s = mp.mpf(s)

    def cdf(p):  # P[Binomial(n, p) <= k], the pmf by its exact recurrence
        t = (1 - p) ** n
        total = t
        r = p / (1 - p)
        for j in range(k):
            t = t * (n - j) / (j + 1) * r
            total += t
        return total

    lo, hi = mp.mpf(0), mp.mpf(1)
    while hi - lo > mp.mpf("1e-30"):
        mid = (lo + hi) / 2
        if cdf(mid) > s:
            lo = mid
        else:
            hi = mid
    return hi


def gauss_mu(eps, delta):
    def d(mu):
        return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)

    lo, hi = mp.mpf("1e-6"), mp.mpf(1)
    while d(hi) < delta:
        lo, hi = hi, hi * 2
    while hi - lo > mp.mpf("1e-40") * hi:
        mid = (lo + hi) / 2
        if d(mid) < delta:
            lo = mid
        else:
            hi = mid
    return hi


def fdp_rejects(m, g, v, sig, eps, delta):
    if g == 0 or v == 0:
        return False
    mu = gauss_mu(eps, delta)

    def inv(x):
        if x >= 1:
            return mp.mpf(1)
        if x <= 0:
            return mp.mpf(0)
        return mp.ncdf(-mp.sqrt(2) * mp.erfinv(1 - 2 * x) - mu)

    r = sig * v / m
    h = sig * (g - v) / m
    for i in range(v - 1, -1, -1):
        hn = max(h, inv(r))
        if hn == h:
            break
        r = min(r + mp.mpf(i) / (g - i) * (hn - h), mp.mpf(1))
        h = hn
    return r + h > mp.mpf(g) / m


def eps_fdp(m, g, v, conf, delta):
    sig = 1 - mp.mpf(conf)
    return bisect_up(lambda e: fdp_rejects(m, g, v, sig, e, mp.mpf(delta)), tol=mp.mpf("1e-10"))


# ---- scores (float64, scipy) ----

def hull(ins, outs):
    scores = sorted(set(ins) | set(outs))
    ins_s, outs_s = np.sort(ins), np.sort(outs)
    pts = []
    for t in scores + [np.inf]:
        pts.append((int(np.searchsorted(ins_s, t, "left")), int(np.searchsorted(outs_s, t, "left")), t))
    h = []
    for p in pts:
        while len(h) >= 2:
            a, b = h[-2], h[-1]
            cross = (b[0] - a[0]) * (p[1] - b[1]) - (b[1] - a[1]) * (p[0] - b[0])
            if cross < 0:
                break
            h.pop()
        h.append(p)
    return h


def pvalue_f(m, r, v, eps, delta):
    # At the large eps of the bracket search the pmf underflows to 0 (scipy
    # warns of a division by zero); those terms are 0, as they should be.
    warnings.simplefilter("ignore", RuntimeWarning)
    q = scipy.special.expit(eps)
    beta = scipy.stats.binom.sf(v - 1, r, q)
    if delta == 0:
        return beta
    ks = np.arange(v - 1, -1, -1)
    s = np.cumsum(scipy.stats.binom.pmf(ks, r, q))
    alpha = np.max(s / np.arange(1, v + 1)) if v > 0 else 0
    return min(beta + 2 * m * delta * alpha, 1)


def eps_f(m, r, v, sig, delta):
    f = lambda e: sig - pvalue_f(m, r, v, e, delta)
    if f(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while f(hi) > 0:
        lo, hi = hi, hi * 2
    return scipy.optimize.brentq(f, lo, hi, xtol=1e-10)


def scores_case(n, mu, conf, delta):
    cdf = (np.arange(n) + 0.5) / n
    outs = scipy.stats.norm.ppf(cdf)
    ins = outs + mu
    h = hull(ins, outs)
    npos, nneg = n, n
    sigb = (1 - conf) / len(h)
    best = 0.0
    best_cp = 0.0
    for fn, tn, t in h:
        tp, fp = npos - fn, nneg - tn
        g = tp + fp
        if g > 0 and tp / g > 0.5:
            best = max(best, eps_f(2 * n, g, tp, sigb, delta))
        # Clopper-Pearson at sigb/2 each (scipy's beta quantile).
        fnr = 1.0 if fn == npos else scipy.stats.beta.ppf(1 - sigb / 2, fn + 1, npos - fn)
        fpr = 1.0 if fp == nneg else scipy.stats.beta.ppf(1 - sigb / 2, fp + 1, nneg - fp)
        tpr = 1 - fnr
        if tpr > delta:
            best_cp = max(best_cp, np.log(tpr - delta) - np.log(fpr))
    return len(h), best, best_cp


def main():
    # Sections to write (all by default): pvalue epsilon cp scores.
    sections = sys.argv[1:] or ["pvalue", "epsilon", "cp", "scores"]
    with open(os.path.join(HERE, "provenance.txt"), "a") as f:
        f.write("%s: generated by testdata/onerun/gen.py with python %s, mpmath %s, scipy %s, numpy %s\n"
                % (" ".join(sections), sys.version.split()[0], mp.__version__, scipy.__version__, np.__version__))
    if "pvalue" in sections:
        write_pvalues()
    if "epsilon" in sections:
        write_epsilons()
    if "cp" in sections:
        write_cp()
    if "scores" in sections:
        write_scores()


def write_pvalues():
    rows = []
    for m, r, v in [(10, 10, 10), (100, 10, 9), (100, 50, 40), (1000, 100, 100), (1000, 100, 75),
                    (1000, 500, 300), (1000, 1000, 520), (20000, 3000, 2500)]:
        for eps in ["0", "0.5", "1", "2", "4"]:
            for delta in ["0", "1e-6", "1e-3"]:
                pv = pvalue(m, r, v, mp.mpf(eps), mp.mpf(delta))
                rows.append([m, r, v, eps, delta, mp.nstr(pv, 20)])
    write("pvalue_ref.csv", ["m", "r", "v", "eps", "delta", "pvalue"], rows)


def write_epsilons():  # epsilon lower bounds (binomial and Gaussian f-DP)
    rows = []
    for m, r, v in [(1000, 100, 100), (1000, 100, 75), (1000, 100, 90), (1000, 500, 400), (100, 20, 20),
                    (10000, 2000, 1500), (1000, 10, 10), (100000, 1510, 1439)]:
        for conf in ["0.95", "0.99"]:
            for delta in ["0", "1e-5", "1e-3"]:
                e = eps_lower(m, r, v, conf, mp.mpf(delta))
                ef = "" if delta == "0" or r > 3000 else mp.nstr(eps_fdp(m, r, v, conf, delta), 12)
                rows.append([m, r, v, conf, delta, mp.nstr(e, 15), ef])
                print(m, r, v, conf, delta, mp.nstr(e, 10), ef, file=sys.stderr)
    write("epsilon_ref.csv", ["m", "r", "v", "confidence", "delta", "eps_onerun", "eps_fdp"], rows)


def write_cp():  # Clopper-Pearson upper bounds
    rows = []
    for k, n in [(0, 1), (0, 10), (3, 10), (9, 10), (10, 10), (0, 1000), (1, 1000), (500, 1000),
                 (999, 1000), (40, 10000), (9000, 10000)]:
        for s in ["0.025", "0.05", "1e-6"]:
            rows.append([k, n, s, mp.nstr(cp_upper(k, n, s), 20)])
    write("clopper_pearson_ref.csv", ["k", "n", "significance", "upper"], rows)


def write_scores():  # scores at the normal quantiles (float64)
    rows = []
    for mu in [1, 2, 4]:
        nh, e, ecp = scores_case(10000, mu, 0.95, 1e-6)
        rows.append([10000, mu, "0.95", "1e-6", nh, repr(e), repr(ecp)])
        print("scores", mu, nh, e, ecp, file=sys.stderr)
    write("scores_ref.csv", ["n", "mu", "confidence", "delta", "hull", "eps_onerun", "eps_cp"], rows)


def write(name, header, rows):
    with open(os.path.join(HERE, name), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


if __name__ == "__main__":
    main()
