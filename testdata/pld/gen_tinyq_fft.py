#!/usr/bin/env python3
"""Estimate ε(δ) for the tiny-q corner n8 (σ 0.742, q 2.1e-9, T 7512,
δ 2.6e-12) by direct numerical composition, as a reference for
TestTinyQCorners.

Each direction's per-step privacy loss is discretised on a uniform grid of
width h with each cell's exact P-mass (normal CDF differences) placed at
the cell's centre, and composed T times by one FFT in float64 (numpy).
This is an estimate, not a bound: the centre rule's error is O(T·h²·f')
and the FFT's round-off is far below 1e-16 per cell here. Three widths
(1e-10, 5e-11, 2.5e-11) show it has converged; the output lists each and
the ε at which max(δ_remove, δ_add) = δ (by bisection on the composed
distribution).

Run: python3 gen_tinyq_fft.py > tinyq_fft.csv (about a minute; Debian's
python3-numpy and python3-scipy).
"""
import numpy as np
from scipy.special import ndtr

SIG, Q, T, DELTA = 0.742, 2.1e-9, 7512, 2.6e-12
S2 = SIG * SIG
LTAIL = 1.2e-4  # |loss| beyond which T·P is below 1e-17


def mass_between(xa, xb, mu):
    """N(mu, SIG²) mass of (xa, xb], elementwise, accurate in both tails."""
    za, zb = (xa - mu) / SIG, (xb - mu) / SIG
    return np.where(za > 0, ndtr(-za) - ndtr(-zb), ndtr(zb) - ndtr(za))


def remove_pmf(h):
    # L(x) = log(1 − q + q·e^{(2x−1)/(2σ²)}) under P = (1−q)N(0,σ²) + qN(1,σ²).
    i0 = int(np.floor(np.log1p(-Q) / h)) - 1
    i1 = int(np.ceil(LTAIL / h))
    b = np.arange(i0, i1 + 1) * h
    arg = (np.expm1(b) + Q) / Q
    x = np.where(arg > 0, 0.5 + S2 * np.log(np.maximum(arg, 1e-300)), -np.inf)
    m = (1 - Q) * mass_between(x[:-1], x[1:], 0.0) + Q * mass_between(x[:-1], x[1:], 1.0)
    return m, i0


def add_pmf(h):
    # L(x) = −log(1 − q + q·e^{(2x−1)/(2σ²)}) under P = N(0,σ²), decreasing in x.
    i0 = int(np.floor(-LTAIL / h))
    i1 = int(np.ceil(-np.log1p(-Q) / h)) + 1
    b = np.arange(i0, i1 + 1) * h
    arg = (np.expm1(-b) + Q) / Q
    x = np.where(arg > 0, 0.5 + S2 * np.log(np.maximum(arg, 1e-300)), -np.inf)
    m = mass_between(x[1:], x[:-1], 0.0)
    return m, i0


def compose_delta(m, i0, h, n_fft):
    p = np.zeros(n_fft)
    p[: len(m)] = m
    r = np.fft.irfft(np.fft.rfft(p) ** T, n_fft)
    # Cell j of the circular result holds sums of index i0·T + j (mod
    # n_fft); the window [−n_fft/2, n_fft/2) holds all but a mass far
    # below 1e-20 (two or more losses beyond 1e-4 in size).
    k = np.mod(i0 * T + np.arange(n_fft), n_fft)
    k = np.where(k >= n_fft // 2, k - n_fft, k)
    s = (k + 0.5 * T) * h  # centres: each step's mass sits h/2 above its cell's index
    def delta(eps):
        sel = s > eps
        return float(np.sum(r[sel] * -np.expm1(eps - s[sel])))
    return delta


def eps_at(dfun, lo, hi):
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if dfun(mid) > DELTA:
            lo = mid
        else:
            hi = mid
    return hi


def main():
    print("h,eps_remove,eps_add,eps")
    for h, n_fft in [(1e-10, 1 << 23), (5e-11, 1 << 23), (2.5e-11, 1 << 24)]:
        dr = compose_delta(*remove_pmf(h), h, n_fft)
        da = compose_delta(*add_pmf(h), h, n_fft)
        er = eps_at(dr, 0.0, 1e-4) if dr(0.0) > DELTA else 0.0
        ea = eps_at(da, 0.0, 1e-4) if da(0.0) > DELTA else 0.0
        print(f"{h:g},{er:.8g},{ea:.8g},{max(er, ea):.8g}")


if __name__ == "__main__":
    main()
