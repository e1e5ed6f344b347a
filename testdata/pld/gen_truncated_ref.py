#!/usr/bin/python3
"""Exact ε(δ) of one step of the truncated-Poisson Gaussian's dominating
pair (Ganesh 2025 as dp_accounting composes it), for accounting/pld's
TestTruncatedPoissonAgainstMpmath, built here from densities alone.

With K ~ Binom(N − 1, q) the other records drawn, p = P(K ≥ B) and
q' = B·P(Binom(N, q) > B)/(N·p), the pair is the mixture (whether K ≥ B
revealed) of
  - below the cap, the Poisson pair at q: add-remove, remove
    (1−q)N(0,σ²) + qN(1,σ²) against N(0,σ²) and add its reverse;
    replace-one, (1−q)N(0,σ²) + qN(−½,σ²) against (1−q)N(0,σ²) + qN(½,σ²);
  - at the cap, (1−q')N(0,s²) + q'N(−½,s²) against (1−q')N(0,s²) +
    q'N(½,s²), s = σ/4 under add-remove, σ/2 under replace-one.
δ(e) of a mixture is the mixture of δ(e)'s, each ∫ (p − e^e·q)₊ by mpmath
quadrature split where p = e^e·q (roots by bisection on a grid). Under
add-remove the larger of the two directions' ε is the step's. 30 digits.

Usage: /usr/bin/python3 gen_truncated_ref.py > truncated_ref.csv   (mpmath)
"""
import mpmath as mp

mp.mp.dps = 30
SETTINGS = [  # adjacency, N, q, B, sigma, delta
    ("add-remove", 4, 0.5, 2, 1.0, 1e-6),
    ("add-remove", 100, 0.1, 12, 2.0, 1e-5),
    ("replace-one", 4, 0.5, 2, 0.5, 1e-6),
    ("replace-one", 100, 0.1, 12, 1.0, 1e-5),
]


def binom_sf(n, q, k):  # P(X >= k)
    q = mp.mpf(q)
    return mp.fsum(mp.binomial(n, j) * q**j * (1 - q)**(n - j) for j in range(k, n + 1))


def hockey(pd, qd, e, lo, hi):
    f = lambda x: pd(x) - mp.exp(e) * qd(x)
    xs = mp.linspace(lo, hi, 801)
    pts = [lo]
    for a, b in zip(xs[:-1], xs[1:]):
        if f(a) * f(b) < 0:
            for _ in range(100):
                m = (a + b) / 2
                if f(a) * f(m) <= 0:
                    b = m
                else:
                    a = m
            pts.append((a + b) / 2)
    pts.append(hi)
    return mp.quad(lambda x: max(f(x), 0), pts)


def mix(w, c, s):
    return lambda x: (1 - w) * mp.npdf(x, 0, s) + w * mp.npdf(x, c, s)


def delta_of(adj, N, q, B, sigma, e, direction):
    p = binom_sf(N - 1, q, B)
    qc = B * binom_sf(N, q, B + 1) / (N * p)
    q, sigma = mp.mpf(q), mp.mpf(sigma)
    s2 = sigma / 4 if adj == "add-remove" else sigma / 2
    w = 60 * sigma + 2
    d2 = hockey(mix(qc, -mp.mpf(1) / 2, s2), mix(qc, mp.mpf(1) / 2, s2), e, -w, w)
    if adj == "add-remove":
        P, Q = mix(q, 1, sigma), (lambda x: mp.npdf(x, 0, sigma))
        if direction == "add":
            P, Q = Q, P
    else:
        P, Q = mix(q, -mp.mpf(1) / 2, sigma), mix(q, mp.mpf(1) / 2, sigma)
    d1 = hockey(P, Q, e, -w, w)
    return (1 - p) * d1 + p * d2


def eps_of(adj, N, q, B, sigma, delta):
    best = mp.mpf(0)
    for direction in (["remove", "add"] if adj == "add-remove" else ["remove"]):
        lo, hi = mp.mpf(0), mp.mpf(1)
        while delta_of(adj, N, q, B, sigma, hi, direction) > delta:
            lo, hi = hi, 2 * hi
        if delta_of(adj, N, q, B, sigma, lo, direction) <= delta:
            continue
        for _ in range(45):
            m = (lo + hi) / 2
            if delta_of(adj, N, q, B, sigma, m, direction) > delta:
                lo = m
            else:
                hi = m
        best = max(best, hi)
    return best


print("adjacency,n,q,max_batch,sigma,delta,epsilon")
for adj, N, q, B, sigma, d in SETTINGS:
    print(f"{adj},{N},{q},{B},{sigma},{d},{mp.nstr(eps_of(adj, N, q, B, sigma, mp.mpf(d)), 13)}")
