#!/usr/bin/env python3
"""References for accounting/pld's Laplace pair.

One step, exact (mpmath, 50 digits): the Poisson-subsampled Laplace with
scale b and rate q under add/remove has the remove pair
P = (1−q)Lap(0,b) + qLap(1,b), Q = Lap(0,b), and the add pair, its reverse.
With r(x) = e^{(|x|−|x−1|)/b}, the remove loss L(x) = log(1−q + q r(x)) is
non-decreasing; δ(ε) = max over the two orders of P(L>ε) − e^ε Q(L>ε), and
ε(δ) solves δ(ε) = δ (0 when δ(0) ≤ δ).

Several steps: dp_accounting 0.6.0's PLD accountant (pessimistic, grid 1e-5)
when it can be imported from DPA (a directory holding the dp_accounting
package); rows without it are left empty.

Usage: python3 gen_laplace.py > laplace_ref.csv   (DPA=/path/to/python)
"""
import os
import sys

import mpmath as mp

mp.mp.dps = 50

ONE_STEP = [  # b, q, delta
    (1.0, 1.0, 1e-5), (2.0, 0.01, 1e-6), (0.5, 0.05, 1e-3), (0.1, 0.3, 1e-8), (5.0, 0.5, 1e-2),
]
MANY = [  # b, q, steps, delta
    (2.0, 0.01, 1000, 1e-5), (1.0, 1.0, 10, 1e-5), (0.5, 0.05, 200, 1e-6),
]


def lap_sf(x, mu, b):  # P(Lap(mu, b) > x)
    z = (x - mu) / b
    return mp.exp(-z) / 2 if z >= 0 else 1 - mp.exp(z) / 2


def one_step_eps(b, q, delta):
    b, q, delta = mp.mpf(b), mp.mpf(q), mp.mpf(delta)
    lmin = mp.log(1 - q + q * mp.exp(-1 / b))
    lmax = mp.log(1 - q + q * mp.exp(1 / b))

    def xof(l):  # L(x) = l on [0, 1]
        return (b * mp.log((mp.exp(l) - (1 - q)) / q) + 1) / 2

    def mix_sf(x):
        return (1 - q) * lap_sf(x, 0, b) + q * lap_sf(x, 1, b)

    def d_remove(eps):
        if eps >= lmax:
            return mp.mpf(0)
        if eps < lmin:
            return 1 - mp.exp(eps)
        x = xof(eps)
        return mix_sf(x) - mp.exp(eps) * lap_sf(x, 0, b)

    def d_add(eps):  # P = Lap(0,b), Q = mix; L_add = −L: {L_add > eps} = {L < −eps}
        lr = -eps
        if lr <= lmin:
            return mp.mpf(0)
        if lr > lmax:
            return 1 - mp.exp(eps)
        x = xof(lr)
        return (1 - lap_sf(x, 0, b)) - mp.exp(eps) * (1 - mix_sf(x))

    def d(eps):
        return max(d_remove(eps), d_add(eps))

    if d(mp.mpf(0)) <= delta:
        return mp.mpf(0)
    lo, hi = mp.mpf(0), max(lmax, -lmin)
    for _ in range(200):
        m = (lo + hi) / 2
        if d(m) > delta:
            lo = m
        else:
            hi = m
    return hi


print("kind,b,q,steps,delta,eps")
for b, q, delta in ONE_STEP:
    print(f"exact,{b!r},{q!r},1,{delta!r},{mp.nstr(one_step_eps(b, q, delta), 17)}")

dpa = os.environ.get("DPA")
if dpa:
    sys.path.insert(0, dpa)
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    for b, q, T, delta in MANY:
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-5)
        e = dp_event.LaplaceDpEvent(b)
        if q < 1:
            e = dp_event.PoissonSampledDpEvent(q, e)
        acc.compose(e, T)
        print(f"dp_accounting,{b!r},{q!r},{T},{delta!r},{acc.get_epsilon(delta)!r}")
