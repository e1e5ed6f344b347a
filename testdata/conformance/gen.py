#!/usr/bin/env python3
"""Exact references for the accounting conformance suite (accounting/accountingtest).

Run from the repository root:  python3 testdata/conformance/gen.py
Needs mpmath (Debian: python3-mpmath). Writes, next to this script:

q1_eps.csv    sigma,steps,delta,eps   exact eps(delta) of T Gaussian mechanisms with
                                      noise multiplier sigma, no sampling (q = 1)
q1_delta.csv  sigma,steps,eps,delta   exact delta(eps) of the same
q1_closed.csv sigma,steps,delta,ma,rdp,zcdp
                                      the closed forms the ma, rdp and zcdp accountants
                                      evaluate at q = 1, minimised over the orders of
                                      their default search: moments.DefaultOrders,
                                      moments.PeerOrders and the lattice 2^(k/1024),
                                      2^-10 <= l <= 2^20; rdp with the KL shortcut
q1_closed_delta.csv sigma,steps,eps,ma,rdp,zcdp
                                      the same for delta(eps)
t1_delta.csv  sigma,q,eps,delta       exact delta(eps) of one Poisson-subsampled
                                      Gaussian step (max over add and remove)
t1_eps.csv    sigma,q,delta,eps       exact eps(delta) of the same

Facts used (no code carried over):
- T adaptive Gaussian mechanisms with noise multiplier sigma and L2 sensitivity 1
  compose exactly to one Gaussian mechanism with noise multiplier sigma/sqrt(T)
  (the privacy loss random variables are Gaussian and add).
- Balle and Wang (2018), Theorem 8: the Gaussian mechanism with mu = 1/sigma is
  (eps, delta)-DP iff delta >= Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).
- One Poisson-subsampled Gaussian step: remove pair P = (1-q)N(0,s^2) + qN(1,s^2)
  vs Q = N(0,s^2), add pair (Q, P). The likelihood ratio is monotone in x, so the
  hockey-stick divergence H_{e^eps} has a closed form in Phi at the crossing point x*:
    remove: x* = s^2 log((e^eps - 1 + q)/q) + 1/2,
            delta = q Phi((1 - x*)/s) - (e^eps - 1 + q) Phi(-x*/s);
    add:    x* = s^2 log((e^-eps - 1 + q)/q) + 1/2 (delta = 0 if e^-eps <= 1 - q),
            delta = Phi(x*/s) - e^eps ((1-q) Phi(x*/s) + q Phi((x* - 1)/s)).
- ma: Abadi et al. (2016) Theorem 2.2 with the log moment of one unsampled step
  alpha(l) = l(l+1)/(2 sigma^2): eps = min_l (T alpha(l) + log(1/delta))/l.
- rdp: RDP of order a = l+1 is T a/(2 sigma^2) (Mironov 2017); conversion of
  Canonne, Kamath, Steinke (2020) Proposition 12:
  eps = min_a rdp(a) + log(1 - 1/a) - (log delta + log a)/(a - 1), clamped at 0.
- zcdp: rho = T/(2 sigma^2); eps = rho + 2 sqrt(rho log(1/delta)) (Bun and
  Steinke 2016, Proposition 1.3).
- The default ma and rdp minimise over DefaultOrders, PeerOrders (the moment orders
  l = a - 1 of dp_accounting's and Opacus' default Renyi orders a: 0.1, 0.2, ..., 9.9,
  10 ... 62, 127, 255, 511, 1023) and the lattice l = 2^(k/1024),
  k = -10240 .. 20480 (accounting/moments/continuous.go). Each closed form below is
  convex in l, hence unimodal over the lattice index: its lattice minimum is found by
  a ternary search on k, then checked against the neighbours k +- 3.
- delta(eps) forms: ma min(1, min_l exp(T alpha(l) - l eps)); rdp
  min(1, min_a exp((a-1)(rdp(a) - eps + log(1 - 1/a)) - log a)) (the inverse of
  the conversion above); zcdp exp(-(eps - rho)^2/(4 rho)) for eps >= rho, else 1.
- rdp's KL shortcut: the RDP at the smallest order l0 = 2^-10, D = T (l0+1)/(2 sigma^2),
  bounds the KL divergence, so by the Bretagnolle-Huber inequality the composition is
  (0, delta)-DP for delta >= sqrt(1 - e^-D): rdp's eps is 0 there, and its delta(eps)
  at most that.
All values are printed with 30 significant digits; the Go tests compare them
with float64 results exactly (math/big).
"""
import csv
import os

from mpmath import mp, mpf, ncdf, exp, log, sqrt, findroot, inf

mp.dps = 200
HERE = os.path.dirname(os.path.abspath(__file__))


def fmt(x):
    return mp.nstr(mpf(x), 30, min_fixed=0, max_fixed=0) if x != 0 else "0"


def gauss_delta(mu, eps):
    """Balle-Wang Theorem 8: delta(eps) of a Gaussian mechanism with mu = 1/sigma."""
    return ncdf(mu / 2 - eps / mu) - exp(eps) * ncdf(-mu / 2 - eps / mu)


def bisect_eps(delta_of, delta, hi):
    """Smallest eps >= 0 with delta_of(eps) <= delta (delta_of non-increasing)."""
    if delta_of(mpf(0)) <= delta:
        return mpf(0)
    lo = mpf(0)
    while delta_of(hi) > delta:
        lo, hi = hi, hi * 2
    for _ in range(700):  # far more than 200 digits of bisection
        mid = (lo + hi) / 2
        if delta_of(mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= hi * mpf(10) ** (-60):
            break
    return hi  # the side on which delta_of <= delta


LATTICE_N, LATTICE_MIN, LATTICE_MAX = 1024, -10 * 1024, 20 * 1024


def lattice_min(f):
    """min over the lattice l = 2^(k/1024) of f(l), f convex in l (unimodal in k)."""
    g = lambda k: f(mpf(2) ** (mpf(k) / LATTICE_N))
    lo, hi = LATTICE_MIN, LATTICE_MAX
    while hi - lo > 6:
        m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if g(m1) <= g(m2):
            hi = m2
        else:
            lo = m1
    best = min(range(lo, hi + 1), key=g)
    v = g(best)
    for k in range(max(best - 3, LATTICE_MIN), min(best + 3, LATTICE_MAX) + 1):
        assert g(k) >= v, "not unimodal"
    return v


def search_min(f, orders):
    """min of f over the default search's orders: the grid and the lattice."""
    return min(min(f(l) for l in orders), lattice_min(f))


def peer_orders():
    return [mpf(x) / 10 for x in range(1, 100)] + [mpf(a - 1) for a in range(11, 64)] + [mpf(x) for x in (127, 255, 511, 1023)]


def kl_delta(T, sigma):
    d = T * (mpf(2) ** -10 + 1) / (2 * sigma ** 2)
    return sqrt(-mp.expm1(-d))


def default_orders():
    o = []
    l = mpf(1)
    while l <= 4:
        o.append(l)
        l += mpf(1) / 4
    l = mpf("4.5")
    while l <= 10:
        o.append(l)
        l += mpf(1) / 2
    o += [mpf(i) for i in range(11, 25)]
    o += [mpf(i) for i in (26, 28, 30, 32, 36, 40, 48, 56, 64, 80, 96, 128, 192, 256)]
    assert len(o) == 53
    return o


SIGMAS_Q1 = ["1e-3", "0.01", "0.1", "0.5", "1", "2", "10", "300", "1000", "1e5", "1e10", "1e50", "1e100"]
STEPS_Q1 = [1, 100, 10000]
DELTAS_Q1 = ["1e-300", "1e-100", "1e-50", "1e-10", "1e-5", "0.5"]
EPS_Q1 = ["0.01", "0.1", "1", "10", "100"]


def q1():
    orders = default_orders() + peer_orders()
    with open(os.path.join(HERE, "q1_eps.csv"), "w", newline="") as fe, \
            open(os.path.join(HERE, "q1_delta.csv"), "w", newline="") as fd, \
            open(os.path.join(HERE, "q1_closed.csv"), "w", newline="") as fc, \
            open(os.path.join(HERE, "q1_closed_delta.csv"), "w", newline="") as fcd:
        we, wd, wc, wcd = csv.writer(fe), csv.writer(fd), csv.writer(fc), csv.writer(fcd)
        wcd.writerow(["sigma", "steps", "eps", "ma", "rdp", "zcdp"])
        we.writerow(["sigma", "steps", "delta", "eps"])
        wd.writerow(["sigma", "steps", "eps", "delta"])
        wc.writerow(["sigma", "steps", "delta", "ma", "rdp", "zcdp"])
        for s in SIGMAS_Q1:
            sigma = mpf(s)
            for T in STEPS_Q1:
                mu = sqrt(mpf(T)) / sigma
                for d in DELTAS_Q1:
                    delta = mpf(d)
                    e = bisect_eps(lambda x: gauss_delta(mu, x), delta, max(mu * mu, mpf(1)))
                    we.writerow([s, T, d, fmt(e)])
                    ld = log(delta)
                    ma = search_min(lambda l: (T * l * (l + 1) / (2 * sigma ** 2) - ld) / l, orders)
                    rdp = search_min(lambda l: T * (l + 1) / (2 * sigma ** 2) + log(1 - 1 / (l + 1)) - (ld + log(l + 1)) / l, orders)
                    rdp = max(rdp, mpf(0))
                    if delta >= kl_delta(T, sigma):
                        rdp = mpf(0)
                    rho = T / (2 * sigma ** 2)
                    zc = rho + 2 * sqrt(rho * -ld)
                    wc.writerow([s, T, d, fmt(ma), fmt(rdp), fmt(zc)])
                for x in EPS_Q1:
                    eps = mpf(x)
                    wd.writerow([s, T, x, fmt(gauss_delta(mu, eps))])
                    ma = min(mpf(1), exp(search_min(lambda l: T * l * (l + 1) / (2 * sigma ** 2) - l * eps, orders)))
                    rdp = min(mpf(1), exp(search_min(lambda l: l * (T * (l + 1) / (2 * sigma ** 2) - eps + log(1 - 1 / (l + 1))) - log(l + 1), orders)), kl_delta(T, sigma))
                    rho = T / (2 * sigma ** 2)
                    zc = exp(-(eps - rho) ** 2 / (4 * rho)) if eps >= rho else mpf(1)
                    wcd.writerow([s, T, x, fmt(ma), fmt(rdp), fmt(zc)])


def t1_delta(sigma, q, eps):
    s2 = sigma * sigma
    ee = exp(eps)
    # remove: P = mixture, Q = N(0, s^2)
    if q == 1:
        rem = ncdf(mpf(1) / (2 * sigma) - eps * sigma) - ee * ncdf(-mpf(1) / (2 * sigma) - eps * sigma)
        return rem  # add and remove coincide at q = 1
    x = s2 * log((ee - 1 + q) / q) + mpf(1) / 2
    rem = q * ncdf((1 - x) / sigma) - (ee - 1 + q) * ncdf(-x / sigma)
    add = mpf(0)
    em = exp(-eps)
    if em > 1 - q:
        y = s2 * log((em - 1 + q) / q) + mpf(1) / 2
        add = ncdf(y / sigma) - ee * ((1 - q) * ncdf(y / sigma) + q * ncdf((y - 1) / sigma))
    return max(rem, add, mpf(0))


SIGMAS_T1 = ["0.3", "0.5", "1", "2", "5", "20", "1000"]
QS_T1 = ["1e-6", "1e-3", "0.01", "0.1", "0.5", "0.9", "1"]
EPS_T1 = ["0.001", "0.01", "0.1", "0.5", "1", "2", "5", "10"]
DELTAS_T1 = ["1e-12", "1e-8", "1e-5", "1e-3", "0.1"]


def t1():
    with open(os.path.join(HERE, "t1_delta.csv"), "w", newline="") as fd, \
            open(os.path.join(HERE, "t1_eps.csv"), "w", newline="") as fe:
        wd, we = csv.writer(fd), csv.writer(fe)
        wd.writerow(["sigma", "q", "eps", "delta"])
        we.writerow(["sigma", "q", "delta", "eps"])
        for s in SIGMAS_T1:
            for qs in QS_T1:
                sigma, q = mpf(s), mpf(qs)
                for x in EPS_T1:
                    wd.writerow([s, qs, x, fmt(t1_delta(sigma, q, mpf(x)))])
                for d in DELTAS_T1:
                    e = bisect_eps(lambda x: t1_delta(sigma, q, x), mpf(d), mpf(1))
                    we.writerow([s, qs, d, fmt(e)])


if __name__ == "__main__":
    import sys
    q1()
    if "--q1-only" not in sys.argv:
        t1()
