"""The layer phases of a job costed again on the same GPUs, reused when nothing they read changed.

Several jobs on one fabric cost each job twice: alone, then with the other jobs' traffic taken off
the up-links (engine/jobs.py). Both costings run on the same view of the fabric, so the job, its
hardware, its layout and its groups are the same; only the rates of the groups that leave their
servers may differ. The layer phases take every rate from the answers of the comm function (the
time of one collective of one dimension), so they are the same whenever those answers are: the
memo keeps each view's phases with the questions they asked and their answers, asks them again,
and reuses the phases only when every answer is the same (TP inside the servers: it always is).
Asking again also records the calls in the new costing's ledger, as costing them would.
"""
from __future__ import annotations

import numpy as np

from .stages.layout import Layout
from .stages.phases import LayerPhases, RecordingComm, layer_phases

MAX_VIEWS = 64  # views remembered: one per job of a design, a few designs


class PhaseMemo:
    def __init__(self):
        self._by_view: dict = {}
        # id(hardware) -> (hardware, its layer costs by sharding and pace: stages/phases.py), for the
        # plans of a search: a few Hardware objects at most (each holds per-GPU arrays)
        self._layer_costs: dict[int, tuple] = {}

    def layer_costs(self, hw) -> dict:
        hit = self._layer_costs.get(id(hw))
        if hit is None or hit[0] is not hw:
            if len(self._layer_costs) >= 4:
                self._layer_costs.clear()
            hit = self._layer_costs[id(hw)] = (hw, {})
        return hit[1]

    def layer_phases(self, view_key, job, hw, k, layout: Layout, comm) -> LayerPhases:
        hit = self._by_view.get(view_key)
        if hit is not None:
            old_job, old_hw, old_k, old_layout, phases, calls = hit
            if (old_hw is hw and old_job == job and old_k == k and _same_layout(old_layout, layout)
                    and all(comm(dim, primitive, nbytes) == seconds for dim, primitive, nbytes, seconds in calls)):
                return phases
        recording = RecordingComm(comm)
        phases = layer_phases(job, hw, k, layout, recording, self.layer_costs(hw))
        if len(self._by_view) >= MAX_VIEWS:
            self._by_view.clear()
        self._by_view[view_key] = (job, hw, k, layout, phases, recording.calls)
        return phases

    def clear(self) -> None:
        self._by_view.clear()
        self._layer_costs.clear()


def _same_layout(a: Layout, b: Layout) -> bool:
    if a is b:
        return True
    return (a.placement.plan == b.placement.plan and a.stage_layers == b.stage_layers
            and np.array_equal(a.pipelines, b.pipelines) and np.array_equal(a.patterns, b.patterns)
            and np.array_equal(a.pattern_of_replica, b.pattern_of_replica))
