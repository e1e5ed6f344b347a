#!/usr/bin/env python3
"""Reference values for accounting/gaussian.go (analytic Gaussian mechanism).

delta(eps) = Phi(D/(2s) - eps*s/D) - e^eps * Phi(-D/(2s) - eps*s/D)
(Balle and Wang 2018, Theorem 8), evaluated with mpmath at 60 digits.
The value column is delta (or sigma); logvalue is its natural log.
sigma(eps, delta) is the root in s of delta(eps; s) = delta (mpmath bisection
on log s, 200 iterations).

Run:  python3 testdata/pld/gen_gaussian.py > testdata/pld/gaussian_ref.csv
"""
import mpmath as mp

mp.mp.dps = 60


def delta(s, D, eps):
    s, D, eps = mp.mpf(s), mp.mpf(D), mp.mpf(eps)
    return mp.ncdf(D / (2 * s) - eps * s / D) - mp.exp(eps) * mp.ncdf(-D / (2 * s) - eps * s / D)


def sigma(eps, dlt, D):
    lo, hi = mp.mpf('1e-6'), mp.mpf('1e9')
    target = mp.log(mp.mpf(dlt))
    for _ in range(200):
        mid = mp.sqrt(lo * hi)
        if mp.log(delta(mid, D, eps)) <= target:
            hi = mid
        else:
            lo = mid
    return hi


delta_cases = [
    # sigma, sensitivity, eps
    (1, 1, 0),
    (1, 1, 1),
    (0.5, 1, 1),
    (2, 1, 0.5),
    (10, 1, 0.01),
    (0.3, 1, 3),
    (1, 2, 1),
    (1, 1, 50),
    (0.1, 1, 50),
    (0.05, 1, 10),
    (5, 1, 20),
    (2.7, 1, 50),
    (0.01, 1, 200),
    (100, 1, 1e-3),
    (1e4, 1, 1e-6),
    (0.02, 1, 1000),
    (0.75, 1, 50),
    (36.9, 1, 1),
    (1e3, 1, 0.5),
]
print("kind,a,b,c,value,logvalue")
for s, D, e in delta_cases:
    v = delta(s, D, e)
    print("delta,%r,%r,%r,%s,%s" % (s, D, e, mp.nstr(v, 30), mp.nstr(mp.log(v), 30)))

sigma_cases = [
    # eps, delta, sensitivity
    (1, 1e-5, 1),
    (0.1, 1e-5, 1),
    (0.5, 1e-6, 2),
    (3, 1e-10, 1),
    (50, 1e-300, 1),
    (1, 1e-300, 1),
    (10, 1e-3, 1),
    (0.01, 0.5, 1),
    (8, 1e-100, 0.5),
]
for e, d, D in sigma_cases:
    v = sigma(e, d, D)
    print("sigma,%r,%r,%r,%s,%s" % (e, d, D, mp.nstr(v, 30), mp.nstr(mp.log(v), 30)))
