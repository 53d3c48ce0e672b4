"""What link heat measures, per cable, from an evaluation (numpy only; the scene and the logical
view colour their bundles with it).

Two views (View > Heat by Busiest Phase switches them):
- "step" (the default): the share of the step a cable is busy (result.link_utilization_array);
  several jobs on one cable add up. A cable busy 1.7 % of the step is cold, however busy it is
  during one short phase. The outline marks the cables on the critical path whose phase exposes
  at least OUTLINE_STEP_SHARE of the step: the ones that lengthen the step by a visible amount.
- "phase": the share of its busiest phase (traffic kind) a cable is busy: who saturates during
  its own phase, whether or not that phase matters to the step. The outline marks every
  bottleneck of a phase that is exposed (result.link_critical).
"""
from __future__ import annotations

import numpy as np

STEP = "step"
PHASE = "phase"
MODES = (STEP, PHASE)
# Step view: a critical-path cable is outlined when its phase's exposed seconds are at least this
# share of the step (below it, the cable costs the step less than the heat scale's smallest step).
OUTLINE_STEP_SHARE = 0.05

CAPTION = {STEP: "heat: share of the step", PHASE: "heat: busiest phase"}
LEGEND_TITLE = {mode: f"Cables ({caption})" for mode, caption in CAPTION.items()}
LEGEND_SCALE = {STEP: "idle  ..  busy the whole step", PHASE: "idle  ..  busy all its phase"}
LEGEND_OUTLINE = {STEP: f"critical path, ≥ {OUTLINE_STEP_SHARE:.0%} of step", PHASE: "bottleneck of an exposed phase"}


def by_job(result) -> dict[str, np.ndarray]:
    """Each job's busy share of every cable (its own step), when several jobs share the fabric."""
    jobs = getattr(result, "jobs", None) or []
    if len(jobs) < 2:
        return {}
    out = {}
    for job in jobs:
        util = getattr(job.result, "link_utilization_array", None)
        if util is not None:
            out[job.name] = np.asarray(util, dtype=float)
    return out


def step_share(result) -> np.ndarray | None:
    """Per cable: the share of the step it is busy (all jobs together), 0..1; None: no load known."""
    util = getattr(result, "link_utilization_array", None) if result is not None else None
    if util is None:
        return None
    jobs = by_job(result)
    if jobs:  # several jobs share the cables: a cable is as busy as all of them together
        return np.minimum(1.0, sum(jobs.values()))
    return np.asarray(util, dtype=float)


def phase_share(result) -> np.ndarray | None:
    """Per cable: the largest share of one phase (traffic kind) it is busy, 0..1."""
    util = step_share(result)
    if util is None:
        return None
    busy = getattr(result, "link_busy_s", None) or {}
    seconds = getattr(result, "link_phase_s", None) or {}
    out = np.zeros(len(util))
    for kind, per_link in busy.items():
        phase = float(seconds.get(kind, 0.0))
        if phase > 0 and len(per_link) == len(out):
            np.maximum(out, np.minimum(1.0, np.asarray(per_link, dtype=float) / phase), out=out)
    return out


def values(result, mode: str) -> np.ndarray | None:
    """The heat of every cable in this view (0..1), or None."""
    return phase_share(result) if mode == PHASE else step_share(result)


def outlined(result, mode: str, n: int) -> np.ndarray | None:
    """Per cable: outlined in this view; None when the result says nothing of the critical path."""
    critical = getattr(result, "link_critical", None)
    if critical is None or len(critical) != n:
        return None
    if mode == PHASE:
        return np.asarray(critical, dtype=bool)
    step = float(getattr(result, "step_time_s", 0.0) or 0.0)
    exposed = getattr(result, "link_exposed_s", None) or {}
    bottleneck = getattr(result, "link_bottleneck", None) or {}
    out = np.zeros(n, dtype=bool)
    for kind, flag in bottleneck.items():
        if (step > 0 and (getattr(result, "link_phase_exposed", {}) or {}).get(kind)
                and float(exposed.get(kind, 0.0)) >= OUTLINE_STEP_SHARE * step and len(flag) == n):
            out |= np.asarray(flag, dtype=bool)
    return out


def describe(result, mode: str, index: int) -> str:
    """One line saying what the colour of this cable measures, in this view."""
    if mode == PHASE:
        busy = getattr(result, "link_busy_s", None) or {}
        seconds = getattr(result, "link_phase_s", None) or {}
        best, best_share = "", 0.0
        for kind, per_link in busy.items():
            phase = float(seconds.get(kind, 0.0))
            if phase > 0 and index < len(per_link) and per_link[index] / phase > best_share:
                best, best_share = kind, min(1.0, float(per_link[index]) / phase)
        if not best:
            return "heat (busiest phase): idle"
        return f"heat (busiest phase): busy {best_share:.1%} of the {best.removesuffix('_comm').upper()} phase"
    share = step_share(result)
    value = float(share[index]) if share is not None and index < len(share) else 0.0
    return f"heat (share of the step): busy {value:.1%} of the step"
