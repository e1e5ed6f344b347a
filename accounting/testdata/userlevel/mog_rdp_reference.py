#!/usr/bin/env python3
"""Exact Renyi log moments of the user-level mixture-of-Gaussians pair, in mpmath.

One step: N = N(0, s^2) (the user absent), M = sum_c w_c N(c, s^2) with
w_c = Binomial(K, q) probabilities, c = 0..K. At moment order lam (Renyi
order a = lam + 1) the two directions' log moments are

  remove: K_rem(lam) = log E_N[(M/N)^a]
  add:    K_add(lam) = log E_M[(N/M)^a] = log E_N[(M/N)^(-lam)].

For integer a the remove direction has a closed form: with
z = exp(x/s^2), M/N = sum_c w_c exp(-c^2/(2 s^2)) z^c is a polynomial in z
with positive coefficients; its a-th power sum_t b_t z^t is exact, and
E_N[z^t] = exp(t^2/(2 s^2)), so

  E_N[(M/N)^a] = sum_t b_t exp(t^2/(2 s^2)).

Every other value (the add direction, fractional orders) is
mpmath.quad of phi_s(x) (M/N)(x)^b over the real line, split at 0 and at
b*c for every shift c (where the Gaussian factor meets a component's term),
and at 40 digits; for integer orders the remove direction's quadrature is
checked against the closed form (they agree to the printed digits), except
for CASES_LARGE (K = 100), where the closed form alone gives it.

Run: python3 mog_rdp_reference.py > mog_rdp_reference.txt (mpmath 1.3.0).
Output lines: q K sigma lam K_rem K_add.
"""
import mpmath as mp

mp.mp.dps = 40


def weights(q, K):
    q = mp.mpf(q)
    return [(c, mp.binomial(K, c) * q**c * (1 - q)**(K - c)) for c in range(K + 1)]


def closed_remove(q, K, s, a):
    s = mp.mpf(s)
    coef = [wc * mp.exp(-mp.mpf(c)**2 / (2 * s**2)) for c, wc in weights(q, K)]
    poly = [mp.mpf(1)]
    for _ in range(a):
        out = [mp.mpf(0)] * (len(poly) + len(coef) - 1)
        for i, x in enumerate(poly):
            if x == 0:
                continue
            for j, y in enumerate(coef):
                out[i + j] += x * y
        poly = out
    return mp.log(mp.fsum(b * mp.exp(mp.mpf(t)**2 / (2 * s**2)) for t, b in enumerate(poly)))


def quad_moment(q, K, s, b):
    s = mp.mpf(s)
    b = mp.mpf(b)
    w = weights(q, K)

    def f(x):
        ratio = mp.fsum(wc * mp.exp((c * x - mp.mpf(c)**2 / 2) / s**2) for c, wc in w)
        return mp.npdf(x, 0, s) * ratio**b

    # For b < 0 log f is concave (one peak): 0 alone splits the line.
    pts = sorted(set([mp.mpf(0)] + ([b * c for c, _ in w] if b > 0 else [])))
    return mp.log(mp.quad(f, [-mp.inf] + pts + [mp.inf]))


CASES = [
    # q, K, sigma, orders lam
    (0.0064, 2, 1.0, [0.5, 1, 2, 4.5, 8, 16, 32]),
    (0.01, 3, 0.8, [1, 2, 3.25, 8, 20]),
    (0.1, 4, 2.0, [0.25, 1, 4, 10]),
    (0.3, 2, 1.5, [1, 2.5, 6]),
    (0.05, 10, 3.0, [1, 3, 7.5, 12]),
    (1.0, 3, 4.0, [1, 2.5]),
]
# Many components, integer orders only: the remove direction by its
# closed form alone (its quadrature over 101 breakpoints at 40 digits is
# too slow to cross-check), the add direction by quadrature.
CASES_LARGE = [
    (0.05, 100, 2.0, [1, 4]),
]

if __name__ == '__main__':
    print('# q K sigma lam K_rem K_add (mpmath %s, %d digits; see the docstring)' % (mp.__version__, mp.mp.dps))
    for q, K, s, lams in CASES:
        for lam in lams:
            rem = quad_moment(q, K, s, lam + 1)
            if lam == int(lam):
                exact = closed_remove(q, K, s, int(lam) + 1)
                assert abs(exact - rem) <= mp.mpf(10)**-25 * (1 + abs(exact)), (q, K, s, lam, exact, rem)
                rem = exact
            add = quad_moment(q, K, s, -lam)
            print(q, K, s, lam, mp.nstr(rem, 20), mp.nstr(add, 20))
    for q, K, s, lams in CASES_LARGE:
        for lam in lams:
            rem = closed_remove(q, K, s, lam + 1)
            add = quad_moment(q, K, s, -lam)
            print(q, K, s, lam, mp.nstr(rem, 20), mp.nstr(add, 20))
