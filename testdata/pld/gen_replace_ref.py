#!/usr/bin/python3
"""Exact ε(δ) of T = 1 and T = 2 steps of the Poisson-subsampled Gaussian
under replace-one, for accounting/pld's TestPoissonReplaceOneAgainstMpmath.

The pair (Lebeda, Regehr, Kamath, Steinke 2025, Proposition 13), in units
of the replace-one sensitivity with noise multiplier s relative to it:
P = (1−q)N(0,s²) + qN(−1/2,s²) against Q = (1−q)N(0,s²) + qN(+1/2,s²).
Built here from the densities alone, independently of the Go code: the loss
L(x) = log p(x)/q(x) is inverted by mpmath's root finder, not by the
quadratic the Go code solves.

  T = 1: δ(e) = P(L > e) − e^e·Q(L > e), in closed form through Φ at x(e).
  T = 2: δ(e) = ∫ p(x)·δ₁(e − L(x)) dx (δ₁ of one step at any real loss,
         the same formula), by mpmath quadrature split at the components.

ε(δ) is the root of log δ(e) = log δ (Anderson's method, to 1e-10 and
better). 25 digits throughout.

Usage: /usr/bin/python3 gen_replace_ref.py > replace_ref.csv   (mpmath)
"""
import mpmath as mp

mp.mp.dps = 25
SETTINGS = [  # s (event noise multiplier), q, T, delta
    (1.0, 0.1, 1, 1e-5),
    (0.5, 0.05, 1, 1e-6),
    (2.0, 0.3, 1, 1e-3),
    (1.0, 0.1, 2, 1e-5),
    (0.7, 0.2, 2, 1e-4),
    (2.0, 0.01, 2, 1e-8),
]


def pair(s, q):
    s, q = mp.mpf(s), mp.mpf(q)
    mu = mp.mpf(1) / 2

    def p(x):
        return (1 - q) * mp.npdf(x, 0, s) + q * mp.npdf(x, -mu, s)

    def qd(x):
        return (1 - q) * mp.npdf(x, 0, s) + q * mp.npdf(x, mu, s)

    def loss(x):
        return mp.log(p(x)) - mp.log(qd(x))

    def xof(e):
        # loss decreases from +inf to -inf: bracket and bisect
        lo, hi = mp.mpf(-1), mp.mpf(1)
        while loss(lo) < e:
            lo *= 2
        while loss(hi) > e:
            hi *= 2
        return mp.findroot(lambda x: loss(x) - e, (lo, hi), solver='anderson', tol=mp.mpf(10) ** -22)

    def cdfs(x):  # P(X < x), Q(X < x)
        return ((1 - q) * mp.ncdf(x, 0, s) + q * mp.ncdf(x, -mu, s),
                (1 - q) * mp.ncdf(x, 0, s) + q * mp.ncdf(x, mu, s))

    def delta1(e):
        x = xof(e)
        pa, qa = cdfs(x)
        return max(pa - mp.exp(e) * qa, mp.mpf(0))

    return p, loss, delta1, mu, s


def delta_T(s, q, T, e):
    p, loss, delta1, mu, s = pair(s, q)
    if T == 1:
        return delta1(e)
    w = 40 * s + 1
    pts = [-w, -mu - 10 * s, -mu, 0, mu, mu + 10 * s, w]
    return mp.quad(lambda x: p(x) * delta1(e - loss(x)), pts)


def eps_of(s, q, T, delta):
    # bracket, then the secant method on log δ(e) (δ decreases in e)
    lo, hi = mp.mpf(0), mp.mpf(1)
    while delta_T(s, q, T, hi) > delta:
        lo, hi = hi, 2 * hi
    f = lambda e: mp.log(delta_T(s, q, T, e)) - mp.log(delta)
    return mp.findroot(f, (lo, hi), solver='anderson', tol=mp.mpf(10) ** -20)


print("sigma,q,steps,delta,epsilon")
for s, q, T, d in SETTINGS:
    print(f"{s},{q},{T},{d},{mp.nstr(eps_of(s, q, T, mp.mpf(d)), 15)}")
