#!/usr/bin/python3
"""Independent estimates of ε(δ) for T Gaussian steps on batches drawn
without replacement under replace-one adjacency, for
accounting/pld's TestWORAgainstMirror.

Construction (independent of the Go code, which switches between the two
directions' tails): the symmetric dominating pair's privacy loss equals the
remove direction's loss on (0, ∞) (checked below: δ_add(l) ≤ δ_remove(l)
for l > 0), its mirror ω(−l) = e^{−l}·ω(l) on (−∞, 0), and an atom at 0
holding the rest. The loss is discretised pessimistically on grids
h, h/2, h/4 and composed by numpy FFT; ε is extrapolated to h → 0 from the
first-order error (Richardson). Not certified: an estimate to compare
against, with its spread reported.

Usage: /usr/bin/python3 gen_wor_ref.py > wor_ref.csv   (numpy, scipy)
"""
import numpy as np
from scipy.stats import norm

SETTINGS = [  # sigma (replace-one events: σ/2 of the CLI's), q, steps, delta, h
    (2.0, 0.01, 10000, 1e-5, 1e-4),
    (1.0, 0.05, 1000, 1e-5, 2e-4),
    (0.8, 0.02, 100, 1e-6, 1e-4),
    (3.0, 0.004, 5000, 1e-8, 5e-5),
]


def eps_estimate(sigma, q, T, delta, h):
    def xof(l):
        return sigma**2 * np.log((np.exp(l) - (1 - q)) / q) + 0.5

    def PT(l):
        x = xof(l)
        return (1 - q) * norm.sf(x / sigma) + q * norm.sf((x - 1) / sigma)

    def QT(l):
        return norm.sf(xof(l) / sigma)

    def d_rem(l):
        return PT(l) - np.exp(l) * QT(l)

    def d_add(l):
        x = xof(-l) if -l > np.log1p(-q) else None
        if x is None:
            return 0.0
        return norm.cdf(x / sigma) - np.exp(l) * ((1 - q) * norm.cdf(x / sigma) + q * norm.cdf((x - 1) / sigma))

    for l in (1e-4, 1e-3, 1e-2, 0.1, 1.0):
        assert d_add(l) <= d_rem(l) * (1 + 1e-9), (sigma, q, l)

    lmax = 1.0
    while PT(lmax) > 1e-30:
        lmax *= 1.5
    n = int(np.ceil(lmax / h))
    pos = np.arange(1, n + 1) * h
    tails = np.concatenate([[PT(1e-300)], PT(pos)])
    m_pos = tails[:-1] - tails[1:]
    m_neg = np.exp(-pos) * m_pos
    atom = 1 - m_pos.sum() - m_neg.sum() - tails[-1]
    pmf = np.concatenate([m_neg[::-1], [atom], m_pos])
    L = np.arange(-n, n + 1) * h
    mean = (pmf * L).sum()
    sd = np.sqrt(max((pmf * L * L).sum() - mean * mean, 0))
    half = int(np.ceil((abs(T * mean) + 40 * np.sqrt(T) * sd + 2 * lmax) / h))
    N = 1 << int(np.ceil(np.log2(2 * half + len(pmf))))
    a = np.zeros(N)
    a[: len(pmf)] = pmf
    c = np.fft.irfft(np.fft.rfft(a) ** T, N)
    loss = (np.arange(N) - T * n) * h
    loss += np.round((T * mean - loss) / (N * h)) * N * h

    def delta_at(e):
        s = loss > e
        return np.sum(c[s] * (1 - np.exp(e - loss[s])))

    lo, hi = 0.0, 200.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if delta_at(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


print("sigma,q,steps,delta,eps_h,eps_h2,eps_h4,eps_extrapolated")
for sigma, q, T, delta, h in SETTINGS:
    e = [eps_estimate(sigma, q, T, delta, h / 2**k) for k in range(3)]
    ext = e[2] - (e[1] - e[2])  # first-order error halves with h
    print(f"{sigma!r},{q!r},{T},{delta!r},{e[0]:.8f},{e[1]:.8f},{e[2]:.8f},{ext:.8f}")
