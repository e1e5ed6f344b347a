#!/usr/bin/env python3
"""Soundness evidence for the DPD-paper calibrations (READINGS.md).

Run: python3 testdata/composition/soundness.py > testdata/composition/soundness.json
(takes a few minutes; needs mpmath and refs.json from gen.py).

For T steps of the Poisson-subsampled Gaussian (rate q, noise multiplier
sigma) it computes, at the target (eps, delta):

* delta_lower: a certified LOWER bound on the true delta(eps). Take the
  neighbouring pair where the added record's clipped gradient is a unit
  vector e and every other gradient is 0. Projected on e, the T outputs are
  i.i.d. P = (1-q)N(0,sigma^2) + qN(1,sigma^2) versus Q = N(0,sigma^2), and
  for every set S, delta(eps) >= P^T(S) - e^eps Q^T(S). S = {sum > t}:
  Q^T(S) = Phi(-t/(sigma sqrt T)) exactly and
  P^T(S) = sum_k Binom(k; T, q) Phi(-(t-k)/(sigma sqrt T)); binomial terms
  beyond 10 standard deviations are dropped, which only lowers P^T(S), so
  the bound stays a lower bound. t is optimised by a grid and golden section.
  delta_lower > delta proves that sigma is NOT (eps, delta)-DP.
* eps_upper_rdp: a proven UPPER bound on the true eps(delta): integer-order
  RDP of the subsampled Gaussian (Mironov, Talwar, Zhang 2019, the binomial
  expansion for integer alpha) times T, converted with
  eps = RDP(alpha) + log(1/delta)/(alpha-1) (Mironov 2017, Prop. 3), minimised
  over alpha = 2..256. eps_upper_rdp <= eps proves sigma IS (eps, delta)-DP.
"""
import json
import os
import mpmath as mp

mp.mp.dps = 30
L = mp.log


def lb_delta(sigma, q, T, eps):
    s = sigma * mp.sqrt(T)
    mean = T * q
    sd = mp.sqrt(T * q * (1 - q))
    ks = range(max(0, int(mean - 10 * sd)), int(mean + 10 * sd) + 1)
    pm = [(k, mp.e ** (L(mp.binomial(T, k)) + k * L(q) + (T - k) * L(1 - q))) for k in ks]

    def gap(z):
        t = z * s
        P = mp.fsum(w * mp.ncdf(-(t - k) / s) for k, w in pm)
        return P - mp.e ** eps * mp.ncdf(-z)

    g, z = max((gap(mp.mpf(i) / 4), mp.mpf(i) / 4) for i in range(0, 41))
    lo, hi = max(mp.mpf(0), z - mp.mpf(1) / 4), z + mp.mpf(1) / 4
    gr = (mp.sqrt(5) - 1) / 2
    for _ in range(30):
        m1, m2 = hi - gr * (hi - lo), lo + gr * (hi - lo)
        if gap(m1) > gap(m2):
            hi = m2
        else:
            lo = m1
    return max(mp.mpf(0), g, gap((lo + hi) / 2))  # delta >= 0 is always a valid lower bound


def rdp_eps(sigma, q, T, delta, amax=256):
    best = mp.inf
    for a in range(2, amax + 1):
        la = L(mp.fsum(mp.binomial(a, k) * (1 - q) ** (a - k) * q ** k * mp.e ** ((k * k - k) / (2 * sigma ** 2))
                       for k in range(a + 1)))
        best = min(best, T * la / (a - 1) + L(1 / delta) / (a - 1))
    return best


here = os.path.dirname(os.path.abspath(__file__))
refs = json.load(open(os.path.join(here, 'refs.json')))
out = []
for c in refs['dpd']:
    eps, delta, q, T = mp.mpf(c['eps']), mp.mpf(c['delta']), mp.mpf(c['q']), c['steps']
    for label in ('sigma_ac', 'sigma_zcdp', 'paper_ac', 'paper_zcdp'):
        if c[label] is None:
            continue
        sigma = mp.mpf(c[label])
        lo = lb_delta(sigma, q, T, eps)
        up = rdp_eps(sigma, q, T, delta)
        verdict = 'unsound' if lo > delta else ('sound' if up <= eps else 'undecided')
        out.append(dict(name=c['name'], which=label, sigma=float(sigma), eps=float(eps), delta=float(delta),
                        q=float(q), steps=T, delta_lower=float(lo), eps_upper_rdp=float(up), verdict=verdict))
print(json.dumps(dict(generator='testdata/composition/soundness.py', mpmath=mp.__version__, cases=out), indent=1))
