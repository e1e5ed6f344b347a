#!/usr/bin/env python3
"""References for the continuous order search's examples (docs/rdp-orders.md;
accounting/moments TestOrderSearchExamples).

rdp's default search minimises, over the grid moments.DefaultOrders and the
lattice of moment orders l = 2^(k/1024), the conversion of Canonne, Kamath,
Steinke (2020) Proposition 12 of T steps' RDP T*alpha(l)/l (Mironov 2017),

    eps(l) = T alpha(l)/l + log(1 - 1/(l+1)) - (log delta + log(l+1))/l,

(the smaller of it and Abadi et al. 2016 Theorem 2.2, (T alpha(l) - log delta)/l,
which is never smaller) clamped at 0, with alpha(l) = log max(E1, E2) of the
sampled Gaussian mechanism (Abadi et al. 2016, eqs. 3-4) integrated by
gen_reference.moments (mpmath, 60 digits). eps(l) is quasi-convex in l, so a
lattice index k with eps(k-1) >= eps(k) <= eps(k+1) is the lattice's minimum:
the script walks downhill from a starting index (the order dpcalc reported)
until that holds. Each row gives k, the order, and eps there. At the optimum
of these settings the lattice minimum is below every DefaultOrders value
(checked in the Go test against the grid accountant).

For the sigma examples the rows bracket the calibrated noise multiplier:
eps(sigma_hi) <= target < eps(sigma_lo) (checked here).

Columns: k is the lattice index, lambda = 2^(k/1024), eps rdp's eps there.
Run from the repository root (about 5 minutes on a shared core; mpmath 1.3.0):
    python3 testdata/moments/gen_examples.py > testdata/moments/order_search_examples.csv
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpmath as mp  # noqa: E402
from gen_reference import moments  # noqa: E402

N = 1024
# (name, sigma, q, steps, delta, target eps or None, starting lattice index)
ROWS = [
    ("eps --sigma 0.3 --q 0.01 --steps 1000", "0.3", "0.01", 1000, "1e-5", None, -1918),
    ("sigma --eps 50 --q 0.01 --steps 100: lo", "0.2517", "0.01", 100, "1e-5", "50", -1676),
    ("sigma --eps 50 --q 0.01 --steps 100: hi", "0.25175", "0.01", 100, "1e-5", "50", -1676),
    ("sigma --eps 0.02 --q 0.01 --epochs 1: lo", "14.985", "0.01", 100, "1e-5", "0.02", 9117),
    ("sigma --eps 0.02 --q 0.01 --epochs 1: hi", "14.99", "0.01", 100, "1e-5", "0.02", 9117),
    ("sigma --eps 0.001 --q 0.5 --epochs 100: lo", "14420", "0.5", 200, "1e-5", "0.001", 12581),
    ("sigma --eps 0.001 --q 0.5 --epochs 100: hi", "14425", "0.5", 200, "1e-5", "0.001", 12581),
]


def eps_at(sigma, q, steps, delta, k, memo):
    if k not in memo:
        lam = mp.mpf(2) ** (mp.mpf(k) / N)
        e1, e2 = moments(sigma, q, lam)
        alpha = max(mp.log(e1), mp.log(e2))
        ld = mp.log(mp.mpf(delta))
        cks = steps * alpha / lam + mp.log(1 - 1 / (lam + 1)) - (ld + mp.log(lam + 1)) / lam
        ma = (steps * alpha - ld) / lam
        memo[k] = max(min(cks, ma), mp.mpf(0))
    return memo[k]


def lattice_min(sigma, q, steps, delta, k):
    memo = {}
    f = lambda j: eps_at(sigma, q, steps, delta, j, memo)
    while True:
        if f(k - 1) < f(k):
            k -= 1
        elif f(k + 1) < f(k):
            k += 1
        else:
            return k, f(k)


print("name,sigma,q,steps,delta,k,lambda,eps")
last = {}
for name, s, q, steps, d, target, k0 in ROWS:
    k, e = lattice_min(s, q, steps, d, k0)
    base = name.split(":")[0]
    if target is not None:
        t = mp.mpf(target)
        if name.endswith(": lo") and not e > t:
            sys.exit("%s: eps %s not above the target" % (name, e))
        if name.endswith(": hi") and not e <= t:
            sys.exit("%s: eps %s above the target" % (name, e))
    print("%s,%s,%s,%d,%s,%d,%s,%s" % (name, s, q, steps, d, k, mp.nstr(mp.mpf(2) ** (mp.mpf(k) / N), 20), mp.nstr(e, 25)))
    sys.stdout.flush()
