#!/usr/bin/env python3
"""Writes and checks the DpEvent JSON fixtures of accounting/dpevent_test.go.

Provenance: Google's dp_accounting (github.com/google/differential-privacy,
python/dp_accounting, VERSION 0.6.0, commit b5b0286), run with Debian's
python3 and python3-attr/absl/numpy/scipy:

    PYTHONPATH=/path/to/differential-privacy/python/dp_accounting \
        /usr/bin/python3 testdata/dpevent/gen.py          # writes py/*.json
    ... gen.py --check                                    # reads go/*.json

Writing: py/two_phase_reference.json holds dp_accounting's RDP and PLD ε at
δ = 1e-5 of the two-phase event. Each event below is converted with event.to_named_tuple() and the
recursive dict conversion of docs/events.md, and dumped to py/NAME.json.
Checking: every go/NAME.json (written by dpcalc's MarshalEvent; the Go test
regenerates them with DPCALC_UPDATE_GOLDEN=1) is read back into a DpEvent
with DpEvent.from_named_tuple and compared with the same event here, so
dpcalc's output is what dp_accounting reads. ShuffledDpEvent has no
dp_accounting class and is not checked here.
"""
import collections
import json
import os
import sys

from dp_accounting import dp_event as d

HERE = os.path.dirname(os.path.abspath(__file__))

EVENTS = {
    "gaussian": d.GaussianDpEvent(1.5),
    "gaussian_int": d.GaussianDpEvent(2),
    "laplace": d.LaplaceDpEvent(0.5),
    "laplace_sampled": d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.01, d.LaplaceDpEvent(2.0)), 1000),
    "two_phase": d.ComposedDpEvent([
        d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.01, d.GaussianDpEvent(1.0)), 5000),
        d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.02, d.GaussianDpEvent(2.0)), 3000),
    ]),
    "fixed": d.SelfComposedDpEvent(
        d.SampledWithoutReplacementDpEvent(60000, 256, d.GaussianDpEvent(0.55)), 1000),
    "misc": d.ComposedDpEvent([
        d.NoOpDpEvent(), d.NonPrivateDpEvent(), d.EpsilonDeltaDpEvent(1.0, 1e-6),
        d.ZCDpEvent(0.5, 0.1), d.ZCDpEvent(0.25)]),
    "discrete_gaussian": d.DiscreteGaussianDpEvent(2.5),
    "discrete": d.ComposedDpEvent([
        d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.1, d.DiscreteGaussianDpEvent(2.0, 1.0, 1)), 100),
        d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.1, d.DiscreteLaplaceDpEvent(0.5, 2)), 100),
    ]),
    # Errors: a class dpcalc does not read, and _asdict() without recursion.
    "unsupported_class": d.SelfComposedDpEvent(
        d.SampledWithReplacementDpEvent(100, 10, d.GaussianDpEvent(1.0)), 3),
}


def to_json(x):
    """The recursive dict conversion of docs/events.md."""
    if hasattr(x, "_asdict"):
        return {k: to_json(v) for k, v in x._asdict().items()}
    if isinstance(x, (list, tuple)):
        return [to_json(v) for v in x]
    return x


def from_json(x):
    """The inverse: dicts back to named tuples for DpEvent.from_named_tuple."""
    if isinstance(x, dict):
        return collections.namedtuple("DpEventNamedTuple", list(x))(**{k: from_json(v) for k, v in x.items()})
    if isinstance(x, list):
        return [from_json(v) for v in x]
    return x


def reference():
    """dp_accounting's ε at δ = 1e-5 for the two-phase run."""
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant
    rdp = rdp_privacy_accountant.RdpAccountant()
    rdp.compose(EVENTS["two_phase"])
    eps, order = rdp.get_epsilon_and_optimal_order(1e-5)
    pld = pld_privacy_accountant.PLDAccountant()
    pld.compose(EVENTS["two_phase"])
    return {"delta": 1e-5, "rdp_epsilon": eps, "rdp_order": order, "pld_epsilon": pld.get_epsilon(1e-5)}


def write():
    os.makedirs(os.path.join(HERE, "py"), exist_ok=True)
    with open(os.path.join(HERE, "py", "two_phase_reference.json"), "w") as f:
        json.dump(reference(), f, indent=2)
        f.write("\n")
    for name, e in EVENTS.items():
        with open(os.path.join(HERE, "py", name + ".json"), "w") as f:
            json.dump(to_json(e.to_named_tuple()), f, indent=2)
            f.write("\n")
    # The non-recursive _asdict(): nested events become JSON arrays.
    with open(os.path.join(HERE, "py", "not_recursive.json"), "w") as f:
        json.dump(EVENTS["two_phase"].to_named_tuple()._asdict(), f)
        f.write("\n")


def check():
    bad = 0
    names = sorted(n[:-5] for n in os.listdir(os.path.join(HERE, "go")) if n.endswith(".json"))
    for name in names:
        with open(os.path.join(HERE, "go", name + ".json")) as f:
            got = d.DpEvent.from_named_tuple(from_json(json.load(f)))
        want = EVENTS[name]
        ok = got == want
        bad += not ok
        print(("ok  " if ok else "FAIL"), name, got if not ok else "")
    if not names:
        print("no go/*.json files")
        bad = 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    check() if sys.argv[1:] == ["--check"] else write()
