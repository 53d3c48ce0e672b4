"""NCCL's latency tables per release (src/graph/tuning.cc: baseLat, hwLat[NVLINK], hwLat[NET]), in the
shape of the engine's `nccl_base_latency_us`, `nccl_nvlink_step_latency_us` and
`nccl_net_step_latency_us` (engine/constant_groups/collective.py): the release named by `nccl_version` picks its
tables, and a `calibration` entry for a table overrides single values on top.

Read from the tags of github.com/NVIDIA/nccl. What changed between them:
- 2.18: Simple tree per step 4 us over NVLink, 14 us over the network; NVLS 23 us in baseLat;
  CollNet 8 / 10.7 us.
- 2.19 (to 2.20): Simple tree per step 28 us on every kind of link; NVLS's 23 us moved to
  hwLat[NVLINK]; CollNet 3.7 / 31 us.
- 2.21 (to 2.22): NVLS 25 us.
- 2.23 (to 2.27): Simple tree back to 4 us over NVLink and 14 over the network, with a baseLat of
  8.4 us (as the ring's).
The ring's per-step figures (LL 0.6, LL128 1.9, Simple 3.4 us over NVLink; 2.7, 4.0, 14 over the
network) and the LL/LL128 baseLat (6.6/6.8 and 14 us) are the same in all of them; the engine keeps
its fitted 1.25 us for the ring's LL128 NVLink step (RING_LL128_NVLINK_STEP_US).

PAT is not in tuning.cc's tables (it has its own formula, 2.23+): its 8 us base is RCCL's port, its
steps take the ring's Simple figures; the same in every release.
"""
from __future__ import annotations


CURRENT_NCCL = 2.27  # the release the engine's defaults follow (the newest read: v2.27.7-1)
# The one entry the engine does not take from tuning.cc: the ring's LL128 step over NVLink, NCCL's 1.9 us
# in every release read, fitted to 1.25 on the DGX H100 all_reduce curve (with 1.9 its 4-16 MiB rows
# come out 7-8 % slow, and 2 x 8 H100 take NVLS from 32 MiB where a measured log runs the ring)
RING_LL128_NVLINK_STEP_US = 1.25


class LatencyTables:
    """NCCL's latency tables (base, NVLink and network per step) of the releases from `first` on, in us."""
    first: float  # the first release (major.minor) with these values
    tags: str  # the NCCL tags they were read from
    base: dict  # baseLat, us
    nvlink: dict  # hwLat[NCCL_HW_NVLINK], us per step
    net: dict  # hwLat[NCCL_HW_NET], us per step

    __slots__ = ("first", "tags", "base", "nvlink", "net")

    def __init__(self, first: float, tags: str, base: dict, nvlink: dict, net: dict) -> None:
        self.first = first
        self.tags = tags
        self.base = base
        self.nvlink = nvlink
        self.net = net


def _tables(tree_base: float, tree_nvlink: float, tree_net: float, nvls_base: float, nvls_nvlink: float,
            collnet_nvlink: float, collnet_net: float) -> tuple[dict, dict, dict]:
    base = {"ring": {"LL": 6.6, "LL128": 14.0, "Simple": 8.4}, "tree": {"LL": 6.8, "LL128": 14.0, "Simple": tree_base},
            "nvls": {"Simple": nvls_base}, "collnet": {"Simple": 0.0}, "pat": {"Simple": 8.0}}
    nvlink = {"ring": {"LL": 0.6, "LL128": RING_LL128_NVLINK_STEP_US, "Simple": 3.4}, "tree": {"LL": 0.6, "LL128": 1.25, "Simple": tree_nvlink},
              "nvls": {"Simple": nvls_nvlink}, "collnet": {"Simple": collnet_nvlink}, "pat": {"Simple": 3.4}}
    net = {"ring": {"LL": 2.7, "LL128": 4.0, "Simple": 14.0}, "tree": {"LL": 5.0, "LL128": 8.5, "Simple": tree_net},
           "nvls": {"Simple": 18.0}, "collnet": {"Simple": collnet_net}, "pat": {"Simple": 14.0}}
    return base, nvlink, net


RELEASES = (
    LatencyTables(2.18, "v2.18.1-1 .. v2.18.6-1", *_tables(0.0, 4.0, 14.0, 23.0, 0.0, 8.0, 10.7)),
    LatencyTables(2.19, "v2.19.1-1 .. v2.20.5-1", *_tables(0.0, 28.0, 28.0, 0.0, 23.0, 3.7, 31.0)),
    LatencyTables(2.21, "v2.21.5-1 .. v2.22.3-1", *_tables(0.0, 28.0, 28.0, 0.0, 25.0, 3.7, 31.0)),
    LatencyTables(2.23, "v2.23.4-1 .. v2.27.7-1", *_tables(8.4, 4.0, 14.0, 0.0, 25.0, 3.7, 31.0)),
)


def latency_tables(version: float) -> LatencyTables:
    """The tables of the release `version` (major.minor); before 2.18, 2.18's (the oldest read)."""
    chosen = RELEASES[0]
    for tables in RELEASES:
        if version >= tables.first - 1e-9:
            chosen = tables
    return chosen


def latency_constants(version: float) -> dict:
    """The three engine constants of that release (fresh copies: the caller may merge into them)."""
    t = latency_tables(version)
    copy = lambda table: {a: dict(p) for a, p in table.items()}  # noqa: E731
    return {"nccl_base_latency_us": copy(t.base), "nccl_nvlink_step_latency_us": copy(t.nvlink),
            "nccl_net_step_latency_us": copy(t.net)}
