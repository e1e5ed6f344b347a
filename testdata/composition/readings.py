#!/usr/bin/env python3
"""Table of the DPD-paper readings tried (READINGS.md).

Run: python3 testdata/composition/readings.py > testdata/composition/readings.out
Every row is a reading of DPD §4.3 (Ermis and Cemgil 2017); sigma is solved
for the papers' three settings. Needs mpmath.
"""
import mpmath as mp

mp.mp.dps = 25
L = mp.log
CASES = [('DPD MNIST', '0.5', '1e-4', '0.01', 200, 10.88, 3.23),
         ('DPVD MNIST', '1', '1e-5', '0.01', 200, 8.24, 2.68),
         ('DPVD DIGITS', '1', '1e-5', '0.05', 100, 9.73, 2.97)]


def amp(e, q):
    return L(1 + q * mp.expm1(e))


def ac_eps(sigma, q, T, d, fr, iter_nu=True, thm1=False):
    dp = fr * d
    di = (1 - fr) * d / (T * q if iter_nu else T)
    if di >= 1:
        return mp.inf
    e1 = amp(mp.sqrt(2 * L(mp.mpf(1.25) / di)) / sigma, q)
    return mp.sqrt(2 * T * L(1 / dp)) * e1 + T * (e1 * mp.expm1(e1) if thm1 else e1 ** 2)


def solve(epsof, eps):
    lo, hi = mp.mpf('0.01'), mp.mpf(1e4)
    for _ in range(60):
        m = mp.sqrt(lo * hi)
        if epsof(m) > eps:
            lo = m
        else:
            hi = m
    return hi


def opt(g):
    return min(g(mp.mpf(i) / 100) for i in range(1, 100))


def z_sigma(eps, d, q, T, dp):
    rho = (mp.sqrt(L(1 / d) + eps) - mp.sqrt(L(1 / d))) ** 2
    tau = T / (2 * rho)
    e1 = mp.sqrt(2 * L(mp.mpf(1.25) / dp) / tau)
    ei = L(1 + mp.expm1(e1) / q)
    return mp.sqrt(2 * L(mp.mpf(1.25) * q / dp)) / ei, mp.sqrt(tau)


AC = [
    ('A1 (chosen): T=E/q, delta\' minimising, delta_iter=(delta-delta\')/(Tq), T*eps\'^2', 'Eq', 'opt', True, False),
    ('A2: as A1 with delta\'=delta/2', 'Eq', 'half', True, False),
    ('A3: as A1 with Theorem 1\'s T*eps\'(e^eps\'-1)', 'Eq', 'opt', True, True),
    ('A4: as A2 with delta_iter=(delta-delta\')/T (no q)', 'Eq', 'half', False, False),
    ('A5: T=E (epochs as steps), delta\'=delta/2', 'E', 'half', True, False),
    ('A6: T=E, delta\'=delta/2, delta_iter without q', 'E', 'half', False, False),
]
Z = [
    ('Z1 (chosen): T=E/q, delta\'=delta', 'Eq', 1),
    ('Z2: T=E/q, delta\'=delta/2', 'Eq', 2),
    ('Z3: T=E/q, delta\'=delta/T', 'Eq', 'T'),
    ('Z4: T=E, delta\'=delta', 'E', 1),
    ('Z5: T=E, delta\'=delta/T', 'E', 'T'),
    ('Z0: sqrt(tau), no amplification at all (T=E/q)', 'Eq', 0),
]
print('| reading | ' + ' | '.join('%s (paper %s)' % (c[0], c[5]) for c in CASES) + ' |')
print('|---|---|---|---|')
for name, tm, dpm, nu, thm1 in AC:
    row = []
    for _, eps, d, q, E, pac, _ in CASES:
        eps, d, q = mp.mpf(eps), mp.mpf(d), mp.mpf(q)
        T = int(mp.nint(E / q)) if tm == 'Eq' else E
        if dpm == 'opt':
            f = lambda s: opt(lambda fr: ac_eps(s, q, T, d, fr, nu, thm1))
        else:
            f = lambda s: ac_eps(s, q, T, d, mp.mpf(1) / 2, nu, thm1)
        row.append(mp.nstr(solve(f, eps), 5))
    print('| %s | %s |' % (name, ' | '.join(row)))
print()
print('| reading | ' + ' | '.join('%s (paper %s)' % (c[0], c[6]) for c in CASES) + ' |')
print('|---|---|---|---|')
for name, tm, dpm in Z:
    row = []
    for _, eps, d, q, E, _, pz in CASES:
        eps, d, q = mp.mpf(eps), mp.mpf(d), mp.mpf(q)
        T = int(mp.nint(E / q)) if tm == 'Eq' else E
        dp = d if dpm in (0, 1) else (d / 2 if dpm == 2 else d / T)
        s, st = z_sigma(eps, d, q, T, dp)
        row.append(mp.nstr(st if dpm == 0 else s, 5))
    print('| %s | %s |' % (name, ' | '.join(row)))

# ---- Abadi et al. (2016) §5.1 readings (q = 0.01, sigma = 4, delta = 1e-5) ----
def abadi(T, split, per_step_q, amplification):
    """split: 'opt' or a fixed fraction of delta spent on the steps."""
    q, d, s = mp.mpf('0.01'), mp.mpf('1e-5'), 4

    def eps(fr):
        d0 = fr * d / (T * q if per_step_q else T)
        e0 = mp.sqrt(2 * L(mp.mpf(1.25) / d0)) / s
        es = q * e0 if amplification == 'linear' else amp(e0, q)
        return mp.sqrt(2 * T * L(1 / ((1 - fr) * d))) * es + T * es * mp.expm1(es)
    if split == 'opt':
        return min(eps(mp.mpf(i) / 1000) for i in range(1, 1000))
    return eps(mp.mpf(split))


print()
print('| Abadi reading | E=100 (paper 9.34) | E=400 (paper 24.22) |')
print('|---|---|---|')
for name, split, pq, ampl in [
        ('linear, delta split optimised, T*q*delta0 + delta\' = delta', 'opt', True, 'linear'),
        ('linear, even split', '0.5', True, 'linear'),
        ('linear, optimised, T*delta0 + delta\' = delta (no q on delta0)', 'opt', False, 'linear'),
        ('log amplification with the classical formula at eps0 >= 1 (not a theorem)', 'opt', True, 'log')]:
    print('| %s | %s | %s |' % (name, mp.nstr(abadi(10000, split, pq, ampl), 6), mp.nstr(abadi(40000, split, pq, ampl), 6)))
