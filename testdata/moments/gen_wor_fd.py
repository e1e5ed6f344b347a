#!/usr/bin/python3
"""The fixed-size (sampling without replacement, replace-one) Gaussian RDP
bound log A_α with the forward-difference terms of Wang, Balle and
Kasiviswanathan (arXiv 1808.00087, Theorem 27), for accounting/mechanism's
TestWorLogAForwardDiffs: dp_accounting's float64 implementation
(_compute_rdp_sample_wor_gaussian_int, google/differential-privacy at
b5b0286, python/dp_accounting) beside the same bound evaluated exactly in
60-digit mpmath (forward differences as exact alternating sums).

Usage: PYTHONPATH=<dp_accounting checkout>/python/dp_accounting \
       /usr/bin/python3 gen_wor_fd.py > wor_fd_ref.csv   (mpmath, numpy, scipy)
"""
import math, mpmath as mp
from dp_accounting.rdp import rdp_privacy_accountant as R
mp.mp.dps = 60
print("sigma,gamma,alpha,dp_accounting_log_a,exact_thm27_log_a")
def exact(sigma, q, alpha):
    s = mp.mpf(sigma); q = mp.mpf(q)
    c = 1/(2*s*s)
    h = lambda x: mp.e**(x*(x-1)*c)
    def D(k):
        return mp.fsum([(-1)**(k-i)*mp.binomial(k,i)*h(i) for i in range(k+1)])
    e2 = 2*c
    A = 1 + q**2*mp.binomial(alpha,2)*min(4*(mp.e**e2-1), 2*mp.e**e2)
    for j in range(3, alpha+1):
        lo, hi = 2*(j//2), 2*((j+1)//2)
        t = min(2*mp.e**((j-1)*j*c), 4*mp.sqrt(D(lo)*D(hi)))
        A += q**j*mp.binomial(alpha,j)*t
    return mp.log(A)
for sigma, q, alpha in [(4, 0.004096, 10), (4, 0.004096, 40), (1, 0.01, 8), (1, 0.05, 32), (0.7, 0.1, 12), (8, 0.02, 100), (2, 0.001, 256)]:
    d = R._compute_rdp_sample_wor_gaussian_int(q, sigma, alpha)
    print(f"{sigma},{q},{alpha},{d!r},{mp.nstr(exact(sigma,q,alpha),17)}")
