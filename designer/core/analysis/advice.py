"""Advice: one candidate change to a design (the Advisor's row, `designer advise`'s line) and what
it does to the step, the memory and the cost."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..model.document import Document


@dataclass
class Advice:
    """One Advisor suggestion: the change, the design it gives, and its predicted step time and MFU."""
    id: str
    title: str
    category: str  # hardware | parallelism | software | scale
    description: str
    document: Document | None = field(default=None, repr=False)  # the changed design
    job_only: bool = True  # only workload/parallelism differ (the GUI applies it as a job edit)
    step_time_s: float = 0.0
    mfu: float = 0.0
    tokens_per_s: float = 0.0
    speedup: float = 0.0  # current step / new step - 1 (per GPU-second for "more nodes": see note)
    fits_in_memory: bool = True
    memory_gib: float = 0.0
    note: str = ""
    error: str = ""
    set: list[str] = field(default_factory=list)
    spare_share: float = 0.0  # servers the change keeps in a pool beside the job, as a share of it (priced)
    # Cost side (advice_cost.py): relative changes against the current design; None = not priced.
    capex_change: float | None = None
    fabric_capex_change: float | None = None
    tokens_per_usd_change: float | None = None
    cost_note: str = ""  # "-1.8% speed, -14% fabric cost, +3.0% tokens/$"

    def as_json(self) -> dict:
        out = {k: v for k, v in dataclasses.asdict(self).items() if k not in ("document",)}
        return out
