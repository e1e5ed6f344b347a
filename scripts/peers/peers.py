#!/usr/bin/env python3
"""peers.py: dpcalc side by side with Opacus, dp_accounting and prv_accountant.

Usage (normally through scripts/peers.sh, which builds dpcalc and finds the
peers' sources):

    python3 scripts/peers/peers.py --dpcalc BIN --dp-accounting DIR \
        --opacus DIR --prv DIR [--csv testdata/peers/peers.csv] \
        [--markdown docs/peers.md] [--n 40] [--seed 2026]

What it runs, on every setting (σ, q, T, δ) of a Poisson-subsampled Gaussian
mechanism composed T times (add-or-remove-one adjacency in every tool):

  dpcalc_rdp, dpcalc_ma, dpcalc_pld  `dpcalc eps --accountant K --json`; pld's
                                     certified [epsilon_lower, epsilon_upper].
  opacus_rdp    Opacus' RDP analysis (opacus/accountants/analysis/rdp.py, loaded
                by file path because opacus/__init__.py imports torch) at the
                orders of RDPAccountant.DEFAULT_ALPHAS, read from
                opacus/accountants/rdp.py.
  dpacc_rdp     dp_accounting's RdpAccountant with its default orders.
  dpacc_pld     dp_accounting's PLDAccountant, defaults: pessimistic estimate,
                value_discretization_interval 1e-4.
  prv           prv_accountant's PRVAccountant with PoissonSubsampledGaussian
                Mechanism: its certified [eps_lower, eps_upper] and estimate.
                delta_error = δ/1000 (its docstring's "around 1e-3 × δ");
                eps_error = 1e-3 × ε_ref (a 0.1% half-width; ε_ref is
                dpacc_pld's ε, else opacus_rdp's), raised where needed so the
                grid has at most --prv-max-points points (the grid size is
                2L/mesh with PRV's own L and mesh formulas). The eps_error used
                is in the CSV's detail column. PRV's bound leaves out the
                float64 round-off of its FFT and tail sums, which near δ = 1e-12
                is of the size of δ: there its interval can move by more than
                its width when eps_error changes, hence the next tool.
  dpacc_pld_fine  dp_accounting's PLDAccountant at --fine-grid (2e-5), only
                where δ < --fine-below (1e-10): a second upper bound; a PRV
                eps_lower above the smaller dp_accounting ε is reported.

Settings: 8 named examples (§1 large ε, §2 small δ and a long run, §3 a
typical run, §4 tiny q) plus --n seeded random DP-SGD
settings, log-uniform in σ ∈ [0.5, 10], q ∈ [1e-4, 0.1], T ∈ [1e2, 1e6],
δ ∈ [1e-12, 1e-5], rounded to 3 significant digits.

Timing: wall time of one call (dpcalc's calls under 0.1 s: the median of
3). Peers run in-process in a worker (imports
excluded; PRV's sizing probe excluded), one call at a time; each call has a
--timeout and a --mem-gib address-space limit (a killed call is recorded as
"timeout" or "error: MemoryError"). dpcalc runs as a process per call; its
`seconds` include process start-up, and `seconds_net` subtracts the median
wall time of `dpcalc --version` measured in the same run. Ratios in the
report use seconds_net.

Requirements: Debian's python3-numpy (1.24), python3-scipy (1.10) and
python3-attr (22.2), which satisfy dp_accounting 0.6.0's requirements.txt
(numpy >= 1.21, scipy ~= 1.7, attrs >= 22) and prv_accountant's (numpy,
scipy); dp_accounting's dm-tree, mpmath and absl-py >= 1.0 are imported only
by its tests, not by the modules run here (Debian's python3-absl is 0.15).
Opacus' RDP analysis needs numpy and scipy only. No pip install.

Re-running after a change to rdp or pld (e.g. when the continuous-order rdp
or the tighter pld lands): `nice -n 10 scripts/peers.sh` from the repository
root, then commit testdata/peers/peers.csv and docs/peers.md together;
accounting/registry's TestPeers asserts the checks of docs/peers.md against the
peers' rows of the CSV with dpcalc computed live, so it needs no update.
A whole run takes about 6.5 minutes on this 2-core machine under load.

Outputs: the CSV (one row per setting and tool; columns id, label, sigma, q,
steps, delta, tool, eps, eps_lower, eps_upper, seconds, seconds_net, status,
detail), read by accounting/registry/peers_test.go, and the Markdown report.
Failed checks are reported in the Markdown, never dropped: on a dpcalc
without continuous-order RDP and with the current pld some are expected.
"""

import argparse
import ast
import csv
import datetime
import importlib.util
import io
import json
import math
import multiprocessing as mp
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
import warnings

TOOLS = ["dpcalc_rdp", "dpcalc_ma", "dpcalc_pld", "opacus_rdp", "dpacc_rdp", "dpacc_pld", "prv", "dpacc_pld_fine"]
PEERS = ["opacus_rdp", "dpacc_rdp", "dpacc_pld", "prv", "dpacc_pld_fine"]
# The dpcalc accountant each peer's time is compared with.
COUNTERPART = {"opacus_rdp": "dpcalc_rdp", "dpacc_rdp": "dpcalc_rdp", "dpacc_pld": "dpcalc_pld", "prv": "dpcalc_pld",
               "dpacc_pld_fine": "dpcalc_pld"}
RDP_SLACK = 1e-12  # rdp ≤ peer × (1 + RDP_SLACK) counts as "not looser"

# The named examples (§1 large ε, §2 small δ and a long run, §3 a typical
# run, §4 tiny q). §2's T = 1e6 example names no σ and q;
# σ = 4, q = 0.001 is this script's choice.
NAMED = [
    ("§1 σ=0.3", 0.3, 0.01, 1000, 1e-5),
    ("§2 δ=1e-10", 4.0, 0.01, 10000, 1e-10),
    ("§2 δ=1e-12", 1.5, 0.02, 5000, 1e-12),
    ("§2 T=1e6", 4.0, 0.001, 1000000, 1e-8),
    ("§2 δ=1e-15", 4.0, 0.01, 10000, 1e-15),
    ("§3 typical", 4.0, 0.01, 10000, 1e-5),
    ("§4 q=6.6e-6", 0.54, 6.6e-6, 13, 2e-5),
    ("§4 q=2.1e-9", 0.742, 2.1e-9, 7512, 2.6e-12),
]


def sig3(x):
    return float(f"{x:.3g}")


def settings(n, seed):
    out = [dict(id=f"n{i + 1}", label=lab, sigma=s, q=q, steps=t, delta=d) for i, (lab, s, q, t, d) in enumerate(NAMED)]
    rng = random.Random(seed)

    def logu(lo, hi):
        return math.exp(rng.uniform(math.log(lo), math.log(hi)))

    for i in range(n):
        s, q, t, d = logu(0.5, 10), logu(1e-4, 0.1), logu(1e2, 1e6), logu(1e-12, 1e-5)
        out.append(dict(id=f"r{i + 1}", label="random", sigma=sig3(s), q=sig3(q), steps=int(round(t)), delta=sig3(d)))
    return out


# ---------------------------------------------------------------- peers

def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def opacus_default_alphas(path):
    """RDPAccountant.DEFAULT_ALPHAS, evaluated from the assignment in path."""
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DEFAULT_ALPHAS" for t in node.targets):
            return eval(compile(ast.Expression(node.value), path, "eval"), {"range": range})
    raise RuntimeError(f"no DEFAULT_ALPHAS in {path}")


class Peers:
    def __init__(self, args):
        sys.path.insert(0, args.dp_accounting)
        sys.path.insert(0, args.prv)
        import dp_accounting  # noqa: F401
        from dp_accounting import dp_event
        from dp_accounting.rdp import rdp_privacy_accountant
        from dp_accounting.pld import pld_privacy_accountant
        import prv_accountant
        from prv_accountant import accountant as prv_acc_mod
        self.dp_event = dp_event
        self.rdp = rdp_privacy_accountant
        self.pld = pld_privacy_accountant
        self.prv = prv_accountant
        self.prv_acc_mod = prv_acc_mod
        self.opacus = load_module("opacus_rdp_analysis", os.path.join(args.opacus, "opacus/accountants/analysis/rdp.py"))
        self.alphas = opacus_default_alphas(os.path.join(args.opacus, "opacus/accountants/rdp.py"))
        self.prv_max_points = args.prv_max_points
        self.prv_rel = args.prv_eps_rel
        self.fine_grid = args.fine_grid

    def event(self, s):
        e = self.dp_event
        return e.SelfComposedDpEvent(e.PoissonSampledDpEvent(s["q"], e.GaussianDpEvent(s["sigma"])), s["steps"])

    def run(self, tool, s, ref):
        """Returns (eps, lower, upper, seconds, detail); lower/upper None if none."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if tool == "opacus_rdp":
                t0 = time.perf_counter()
                rdp = self.opacus.compute_rdp(q=s["q"], noise_multiplier=s["sigma"], steps=s["steps"], orders=self.alphas)
                eps, alpha = self.opacus.get_privacy_spent(orders=self.alphas, rdp=rdp, delta=s["delta"])
                return float(eps), None, None, time.perf_counter() - t0, f"order={alpha:g}"
            if tool == "dpacc_rdp":
                t0 = time.perf_counter()
                a = self.rdp.RdpAccountant()
                a.compose(self.event(s))
                eps, order = a.get_epsilon_and_optimal_order(s["delta"])
                return float(eps), None, None, time.perf_counter() - t0, f"order={order:g}"
            if tool == "dpacc_pld":
                t0 = time.perf_counter()
                a = self.pld.PLDAccountant()
                a.compose(self.event(s))
                eps = a.get_epsilon(s["delta"])
                return float(eps), None, None, time.perf_counter() - t0, ""
            if tool == "dpacc_pld_fine":
                t0 = time.perf_counter()
                a = self.pld.PLDAccountant(value_discretization_interval=self.fine_grid)
                a.compose(self.event(s))
                eps = a.get_epsilon(s["delta"])
                return float(eps), None, None, time.perf_counter() - t0, f"value_discretization_interval={self.fine_grid:g}"
            if tool == "prv":
                return self.run_prv(s, ref)
        raise ValueError(tool)

    def run_prv(self, s, ref):
        mech = self.prv.PoissonSubsampledGaussianMechanism(sampling_probability=s["q"], noise_multiplier=s["sigma"])
        T, delta = s["steps"], s["delta"]
        derr = delta / 1000
        if not (ref and math.isfinite(ref) and ref > 0):
            raise RuntimeError("no reference ε for eps_error")
        eerr = self.prv_rel * ref
        points = 0
        for _ in range(3):  # the domain half-width L depends (weakly) on eps_error
            L = self.prv_acc_mod.compute_safe_domain_size([mech], [T], eps_error=eerr, delta_error=derr)
            mesh = eerr / math.sqrt(T / 2 * math.log(12 / derr))
            points = 2 * L / mesh
            if points <= self.prv_max_points:
                break
            eerr *= points / self.prv_max_points * 1.01
        t0 = time.perf_counter()
        a = self.prv.PRVAccountant(prvs=[mech], max_self_compositions=[T], eps_error=eerr, delta_error=derr)
        lo, est, hi = a.compute_epsilon(delta=delta, num_self_compositions=[T])
        dt = time.perf_counter() - t0
        return float(est), float(lo), float(hi), dt, f"eps_error={eerr:.3g};delta_error={derr:.3g};points={points:.3g}"


def worker(conn, args, mem_gib):
    if mem_gib > 0:
        lim = int(mem_gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    peers = Peers(args)
    conn.send("ready")
    while True:
        job = conn.recv()
        if job is None:
            return
        tool, s, ref = job
        try:
            conn.send(("ok",) + peers.run(tool, s, ref))
        except BaseException as e:  # MemoryError, OverflowError, the peers' ValueErrors...
            msg = f"{type(e).__name__}: {e}".replace("\n", " ")[:200]
            conn.send(("error", None, None, None, None, msg))


class Pool:
    """One worker process, replaced when a call times out."""

    def __init__(self, args):
        self.args = args
        self.proc = None

    def start(self):
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker, args=(child, self.args, self.args.mem_gib), daemon=True)
        self.proc.start()
        if not self.conn.poll(120):
            raise RuntimeError("peer worker did not start")
        msg = self.conn.recv()
        if msg != "ready":
            raise RuntimeError(f"peer worker: {msg}")

    def call(self, tool, s, ref):
        if self.proc is None or not self.proc.is_alive():
            self.start()
        t0 = time.perf_counter()
        self.conn.send((tool, s, ref))
        if not self.conn.poll(self.args.timeout):
            self.proc.kill()
            self.proc.join()
            self.proc = None
            return dict(status="timeout", seconds=time.perf_counter() - t0, detail=f"killed after {self.args.timeout:g} s")
        try:
            st, eps, lo, hi, dt, detail = self.conn.recv()
        except EOFError:  # the worker died (e.g. killed by the OOM killer)
            self.proc = None
            return dict(status="error", detail="worker died")
        if st != "ok":
            return dict(status="error: " + detail, detail="")
        return dict(status="ok", eps=eps, eps_lower=lo, eps_upper=hi, seconds=dt, seconds_net=dt, detail=detail)

    def close(self):
        if self.proc is not None:
            self.conn.send(None)
            self.proc.join(5)


# ---------------------------------------------------------------- dpcalc

def dpcalc_startup(binary, n=15):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([binary, "--version"], capture_output=True, check=True)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def run_dpcalc(binary, kind, s, timeout, startup):
    cmd = [binary, "eps", "--sigma", repr(s["sigma"]), "--q", repr(s["q"]), "--steps", str(s["steps"]),
           "--delta", repr(s["delta"]), "--accountant", kind, "--json"]
    times = []
    while True:
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return dict(status="timeout", seconds=time.perf_counter() - t0, detail=f"killed after {timeout:g} s")
        times.append(time.perf_counter() - t0)
        # a call under 0.1 s is timed as the median of 3: start-up noise is of its size
        if times[0] >= 0.1 or len(times) == 3:
            break
    dt = statistics.median(times)
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        return dict(status=f"error: exit {p.returncode}: {p.stderr.strip()[:200]}", seconds=dt)
    if "error" in out:
        return dict(status="error: " + str(out["error"])[:200], seconds=dt)
    row = out["rows"][0]  # the one accountant asked for (docs/cli.md's JSON schema)
    r = dict(status="ok", eps=row["value"], seconds=dt, seconds_net=max(dt - startup, 1e-6))
    if "epsilon_lower" in row:
        r["eps_lower"], r["eps_upper"] = row["epsilon_lower"], row["epsilon_upper"]
    if "lambda" in row:
        r["detail"] = f"lambda={row['lambda']:g}"
    return r


# ---------------------------------------------------------------- report

def fnum(x, digits=6):
    if x is None or x == "":
        return "–"
    return f"{x:.{digits}g}"


def ratio_stats(rs):
    if not rs:
        return "–"
    gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
    return f"median {statistics.median(rs):.3g}×, geometric mean {gm:.3g}×, range {min(rs):.3g}–{max(rs):.3g}× (n = {len(rs)})"


def analyse(sets, res):
    """Counts and ratios of the checks; returns a list of Markdown lines."""
    L = []

    def ok(sid, tool):
        r = res[sid].get(tool)
        return r if r and r["status"] == "ok" else None

    def rdp_check(peer, name):
        n = looser = far = 0
        worst, best = (0.0, None), (math.inf, None)
        fails = []
        for s in sets:
            d, p = ok(s["id"], "dpcalc_rdp"), ok(s["id"], peer)
            if not (d and p and math.isfinite(p["eps"])):
                continue
            n += 1
            r = d["eps"] / p["eps"] if p["eps"] > 0 else math.inf
            if d["eps"] > p["eps"] * (1 + RDP_SLACK):
                looser += 1
                fails.append(s["id"])
                if d["eps"] > p["eps"] * (1 + 1e-6):
                    far += 1
            if r > worst[0]:
                worst = (r, s["id"])
            if r < best[0]:
                best = (r, s["id"])
        L.append(f"- **rdp ≤ {name}** (× (1 + {RDP_SLACK:g})): {n - looser} of {n} settings; "
                 f"rdp looser in {looser}" + (f" ({', '.join(fails)})" if fails else "") +
                 f"; by more than 1e-6 relative in {far}; ratio rdp / {name}: max {worst[0]:.10g} ({worst[1]}), "
                 f"min {best[0]:.6g} ({best[1]}).")

    rdp_check("opacus_rdp", "Opacus RDP")
    rdp_check("dpacc_rdp", "dp_accounting RDP")

    n = inside = above = below = 0
    above_ids, below_ids = [], []
    worst = (0.0, None)
    for s in sets:
        d, p = ok(s["id"], "dpcalc_pld"), ok(s["id"], "prv")
        if not (d and p):
            continue
        n += 1
        up = d["eps_upper"]
        if up > p["eps_upper"]:
            above += 1
            f = ok(s["id"], "dpacc_pld_fine")
            if p["eps_upper"] < d["eps_lower"] and f and p["eps_upper"] < f["eps"] and d["eps_lower"] <= f["eps"]:
                # PRV's whole interval lies below our certified lower bound,
                # which dp_accounting's fine pessimistic ε confirms from above.
                above_ids.append(f"{s['id']}: PRV's eps_upper {fnum(p['eps_upper'])} is below pld's certified lower "
                                 f"bound {fnum(d['eps_lower'])}, which lies below dp_accounting's fine pessimistic "
                                 f"ε {fnum(f['eps'])}: PRV's interval misses both (δ = {s['delta']:g}, its float64 "
                                 f"round-off), and TestPeers checks pld against the latter there")
            else:
                above_ids.append(s["id"])
        elif up < p["eps_lower"]:
            below += 1
            below_ids.append(s["id"])
        else:
            inside += 1
        r = up / p["eps_upper"] if p["eps_upper"] > 0 else math.inf
        if r > worst[0]:
            worst = (r, s["id"])
    L.append(f"- **pld upper inside PRV's certified interval**: {inside} of {n} settings where PRV ran; "
             f"above PRV's eps_upper in {above}" + (f" ({', '.join(above_ids)})" if above_ids else "") +
             f"; below PRV's eps_lower (would contradict one of the two certificates) in {below}" +
             (f" ({', '.join(below_ids)})" if below_ids else "") +
             f"; max ratio pld upper / PRV eps_upper = {worst[0]:.6g} ({worst[1]}).")

    # The two peers' PLDs against each other: dp_accounting's pessimistic ε is
    # an upper bound, so a PRV eps_lower above it means one of them is off
    # (both are float64 FFTs whose round-off neither error bound covers, which
    # matters once δ approaches the round-off of the tail sums).
    def dpacc_bound(sid):
        gs = [g["eps"] for g in (ok(sid, "dpacc_pld"), ok(sid, "dpacc_pld_fine")) if g and math.isfinite(g["eps"])]
        return min(gs) if gs else None

    n = bad = 0
    bad_ids = []
    for s in sets:
        p, g = ok(s["id"], "prv"), dpacc_bound(s["id"])
        if not (p and g is not None):
            continue
        n += 1
        if p["eps_lower"] > g:
            bad += 1
            bad_ids.append(f"{s['id']} (δ = {s['delta']:g})")
    L.append(f"- **peers' PLDs agree** (PRV eps_lower ≤ dp_accounting's pessimistic ε, the smaller of the 1e-4 and, "
             f"for small δ, the finer grid): {n - bad} of {n}; PRV's interval lies above dp_accounting's upper bound in {bad}" +
             (f": {', '.join(bad_ids)}; there the PRV check above is against a doubtful reference" if bad_ids else "") + ".")
    n = bad = 0
    bad_ids = []
    for s in sets:
        d, g = ok(s["id"], "dpcalc_pld"), dpacc_bound(s["id"])
        if not (d and g is not None):
            continue
        n += 1
        if d["eps_lower"] > g:
            bad += 1
            bad_ids.append(s["id"])
    L.append(f"- **pld lower ≤ dp_accounting's pessimistic ε** (a soundness cross-check of the lower bound): {n - bad} of {n}" +
             (f"; violated in {', '.join(bad_ids)}" if bad_ids else "") + ".")

    widths = []
    for s in sets:
        d = ok(s["id"], "dpcalc_pld")
        if d and d["eps_lower"] and d["eps_lower"] > 0:
            widths.append((d["eps_upper"] / d["eps_lower"] - 1, s["id"]))
    if widths:
        narrow = sum(1 for w, _ in widths if w <= 1e-3)
        wmax = max(widths)
        L.append(f"- **pld certified width** (upper / lower − 1): ≤ 0.1% in {narrow} of {len(widths)} settings with "
                 f"lower > 0; median {100 * statistics.median(w for w, _ in widths):.3g}%, max {100 * wmax[0]:.3g}% ({wmax[1]}).")

    rs = []
    for s in sets:
        d, p = ok(s["id"], "dpcalc_pld"), ok(s["id"], "dpacc_pld")
        if d and p and 0 < p["eps"] < math.inf:
            rs.append((d["eps_upper"] / p["eps"], s["id"]))
    if rs:
        mx, mn = max(rs), min(rs)
        L.append(f"- **pld upper / dp_accounting PLD ε**: median {statistics.median(r for r, _ in rs):.6g}, "
                 f"max {mx[0]:.6g} ({mx[1]}), min {mn[0]:.6g} ({mn[1]}) (n = {len(rs)}).")
    rs = []
    for s in sets:
        d, p = ok(s["id"], "dpcalc_ma"), ok(s["id"], "dpcalc_rdp")
        if d and p and p["eps"] > 0:
            rs.append(d["eps"] / p["eps"])
    if rs:
        L.append(f"- **ma / rdp**: median {statistics.median(rs):.4g}, max {max(rs):.4g} (n = {len(rs)}).")

    failed = [(s["id"], t, res[s["id"]][t]["status"]) for s in sets for t in TOOLS
              if res[s["id"]][t]["status"] not in ("ok", "skipped")]
    ran = sum(1 for s in sets for t in TOOLS if res[s["id"]][t]["status"] != "skipped")
    L.append(f"- **did not run**: {len(failed)} of {ran} calls (listed below).")
    return L, failed


def time_lines(sets, res):
    L = []
    for peer in PEERS:
        mine = COUNTERPART[peer]
        rs = []
        for s in sets:
            p, d = res[s["id"]][peer], res[s["id"]][mine]
            if p["status"] == "ok" and d["status"] == "ok":
                rs.append(p["seconds"] / d["seconds_net"])
        L.append(f"| {peer} / {mine} | {ratio_stats(rs)} |")
    return L


def markdown(args, sets, res, meta, failed_lines):
    out = io.StringIO()
    w = lambda s="": out.write(s + "\n")  # noqa: E731
    w("# dpcalc side by side with Opacus, dp_accounting and prv_accountant")
    w()
    w("Generated by `scripts/peers.sh` (driver: `scripts/peers/peers.py`, whose docstring says what each column")
    w("means and how each tool is called); do not edit by hand. The numbers per call, with wall times, are in")
    w(f"[`{os.path.relpath(args.csv, os.path.dirname(args.markdown))}`]({os.path.relpath(args.csv, os.path.dirname(args.markdown))}), "
      "which `accounting/registry/peers_test.go` reads.")
    w()
    w("Re-run: `nice -n 10 scripts/peers.sh` from the repository root (it builds dpcalc from the work tree,")
    w("takes the peers' sources from the fetched mirrors or `$DP_ACCOUNTING_SRC`, `$OPACUS_SRC`, `$PRV_SRC`,")
    w("and rewrites this page and the CSV); commit both. The tests then check the peers' rows against")
    w("dpcalc computed live: rdp ≤ both fixed-grid RDP ε and pld upper ≤ PRV's eps_upper.")
    w()
    w("## Run")
    w()
    for k, v in meta:
        w(f"- {k}: {v}")
    w()
    w("## Checks")
    w()
    lines, failed = analyse(sets, res)
    for l in lines:
        w(l)
    w()
    w("## Time, each peer against the dpcalc accountant that answers the same question")
    w()
    w("Ratio of wall times per setting (> 1: the peer is slower). dpcalc's time is per process call less the")
    w(f"median start-up of `dpcalc --version` ({1000 * meta_dict(meta)['_startup']:.2g} ms, measured in this run); the peers' is")
    w("in-process, imports excluded. Only settings where both ran are counted. dpcalc's rdp and ma answer")
    w("in well under the start-up time, so their net times, and the two rdp ratios, carry the start-up's")
    w("jitter: read them as orders of magnitude (`go test -bench` in [performance.md](performance.md) times")
    w("them in-process). The pld times are well above the start-up.")
    w()
    w("| ratio | per-setting ratios |")
    w("|---|---|")
    for l in time_lines(sets, res):
        w(l)
    w()
    tot = {t: sum(res[s["id"]][t].get("seconds") or 0 for s in sets) for t in TOOLS}
    w("Total wall time per tool (s, all settings, timeouts included): " +
      ", ".join(f"{t} {tot[t]:.3g}" for t in TOOLS) + ".")
    w()
    w("## ε per setting")
    w()
    w("dp_acc PLD fine: dp_accounting's pessimistic PLD at the finer grid, run where δ is small")
    w("(see Run). pld and PRV show [lower, upper]; PRV's middle number is its estimate. ✗ after rdp: looser than a peer's")
    w("grid (O Opacus, D dp_accounting); ✗ after pld: upper above PRV's eps_upper.")
    w()
    w("| id | σ | q | T | δ | rdp | Opacus | dp_acc RDP | ma | pld [lower, upper] | dp_acc PLD | PRV [lower, estimate, upper] | dp_acc PLD fine |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in sets:
        r = res[s["id"]]

        def e(t, k="eps"):
            x = r[t]
            if x["status"] == "skipped":
                return "–"
            return fnum(x.get(k)) if x["status"] == "ok" else x["status"].split(":")[0]

        flag = ""
        d = r["dpcalc_rdp"]
        if d["status"] == "ok":
            for peer, c in (("opacus_rdp", "O"), ("dpacc_rdp", "D")):
                p = r[peer]
                if p["status"] == "ok" and d["eps"] > p["eps"] * (1 + RDP_SLACK):
                    flag += c
        rdp = e("dpcalc_rdp") + (f" ✗{flag}" if flag else "")
        d = r["dpcalc_pld"]
        pld = f"[{fnum(d.get('eps_lower'))}, {fnum(d.get('eps_upper'))}]" if d["status"] == "ok" else e("dpcalc_pld")
        p = r["prv"]
        if d["status"] == "ok" and p["status"] == "ok" and d["eps_upper"] > p["eps_upper"]:
            pld += " ✗"
        prv = f"[{fnum(p['eps_lower'])}, {fnum(p['eps'])}, {fnum(p['eps_upper'])}]" if p["status"] == "ok" else e("prv")
        lab = s["id"] if s["label"] == "random" else f"{s['id']} ({s['label']})"
        w(f"| {lab} | {s['sigma']:g} | {s['q']:g} | {s['steps']} | {s['delta']:g} | {rdp} | {e('opacus_rdp')} | "
          f"{e('dpacc_rdp')} | {e('dpcalc_ma')} | {pld} | {e('dpacc_pld')} | {prv} | {e('dpacc_pld_fine')} |")
    w()
    w("## Calls that did not run")
    w()
    if not failed:
        w("None.")
    for sid, t, st in failed:
        w(f"- {sid} {t}: {st}")
    return out.getvalue()


def meta_dict(meta):
    return dict(meta)


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f", {int(line.split()[1]) / 2**20:.0f} GiB"
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.machine()}"


def read_version(path, prefix):
    try:
        for line in open(path):
            line = line.strip()
            if prefix == "":
                if line and not line.startswith('"""'):
                    return line.strip("'\"")
            elif line.startswith(prefix):
                return line.split("=", 1)[-1].strip().strip("'\"")
    except OSError:
        pass
    return "?"


def atomic_write(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dpcalc", required=True, help="dpcalc binary")
    ap.add_argument("--dp-accounting", required=True, help="google/differential-privacy's python/dp_accounting")
    ap.add_argument("--opacus", required=True, help="pytorch/opacus checkout (its root)")
    ap.add_argument("--prv", required=True, help="microsoft/prv_accountant checkout (its root)")
    ap.add_argument("--csv", default="testdata/peers/peers.csv")
    ap.add_argument("--markdown", default="docs/peers.md")
    ap.add_argument("--n", type=int, default=40, help="random settings")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--timeout", type=float, default=60, help="seconds per call")
    ap.add_argument("--mem-gib", type=float, default=6, help="address-space limit of the peer worker")
    ap.add_argument("--prv-eps-rel", type=float, default=1e-3, help="PRV eps_error relative to the reference ε")
    ap.add_argument("--prv-max-points", type=float, default=2**21, help="largest PRV grid")
    ap.add_argument("--fine-grid", type=float, default=2e-5, help="dpacc_pld_fine's discretisation interval")
    ap.add_argument("--fine-below", type=float, default=1e-10, help="run dpacc_pld_fine where δ is below this")
    ap.add_argument("--revisions", default="", help="peer revisions, for the report")
    args = ap.parse_args()

    started = time.time()
    sets = settings(args.n, args.seed)
    startup = dpcalc_startup(args.dpcalc)
    version = subprocess.run([args.dpcalc, "--version"], capture_output=True, text=True).stdout.strip()
    pool = Pool(args)
    res = {}
    for i, s in enumerate(sets):
        r = res[s["id"]] = {}
        for kind in ("rdp", "ma", "pld"):
            r["dpcalc_" + kind] = run_dpcalc(args.dpcalc, kind, s, args.timeout, startup)
        for peer in PEERS:
            ref = None
            for t in ("dpacc_pld", "opacus_rdp"):
                if r.get(t, {}).get("status") == "ok" and math.isfinite(r[t]["eps"]) and r[t]["eps"] > 0:
                    ref = r[t]["eps"]
                    break
            if peer == "dpacc_pld_fine" and s["delta"] >= args.fine_below:
                r[peer] = dict(status="skipped", detail=f"δ ≥ {args.fine_below:g}")
                continue
            r[peer] = pool.call(peer, s, ref)
        print(f"[{i + 1}/{len(sets)}] {s['id']} σ={s['sigma']:g} q={s['q']:g} T={s['steps']} δ={s['delta']:g}: " +
              " ".join(f"{t}={fnum(r[t].get('eps'), 5) if r[t]['status'] == 'ok' else r[t]['status'][:30]}" for t in TOOLS),
              file=sys.stderr, flush=True)
    pool.close()
    elapsed = time.time() - started

    buf = io.StringIO()
    cw = csv.writer(buf, lineterminator="\n")
    cols = ["id", "label", "sigma", "q", "steps", "delta", "tool", "eps", "eps_lower", "eps_upper", "seconds",
            "seconds_net", "status", "detail"]
    cw.writerow(cols)

    def cell(x):
        if x is None:
            return ""
        if isinstance(x, float):
            return repr(x)
        return str(x)

    for s in sets:
        for t in TOOLS:
            x = res[s["id"]][t]
            cw.writerow([cell(v) for v in (s["id"], s["label"], s["sigma"], s["q"], s["steps"], s["delta"], t,
                                           x.get("eps"), x.get("eps_lower"), x.get("eps_upper"), x.get("seconds"),
                                           x.get("seconds_net"), x["status"], x.get("detail", ""))])
    atomic_write(args.csv, buf.getvalue())

    import numpy
    import scipy
    meta = [
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
        ("machine", machine() + " (shared with other jobs; the script runs under `nice -n 10`)"),
        ("dpcalc", f"`{version}` built with {subprocess.run(['go', 'version'], capture_output=True, text=True).stdout.strip() or 'go'}"),
        ("Opacus", read_version(os.path.join(args.opacus, "opacus/version.py"), "__version__") +
         f" (RDP analysis only; {len(opacus_default_alphas(os.path.join(args.opacus, 'opacus/accountants/rdp.py')))} default orders)"),
        ("dp_accounting", read_version(os.path.join(args.dp_accounting, "VERSION"), "")),
        ("prv_accountant", read_version(os.path.join(args.prv, "setup.py"), "version")),
        ("peer revisions", args.revisions or "not given"),
        ("Python", f"{platform.python_version()}, NumPy {numpy.__version__}, SciPy {scipy.__version__}"),
        ("settings", f"{len(NAMED)} named (n1–n8: σ = 0.3; small δ and a long run; a typical setting; two tiny-q corners) + {args.n} random (seed {args.seed})"),
        ("PRV parameters", f"delta_error = δ/1000, eps_error = {args.prv_eps_rel:g} × ε_ref raised to keep ≤ {args.prv_max_points:.3g} grid points"),
        ("dp_accounting fine grid", f"value_discretization_interval {args.fine_grid:g}, where δ < {args.fine_below:g}: a second upper "
         "bound to judge PRV by where its float64 round-off, which its error bound omits, is of the size of δ"),
        ("limits", f"{args.timeout:g} s and {args.mem_gib:g} GiB address space per call"),
        ("wall time of the whole run", f"{elapsed:.0f} s"),
        ("_startup", startup),
    ]
    md = markdown(args, sets, res, meta, None)
    md = "\n".join(l for l in md.split("\n") if not l.startswith("- _startup"))
    atomic_write(args.markdown, md)
    print(f"peers.py: {len(sets)} settings in {elapsed:.0f} s; wrote {args.csv} and {args.markdown}", file=sys.stderr)


if __name__ == "__main__":
    main()
