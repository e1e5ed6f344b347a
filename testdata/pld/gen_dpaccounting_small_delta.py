#!/usr/bin/env python3
"""dp_accounting's pessimistic connect-the-dots PLD at the small-δ examples
(δ ≤ 1e-10), for comparison only (it has no certified lower bound; the
tests use our own fine-grid brackets in small_delta_ref.csv).

Run with google/differential-privacy's python/dp_accounting on the path
(Debian python3-numpy, python3-scipy, python3-attr, python3-absl):

    DP_ACCOUNTING=/path/to/differential-privacy/python/dp_accounting \
        python3 testdata/pld/gen_dpaccounting_small_delta.py

Output on 2026-11-23 (google/differential-privacy HEAD of that day, 0.6.0):

    sigma,q,steps,delta,grid,eps
    1.5,0.02,5000,1e-12,0.0001,7.990803565840888
    4,0.01,10000,1e-10,0.0001,1.5283655727287044
"""
import os
import sys

sys.path.insert(0, os.environ.get("DP_ACCOUNTING", "."))
from dp_accounting.pld import privacy_loss_distribution as pld_lib  # noqa: E402

print("sigma,q,steps,delta,grid,eps")
for sigma, q, steps, delta, grid in [(1.5, 0.02, 5000, 1e-12, 1e-4), (4, 0.01, 10000, 1e-10, 1e-4)]:
    p = pld_lib.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=grid,
                                        pessimistic_estimate=True, use_connect_dots=True)
    print(f"{sigma:g},{q:g},{steps},{delta:g},{grid:g},{p.self_compose(steps).get_epsilon_for_delta(delta)!r}", flush=True)
