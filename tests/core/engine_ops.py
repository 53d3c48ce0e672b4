"""For tests that cost one layer by hand (compute.layer_cost): the engine's op coster of a catalog
part at BF16, and a communication that costs nothing (when compute alone is measured)."""
from __future__ import annotations

import dataclasses

from designer.core.engine.compute import OpCoster
from designer.core.engine.constants import accelerator_constants
from designer.core.model.catalog import load_catalog

H100 = "H100-SXM5-80GB"


def NO_COMM(dim, primitive, nbytes) -> float:  # noqa: N802 (a constant of the tests)
    """layer_cost's communication cost when communication is not what is measured."""
    return 0.0


def ops_of(part: str = H100, **constants) -> OpCoster:
    """`part`'s op coster at BF16 from the catalog; `constants` replace its accelerator constants
    (e.g. sustained_clock_factor=1.0: the burst clock kernels are benchmarked at)."""
    catalog = load_catalog()
    acc = catalog.accelerator(part)
    ac = accelerator_constants(acc, None, catalog)
    if constants:
        ac = dataclasses.replace(ac, **constants)
    return OpCoster(acc.peak_for("bf16"), acc.peak_for("bf16"), acc.hbm_tbps, ac)
