"""Stage 4: collective costs. The later stages ask for the time of one collective of one
dimension; the ledger answers from that dimension's groups and keeps, per dimension and
primitive, the costliest call (what the result's collectives, links and bottlenecks report)."""
from __future__ import annotations

from ..collectives import CollectiveCost, CollectiveModel


class CommLedger:
    """A `CommFn` (dimension, primitive, bytes) -> seconds over the job's groups. Dimensions:
    tp, cp, dp (the dense gradient group, DP x CP), pp (stage-to-stage pairs) and, with
    experts, ep and edp (the expert gradient group). A dimension without groups costs 0."""

    def __init__(self, dims: dict[str, CollectiveModel]):
        self.dims = dims
        self.used: dict[str, CollectiveCost] = {}  # "dim:primitive" -> its costliest call

    def __call__(self, dim: str, primitive: str, nbytes: float) -> float:
        model = self.dims.get(dim)
        if model is None:
            return 0.0
        c = model.cost(primitive, nbytes)
        key = f"{dim}:{primitive}"
        used = self.used
        if key not in used or c.time_s > used[key].time_s:
            used[key] = c
        return c.time_s
