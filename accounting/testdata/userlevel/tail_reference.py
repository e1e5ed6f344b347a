#!/usr/bin/env python3
"""The binomial tail of the user-level mixture of Gaussians, in mpmath.

A user of K examples under Poisson sampling at rate q adds to a step the
mixture M = sum_c p_c N(c, s^2), c = 0..K, p_c the Binomial(K, q)
probabilities; dpcalc lists the components with log p_c > -708 (a run
lo..hi around the mode, every probability a normal float64) and bounds the
rest, the tail, from K and q.

Five tables, every sum over all K + 1 components at 60 digits (but
tail_adversarial.txt, see there):

  tail_sums.txt:    q K lo hi a log S(a),  S(a) = sum_{c not in [lo, hi]} p_c e^{a c^2}
                    (a = 0: log eta, the tail's probability);
  tail_ends.txt:    q K lo hi log p_lo log p_hi, the run's end probabilities
                    (the listed components dpcalc computes with Loader's form);
  tail_adversarial.txt: q K sigma lam LB, LB as in tail_moments.txt at extreme
                    settings (K 2 to 10^6, q 1e-300 to 1 - 1e-10, sigma 0.05 to
                    100, lam 1e-6 to 1e6), summed over the terms within 80 of
                    the largest (chosen in float64; the rest dropped, which
                    lowers LB: still a lower bound);
  tail_cut.txt:     q K lo hi log eta, for runs lo..hi narrower than the rule's
                    (events that list fewer shifts and name the rest a tail);
  tail_moments.txt: q K sigma lam LB, LB = log sum_c p_c^(lam+1) e^{lam (lam+1) c^2 / (2 s^2)},
                    a lower bound on the real user's remove-direction log moment
                    log E_N[(M/N)^(lam+1)] (from (sum y_c)^a >= sum y_c^a, y >= 0, a >= 1;
                    E_N[(N_c/N)^a] = e^{a(a-1)c^2/(2 s^2)}).

lo and hi are those of the rule log p_c > -708 (no case has a log p_c within
1e-3 of -708, so float64 and mpmath agree on them; the Go test checks).

Run: python3 tail_reference.py (mpmath 1.3.0) writes the files next to it.
"""
import math
import os

import mpmath as mp

mp.mp.dps = 60
HERE = os.path.dirname(os.path.abspath(__file__))


def logpmf(q, K):
    q = mp.mpf(q)
    return [mp.log(mp.binomial(K, c)) + c * mp.log(q) + (K - c) * mp.log1p(-q) for c in range(K + 1)]


def kept(lp):
    idx = [c for c, l in enumerate(lp) if l > -708]
    for c, l in enumerate(lp):
        if abs(l + 708) < 1e-3:
            raise SystemExit("log p_%d within 1e-3 of -708" % c)
    lo, hi = min(idx), max(idx)
    assert idx == list(range(lo, hi + 1))
    return lo, hi


def logsum(terms):
    m = max(terms)
    return m + mp.log(mp.fsum(mp.exp(t - m) for t in terms))


SUMS = [  # q, K, [a]
    (0.0064, 1000, [0, 0.01, 0.0104590703740951900, 0.5, 10]),
    (0.001, 5000, [0, 0.1, 2]),
    (0.05, 2000, [0, 0.04, 1]),
    (0.6, 1000, [0, 0.001, 1]),
]
CUTS = [  # q, K, lo, hi
    (0.0064, 1000, 0, 20),
]
MOMENTS = [  # q, K, sigma, lam
    (0.0064, 1000, 1, 0.02091814074819038),
    (0.0064, 1000, 1, 0.1),
    (0.0064, 1000, 60, 16),
    (0.0064, 1000, 60, 64),
    (0.0064, 1000, 60, 256),
    (0.001, 5000, 2, 4),
    (0.05, 2000, 5, 2),
]

with open(os.path.join(HERE, "tail_sums.txt"), "w") as f:
    f.write("# q K lo hi a logS (mpmath %s, 60 digits; see tail_reference.py)\n" % mp.__version__)
    for q, K, avals in SUMS:
        lp = logpmf(q, K)
        lo, hi = kept(lp)
        for a in avals:
            a = mp.mpf(a)
            terms = [lp[c] + a * c * c for c in range(K + 1) if c < lo or c > hi]
            f.write("%s %d %d %d %s %s\n" % (q, K, lo, hi, mp.nstr(a, 20), mp.nstr(logsum(terms), 20)))

with open(os.path.join(HERE, "tail_ends.txt"), "w") as f:
    f.write("# q K lo hi log_p_lo log_p_hi (mpmath %s, 60 digits; see tail_reference.py)\n" % mp.__version__)
    for q, K, _ in SUMS:
        lp = logpmf(q, K)
        lo, hi = kept(lp)
        f.write("%s %d %d %d %s %s\n" % (q, K, lo, hi, mp.nstr(lp[lo], 20), mp.nstr(lp[hi], 20)))

with open(os.path.join(HERE, "tail_moments.txt"), "w") as f:
    f.write("# q K sigma lam LB (mpmath %s, 60 digits; see tail_reference.py)\n" % mp.__version__)
    for q, K, s, lam in MOMENTS:
        lp = logpmf(q, K)
        s, lam = mp.mpf(s), mp.mpf(lam)
        terms = [(lam + 1) * lp[c] + lam * (lam + 1) * c * c / (2 * s * s) for c in range(K + 1)]
        f.write("%s %d %s %s %s\n" % (q, K, mp.nstr(s, 20), mp.nstr(lam, 20), mp.nstr(logsum(terms), 20)))

ADVERSARIAL = [  # q, K, sigma, lam
    (1e-300, 2, 0.05, 1e6), (1e-200, 2, 1, 1000), (1e-300, 3, 0.05, 64), (1e-300, 10, 0.05, 1),
    (1e-300, 100, 0.05, 1), (1e-4, 100, 0.05, 64), (1 - 1e-10, 100, 1, 1e6), (1e-300, 1000, 0.05, 0.01),
    (1e-100, 1000, 0.05, 0.01), (1e-10, 1000, 1, 1e4), (1e-4, 1000, 0.05, 64), (1 - 1e-10, 1000, 1, 1e4),
    (1e-300, 10000, 0.05, 0.01), (1e-4, 10000, 0.05, 64), (1e-4, 10000, 100, 1e6), (1e-300, 100000, 0.05, 0.01),
    (1e-4, 100000, 0.05, 1e-6), (1 - 1e-10, 100000, 0.05, 64), (1e-300, 1000000, 0.05, 0.01),
    (1e-10, 1000000, 0.05, 1e-6), (1e-4, 1000000, 0.05, 1e-6), (1 - 1e-10, 1000000, 1, 1e4),
    (1 - 1e-10, 1000000, 100, 1e6),
]


def flogpmf(q, K, c):
    return math.lgamma(K + 1) - math.lgamma(c + 1) - math.lgamma(K - c + 1) + c * math.log(q) + (K - c) * math.log1p(-q)


with open(os.path.join(HERE, "tail_adversarial.txt"), "w") as f:
    f.write("# q K sigma lam LB (mpmath %s, 60 digits; see tail_reference.py)\n" % mp.__version__)
    for q, K, s, lam in ADVERSARIAL:
        b = lam + 1
        ft = [b * flogpmf(q, K, c) + lam * b * c * c / (2 * s * s) for c in range(K + 1)]
        top = max(ft)
        mq, ms, ml = mp.mpf(q), mp.mpf(s), mp.mpf(lam)
        terms = [(ml + 1) * (mp.log(mp.binomial(K, c)) + c * mp.log(mq) + (K - c) * mp.log1p(-mq)) + ml * (ml + 1) * c * c / (2 * ms * ms)
                 for c in range(K + 1) if ft[c] >= top - 80]
        f.write("%r %d %r %r %s\n" % (q, K, s, lam, mp.nstr(logsum(terms), 20)))

with open(os.path.join(HERE, "tail_cut.txt"), "w") as f:
    f.write("# q K lo hi log_eta (mpmath %s, 60 digits; see tail_reference.py)\n" % mp.__version__)
    for q, K, lo, hi in CUTS:
        lp = logpmf(q, K)
        terms = [lp[c] for c in range(K + 1) if c < lo or c > hi]
        f.write("%s %d %d %d %s\n" % (q, K, lo, hi, mp.nstr(logsum(terms), 20)))
