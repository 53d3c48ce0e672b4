"""What one Engine reuses between evaluations, in one object it owns and hands to its stages.

Every memo of the engine's plan-dependent work lives here, bounded, and keyed on values (plan
sizes, view keys, job names) or on objects the cache itself holds alive and finds by identity (a
Hardware, the constants, a fabric): never on the `id()` of an object that may die, whose number
Python then gives to a new one. Nothing is written into another object's attributes, and nothing
is shared between engines: threads that each own an engine (a Dask worker's) share no memo.

- `layer_phases`: per view of the fabric ("cluster" or a job's GPU set), the layer phases of the
  job last costed there, with the collectives they asked for and the answers (a job costed
  alone and then with the other jobs' traffic reuses them when every answer is the same).
- `layer_costs(hw, k)`: per (Hardware, constants) pair, the layer costs of earlier plans of a
  search (stages/phases.py), by sharding, pace and precision terms.
- `stage_params`: per (stage layers, TP, EP, ETP, PP, VP, shape), each stage's parameters.
- `jobs`: per job name, its costing alone and with the others' traffic (several jobs on one
  fabric), valid while the fabric object is the same; `job_placement`: where the jobs sit.
- `placements`: per plan (its rank layout: TP, CP, EP, DP, PP sizes and order), the ranks of
  every group (Engine.placement bounds it by GPUs x entries).
- `schedules`: per (schedule, sizes, stage times, transfer time), the simulated pipeline.
- `hardware`: per fabric object (the cluster's or a job's view), the Hardware of a job on it.
- `groups`: per (view key, rank layout, dimension, expert, NVLS), the collective groups of a
  plan with their routes and costs (Engine.groups bounds it; `groups_in_use`, those of the
  evaluation under way, are never evicted).
- `job_views`: per job GPU set (the hash of its GPU indices, checked against the view's own
  GPUs), the job's view of the fabric (Engine.job_fabric).

`groups`, `job_views`, `hardware`, `jobs` and `job_placement` depend on the fabric object:
`forget_fabric` empties them when the engine builds a new one.
"""
from __future__ import annotations

import numpy as np

from .stages.layout import Layout
from .stages.phases import LAYER_COSTS_KEPT, LayerPhases, RecordingComm, layer_phases

MAX_VIEWS = 64  # views whose layer phases are kept: one per job of a design, a few designs
MAX_LAYER_COSTS = 4  # (Hardware, constants) pairs whose layer costs are kept
STAGE_PARAMS_KEPT = 256  # a plan search repeats a few hundred (shape, split) pairs
SCHEDULES_KEPT = 17  # simulated pipelines: a search often comes back to a recent one


class BoundedMemo:
    """A dict of at most `most` entries; the oldest goes first. Used by one thread at a time, as
    its engine is (each thread that evaluates owns an engine)."""

    def __init__(self, most: int):
        self.most = most
        self._entries: dict = {}

    def get(self, key, default=None):
        return self._entries.get(key, default)

    def put(self, key, value):
        """Keep `value` under `key` (the oldest entry dropped once `most` are held); returns it."""
        if key not in self._entries and len(self._entries) >= self.most:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = value
        return value

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


class EngineCache:
    """The memos of one Engine (see the module's docstring for what each keys on)."""

    def __init__(self):
        self.views = BoundedMemo(MAX_VIEWS)
        self._layer_costs: list[tuple[object, object, BoundedMemo]] = []  # (hw, k, memo), the latest first
        self.stage_params = BoundedMemo(STAGE_PARAMS_KEPT)
        self.jobs: dict[tuple[str, str], tuple] = {}  # ("alone" | "shared", job name) -> costing
        self.jobs_fabric = None  # the fabric object `jobs` was costed on
        self.job_placement: tuple | None = None  # (fabric, jobs' placement keys, place_jobs answer)
        self.placements: dict = {}  # ResolvedPlan (vp 1, no micro-batches) -> Placement
        self.schedules = BoundedMemo(SCHEDULES_KEPT)
        self.hardware: list[tuple] = []  # (fabric, num_gpus, calibration, Hardware), the latest first
        self.groups: dict = {}  # (view key, plan, dim, expert, nvls) -> CollectiveModel
        self.groups_in_use: set | None = None  # the groups of the evaluation under way (never evicted)
        self.job_views: dict = {}  # hash of a job's GPU set -> its view of the fabric (Fabric.view)

    def clear(self) -> None:
        """Forget every memo (what a cold plan costs on a built fabric; benchmarks)."""
        self.views.clear()
        self._layer_costs.clear()
        self.stage_params.clear()
        self.placements.clear()
        self.schedules.clear()
        self.hardware.clear()
        self.forget_jobs()

    def forget_fabric(self) -> None:
        """Forget what was built on the engine's fabric (it is about to be built again): with the
        fabric let go first, none of it is held beside the new one while that is built."""
        self.groups.clear()
        self.job_views.clear()
        self.hardware.clear()
        self.forget_jobs()

    def forget_jobs(self) -> None:
        self.jobs.clear()
        self.jobs_fabric = None
        self.job_placement = None

    def jobs_on(self, fabric) -> dict:
        """The job costings made on `fabric` (emptied when the fabric is another object: rebuilt)."""
        if self.jobs_fabric is not fabric:
            self.jobs.clear()
            self.jobs_fabric = fabric
        return self.jobs

    def layer_costs(self, hw, k) -> BoundedMemo:
        """The layer costs of earlier plans on this Hardware with these constants (both held here,
        so the memo never answers for a new object that happens to reuse a dead one's address)."""
        for held_hw, held_k, memo in self._layer_costs:
            if held_hw is hw and held_k is k:
                return memo
        memo = BoundedMemo(LAYER_COSTS_KEPT)
        self._layer_costs.insert(0, (hw, k, memo))
        del self._layer_costs[MAX_LAYER_COSTS:]
        return memo

    def layer_phases(self, view_key, job, hw, k, layout: Layout, comm) -> LayerPhases:
        """The layer phases of `job` on a view, reused when nothing they read changed: the same
        job, hardware, constants and layout, and every collective they asked for answered as before
        (asking again also records the calls in the new costing's ledger, as costing them would)."""
        hit = self.views.get(view_key)
        if hit is not None:
            old_job, old_hw, old_k, old_layout, phases, calls = hit
            if (old_hw is hw and old_job == job and old_k == k and _same_layout(old_layout, layout)
                    and all(comm(dim, primitive, nbytes) == seconds for dim, primitive, nbytes, seconds in calls)):
                return phases
        recording = RecordingComm(comm)
        phases = layer_phases(job, hw, k, layout, recording, self.layer_costs(hw, k))
        self.views.put(view_key, (job, hw, k, layout, phases, recording.calls))
        return phases


def _same_layout(a: Layout, b: Layout) -> bool:
    if a is b:
        return True
    return (a.placement.plan == b.placement.plan and a.stage_layers == b.stage_layers
            and np.array_equal(a.pipelines, b.pipelines) and np.array_equal(a.patterns, b.patterns)
            and np.array_equal(a.pattern_of_replica, b.pattern_of_replica))
