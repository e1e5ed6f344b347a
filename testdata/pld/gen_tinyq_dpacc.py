#!/usr/bin/python3
"""dp_accounting's PLD of the first tiny-q example (σ 0.54,
q 6.6e-6, T 13, δ 2e-5) on grids fine enough to resolve ε ≈ 3.8e-5, for
accounting/pld's TestTinyQCorners. dp_accounting's default grid (1e-4) is
coarser than ε (it gives 8.49e-5) and prv_accountant's interval at a
feasible mesh is ±6.5e-5 wide, so neither pins ε to 0.1%.

Per grid: the pessimistic (connect-the-dots) estimate, an upper bound up to
dp_accounting's truncation and float64 round-off, and the optimistic
(privacy buckets) estimate, a lower bound up to the same. Not certified:
references to check the Go brackets against, two independent ways.

Usage: /usr/bin/python3 gen_tinyq_dpacc.py DP_ACCOUNTING_DIR > tinyq_dpacc.csv
(DP_ACCOUNTING_DIR: google/differential-privacy's python/dp_accounting;
numpy, scipy, attr, absl from Debian; about 8 minutes.)
"""
import logging
import sys
import warnings

warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
sys.path.insert(0, sys.argv[1])
from dp_accounting.pld import privacy_loss_distribution as pldm  # noqa: E402

SIGMA, Q, STEPS, DELTA = 0.54, 6.6e-6, 13, 2e-5
print("sigma,q,steps,delta,grid,estimate,eps")
for h in (1e-6, 4e-7):
    for pessimistic in (True, False):
        p = pldm.from_gaussian_mechanism(
            SIGMA, pessimistic_estimate=pessimistic, value_discretization_interval=h,
            sampling_prob=Q, use_connect_dots=pessimistic)
        eps = p.self_compose(STEPS).get_epsilon_for_delta(DELTA)
        kind = "pessimistic" if pessimistic else "optimistic"
        print(f"{SIGMA},{Q},{STEPS},{DELTA},{h},{kind},{eps!r}", flush=True)
