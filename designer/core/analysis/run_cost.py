"""Per run, not per step: time to train a token budget, GPU-hours, energy and dollars, with goodput.

    ideal hours     = tokens / tokens_per_s / 3600
    wall hours      = ideal hours / goodput                (analysis/goodput.py)
    GPU-hours       = job GPUs x wall hours
    energy (MWh)    = facility power x job share x wall hours   (parts' maximum power x PUE: an upper bound)
    dollars         = cost per hour x job share x wall hours    (capex over its years + energy, analysis/cost.py)
    lost work ($)   = dollars x (1 - goodput)
    hot spares ($)  = their GPUs' share of capex, over the same years, for the run's hours
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from ..problems import DesignerError, Problem
from .cost import HOURS_PER_YEAR, CostEstimate
from .goodput import Goodput

_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}


def parse_tokens(text: str, where: str = "--tokens") -> float:
    """'15T', '2.5e12', '800B' -> tokens."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmbgtp]?)\s*", str(text), re.IGNORECASE)
    value = float(m.group(1)) * _SUFFIX[m.group(2).lower()] if m else float("nan")
    if not (m and math.isfinite(value) and value > 0):
        raise DesignerError([Problem(f"{where}: {text!r} is not a token count", where,
                                     fix="a positive number with an optional K, M, B or T, e.g. 15T")])
    return value


@dataclass(frozen=True)
class RunCost:
    """What training a token budget costs: hours, GPU-hours, energy and dollars."""
    tokens: float
    tokens_per_s: float
    ideal_hours: float  # at the predicted throughput, nothing interrupted
    goodput: float
    hours: float  # wall-clock
    days: float
    gpu_hours: float
    energy_mwh: float
    usd: float
    usd_lost: float  # the share of the bill that buys no progress (checkpoints, restarts, redone work)
    spares_usd: float
    usd_per_hour: float  # the job's share of the cluster's cost per hour

    def as_json(self) -> dict:
        return asdict(self)


def run_cost(tokens: float, tokens_per_s: float, num_gpus: int, cost: CostEstimate, goodput: Goodput) -> RunCost:
    ideal = tokens / tokens_per_s / 3600 if tokens_per_s > 0 else math.inf
    good = goodput.goodput
    hours = ideal / good if good > 0 else math.inf
    per_hour = cost.usd_per_hour * cost.job_share
    usd = per_hour * hours
    capex_per_gpu = cost.capex_usd / max(1, round(num_gpus / cost.job_share)) if cost.job_share > 0 else 0.0
    spares = goodput.hot_spares * goodput.spare_unit_gpus * capex_per_gpu
    spares_usd = spares / (cost.amortisation_years * HOURS_PER_YEAR) * hours
    return RunCost(tokens=tokens, tokens_per_s=tokens_per_s, ideal_hours=ideal, goodput=good, hours=hours,
                   days=hours / 24, gpu_hours=num_gpus * hours,
                   energy_mwh=cost.facility_power_kw * cost.job_share * hours / 1000,
                   usd=usd + spares_usd, usd_lost=usd * (1 - good), spares_usd=spares_usd, usd_per_hour=per_hour)
