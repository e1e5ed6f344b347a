#!/usr/bin/env python3
"""Reference log moments of the sampled Gaussian mechanism (Abadi et al. 2016,
§3.2, eqs. 3-4) at high precision, for accounting/moments_test.go.

    mu0 = N(0, s^2), mu1 = N(1, s^2), mu = (1-q) mu0 + q mu1
    E1 = E_{z~mu0}[(mu0/mu)^lam] = int mu0^(lam+1) mu^(-lam)
    E2 = E_{z~mu}[(mu/mu0)^lam]  = int mu^(lam+1) mu0^(-lam)
    alpha = log max(E1, E2)

The integrals are taken straight from these definitions (not the E-1 form
the Go code uses) with mpmath.quad at 60 significant digits, split at
breakpoints every sigma/2 over the region that holds the mass (Gauss-Legendre), with the
quadrature error estimate checked. For integer lam the script also checks E2
against the binomial sum with Renyi order lam+1 and stops if they differ.

Run: python3 testdata/moments/gen_reference.py > testdata/moments/reference.csv
(mpmath 1.3.0, about a minute.)
With the argument "fractional" it prints the orders below 1 (Renyi orders
in (1, 2)) instead:
python3 testdata/moments/gen_reference.py fractional > testdata/moments/reference_fractional.csv
"""
import sys
import mpmath as mp

mp.mp.dps = 60

CASES = [
    # (sigma, q, lambda)
    (4, 0.01, 1.5), (4, 0.01, 2.75), (4, 0.01, 7.3), (4, 0.01, 12.5), (4, 0.01, 32), (4, 0.01, 33.3),
    (4, 0.01, 100.5), (4, 0.01, 256), (4, 0.01, 19), (4, 0.01, 9.5),
    (1, 0.01, 1.25), (1, 0.01, 3.5), (1, 0.01, 10.5), (1, 0.01, 40.25), (1, 0.01, 64),
    (0.7, 0.1, 1.75), (0.7, 0.1, 5.5), (0.7, 0.1, 20.5), (0.5, 0.5, 2.5), (0.5, 0.5, 30.5), (0.5, 0.5, 8),
    (20, 0.001, 1.1), (20, 0.001, 64.5), (20, 0.001, 200.25), (20, 0.3, 15.5), (20, 0.3, 150.5),
    (50, 1e-5, 1), (50, 1e-5, 2.5), (50, 1e-5, 127.5), (50, 0.5, 6.5), (50, 0.5, 250.5),
    (2, 0.05, 4.25), (2, 0.05, 17.75), (8, 0.002, 50.5), (8, 0.2, 3.3), (1.5, 1e-4, 11.5),
]

# Moment orders below 1 (Renyi orders 1.01 .. 1.95; Mironov, Talwar, Zhang
# 2019 use fractional Renyi orders of the sampled Gaussian mechanism).
CASES_FRACTIONAL = [
    (0.3, 0.01, 0.01), (0.3, 0.01, 0.1), (0.3, 0.01, 0.35), (0.3, 0.01, 0.8),
    (0.5, 0.5, 0.05), (0.5, 0.5, 0.5), (0.5, 0.5, 0.95),
    (1, 0.01, 0.1), (1, 0.01, 0.25), (1, 0.01, 0.6), (1, 0.01, 0.9),
    (4, 0.01, 0.02), (4, 0.01, 0.5), (4, 0.01, 0.99),
    (0.7, 0.1, 0.15), (0.7, 0.1, 0.45), (0.7, 0.1, 0.75),
    (20, 0.3, 0.3), (50, 1e-5, 0.5), (2, 0.05, 0.125), (1.5, 1e-4, 0.7), (0.2, 0.9, 0.4),
]


def moments(s, q, lam):
    s, q, lam = mp.mpf(s), mp.mpf(q), mp.mpf(lam)
    c = 1 / (s * mp.sqrt(2 * mp.pi))

    def mu0(z):
        return c * mp.exp(-z * z / (2 * s * s))

    def mu(z):
        # mu/mu0 = 1 - q + q exp((2z-1)/(2 s^2))
        return mu0(z) * (1 - q + q * mp.exp((2 * z - 1) / (2 * s * s)))

    def e1(z):
        L = 1 - q + q * mp.exp((2 * z - 1) / (2 * s * s))
        return mu0(z) * L ** (-lam)

    def e2(z):
        L = 1 - q + q * mp.exp((2 * z - 1) / (2 * s * s))
        return mu0(z) * L ** (lam + 1)

    out = []
    for f, lo, hi in ((e1, -lam - 14 * s, 1 + 14 * s), (e2, -14 * s, lam + 1 + 14 * s)):
        # Keep the part of [lo, hi] where f is within e^-200 of its largest
        # value on a fine scan (the rest is below 1e-80 relative), then
        # integrate it in pieces of width sigma/2 with Gauss-Legendre; the
        # tails beyond are integrated as two infinite pieces.
        n = int(mp.ceil((hi - lo) / (s / 4)))
        zs = [lo + (hi - lo) * k / n for k in range(n + 1)]
        lf = [mp.log(f(z)) if f(z) > 0 else -mp.inf for z in zs]
        top = max(lf)
        keep = [z for z, v in zip(zs, lf) if v > top - 200]
        a, b = keep[0] - s, keep[-1] + s
        m = int(mp.ceil((b - a) / (s / 2)))
        pts = [-mp.inf] + [a + (b - a) * k / m for k in range(m + 1)] + [mp.inf]
        v, err = mp.quad(f, pts, error=True, method="gauss-legendre")
        if err > v * mp.mpf(10) ** -40:
            sys.exit("quadrature error too large: %s %s %s: %s" % (s, q, lam, err / v))
        out.append(v)
    return out


def binomial_e2(s, q, lam):
    s, q = mp.mpf(s), mp.mpf(q)
    a = int(lam) + 1
    return mp.fsum(mp.binomial(a, k) * (1 - q) ** (a - k) * q ** k * mp.exp((k * k - k) / (2 * s * s))
                   for k in range(a + 1))


if __name__ == "__main__":
    frac = sys.argv[1:] == ["fractional"]
    print("# sigma,q,lambda,logE1,logE2,alpha  (mpmath %s, mp.dps=60, gen_reference.py%s)"
          % (mp.__version__, " fractional" if frac else ""))
    for s, q, lam in (CASES_FRACTIONAL if frac else CASES):
        E1, E2 = moments(s, q, lam)
        if lam == int(lam):
            b = binomial_e2(s, q, lam)
            if abs(b - E2) > abs(b - 1) * mp.mpf(10) ** -30 + mp.mpf(10) ** -50:
                sys.exit("binomial mismatch at %s %s %s: %s vs %s" % (s, q, lam, b, E2))
        l1, l2 = mp.log(E1), mp.log(E2)
        print("%r,%r,%r,%s,%s,%s" % (s, q, lam, mp.nstr(l1, 25), mp.nstr(l2, 25), mp.nstr(max(l1, l2), 25)))
