#!/usr/bin/env python3
"""Exact references at extreme noise multipliers: one Gaussian mechanism (q = 1, T = 1)
with sigma from 1e-10 down to 1e-100, where eps(delta) is about 1/(2 sigma^2) (5e19 to
5e199) and the two terms of the privacy profile cancel in float64.

Run from the repository root:  python3 testdata/conformance/gen_tiny_sigma.py
Needs mpmath (Debian: python3-mpmath). Writes, next to this script:

q1_tiny_eps.csv    sigma,steps,delta,eps   exact eps(delta)
q1_tiny_delta.csv  sigma,steps,eps,delta   exact delta(eps), at the float64 values of
                                           1/(2 sigma^2) + k/sigma for k = 0, 1, 5 (delta about
                                           Phi(-k)) and at the float64 neighbours of k = 0's:
                                           below sigma ~ 1e-16 the float64 spacing there exceeds
                                           1/sigma, so delta jumps from about 1 to below 1e-300

Every input is evaluated at the float64 value its decimal text parses to (Go's
strconv.ParseFloat and Python's float() both round to nearest), not at the decimal:
eps is about 1/(2 sigma^2), so the 1e-16 relative gap between 1e-10 and its float64
would move the exact eps by 2e-16 relative, more than the accountants' rounding.
The eps arguments of the delta table are written in Python's shortest round-trip form.

Balle and Wang (2018), Theorem 8: the Gaussian mechanism with mu = 1/sigma is
(eps, delta)-DP iff delta >= Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).
Values have 30 significant digits (mpmath at 400 digits, bisection to 1e-80 relative,
returning the side where the profile is <= delta); the Go tests compare them with
float64 results exactly (math/big).
"""
import csv
import math
import os

from mpmath import mp, mpf, ncdf, exp

mp.dps = 400
HERE = os.path.dirname(os.path.abspath(__file__))

SIGMAS = ["1e-10", "1e-12", "1e-20", "1e-100"]
DELTAS = ["1e-300", "1e-10", "1e-5", "0.5"]
KS = [0, 1, 5]


def fmt(x):
    return mp.nstr(mpf(x), 30, min_fixed=0, max_fixed=0) if x != 0 else "0"


def exact(s):
    """The exact value of the float64 nearest to the decimal text s."""
    return mpf(float(s))


def gauss_delta(sigma, eps):
    mu = 1 / sigma
    return ncdf(mu / 2 - eps / mu) - exp(eps) * ncdf(-mu / 2 - eps / mu)


def bisect_eps(sigma, delta):
    """Smallest eps >= 0 with gauss_delta(sigma, eps) <= delta."""
    lo, hi = mpf(0), 1 / (2 * sigma ** 2)
    while gauss_delta(sigma, hi) > delta:
        lo, hi = hi, hi * 2
    for _ in range(2000):
        mid = (lo + hi) / 2
        if gauss_delta(sigma, mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= hi * mpf(10) ** (-80):
            break
    return hi


def main():
    with open(os.path.join(HERE, "q1_tiny_eps.csv"), "w", newline="") as fe, \
            open(os.path.join(HERE, "q1_tiny_delta.csv"), "w", newline="") as fd:
        we, wd = csv.writer(fe), csv.writer(fd)
        we.writerow(["sigma", "steps", "delta", "eps"])
        wd.writerow(["sigma", "steps", "eps", "delta"])
        for s in SIGMAS:
            sigma = exact(s)
            for d in DELTAS:
                we.writerow([s, 1, d, fmt(bisect_eps(sigma, exact(d)))])
            xs = [float(1 / (2 * sigma ** 2) + k / sigma) for k in KS]
            xs += [math.nextafter(xs[0], 0), math.nextafter(xs[0], math.inf)]
            for x in sorted(set(xs)):
                wd.writerow([s, 1, repr(x), fmt(gauss_delta(sigma, mpf(x)))])


if __name__ == "__main__":
    main()
