#!/usr/bin/env python3
"""Writes the custom-mechanism events and references of the tests of
accounting/mechanism/custom_test.go and cmd/dpcalc (custom events).

Provenance: written for dpcalc, run with Debian's python3 and mpmath 1.3.0:

    python3 testdata/custom/gen.py      # rewrites testdata/custom/*.json

Events (dp_accounting's DpEvent JSON form; the custom classes are dpcalc's):
  gaussian_curve.json  RdpCurveDpEvent of the Gaussian, sigma 2, at orders
                       1.5..256 (alpha/(2 sigma^2), exact in binary), x 100
  rr_pmf.json          PldPmfDpEvent of binary randomized response at
                       eps0 = 0.5 (exact: losses +-eps0 lie on the grid 0.01), x 30
  gaussian_pmf.json    PldPmfDpEvent of the Gaussian, sigma 1, discretised
                       pessimistically (each loss rounded up to the grid 0.01,
                       the tail above 12 moved to infinity), x 10
  pure_profile.json    PrivacyProfileDpEvent (eps0 = 0.3, delta 0) x 25
  approx_profile.json  PrivacyProfileDpEvent (eps0 = 0.3, delta 1e-6) x 25
  composed.json        rr_pmf's PMF x 10 composed with 1000 steps of the
                       Poisson-sampled Gaussian (q 0.01, sigma 1)
  pate.json            the PATE-style example of docs/events.md: an
                       illustrative data-dependent RDP curve per answered
                       query (x 200) and a profile for a final release
references.json holds, at 50 digits:
  rr: exact delta(eps) and eps(delta) of 30-fold binary randomized response
      (P(k) = C(T,k) a^k (1-a)^(T-k), a = e^eps0/(1+e^eps0), loss (2k-T) eps0);
  gaussian: delta(eps) and eps(delta) of the Gaussian with sigma/sqrt(10)
      (Balle and Wang 2018, Theorem 8), which the pessimistic PMF dominates;
  pure: the optimal composition of 25 eps0-DP mechanisms (Kairouz, Oh and
      Viswanath 2015, Theorem 3.3: delta at eps = (k - 2i) eps0 is
      sum_{l<i} C(k,l) (e^{(k-l)eps0} - e^{(k-2i+l)eps0}) / (1+e^eps0)^k),
      checked here against the hockey-stick sum of k-fold randomized response,
      and eps(delta) by bisection on that sum;
  approx: the optimal composition of 25 (0.3, 1e-6)-DP mechanisms (the same
      theorem: 1 - (1 - delta0)^k (1 - delta_i)), at delta 1e-4.
"""
import json
import os

import mpmath as mp

mp.mp.dps = 50
HERE = os.path.dirname(os.path.abspath(__file__))
DELTA = mp.mpf("1e-5")


def dump(name, obj):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def selfc(e, n):
    return {"module_name": "dp_accounting.dp_event", "class_name": "SelfComposedDpEvent", "event": e, "count": n}


def rr_delta(eps0, T, eps):
    a = mp.e**eps0 / (1 + mp.e**eps0)
    s = mp.mpf(0)
    for k in range(T + 1):
        p = mp.binomial(T, k) * a**k * (1 - a)**(T - k)
        q = mp.binomial(T, k) * (1 - a)**k * a**(T - k)
        s += max(p - mp.e**eps * q, 0)
    return s


def eps_for(delta_of, delta, hi):
    lo = mp.mpf(0)
    hi = mp.mpf(hi)
    for _ in range(200):
        mid = (lo + hi) / 2
        if delta_of(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def kov(eps0, k, i):
    s = mp.mpf(0)
    for l in range(i):
        s += mp.binomial(k, l) * (mp.e**((k - l) * eps0) - mp.e**((k - 2 * i + l) * eps0))
    return s / (1 + mp.e**eps0)**k


def gauss_delta(mu, eps):
    return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)


def main():
    refs = {}
    # (a) the Gaussian's RDP curve.
    orders = [1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 48, 64, 128, 256]
    sigma = 2
    curve = {"module_name": "dpcalc", "class_name": "RdpCurveDpEvent", "orders": orders,
             "rdp": [float(mp.mpf(a) / (2 * sigma * sigma)) for a in orders]}
    dump("gaussian_curve.json", selfc(curve, 100))
    refs["curve"] = {"sigma": sigma, "count": 100}

    # (b) randomized response, exact on the grid.
    eps0, h, T = mp.mpf("0.5"), 0.01, 30
    a = mp.e**eps0 / (1 + mp.e**eps0)
    probs = [0.0] * 101
    probs[0], probs[100] = float(1 - a), float(a)
    rr = {"module_name": "dpcalc", "class_name": "PldPmfDpEvent", "value_discretization_interval": h,
          "pessimistic_estimate": True, "symmetric": True,
          "remove_lower_loss": -50, "remove_probs": probs, "remove_infinity_mass": 0}
    dump("rr_pmf.json", selfc(rr, T))
    refs["rr"] = {"eps0": 0.5, "count": T, "delta": 1e-5,
                  "epsilon": mp.nstr(eps_for(lambda e: rr_delta(eps0, T, e), DELTA, 20), 20),
                  "at_epsilon": 3.0, "delta_at": mp.nstr(rr_delta(eps0, T, mp.mpf(3)), 20)}

    # (b') the Gaussian, pessimistic.
    s1, h, T = mp.mpf(1), mp.mpf("0.01"), 10
    mu = 1 / (2 * s1 * s1)
    sd = mp.sqrt(2 * mu)
    lo_i, hi_i = int(mp.floor((mu - 12 * sd) / h)), int(mp.ceil((mu + 12 * sd) / h))
    cdf = lambda l: mp.ncdf((l - mu) / sd)
    g = []
    for i in range(lo_i, hi_i + 1):
        # Loss in ((i-1)h, ih] rounded up to ih; everything below lo_i·h to lo_i.
        left = cdf((i - 1) * h) if i > lo_i else mp.mpf(0)
        g.append(float(cdf(i * h) - left))
    gp = {"module_name": "dpcalc", "class_name": "PldPmfDpEvent", "value_discretization_interval": float(h),
          "pessimistic_estimate": True, "symmetric": True, "remove_lower_loss": lo_i,
          "remove_probs": g, "remove_infinity_mass": float(1 - cdf(hi_i * h))}
    dump("gaussian_pmf.json", selfc(gp, T))
    muT = mp.sqrt(T) / s1
    refs["gaussian"] = {"sigma": 1, "count": T, "delta": 1e-5,
                        "epsilon": mp.nstr(eps_for(lambda e: gauss_delta(muT, e), DELTA, 30), 20),
                        "at_epsilon": 3.0, "delta_at": mp.nstr(gauss_delta(muT, mp.mpf(3)), 20)}

    # (c) pure eps0-DP, k-fold: Kairouz et al.'s optimal composition.
    eps0, k = mp.mpf("0.3"), 25
    prof = {"module_name": "dpcalc", "class_name": "PrivacyProfileDpEvent", "epsilons": [0.3], "deltas": [0]}
    dump("pure_profile.json", selfc(prof, k))
    table = []
    for i in range(1, k // 2 + 1):
        e = (k - 2 * i) * eps0
        d1, d2 = kov(eps0, k, i), rr_delta(eps0, k, e)
        assert abs(d1 - d2) <= mp.mpf("1e-40") * max(d1, mp.mpf("1e-300")), (i, d1, d2)
        table.append([float(e), mp.nstr(d1, 20)])
    refs["pure"] = {"eps0": 0.3, "count": k, "delta": 1e-5,
                    "at_epsilon": float((k - 12) * eps0), "delta_at": mp.nstr(kov(eps0, k, 6), 20),
                    "epsilon": mp.nstr(eps_for(lambda e: rr_delta(eps0, k, e), DELTA, 20), 20),
                    "kov": table}

    # (c') (eps0, delta0)-DP, k-fold: Kairouz et al., Theorem 3.3:
    # 1 - (1 - delta0)^k (1 - delta_i) at eps = (k - 2i) eps0.
    d0 = mp.mpf("1e-6")
    prof2 = {"module_name": "dpcalc", "class_name": "PrivacyProfileDpEvent", "epsilons": [0.3], "deltas": [1e-6]}
    dump("approx_profile.json", selfc(prof2, k))
    approx = lambda e: 1 - (1 - d0)**k * (1 - rr_delta(eps0, k, e))
    refs["approx"] = {"eps0": 0.3, "delta0": 1e-6, "count": k, "delta": 1e-4,
                      "epsilon": mp.nstr(eps_for(approx, mp.mpf("1e-4"), 20), 20),
                      "at_epsilon": float((k - 12) * eps0), "delta_at": mp.nstr(1 - (1 - d0)**k * (1 - kov(eps0, k, 6)), 20)}

    # (d) a custom event composed with a Poisson-sampled Gaussian.
    dump("composed.json", {"module_name": "dp_accounting.dp_event", "class_name": "ComposedDpEvent", "events": [
        selfc(rr, 10),
        selfc({"module_name": "dp_accounting.dp_event", "class_name": "PoissonSampledDpEvent", "sampling_probability": 0.01,
               "event": {"module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent", "noise_multiplier": 1.0}}, 1000),
    ]})

    # The PATE-style example: per answered query an RDP curve, then a
    # profile for the release of the student's final accuracy. The values
    # are illustrative: GNMax with sigma 40 is (alpha, alpha/sigma^2)-RDP
    # whatever the votes (Papernot et al. 2018, Proposition 8); a
    # data-dependent analysis of a query with a wide vote margin gives less
    # at small orders, here min(alpha/sigma^2, 0.02 alpha^2/sigma^2) stands in
    # for the curve such an analysis computes.
    pate_orders = [2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 128]
    pate_rdp = [float(min(mp.mpf(o) / (40 * 40), mp.mpf(o) / (40 * 40) * mp.mpf("0.02") * o)) for o in pate_orders]
    dump("pate.json", {"module_name": "dp_accounting.dp_event", "class_name": "ComposedDpEvent", "events": [
        selfc({"module_name": "dpcalc", "class_name": "RdpCurveDpEvent", "orders": pate_orders, "rdp": pate_rdp}, 200),
        {"module_name": "dpcalc", "class_name": "PrivacyProfileDpEvent", "epsilons": [0.1, 0.5, 1], "deltas": [1e-6, 1e-8, 0]},
    ]})
    dump("references.json", refs)


if __name__ == "__main__":
    main()
