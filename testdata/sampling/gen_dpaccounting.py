#!/usr/bin/python3
"""dp_accounting's ε for the MNIST-sized run of docs/sampling.md's table
(N 60,000, lots of 600, σ 4, 100 epochs, δ 1e-5) under each scheme it has an
event for. cmd/dpcalc's table test reads the CSV this prints into the
table's dp_accounting column; a scheme without a row here is "none".

Provenance: Google's dp_accounting (github.com/google/differential-privacy,
python/dp_accounting, VERSION 0.6.0), Debian's python3 with
python3-numpy 1.24, python3-scipy 1.10, python3-attr, python3-absl:
  - every row but random allocation: commit b5b0286 (main; no release holds
    the truncated-Poisson event yet);
  - random allocation: the head of pull request 414 (commit 125d46c, not in
    a release), whose PLDAccountant composes RandomAllocationDpEvent.

    git -C differential-privacy archive b5b0286 python/dp_accounting | tar -x -C main
    git -C differential-privacy archive 125d46c python/dp_accounting | tar -x -C pr414
    PYTHONPATH=main/python/dp_accounting /usr/bin/python3 gen_dpaccounting.py main --header > dpaccounting.csv
    PYTHONPATH=pr414/python/dp_accounting:shim /usr/bin/python3 gen_dpaccounting.py pr414 >> dpaccounting.csv

  (the pull request imports typing_extensions only for typing.Self, which
  Python 3.11 has: shim/typing_extensions.py is "from typing import Self").
  The main rows take about 3 s, the random-allocation ones about 100 s
  without numba.

How each row is computed (accountant defaults: PLD value_discretization_interval
1e-4, pessimistic estimate; RDP default orders):
  - Poisson: PLDAccountant, PoissonSampledDpEvent(0.01, GaussianDpEvent(4))
    × 10,000. Under REPLACE_ONE its PLD reads a Gaussian's noise multiplier
    relative to half the replace-one sensitivity, so it gets σ 4, not σ/2.
  - truncated Poisson (cap 650): PLDAccountant,
    TruncatedSubsampledGaussianDpEvent(60000, 0.01, 650, 4) × 10,000 (σ 4
    under REPLACE_ONE for the same reason).
  - fixed-size: its PLD has no such event; RdpAccountant(REPLACE_ONE),
    SampledWithoutReplacementDpEvent(60000, 600, GaussianDpEvent(2)) × 10,000.
  - cyclic, b bands: dp_accounting has no cyclic event; the run's reduction,
    ⌈T/b⌉ = 100/(b·0.01) PoissonSampledDpEvent(b·0.01, GaussianDpEvent(4))
    steps, composed by PLDAccountant.
  - random allocation, k of t = 100·k steps an epoch:
    RandomAllocationDpEvent(GaussianDpEvent(4), k, 100·k) × 100 epochs,
    PLDAccountant (pull request 414).
  - shuffled epochs: no event, no row.
"""
import sys

from dp_accounting import dp_event as d
from dp_accounting import privacy_accountant as pa
from dp_accounting.pld import pld_privacy_accountant as pldacc
from dp_accounting.rdp import rdp_privacy_accountant as rdpacc

AR = pa.NeighboringRelation.ADD_OR_REMOVE_ONE
RO = pa.NeighboringRelation.REPLACE_ONE
DELTA = 1e-5


def eps(acc, event, count):
    acc.compose(event, count)
    return acc.get_epsilon(DELTA)


def main_rows():
    g4 = d.GaussianDpEvent(4)
    yield "poisson", "add-remove", "PLD", eps(pldacc.PLDAccountant(AR), d.PoissonSampledDpEvent(0.01, g4), 10000)
    yield "poisson", "replace-one", "PLD", eps(pldacc.PLDAccountant(RO), d.PoissonSampledDpEvent(0.01, g4), 10000)
    tr = d.TruncatedSubsampledGaussianDpEvent(
        dataset_size=60000, sampling_probability=0.01, truncated_batch_size=650, noise_multiplier=4)
    yield "truncated-poisson-650", "add-remove", "PLD", eps(pldacc.PLDAccountant(AR), tr, 10000)
    yield "truncated-poisson-650", "replace-one", "PLD", eps(pldacc.PLDAccountant(RO), tr, 10000)
    wor = d.SampledWithoutReplacementDpEvent(60000, 600, d.GaussianDpEvent(2))
    yield "fixed", "replace-one", "RDP", eps(rdpacc.RdpAccountant(neighboring_relation=RO), wor, 10000)
    for b in (2, 4):
        q = b * 0.01
        yield "cyclic-%d" % b, "add-remove", "PLD", eps(pldacc.PLDAccountant(AR), d.PoissonSampledDpEvent(q, g4), round(1 / q * 100))


def pr414_rows():
    for k in (1, 2, 4):
        ev = d.RandomAllocationDpEvent(d.GaussianDpEvent(4), k, 100 * k)
        yield "random-allocation-%d" % k, "add-remove", "PLD", eps(pldacc.PLDAccountant(AR), ev, 100)


if __name__ == "__main__":
    which = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "--header":
        print("scheme,adjacency,method,commit,epsilon")
    commit = "b5b0286" if which == "main" else "125d46c"
    for s, a, m, e in (main_rows() if which == "main" else pr414_rows()):
        print("%s,%s,%s,%s,%r" % (s, a, m, commit, e), flush=True)
