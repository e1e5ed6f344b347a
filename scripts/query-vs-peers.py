"""query-vs-peers.py: one ε query of dpcalc's pld against dp_accounting's PLD and prv_accountant, in the same run.

Each round runs every dpcalc binary once (`dpcalc eps --sigma S --q Q --steps T --delta D --json`, pld by
default), then dp_accounting's PLDAccountant (default grid, pessimistic estimate), then PRVAccountant
(eps_error = 1e-3 of dp_accounting's ε, delta_error = δ/1000, as scripts/peers/peers.py runs it), and prints
CPU seconds per round and the per-round ratios with their median. dpcalc: user + system CPU of the whole
process (start-up included); the peers: process_time of the call in a running interpreter (imports excluded).

Usage (the peers' sources exported from their git mirrors, e.g. with `git archive`):

    go build -o /tmp/dpcalc ./cmd/dpcalc
    /usr/bin/python3 scripts/query-vs-peers.py --dpcalc new=/tmp/dpcalc [--dpcalc old=/tmp/dpcalc-main] \
        --dp-accounting DIR/python/dp_accounting --prv PRV_ROOT --rounds 7

The default setting is σ 0.7985, q 0.0005428, T 821, δ 7.795e-10. Needs numpy and scipy (Debian's
python3-numpy, python3-scipy, python3-attr, python3-absl, python3-mpmath, as scripts/peers.sh). Not a test.
"""
import argparse, json, math, os, resource, statistics, subprocess, sys, time, warnings

ap = argparse.ArgumentParser()
ap.add_argument("--dpcalc", action="append", required=True, help="NAME=BINARY (repeatable)")
ap.add_argument("--dp-accounting", required=True)
ap.add_argument("--prv", default="")
ap.add_argument("--sigma", type=float, default=0.7985)
ap.add_argument("--q", type=float, default=0.0005428)
ap.add_argument("--steps", type=int, default=821)
ap.add_argument("--delta", type=float, default=7.795e-10)
ap.add_argument("--rounds", type=int, default=5)
a = ap.parse_args()
sys.path.insert(0, a.dp_accounting)
from dp_accounting import dp_event as E
from dp_accounting.pld import pld_privacy_accountant as P
prv = None
if a.prv:
    sys.path.insert(0, a.prv)
    import prv_accountant as prv
    from prv_accountant import accountant as prvmod

def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def run_dpcalc(b):
    c0 = child_cpu()
    out = subprocess.run([b, "eps", "--sigma", repr(a.sigma), "--q", repr(a.q), "--steps", str(a.steps),
                          "--delta", repr(a.delta), "--json"], capture_output=True, text=True, check=True).stdout
    return child_cpu() - c0, out.strip().replace("\n", " ")[:200]

def run_dpacc():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        acc = P.PLDAccountant()
        acc.compose(E.SelfComposedDpEvent(E.PoissonSampledDpEvent(a.q, E.GaussianDpEvent(a.sigma)), a.steps))
        eps = acc.get_epsilon(a.delta)
        return time.process_time() - t0, eps

def run_prv(ref):
    mech = prv.PoissonSubsampledGaussianMechanism(sampling_probability=a.q, noise_multiplier=a.sigma)
    T, derr, eerr = a.steps, a.delta / 1000, 1e-3 * ref
    t0 = time.process_time()
    acc = prv.PRVAccountant(prvs=[mech], max_self_compositions=[T], eps_error=eerr, delta_error=derr)
    lo, est, hi = acc.compute_epsilon(delta=a.delta, num_self_compositions=[T])
    return time.process_time() - t0, (lo, est, hi)

bins = [s.split("=", 1) for s in a.dpcalc]
times = {n: [] for n, _ in bins}
times["dp_accounting"] = []
if prv:
    times["prv"] = []
ref = None
for r in range(a.rounds):
    for n, b in bins:
        t, out = run_dpcalc(b)
        times[n].append(t)
        if r == 0:
            print(n, out)
    t, eps = run_dpacc()
    times["dp_accounting"].append(t)
    ref = eps
    if r == 0:
        print("dp_accounting", eps)
    if prv:
        try:
            t, v = run_prv(ref)
            times["prv"].append(t)
            if r == 0:
                print("prv", v)
        except Exception as e:  # noqa
            print("prv failed:", e)
            prv = None
    print("round", r + 1, " ".join(f"{k} {v[-1]:.3f}" for k, v in times.items() if v), flush=True)
print("load average", os.getloadavg())
for k, v in times.items():
    if v:
        print(f"{k}: CPU s {' '.join(f'{x:.3f}' for x in v)}; median {statistics.median(v):.3f}")
for n, _ in bins:
    rs = [x / y for x, y in zip(times[n], times["dp_accounting"])]
    print(f"{n} / dp_accounting per round: {' '.join(f'{x:.2f}' for x in rs)}; median {statistics.median(rs):.2f}")
    if times.get("prv"):
        rs = [x / y for x, y in zip(times[n], times["prv"])]
        print(f"{n} / prv per round: {' '.join(f'{x:.2f}' for x in rs)}; median {statistics.median(rs):.2f}")
