#!/usr/bin/env python3
"""Exact delta(eps) of the user-level mixture-of-Gaussians pair, in mpmath.

One step: P = N(0, s^2) (the user absent), Q = sum_c w_c N(c, s^2) with
w_c = Binomial(K, q) probabilities, c = 0..K. The privacy loss of the remove
pair (Q, P) is L(x) = log sum_c w_c exp((c x - c^2/2)/s^2), increasing in x,
so {L > e} = {x > x_e} and

  delta_remove(e) = sum_c w_c Phibar((x_e - c)/s) - e^e Phibar(x_e/s);

the add pair (P, Q) has loss -L, {-L > e} = {x < x_{-e}} and

  delta_add(e) = Phi(x_{-e}/s) - e^e sum_c w_c Phi((x_{-e} - c)/s)

(0 when -e <= log w_0 = inf L). delta(e) = max of the two.

Two steps (T = 2), each direction: the loss of the pair is L(x1) + L(x2), and

  delta(e) = int [ q(x1) Qbar(t(x1)) - e^e p(x1) Pbar(t(x1)) ] dx1,
  t(x1) = x_{e - L(x1)},

with Qbar, Pbar the tails of the second coordinate above t (below, for the
add direction), integrated with mpmath.quad over breakpoints.

Run: python3 mog_reference.py > mog_reference.txt (mpmath 1.3.0, 30 digits):
the one-step cases, in seconds. The two-step cases (CASES2) run only with
--two-steps: at 30 digits with a 200-halving inversion inside the quadrature
they had not finished after 40 minutes, and mog_reference.txt does not hold
them. Output lines: T q K sigma eps delta.
"""
import mpmath as mp

mp.mp.dps = 30


def weights(q, K):
    q = mp.mpf(q)
    return [(c, mp.binomial(K, c) * q**c * (1 - q)**(K - c)) for c in range(K + 1)]


def make(q, K, s):
    s = mp.mpf(s)
    w = weights(q, K)

    def L(x):
        return mp.log(mp.fsum(wc * mp.exp((c * x - mp.mpf(c) ** 2 / 2) / s**2) for c, wc in w))

    def xof(l):
        # L is increasing from log w_0 to +inf.
        lo, hi = mp.mpf(-1), mp.mpf(1)
        while L(lo) > l:
            lo *= 2
        while L(hi) < l:
            hi *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            if L(mid) > l:
                hi = mid
            else:
                lo = mid
        return (lo + hi) / 2

    def phi(x):
        return mp.ncdf(x)

    def qa(t):  # Q(X > t)
        return mp.fsum(wc * (1 - phi((t - c) / s)) for c, wc in w)

    def qb(t):  # Q(X <= t)
        return mp.fsum(wc * phi((t - c) / s) for c, wc in w)

    def pa(t):
        return 1 - phi(t / s)

    def pb(t):
        return phi(t / s)

    def dens_q(x):
        return mp.fsum(wc * mp.npdf(x, c, s) for c, wc in w)

    def dens_p(x):
        return mp.npdf(x, 0, s)

    lmin = mp.log(w[0][1]) if w[0][1] > 0 else -mp.inf
    return dict(L=L, xof=xof, qa=qa, qb=qb, pa=pa, pb=pb, dq=dens_q, dp=dens_p, lmin=lmin, s=s, K=K)


def delta1(m, e):
    e = mp.mpf(e)
    x = m['xof'](e)
    rem = m['qa'](x) - mp.exp(e) * m['pa'](x)
    add = mp.mpf(0)
    if -e > m['lmin']:
        x = m['xof'](-e)
        add = m['pb'](x) - mp.exp(e) * m['qb'](x)
    return max(rem, add, mp.mpf(0))


def delta2(m, e):
    e = mp.mpf(e)
    s, K = m['s'], m['K']
    L, xof = m['L'], m['xof']

    def rem_integrand(x1):
        r = e - L(x1)
        t = xof(r)
        v = m['dq'](x1) * m['qa'](t) - mp.exp(e) * m['dp'](x1) * m['pa'](t)
        return v

    def add_integrand(x1):
        # pair (P, Q) with loss -L: {-L(x1) - L(x2) > e} = {L(x2) < -e - L(x1)}
        r = -e - L(x1)
        if r <= m['lmin']:
            return mp.mpf(0)
        t = xof(r)
        return m['dp'](x1) * m['pb'](t) - mp.exp(e) * m['dq'](x1) * m['qb'](t)

    pts = [-12 * s, -6 * s, -3 * s, 0, K / 2, K, K + 3 * s, K + 6 * s, K + 12 * s]
    # The integrands are positive where the pair's loss exceeds e only in
    # part of the range; quad over the full line with breakpoints (the
    # positive part is taken pointwise by construction of t: the inner tail
    # is exactly the set where the total loss exceeds e, so each integrand
    # is >= 0).
    rem = mp.quad(rem_integrand, pts)
    add = mp.quad(add_integrand, pts)
    return max(rem, add, mp.mpf(0))


CASES1 = [
    # q, K, sigma, eps list
    (0.0064, 2, 1.0, [0.1, 0.5, 1.0]),
    (0.01, 3, 0.8, [0.2, 1.0, 2.0]),
    (0.1, 4, 2.0, [0.5, 1.0, 3.0]),
    (0.3, 2, 1.5, [0.25, 1.0]),
    (1.0, 3, 4.0, [0.1, 0.5]),
]
CASES2 = [
    (0.05, 2, 1.0, [0.3, 1.0]),
    (0.2, 3, 2.0, [0.5, 1.5]),
]

if __name__ == '__main__':
    print('# T q K sigma eps delta (mpmath %s, %d digits; see the docstring)' % (mp.__version__, mp.mp.dps))
    for q, K, s, es in CASES1:
        m = make(q, K, s)
        for e in es:
            print(1, q, K, s, e, mp.nstr(delta1(m, e), 20))
    import sys
    for q, K, s, es in (CASES2 if '--two-steps' in sys.argv else []):
        m = make(q, K, s)
        for e in es:
            print(2, q, K, s, e, mp.nstr(delta2(m, e), 20))
