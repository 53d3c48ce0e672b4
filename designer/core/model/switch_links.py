"""The switch-to-switch cables' roles in the routes (network_reach.py says how the engine routes): which
cable is an up-link of which switch, the pods, the pods' cables to the core. The design check's routes and
the engine's fabric ask them of the same arrays; a design keeps its last answer (SwitchLinksMemo).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

TIER_RANK = {"leaf": 0, "spine": 1, "core": 2}


@dataclass(eq=False, repr=False, init=False)  # its __init__ written: dataclass would compile one at start
class SwitchLinks:
    """The switch-to-switch network cables of a design (NVLink trays left out), as the engine routes."""
    links: np.ndarray  # link index of each cable
    lower: np.ndarray  # switch index of its lower end (the lower tier; a leaf with servers below one without)
    upper: np.ndarray
    uplink: np.ndarray  # bool per cable: an up-link of `lower`, towards the other leaves
    upper_uplink: np.ndarray  # bool per cable: also an up-link of `upper` (two leaves cabled to each other)
    pod: np.ndarray  # per switch: its pod (leaves and spines one cable path joins), -1 for cores and trays
    to_core: np.ndarray  # bool per cable: an up-link of pod `pod[lower]` to a core switch

    def __init__(self, links: np.ndarray, lower: np.ndarray, upper: np.ndarray, uplink: np.ndarray,
                 upper_uplink: np.ndarray, pod: np.ndarray, to_core: np.ndarray) -> None:
        self.links = links
        self.lower = lower
        self.upper = upper
        self.uplink = uplink
        self.upper_uplink = upper_uplink
        self.pod = pod
        self.to_core = to_core


def switch_links(tier: np.ndarray, is_leaf: np.ndarray, tray: np.ndarray, links: np.ndarray,
                 a_idx: np.ndarray, b_idx: np.ndarray) -> SwitchLinks:
    """`tier`: TIER_RANK of each switch; `is_leaf`: the switch has a server's NIC cable; `tray`: an
    NVLink switch tray; `links`, `a_idx`, `b_idx`: the switch-to-switch cables and their ends."""
    ai, bi = a_idx, b_idx
    # each gather made once, of 8-bit ranks (0..2): ~160k cables at 131k GPUs
    rank = tier.astype(np.int8)
    tier_a, tier_b = rank[ai], rank[bi]
    a_lower = (tier_a < tier_b) | ((tier_a == tier_b) & (ai < bi))
    lower, upper = np.where(a_lower, ai, bi), np.where(a_lower, bi, ai)
    tier_lower, tier_upper = np.where(a_lower, tier_a, tier_b), np.where(a_lower, tier_b, tier_a)
    leaf_lower, leaf_upper = is_leaf[lower], is_leaf[upper]
    uplink = (leaf_lower & ~leaf_upper) | ((tier_lower < tier_upper) & (tier_upper < 2))
    # two switches with servers, of one tier, cabled to each other (a lab's two leaves, a leaf ring):
    # the cable is the way out of each that has no up-link otherwise
    n_sw = len(tier)
    has_up = np.zeros(n_sw, dtype=bool)
    has_up[lower[uplink]] = True
    peers = leaf_lower & leaf_upper & (tier_lower == tier_upper)
    upper_uplink = peers & ~has_up[upper]
    uplink = uplink | (peers & ~has_up[lower])
    # pods: connected components of leaves and spines (label propagation)
    label = np.where((tier < 2) & ~tray, np.arange(n_sw), -1)  # a tray is in no pod
    inside = tier_upper < 2  # (the lower end's tier is no higher)
    lu, uu = lower[inside], upper[inside]
    for _ in range(64):
        before = label.copy()
        m = np.minimum(label[lu], label[uu])
        np.minimum.at(label, lu, m)
        np.minimum.at(label, uu, m)
        if np.array_equal(before, label):
            break
    _, pod_of = np.unique(label[label >= 0], return_inverse=True)
    pod = np.full(n_sw, -1, dtype=np.int32)
    pod[label >= 0] = pod_of.reshape(-1)
    to_core = (tier_upper == 2) & (pod[lower] >= 0)
    return SwitchLinks(links, lower, upper, uplink, upper_uplink, pod, to_core)


class SwitchLinksMemo:
    """A design's last switch_links answer with the arrays it was asked of, until asked again: the
    check's routes and then the engine's fabric ask it of equal arrays (~10 ms each at 131k GPUs), and
    the second takes it (kept longer, it held ~5 MB at 131k GPUs for nothing). Asked of other arrays
    (an edit since, or a reader that sees the design otherwise), it works them out again: equal arrays,
    equal answer, so the document shares it with its snapshots."""

    def __init__(self):
        self._last: tuple[tuple[np.ndarray, ...], SwitchLinks] | None = None

    def of(self, tier: np.ndarray, is_leaf: np.ndarray, tray: np.ndarray, links: np.ndarray,
           a_idx: np.ndarray, b_idx: np.ndarray) -> SwitchLinks:
        """switch_links of these arrays, its arrays read-only (every caller shares them)."""
        asked = (tier, is_leaf, tray, links, a_idx, b_idx)
        last, self._last = self._last, None
        if last is not None and all(old.dtype == new.dtype and np.array_equal(old, new)
                                    for old, new in zip(last[0], asked)):
            return last[1]
        kept = tuple(np.array(array) for array in asked)  # copies: a caller may change its arrays later
        made = switch_links(*kept)
        for f in dataclasses.fields(made):
            getattr(made, f.name).flags.writeable = False
        self._last = (kept, made)  # one assignment: a worker thread and the window's may both ask
        return made

    def __deepcopy__(self, memo) -> "SwitchLinksMemo":
        return SwitchLinksMemo()  # a copy of a design works out its own (and may be edited apart)

    def __getstate__(self):
        return {"_last": None}
