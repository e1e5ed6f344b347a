#!/usr/bin/env python3
"""Log moments of the Laplace mechanism for accounting/moments'
TestLaplaceAlpha: α(λ) = max(log E_{P0}[(1−q+q r)^{λ+1}],
log E_{P0}[(1−q+q r)^{−λ}]) with P0 = Lap(0, b), r(x) = e^{(|x|−|x−1|)/b},
by mpmath quadrature at 40 digits (the two closed-form tails x ≤ 0, x ≥ 1
plus ∫_0^1 on a split interval), and for q = 1 Mironov's closed form
log((λ+1)/(2λ+1)·e^{λ/b} + λ/(2λ+1)·e^{−(λ+1)/b}) as a cross-check.

Usage: python3 gen_laplace.py > laplace_alpha.csv
"""
import mpmath as mp

mp.mp.dps = 40

CASES = [  # b, q, lambda
    (1.0, 1.0, 1.0), (1.0, 1.0, 32.0), (0.1, 1.0, 3.5), (10.0, 1.0, 200.0),
    (2.0, 0.01, 1.0), (2.0, 0.01, 26.7), (0.5, 0.05, 2.96), (0.5, 0.05, 40.0),
    (0.1, 0.3, 0.25), (5.0, 0.5, 1000.0), (1.0, 1e-4, 8.0), (0.3, 0.001, 3.0),
]


def log_moment(b, q, p):
    b, q, p = mp.mpf(b), mp.mpf(q), mp.mpf(p)
    g = lambda r: (1 - q + q * r) ** p
    lo = g(mp.exp(-1 / b)) / 2
    hi = mp.exp(-1 / b) / 2 * g(mp.exp(1 / b))
    f = lambda x: mp.exp(-x / b) / (2 * b) * g(mp.exp((2 * x - 1) / b))
    mid = mp.quad(f, mp.linspace(0, 1, 33))
    return mp.log(lo + hi + mid)


def alpha(b, q, l):
    return max(log_moment(b, q, l + 1), log_moment(b, q, -l))


print("b,q,lambda,alpha")
for b, q, l in CASES:
    a = alpha(b, q, l)
    if q == 1:
        L, B = mp.mpf(l), mp.mpf(b)
        closed = mp.log((L + 1) / (2 * L + 1) * mp.exp(L / B) + L / (2 * L + 1) * mp.exp(-(L + 1) / B))
        assert abs(a - closed) < mp.mpf(10) ** -25 * max(1, abs(a)), (b, l, a, closed)
    print(f"{b!r},{q!r},{l!r},{mp.nstr(a, 20)}")
