#!/usr/bin/env python3
"""References for fixed-size sampling (without replacement, replace-one) in rdp.

1. wor_logA.csv: log A_alpha of Wang, Balle and Kasiviswanathan (2019),
   Theorem 9, for the Gaussian mechanism, with mpmath at 50 digits:
   A = 1 + g^2 C(a,2) min(4(e^{e2}-1), 2 e^{e2}) + sum_{j=3..a} 2 g^j C(a,j) e^{(j-1) j/(2 s^2)},
   e2 = 1/s^2.
2. wor_dpaccounting.csv (with --dp-accounting PATH): dp_accounting's RDP
   epsilon for T steps of SampledWithoutReplacementDpEvent(n, m,
   GaussianDpEvent(s)) under REPLACE_ONE (its exact forward-difference bound
   up to order 256, so it may be below ours).
Usage: python3 gen_wor.py [--dp-accounting /path/to/python/dp_accounting]
"""
import csv, sys
from mpmath import mp, mpf, binomial, exp, log, e

mp.dps = 50
rows = []
for s, g, a in [(2, 0.01, 2), (2, 0.01, 5), (2, 0.01, 40), (1, 0.1, 3), (1, 0.1, 17), (0.5, 0.001, 8), (4, 0.5, 100), (1.3, 0.0427, 2)]:
    s, g = mpf(s), mpf(g)
    e2 = 1 / s**2
    A = 1 + g**2 * binomial(a, 2) * min(4 * (exp(e2) - 1), 2 * exp(e2))
    for j in range(3, a + 1):
        A += 2 * g**j * binomial(a, j) * exp((j - 1) * j / (2 * s**2))
    rows.append([mp.nstr(s, 17), mp.nstr(g, 17), a, mp.nstr(log(A), 25)])
with open('wor_logA.csv', 'w', newline='') as f:
    w = csv.writer(f)
    w.writerow(['sigma', 'gamma', 'alpha', 'logA'])
    w.writerows(rows)

if '--dp-accounting' in sys.argv:
    sys.path.insert(0, sys.argv[sys.argv.index('--dp-accounting') + 1])
    from dp_accounting import dp_event, privacy_accountant as pa
    from dp_accounting.rdp import rdp_privacy_accountant as rdp
    out = []
    for (n, m, s, T, d) in [(60000, 600, 2.0, 10000, 1e-5), (1000, 10, 1.0, 1000, 1e-6), (800, 100, 2.0, 500, 1e-5), (50000, 256, 0.8, 2000, 1e-5)]:
        acc = rdp.RdpAccountant(neighboring_relation=pa.NeighboringRelation.REPLACE_ONE)
        acc.compose(dp_event.SelfComposedDpEvent(dp_event.SampledWithoutReplacementDpEvent(n, m, dp_event.GaussianDpEvent(s)), T))
        out.append([n, m, s, T, d, repr(acc.get_epsilon(d))])
    with open('wor_dpaccounting.csv', 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['n', 'm', 'sigma', 'steps', 'delta', 'epsilon'])
        w.writerows(out)
