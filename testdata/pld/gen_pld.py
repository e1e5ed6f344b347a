#!/usr/bin/env python3
"""Reference values for accounting/pld/pld_test.go, computed with mpmath (60 digits).

Rows "gauss": eps(delta) of T-fold composition of the Gaussian mechanism with
noise multiplier sigma (sensitivity 1) = one Gaussian with sigma/sqrt(T);
delta(eps) = Phi(1/(2s) - eps*s) - e^eps Phi(-1/(2s) - eps*s)
(Balle and Wang 2018, Theorem 8).

Rows "step": eps(delta) of ONE step of the Poisson-subsampled Gaussian
(sampling rate q, noise multiplier sigma), add/remove adjacency, the larger of
the two directions (Zhu, Dong, Wang 2022, Prop. 30 dominating pairs):
  remove: P=(1-q)N(0,s^2)+qN(1,s^2), Q=N(0,s^2):
     x* = s^2 log((e^eps-1+q)/q) + 1/2,
     delta = q Phibar((x*-1)/s) - (e^eps-1+q) Phibar(x*/s)
  add: P=N(0,s^2), Q=(1-q)N(0,s^2)+qN(1,s^2), for e^eps (1-q) < 1:
     x* = s^2 log((1-e^eps(1-q))/(e^eps q)) + 1/2,
     delta = (1-e^eps(1-q)) Phi(x*/s) - e^eps q Phi((x*-1)/s), else 0.
eps(delta) is found by bisection (300 iterations) in mpmath.

Run:  python3 testdata/pld/gen_pld.py > testdata/pld/pld_ref.csv
"""
import mpmath as mp

mp.mp.dps = 60


def gauss_delta(s, eps):
    return mp.ncdf(1 / (2 * s) - eps * s) - mp.exp(eps) * mp.ncdf(-1 / (2 * s) - eps * s)


def remove_delta(s, q, eps):
    ee = mp.exp(eps)
    if ee <= 1 - q:
        return 1 - ee
    xs = s**2 * mp.log((ee - 1 + q) / q) + mp.mpf(1) / 2
    return q * mp.ncdf(-(xs - 1) / s) - (ee - 1 + q) * mp.ncdf(-xs / s)


def add_delta(s, q, eps):
    ee = mp.exp(eps)
    if ee * (1 - q) >= 1:
        return mp.mpf(0)
    xs = s**2 * mp.log((1 - ee * (1 - q)) / (ee * q)) + mp.mpf(1) / 2
    return (1 - ee * (1 - q)) * mp.ncdf(xs / s) - ee * q * mp.ncdf((xs - 1) / s)


def invert(f, delta):
    lo, hi = mp.mpf(0), mp.mpf(1)
    if f(lo) <= delta:
        return lo
    while f(hi) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(300):
        mid = (lo + hi) / 2
        if f(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


print("kind,sigma,q,steps,delta,epsilon")
for sigma, steps, delta in [
    (1, 1, 1e-5), (0.5, 1, 1e-6), (2, 100, 1e-5), (10, 10000, 1e-5),
    (5, 1000000, 1e-5), (0.3, 3, 1e-10), (50, 1, 1e-3), (1, 1, 1e-300),
]:
    s = mp.mpf(sigma) / mp.sqrt(steps)
    e = invert(lambda x: gauss_delta(s, x), mp.mpf(delta))
    print("gauss,%r,1,%d,%r,%s" % (sigma, steps, delta, mp.nstr(e, 25)))

for sigma, q, delta in [
    (1, 0.1, 1e-5), (2, 0.01, 1e-6), (0.5, 0.5, 1e-5), (4, 0.01, 1e-3),
    (0.8, 0.001, 1e-8), (1, 0.9, 1e-5),
]:
    s, qq, d = mp.mpf(sigma), mp.mpf(q), mp.mpf(delta)
    e = max(invert(lambda x: remove_delta(s, qq, x), d), invert(lambda x: add_delta(s, qq, x), d))
    print("step,%r,%r,1,%r,%s" % (sigma, q, delta, mp.nstr(e, 25)))
