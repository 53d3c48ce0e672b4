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

    def per_part(self, dim: str, primitive: str, nbytes: float, parts: int) -> list[float]:
        """With the dimension's groups in rounds of `parts` (the pipeline's pairs: one per stage boundary),
        per part what the collective takes on its groups while all of them run it
        (CollectiveModel.cost_per_part); 0 without groups."""
        model = self.dims.get(dim)
        if model is None:
            return [0.0] * parts
        return model.cost_per_part(primitive, nbytes, parts)
