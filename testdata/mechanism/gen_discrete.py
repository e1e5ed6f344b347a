#!/usr/bin/env python3
"""Reference values for the discrete Gaussian and discrete Laplace mechanisms
of accounting/mechanism (dp_accounting's DiscreteGaussianDpEvent and
DiscreteLaplaceDpEvent), by exact sums over the integers in mpmath at 50
digits. No quadrature and no series: every number is a finite sum of the
distributions' masses, whose omitted tails are below 1e-60.

Noises: N_Z(0, s^2), P[x] = exp(-x^2/(2 s^2))/Z, and DLap(a),
P[x] = tanh(a/2) exp(-a|x|). Q_b is the noise, P_b the noise shifted by the
sensitivity D. The pairs are dpcalc's (and dp_accounting's): unsampled
P = Q_b shifted, Q = Q_b; Poisson-sampled at q under add-remove,
remove P = (1-q)Q_b + q P_b, Q = Q_b and add the reverse.

Outputs (CSV, one file each, written next to this script):
  discrete_delta.csv  hockey-stick delta(eps) of T adaptive repetitions: the
                      larger of the all-remove and all-add compositions,
                      sum over the composed loss of P-mass*(1 - e^(eps-L))_+
                      (equal losses merged at 45 digits).
  discrete_rdp.csv    the log moment K(lambda) = lambda*D_{lambda+1} of one
                      step, the larger of the two directions:
                      log sum_x Q(x) (P(x)/Q(x))^(lambda+1).
  dg_tails.csv        log P(X >= k) for X ~ N_Z(0, s^2).

Usage: python3 gen_discrete.py   (mpmath 1.3.0; about a minute)
"""
import os

import mpmath as mp

mp.mp.dps = 50
HERE = os.path.dirname(os.path.abspath(__file__))


def dg_noise(s, extra=0):
    """(lo, hi, pmf) of N_Z(0, s^2) on [lo, hi], mass outside < 1e-60;
    extra widens the range (a moment tilted by r^p peaks at x = p*D)."""
    s = mp.mpf(s)
    K = int(mp.ceil(s * mp.sqrt(2 * 140))) + 2 + extra
    w = [mp.exp(-mp.mpf(x) ** 2 / (2 * s * s)) for x in range(-K, K + 1)]
    Z = mp.fsum(w)
    return -K, K, [v / Z for v in w]


def dlap_noise(a):
    a = mp.mpf(a)
    K = int(mp.ceil(140 / a)) + 2
    t = mp.tanh(a / 2)
    return -K, K, [t * mp.exp(-a * abs(x)) for x in range(-K, K + 1)]


def pair(noise, D, q, add):
    """Per-step (L, P-mass) list of one direction."""
    lo, hi, p = noise
    n = lambda x: p[x - lo] if lo <= x <= hi else mp.mpf(0)
    q = mp.mpf(q)
    out = []
    for x in range(lo + D, hi + 1):  # both noises > 0; the omitted masses are < 1e-60
        qb, pb = n(x), n(x - D)
        mix = (1 - q) * qb + q * pb
        P, Q = (qb, mix) if add else (mix, qb)
        if P == 0:
            continue
        out.append((mp.log(P / Q), P))
    return out


def compose(step, T):
    dist = {"0": (mp.mpf(0), mp.mpf(1))}
    for _ in range(T):
        nxt = {}
        for l0, m0 in dist.values():
            for l1, m1 in step:
                l = l0 + l1
                k = mp.nstr(l, 45)
                if k in nxt:
                    nxt[k] = (nxt[k][0], nxt[k][1] + m0 * m1)
                else:
                    nxt[k] = (l, m0 * m1)
        dist = nxt
    return list(dist.values())


def delta(dist, eps):
    eps = mp.mpf(eps)
    return mp.fsum(m * (1 - mp.exp(eps - l)) for l, m in dist if l > eps)


def log_moment(noise, D, q, lam):
    best = None
    for add in (False, True):
        v = mp.log(mp.fsum(m * mp.exp(lam * l) for l, m in pair(noise, D, q, add)))
        best = v if best is None or v > best else best
    return best


# name, parameter (sigma or a), sensitivity, q, steps, eps list
DELTA_CASES = [
    ("dg", 0.5, 1, 1.0, 1, [0.5, 1.0, 2.0]),
    ("dg", 2.0, 1, 1.0, 10, [0.5, 1.0, 2.0, 4.0]),
    ("dg", 5.0, 2, 1.0, 5, [0.25, 1.0, 2.0]),
    ("dg", 1.0, 1, 0.2, 3, [0.25, 0.5, 1.0, 2.0]),
    ("dg", 2.0, 1, 0.1, 2, [0.05, 0.2, 0.5]),
    ("dl", 0.5, 1, 1.0, 10, [1.0, 2.0, 4.0]),
    ("dl", 1.0, 3, 1.0, 4, [2.0, 5.0, 8.0]),
    ("dl", 0.5, 2, 0.1, 10, [0.2, 0.5, 1.0]),
    ("dl", 2.0, 1, 0.3, 5, [0.5, 1.0, 2.0]),
]

RDP_CASES = [  # name, parameter, sensitivity, q, lambdas
    ("dg", 0.5, 1, 1.0, [0.5, 1, 2, 4, 9, 31]),
    ("dg", 2.0, 1, 1.0, [0.5, 1, 4, 31]),
    ("dg", 3.0, 2, 1.0, [1, 4]),
    ("dg", 1.0, 1, 0.2, [0.5, 1, 2, 4, 9]),
    ("dg", 2.0, 1, 0.1, [0.5, 1, 4, 9, 31]),
    ("dg", 4.0, 3, 0.01, [1, 4, 16]),
    ("dl", 0.5, 1, 1.0, [0.5, 1, 4, 31]),
    ("dl", 1.0, 3, 1.0, [1, 4, 9]),
    ("dl", 0.5, 2, 0.1, [0.5, 1, 4, 9, 31]),
    ("dl", 2.0, 1, 0.3, [1, 2, 9]),
]

TAIL_CASES = [(0.3, [1, 2]), (3.0, [1, 2, 15, 36]), (300.0, [1, 150, 1500, 3600]),
              (3000.0, [1, 1500, 15000, 36000])]


def noise_of(name, p, extra=0):
    return dg_noise(p, extra) if name == "dg" else dlap_noise(p)


def main():
    with open(os.path.join(HERE, "discrete_delta.csv"), "w") as f:
        f.write("mechanism,param,sensitivity,q,steps,eps,delta\n")
        for name, p, D, q, T, epss in DELTA_CASES:
            noise = noise_of(name, p)
            dists = [compose(pair(noise, D, q, add), T) for add in (False, True)]
            for e in epss:
                d = max(delta(dist, e) for dist in dists)
                f.write(f"{name},{p},{D},{q},{T},{e},{mp.nstr(d, 30)}\n")
    with open(os.path.join(HERE, "discrete_rdp.csv"), "w") as f:
        f.write("mechanism,param,sensitivity,q,lambda,alpha\n")
        for name, p, D, q, lams in RDP_CASES:
            noise = noise_of(name, p, int((max(lams) + 2) * D))
            for lam in lams:
                a = log_moment(noise, D, q, mp.mpf(lam))
                f.write(f"{name},{p},{D},{q},{lam},{mp.nstr(a, 30)}\n")
    with open(os.path.join(HERE, "dg_tails.csv"), "w") as f:
        f.write("sigma,k,log_upper\n")
        for s, ks in TAIL_CASES:
            s = mp.mpf(s)
            f2 = lambda y: mp.exp(-mp.mpf(y) ** 2 / (2 * s * s))
            # Z by Poisson summation (Jacobi): exact for any s.
            Z = s * mp.sqrt(2 * mp.pi) * mp.fsum(mp.exp(-2 * mp.pi ** 2 * s * s * k * k) for k in range(-20, 21))
            for k in ks:
                tot, y = mp.mpf(0), k
                while True:
                    t = f2(y)
                    tot += t
                    if t < tot * mp.mpf("1e-60"):
                        break
                    y += 1
                f.write(f"{mp.nstr(s, 10)},{k},{mp.nstr(mp.log(tot / Z), 30)}\n")


if __name__ == "__main__":
    main()
