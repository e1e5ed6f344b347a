#!/usr/bin/env python3
"""Reference values for accounting/zcdp*, ac*, dpd* tests.

Run: python3 testdata/composition/gen.py > testdata/composition/refs.json
Needs mpmath (tested with 1.3.0). Everything is computed here at 50 digits
from the formulas cited in the Go doc comments; nothing is typed in.
"""
import json
import mpmath as mp

mp.mp.dps = 50
L = mp.log


def f(x):
    return float(x)


# ---- zCDP (Bun and Steinke 2016, Prop. 1.3, 1.4, 1.6, Lemma 1.7) ----
def zcdp_eps(rho, xi, delta):
    return xi + rho + 2 * mp.sqrt(rho * L(1 / delta))


def zcdp_delta(rho, xi, eps):
    t = eps - xi - rho
    if t < 0:
        return mp.mpf(1)
    return mp.e ** (-t * t / (4 * rho))


zcdp = []
for sigma, steps, delta, eps in [(1, 1, 1e-5, 3), (4, 10000, 1e-5, 20), (0.5, 3, 1e-10, 50),
                                  (100, 1000000, 1e-6, 1), (10, 7, 0.5, 0.1)]:
    sigma, delta, eps = mp.mpf(sigma), mp.mpf(delta), mp.mpf(eps)
    rho = steps / (2 * sigma ** 2)
    zcdp.append(dict(sigma=f(sigma), steps=steps, delta=f(delta), eps=f(eps), rho=f(rho),
                     eps_of_delta=f(zcdp_eps(rho, 0, delta)), delta_of_eps=f(zcdp_delta(rho, 0, eps))))


# ---- advanced composition formula (Dwork and Roth 2014, Thm 3.20) ----
def adv(eps_s, k, slack):
    return mp.sqrt(2 * k * L(1 / slack)) * eps_s + k * eps_s * mp.expm1(eps_s)


advs = []
for eps_s, k, slack in [(0.01, 10, 1e-6), (0.1, 1000, 1e-5), (1.5, 541, 1e-5), (0.001, 10 ** 9, 1e-9),
                        (3.0, 10 ** 9, 1e-3)]:
    advs.append(dict(eps_s=eps_s, k=k, slack=slack, eps=f(adv(mp.mpf(eps_s), k, mp.mpf(slack)))))


# ---- analytic Gaussian (Balle and Wang 2018, Thm 8) ----
def gauss_delta(sigma, eps):
    return mp.ncdf(1 / (2 * sigma) - eps * sigma) - mp.e ** eps * mp.ncdf(-1 / (2 * sigma) - eps * sigma)


def gauss_eps(sigma, delta):
    if gauss_delta(sigma, 0) <= delta:
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(1)
    while gauss_delta(sigma, hi) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        if gauss_delta(sigma, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


analytic = []
for sigma, delta in [(1, 1e-5), (4, 5e-8), (0.5, 1e-3), (20, 1e-10), (0.1, 1e-6)]:
    analytic.append(dict(sigma=sigma, delta=delta, eps=f(gauss_eps(mp.mpf(sigma), mp.mpf(delta)))))


# ---- AC accountant on Abadi et al. §5.1 (q = 0.01, sigma = 4, delta = 1e-5) ----
def amp_log(e0, q):
    return L(1 + q * mp.expm1(e0))


def ac_eps_at(sigma, q, T, delta, fr, mode):
    d0 = fr * delta / (T * q)
    slack = (1 - fr) * delta
    if mode == 'linear':
        es = q * mp.sqrt(2 * L(mp.mpf(1.25) / d0)) / sigma
    else:
        es = amp_log(gauss_eps(sigma, d0), q)
    return adv(es, T, slack)


def minimise(g, lo=-40, hi=40, step=mp.mpf(1) / 2, iters=80):
    """Grid over x = logit f, then golden section; returns the minimum value."""
    xs = [lo + i * step for i in range(int((hi - lo) / step) + 1)]
    vals = [(g(x), x) for x in xs]
    bv, bx = min(vals)
    l, r = bx - step, bx + step
    gr = (mp.sqrt(5) - 1) / 2
    for _ in range(iters):
        x1, x2 = r - gr * (r - l), l + gr * (r - l)
        if g(x1) <= g(x2):
            r = x2
        else:
            l = x1
    return min(bv, g((l + r) / 2))


def logistic(x):
    return 1 / (1 + mp.e ** (-x))


abadi = []
for E in (100, 400):
    T = E * 100
    for mode in ('linear', 'log'):
        if mode == 'log':
            g = lambda x: ac_eps_at(mp.mpf(4), mp.mpf('0.01'), T, mp.mpf('1e-5'), logistic(x), mode)
            v = minimise(g, lo=-4, hi=6, step=mp.mpf(1) / 2, iters=40)  # grid narrowed: analytic inversion is slow
        else:
            g = lambda x: ac_eps_at(mp.mpf(4), mp.mpf('0.01'), T, mp.mpf('1e-5'), logistic(x), mode)
            v = minimise(g)
        abadi.append(dict(epochs=E, steps=T, mode=mode, eps=f(v)))


# ---- heterogeneous pure (eps, delta) steps, log amplification ----
# 100 x EpsilonDelta{0.05, 1e-8} and 50 x PoissonSampled{0.1, EpsilonDelta{0.5, 1e-7}}, total delta 1e-5:
# eps = min(basic, sqrt(2 ln(1/delta') sum n_i e_i^2) + sum n_i e_i expm1(e_i)), delta' = delta - sum n_i delta_i.
hsteps = [(100, mp.mpf(0.05), mp.mpf(1e-8)), (50, amp_log(mp.mpf(0.5), mp.mpf(0.1)), mp.mpf(0.1) * mp.mpf(1e-7))]
hslack = mp.mpf(1e-5) - sum(n * d for n, _, d in hsteps)
hbasic = sum(n * e for n, e, _ in hsteps)
hadv = mp.sqrt(2 * L(1 / hslack) * sum(n * e * e for n, e, _ in hsteps)) + sum(n * e * mp.expm1(e) for n, e, _ in hsteps)
hetero = dict(delta=1e-5, eps=f(min(hbasic, hadv)), basic=f(hbasic), advanced=f(hadv))


# ---- DPD paper calibrations (Ermis and Cemgil 2017, §4.3), readings as in READINGS.md ----
def dpd_ac_eps(sigma, q, T, delta, fr):
    dp = fr * delta
    di = (1 - fr) * delta / (T * q)
    if di >= 1:
        return mp.inf
    e1 = amp_log(mp.sqrt(2 * L(mp.mpf(1.25) / di)) / sigma, q)
    return mp.sqrt(2 * T * L(1 / dp)) * e1 + T * e1 ** 2


def dpd_ac_sigma(eps, delta, q, T):
    epsof = lambda s: minimise(lambda x: dpd_ac_eps(s, q, T, delta, logistic(x)), iters=60)
    lo, hi = mp.mpf(1), mp.mpf(1000)
    for _ in range(45):
        mid = mp.sqrt(lo * hi)
        if epsof(mid) > eps:
            lo = mid
        else:
            hi = mid
    return hi


def dpd_zcdp_sigma(eps, delta, q, T):
    l = L(1 / delta)
    rho = (mp.sqrt(l + eps) - mp.sqrt(l)) ** 2
    tau = T / (2 * rho)
    e1 = mp.sqrt(2 * L(mp.mpf(1.25) / delta) / tau)
    ei = L(1 + mp.expm1(e1) / q)
    return mp.sqrt(2 * L(mp.mpf(1.25) * q / delta)) / ei


dpd = []
for name, eps, delta, q, E, pac, pz in [
        ('DPD MNIST', '0.5', '1e-4', '0.01', 200, 10.88, 3.23),
        ('DPVD MNIST', '1', '1e-5', '0.01', 200, 8.24, 2.68),
        ('DPVD DIGITS', '1', '1e-5', '0.05', 100, 9.73, 2.97),
        ('long run', '1', '1e-3', '0.01', 10000, None, None)]:
    eps, delta, q = mp.mpf(eps), mp.mpf(delta), mp.mpf(q)
    T = int(mp.nint(E / q))
    dpd.append(dict(name=name, eps=f(eps), delta=f(delta), q=f(q), epochs=E, steps=T,
                    paper_ac=pac, paper_zcdp=pz,
                    sigma_ac=f(dpd_ac_sigma(eps, delta, q, T)),
                    sigma_zcdp=f(dpd_zcdp_sigma(eps, delta, q, T))))

print(json.dumps(dict(generator='testdata/composition/gen.py', mpmath=mp.__version__, dps=mp.mp.dps,
                      zcdp=zcdp, advanced=advs, analytic_gaussian=analytic, abadi=abadi, heterogeneous=hetero, dpd=dpd), indent=1))
