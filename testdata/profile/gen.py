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

Facts used (no code carried over):
- Dong, Roth and Su (2022), "Gaussian differential privacy" (JRSS-B;
  arXiv:1905.02383): the Gaussian mechanism with sensitivity/noise = mu has
  trade-off function G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu); composing
  mu_i-GDP mechanisms gives sqrt(sum mu_i^2)-GDP (Corollary 3.3).
- Balle and Wang (2018), Theorem 8: delta(eps) = Phi(mu/2 - eps/mu) -
  e^eps Phi(-mu/2 - eps/mu); at eps = 0 it is 2 Phi(mu/2) - 1.
Values are printed with 20 significant digits (mp.dps = 50).
"""
import os

from mpmath import mp, mpf, ncdf, sqrt, erfinv

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


if __name__ == "__main__":
    main()
