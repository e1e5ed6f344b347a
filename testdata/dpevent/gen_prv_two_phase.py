#!/usr/bin/env python3
"""PRV's certified interval for the two-phase example of docs/events.md.

5000 steps of a Poisson-subsampled Gaussian (q = 0.01, sigma = 1) then 3000
(q = 0.02, sigma = 2), delta = 1e-5, with microsoft/prv_accountant's
heterogeneous PRVAccountant (eps_error 0.005, delta_error 1e-9). Usage:
python3 gen_prv_two_phase.py /path/to/prv_accountant > two_phase_prv.json
"""
import json, sys
sys.path.insert(0, sys.argv[1])
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

prvs = [PoissonSubsampledGaussianMechanism(sampling_probability=0.01, noise_multiplier=1.0),
        PoissonSubsampledGaussianMechanism(sampling_probability=0.02, noise_multiplier=2.0)]
acc = PRVAccountant(prvs=prvs, max_self_compositions=[5000, 3000], eps_error=0.005, delta_error=1e-9)
lo, est, up = acc.compute_epsilon(delta=1e-5, num_self_compositions=[5000, 3000])
json.dump({"delta": 1e-5, "eps_error": 0.005, "delta_error": 1e-9,
           "eps_lower": lo, "eps_estimate": est, "eps_upper": up}, sys.stdout, indent=2)
print()
