#!/usr/bin/env python3
"""Exact ε(δ) of one epoch of the shuffled lower-bound pair, for
accounting/pld's TestShuffledLowerAgainstMpmath.

One epoch of b batches, noise σ (relative to the replace-one sensitivity),
share r of the records in no batch: the maximum coordinate M has
F_Q(t) = Φ(t)^b and F_P(t) = ((1−r)Φ(t−μ) + rΦ(t))·Φ(t)^{b−1}, μ = 1/σ, and
privacy loss L(t) = log(r + (1−r)/b·(e^{μt−μ²/2} + (b−1)Φ(t−μ)/Φ(t))),
increasing in t. With t* solving L(t*) = ε,
  δ_PQ(ε) = (1 − F_P(t*)) − e^ε (1 − F_Q(t*)),
and with L(t') = −ε, δ_QP(ε) = F_Q(t') − e^ε F_P(t'). ε(δ) solves
max(δ_PQ, δ_QP)(ε) = δ. 50 significant digits; printed to 17.

Usage: python3 gen_shuffle_lower.py > shuffle_lower_ref.csv
"""
import mpmath as mp

mp.mp.dps = 50

CASES = [  # sigma, batches, unused, delta
    (2, 100, 0, 1e-5),
    (0.5, 100, 0, 1e-5),
    (1, 10, 0, 1e-6),
    (1, 28, mp.mpf("0.025748086290883786"), 1e-5),
    (0.8, 1000, 0, 1e-8),
    (3, 2, 0.1, 1e-3),
]


def Phi(x):
    return mp.ncdf(x)


def solve(sigma, b, r, delta):
    mu = 1 / mp.mpf(sigma)
    r = mp.mpf(r)

    def L(t):
        return mp.log(r + (1 - r) / b * (mp.exp(mu * t - mu**2 / 2) + (b - 1) * Phi(t - mu) / Phi(t)))

    def FQ(t):
        return Phi(t) ** b

    def FP(t):
        return ((1 - r) * Phi(t - mu) + r * Phi(t)) * Phi(t) ** (b - 1)

    def tof(l):
        lo, hi = mp.mpf(-60), mp.mpf(60) + mu
        for _ in range(400):
            m = (lo + hi) / 2
            if L(m) < l:
                lo = m
            else:
                hi = m
        return (lo + hi) / 2

    def d(eps):
        ts = tof(eps)
        fwd = (1 - FP(ts)) - mp.exp(eps) * (1 - FQ(ts))
        lo_l = L(mp.mpf(-60))
        rev = mp.mpf(0)
        if -eps > lo_l:
            tr = tof(-eps)
            rev = FQ(tr) - mp.exp(eps) * FP(tr)
        return max(fwd, rev)

    lo, hi = mp.mpf(0), mp.mpf(200)
    if d(lo) <= delta:
        return mp.mpf(0)
    for _ in range(120):
        m = (lo + hi) / 2
        if d(m) > delta:
            lo = m
        else:
            hi = m
    return (lo + hi) / 2


print("sigma,batches,unused,delta,eps")
for sigma, b, r, delta in CASES:
    e = solve(sigma, b, r, mp.mpf(delta))
    print(f"{sigma!r},{b},{mp.nstr(mp.mpf(r), 17)},{delta!r},{mp.nstr(e, 17)}")
