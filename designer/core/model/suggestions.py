"""Values that would make an impossible plan valid, the ones a person would pick first.

A suggestion is only offered when it has been tried: the plan is checked again with the
new value and must come out with fewer errors (none, ideally). Among those, values built
from small primes (2, 3, 5, 7: sizes people use, unlike 43) win, then the nearest to the
value typed (by ratio: 3 -> 4 before 2). Each suggestion names its field.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable

# Short names a user knows the plan fields by (the Job panel's labels).
FIELD_LABELS = {
    "tensor_model_parallel_size": "TP", "pipeline_model_parallel_size": "PP", "context_parallel_size": "CP",
    "expert_model_parallel_size": "EP", "virtual_pipeline_model_parallel_size": "virtual stages",
    "global_batch_size": "global_batch_size", "micro_batch_size": "micro_batch_size", "num_gpus": "num_gpus",
}
WORKLOAD_FIELDS = ("global_batch_size", "micro_batch_size")
MAX_RATIO = 8  # a suggestion more than 8x away from the typed value is a different plan, not a fix
MAX_TRIES = 64  # candidate plans checked per field (each check is a few microseconds)
IDLE_FRACTION_FIRST = 0.125  # "set num_gpus" comes first when at most 1/8 of the cluster stays idle

ErrorCount = Callable[[object, object], int]  # (workload, parallelism) -> number of plan errors


def divisors(n: int) -> list[int]:
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]


def is_plausible(n: int) -> bool:
    """Built from the primes 2, 3, 5, 7 only: 4, 12, 96, 1024 yes; 43, 86, 1032 no."""
    if n < 1:
        return False
    for p in (2, 3, 5, 7):
        while n % p == 0:
            n //= p
    return n == 1


def _distance(candidate: int, current: int) -> float:
    return abs(math.log(candidate / current)) if current > 0 else float(candidate)


def ranked(current: int, candidates: Iterable[int], limit: int = MAX_TRIES) -> list[int]:
    """Plausible candidates within MAX_RATIO of `current`, nearest first (larger first on a tie)."""
    near = {c for c in candidates if c >= 1 and c != current and is_plausible(c)
            and (current < 1 or max(c / current, current / c) <= MAX_RATIO)}
    return sorted(near, key=lambda c: (_distance(c, current), -c))[:limit]


def _with(workload, parallelism, field: str, value: int):
    if field in WORKLOAD_FIELDS:
        return dataclasses.replace(workload, **{field: value}), parallelism
    return workload, dataclasses.replace(parallelism, **{field: value})


def best_values(workload, parallelism, field: str, current: int, candidates: Iterable[int],
                errors: ErrorCount, errors_now: int, keep: int = 2) -> list[int]:
    """Up to `keep` values for one field that leave the fewest errors (fewer than now), best first."""
    scored = []
    for rank, value in enumerate(ranked(current, candidates)):
        left = errors(*_with(workload, parallelism, field, value))
        if left < errors_now:
            scored.append((left, rank, value))
    if not scored:
        return []
    fewest = min(s[0] for s in scored)
    return [value for left, _, value in sorted(scored) if left == fewest][:keep]


def gpu_count(workload, parallelism, cluster_gpus: int, model_parallel: int, errors: ErrorCount,
              errors_now: int) -> int | None:
    """The largest job size (num_gpus) up to the cluster's that makes the plan valid, or None.

    This is the fix after a server was added to a design sized for a round number of GPUs:
    the job keeps its 1024 GPUs and the new server stays idle.
    """
    if model_parallel < 1 or cluster_gpus < model_parallel:
        return None
    top = cluster_gpus - cluster_gpus % model_parallel
    for k in range(MAX_TRIES):
        n = top - k * model_parallel
        if n < max(model_parallel, cluster_gpus // 2):
            break
        if errors(*_with(workload, parallelism, "num_gpus", n)) == 0:
            return n
    return None


def phrase(field: str, values: list[int]) -> str:
    """'TP 4 or 2', 'global_batch_size 1024'."""
    return f"{FIELD_LABELS.get(field, field)} " + " or ".join(str(v) for v in values)


def join_options(options: list[str]) -> str:
    return "; or ".join(options)


def gpu_count_phrase(n: int, cluster_gpus: int) -> str:
    idle = cluster_gpus - n
    return f"set num_gpus to {n}" + (f" ({idle} of the {cluster_gpus} GPUs stay idle)" if idle else "")


def num_gpus_first(n: int, cluster_gpus: int) -> bool:
    return cluster_gpus > 0 and (cluster_gpus - n) / cluster_gpus <= IDLE_FRACTION_FIRST
