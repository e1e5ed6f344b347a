#!/usr/bin/env python3
"""dp_accounting's RDP epsilon on its default order grid (accounting/moments
TestNotAbovePeerGrids).

Rows: two settings where rdp's continuous order search used to stop between
lattice orders above dp_accounting's integer order (sigma 2.53, q 4.633e-5,
T 14, delta 2.206e-7: lambda 127.05 vs order 128, 5.3e-5 relative; sigma
2.513, q 0.01376, T 72, delta 1.016e-6: 1.1e-6 relative), then 60 seeded
random settings weighted toward small q, where alpha rises steeply in the
order: sigma log-uniform in [0.5, 10], q in [1e-6, 0.1], T in [1, 1e5],
delta in [1e-10, 1e-3], each rounded to 4 significant digits.

For each: RdpAccountant() (DEFAULT_RDP_ORDERS), compose
PoissonSampledDpEvent(q, GaussianDpEvent(sigma)) T times,
get_epsilon_and_optimal_order(delta). Columns: id, sigma, q, steps, delta,
eps (repr of the float64), order (Renyi order).

Requirements: dp_accounting's sources (google/differential-privacy,
python/dp_accounting; rows written with VERSION 0.6.0 at commit
b5b0286e313b), Debian's python3-numpy, python3-scipy, python3-attr,
python3-absl. Run from the repository root:

    DP_ACCOUNTING_SRC=.../python/dp_accounting \\
        python3 testdata/moments/gen_dpaccounting_grid.py \\
        > testdata/moments/dpaccounting_grid.csv
"""
import math
import os
import random
import sys

sys.path.insert(0, os.environ["DP_ACCOUNTING_SRC"])
from dp_accounting import dp_event  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant  # noqa: E402


def sig(x, digits=4):
    return float(f"{x:.{digits - 1}e}")


def loguniform(rng, lo, hi):
    return math.exp(math.log(lo) + rng.random() * (math.log(hi) - math.log(lo)))


def main():
    settings = [("steep-128", 2.53, 4.633e-5, 14, 2.206e-7), ("steep-53", 2.513, 0.01376, 72, 1.016e-6)]
    rng = random.Random(2027)
    for i in range(60):
        settings.append((f"r{i + 1}", sig(loguniform(rng, 0.5, 10)), sig(loguniform(rng, 1e-6, 0.1)),
                         max(1, int(sig(loguniform(rng, 1, 1e5)))), sig(loguniform(rng, 1e-10, 1e-3))))
    print("id,sigma,q,steps,delta,eps,order")
    for sid, sigma, q, steps, delta in settings:
        acc = rdp_privacy_accountant.RdpAccountant()
        acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)
        eps, order = acc.get_epsilon_and_optimal_order(delta)
        print(f"{sid},{sigma!r},{q!r},{steps},{delta!r},{eps!r},{order!r}")


if __name__ == "__main__":
    main()
