#!/usr/bin/env python3
"""Exact references for calibrate/profile's trade-off bound.

Run from the repository root:  python3 testdata/profile/gen.py
Needs mpmath (Debian: python3-mpmath). Writes, next to this script:

gaussian_tradeoff.csv  sigma,steps,mu,fpr,fnr
    the exact trade-off function of T Gaussian mechanisms with noise
    multiplier sigma (L2 sensitivity 1, no sampling): fnr = G_mu(fpr) with
    mu = sqrt(T)/sigma.
gaussian_advantage.csv sigma,steps,mu,advantage
    max over tests of TPR - FPR for the same: delta(0) = 2 Phi(mu/2) - 1.
subsampled_tradeoff.csv sigma,q,fpr,fnr_min,fnr_hull
    one Poisson-subsampled Gaussian step (add/remove adjacency): fnr_min =
    min(f(fpr), f^-1(fpr)) with f the trade-off function of the remove
    pair, an upper bound on the symmetric trade-off function that any
    (eps, delta(eps)) family can certify; fnr_hull = its lower convex hull
    (what the family over all eps >= 0 gives), computed on a grid of
    points of both curves and interpolated linearly (chords lie above a
    convex function, so fnr_hull is at most a grid error above the hull).

Facts used (no code carried over):
- Dong, Roth and Su (2022), "Gaussian differential privacy" (JRSS-B;
  arXiv:1905.02383): the Gaussian mechanism with sensitivity/noise = mu has
  trade-off function G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu); composing
  mu_i-GDP mechanisms gives sqrt(sum mu_i^2)-GDP (Corollary 3.3).
- One Poisson-subsampled Gaussian step, remove pair: the non-member output
  is Q = N(0, s^2), the member output P = (1-q)N(0, s^2) + qN(1, s^2); the
  likelihood ratio is monotone in x, so the best test at false-positive
  rate a rejects x > s Phi^{-1}(1-a) and f(a) = (1-q)(1-a) + q G_{1/s}(a)
  (Neyman-Pearson). The add pair swaps P and Q, with trade-off f^-1. An
  (eps, delta)-DP guarantee bounds both, so the best trade-off bound that a
  family of them gives is the convex hull of min(f, f^-1) (Dong, Roth and
  Su's symmetrisation, and the primal-dual view of their Section 2).
- Balle and Wang (2018), Theorem 8: delta(eps) = Phi(mu/2 - eps/mu) -
  e^eps Phi(-mu/2 - eps/mu); at eps = 0 it is 2 Phi(mu/2) - 1.
Values are printed with 20 significant digits (mp.dps = 50).
"""
import os

from mpmath import mp, mpf, ncdf, sqrt, erfinv, findroot

mp.dps = 50


def phi_inv(p):
    return sqrt(2) * erfinv(2 * p - 1)


CASES = [  # sigma, steps
    ("0.5", 1),
    ("1", 1),
    ("2", 1),
    ("4", 16),   # mu = 1, by composition
    ("10", 100), # mu = 1
    ("3", 4),    # mu = 2/3
]
FPRS = ["1e-6", "1e-4", "0.001", "0.01", "0.0372", "0.05", "0.1", "0.2", "0.3", "0.5", "0.615", "0.7", "0.9", "0.99"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "gaussian_tradeoff.csv"), "w") as f:
        f.write("sigma,steps,mu,fpr,fnr\n")
        for s, t in CASES:
            mu = sqrt(t) / mpf(s)
            for a in FPRS:
                fnr = ncdf(phi_inv(1 - mpf(a)) - mu)
                f.write("%s,%d,%s,%s,%s\n" % (s, t, mp.nstr(mu, 20), a, mp.nstr(fnr, 20)))
    with open(os.path.join(here, "gaussian_advantage.csv"), "w") as f:
        f.write("sigma,steps,mu,advantage\n")
        for s, t in CASES:
            mu = sqrt(t) / mpf(s)
            f.write("%s,%d,%s,%s\n" % (s, t, mp.nstr(mu, 20), mp.nstr(2 * ncdf(mu / 2) - 1, 20)))


SUBSAMPLED = [("1", "0.1"), ("0.5", "0.2"), ("2", "0.5")]  # sigma, q
SUB_FPRS = ["1e-4", "0.001", "0.01", "0.05", "0.1", "0.2", "0.3", "0.5", "0.7", "0.9"]


def lower_hull(pts):
    """Lower convex hull of points sorted by x (Andrew's monotone chain)."""
    hull = []
    for p in pts:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) <= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    return hull


def subsampled():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "subsampled_tradeoff.csv"), "w") as out:
        out.write("sigma,q,fpr,fnr_min,fnr_hull\n")
        for s, q in SUBSAMPLED:
            s, q = mpf(s), mpf(q)
            mu = 1 / s

            def f(a):
                if a <= 0:
                    return mpf(1)
                if a >= 1:
                    return mpf(0)
                return (1 - q) * (1 - a) + q * ncdf(phi_inv(1 - a) - mu)

            def finv(b):
                # f is continuous and decreasing from 1 to 0 on [0, 1].
                lo, hi = mpf(0), mpf(1)
                for _ in range(120):
                    mid = (lo + hi) / 2
                    if f(mid) > b:
                        lo = mid
                    else:
                        hi = mid
                return hi

            ts = sorted(set([mpf(0), mpf(1)] + [mpf(10) ** (-k / mpf(50)) for k in range(1, 601)] +
                            [mpf(i) / 4000 for i in range(1, 4000)]))
            pts = sorted([(float(t), float(f(t))) for t in ts] + [(float(f(t)), float(t)) for t in ts])
            hull = lower_hull(pts)
            for a in SUB_FPRS:
                a = mpf(a)
                fmin = min(f(a), finv(a))
                x = float(a)
                for (x1, y1), (x2, y2) in zip(hull, hull[1:]):
                    if x1 <= x <= x2:
                        h = y1 + (y2 - y1) * (x - x1) / (x2 - x1) if x2 > x1 else min(y1, y2)
                        break
                out.write("%s,%s,%s,%s,%.17g\n" % (mp.nstr(s, 6), mp.nstr(q, 6), mp.nstr(a, 6), mp.nstr(fmin, 20), h))


if __name__ == "__main__":
    main()
    subsampled()
