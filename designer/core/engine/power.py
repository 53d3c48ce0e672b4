"""The clock a part holds under its power limit, from its power at the cap.

A GEMM stream's dynamic power goes as f V^2 and, near the top of the DVFS curve, V roughly as f:
P = static + kappa R^3 for a tensor rate R of one die design (kappa: watts per (PFLOP/s)^3). Under
a power limit the clock settles where P meets the limit, so the sustained rate is
((tdp (1 - static share)) / kappa)^(1/3), and the sustained factor that rate over the part's
cold-burst GEMM (best_gemm_tflops), at most 1.
"""
from __future__ import annotations


def power_capped_clock(tdp_w: float, burst_tflops: float, power_w_per_pflops3: float,
                       static_power_fraction: float) -> float:
    """Sustained share of the cold-burst GEMM rate of a part whose limit is `tdp_w`."""
    dynamic_w = tdp_w * (1.0 - static_power_fraction)
    sustained_tflops = 1000.0 * (dynamic_w / power_w_per_pflops3) ** (1.0 / 3.0)
    return min(1.0, sustained_tflops / burst_tflops)
