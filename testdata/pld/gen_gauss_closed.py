#!/usr/bin/env python3
"""Exact eps(delta) of T Gaussian mechanisms (q = 1), for accounting/pld tests.

T adaptive Gaussian mechanisms with noise multiplier sigma (sensitivity 1)
compose to one Gaussian with noise sigma/sqrt(T), whose privacy profile is
(Balle and Wang 2018, Theorem 8), with mu = sqrt(T)/sigma:

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).

eps(delta) is the root of delta(eps) = delta (0 when delta(0) <= delta),
found by bisection in mpmath at 200 significant digits (400 for the tiny
sigmas, where eps/mu - mu/2 cancels about 150 digits) until the bracket is
below 1e-40 relative; the value is printed to 25 digits.

Run:  python3 testdata/pld/gen_gauss_closed.py > testdata/pld/gauss_closed_ref.csv
"""
import mpmath as mp

mp.mp.dps = 200

SIGMAS = ["0.1", "0.3", "1", "3", "10", "30", "100", "300", "1000", "3000", "10000", "30000", "100000"]
STEPS = [1, 100, 10000]
# Tiny sigmas down to just above accounting.SigmaFloor (2^-498), T = 1.
TINY = ["1e-3", "1e-10", "1e-50", "1e-100", "1.3e-150"]
DELTAS = ["1e-5", "1e-10", "1e-20", "1e-50", "1e-100", "1e-300"]


def log_delta(mu, eps):
    d = mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)
    return mp.log(d)


def epsilon(mu, delta):
    ld = mp.log(delta)
    if log_delta(mu, mp.mpf(0)) <= ld:
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(1)
    while log_delta(mu, hi) > ld:
        lo, hi = hi, hi * 2
    while hi - lo > mp.mpf("1e-40") * hi:
        mid = (lo + hi) / 2
        if log_delta(mu, mid) > ld:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2




def row(s, t, d):
    e = epsilon(mp.sqrt(t) / mp.mpf(s), mp.mpf(d))
    print("%s,%d,%s,%s" % (s, t, d, mp.nstr(e, 25) if e != 0 else "0"))


print("sigma,steps,delta,epsilon")
for s in SIGMAS:
    for t in STEPS:
        for d in DELTAS:
            row(s, t, d)
mp.mp.dps = 400
for s in TINY:
    for d in DELTAS:
        row(s, 1, d)
