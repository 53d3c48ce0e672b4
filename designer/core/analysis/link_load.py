"""The load of a link as a network engineer asks for it, from one evaluation.

For a link: its bytes per step by traffic kind, its busy share of the step and of each phase
it carries traffic in (a phase is one kind of traffic: the DP gradient reduction, the PP sends,
...), whether it is the bottleneck of that phase and whether that puts it on the critical path.
Symmetric links (same tier, cable kind and rate, equal load within 1 %) form one class, so an
answer speaks of "64 rail links, each ..." instead of one arbitrary member.

The numbers are the engine's (designer/core/engine/stages/links.py); this module only reads,
groups and words them. Pure: no Qt, no engine imports.
"""
from __future__ import annotations

import numpy as np

from ..model.id_index import IdIndex
from .link_groups import KIND_NAMES, LinkGroups, codes, combined_codes

ALIKE = 0.01  # loads within 1 % of a class's busiest member belong to it
PHASE_NAMES = {"tp_comm": "TP", "cp_comm": "CP", "ep_comm": "EP", "pp_comm": "PP", "dp_comm": "DP"}


class PhaseLoad:
    """One link in one phase."""
    kind: str  # tp_comm | cp_comm | ep_comm | pp_comm | dp_comm
    phase_s: float  # how long the phase lasts in a step (exposed + hidden)
    busy_s: float  # how long this link is busy in it
    share: float  # busy_s / phase_s, at most 1
    bottleneck: bool  # as busy as the phase's busiest link and busy for at least half of it
    exposed_s: float  # the part of the phase on the critical path
    critical: bool  # the bottleneck of a phase that is (partly) exposed

    __slots__ = ("kind", "phase_s", "busy_s", "share", "bottleneck", "exposed_s", "critical")

    def __init__(self, kind: str, phase_s: float, busy_s: float, share: float, bottleneck: bool, exposed_s: float,
                 critical: bool) -> None:
        self.kind = kind
        self.phase_s = phase_s
        self.busy_s = busy_s
        self.share = share
        self.bottleneck = bottleneck
        self.exposed_s = exposed_s
        self.critical = critical

    @property
    def name(self) -> str:
        return PHASE_NAMES.get(self.kind, self.kind)


class LinkClass:
    """Links of one tier, cable kind and rate carrying the same load (within 1 %). Equal only to itself."""
    members: np.ndarray  # link indices, the busiest first (a view of one array: 295k tuples of ints held
    # 11 MB at 131k GPUs)
    tier: str  # "rail links", "server-leaf links", "leaf-spine links", ...
    cable: str  # "400 Gb/s InfiniBand"
    busy_share_of_step: float  # of the busiest member
    phase: str  # the kind it is busiest in ("" when idle)

    __slots__ = ("members", "tier", "cable", "busy_share_of_step", "phase")

    def __init__(self, members: np.ndarray, tier: str, cable: str, busy_share_of_step: float, phase: str) -> None:
        self.members = members
        self.tier = tier
        self.cable = cable
        self.busy_share_of_step = busy_share_of_step
        self.phase = phase

    @property
    def label(self) -> str:
        """'64 rail links' or 'rail link l0' for a class of one."""
        return (f"{len(self.members)} {self.tier}" if len(self.members) > 1 else
                f"{self.tier[:-1] if self.tier.endswith('s') else self.tier}")


class LinkAnswer:
    """How busy one link is in a step: its bytes by traffic kind and its busiest phases."""
    index: int
    link_id: str
    ends: str  # "node0:nic0 - leaf0:p0"
    bytes_per_step: float
    bytes_by_kind: dict[str, float]
    busy_s: float
    busy_share_of_step: float
    step_s: float
    phases: list[PhaseLoad]  # the busiest share first
    link_class: LinkClass | None

    __slots__ = ("index", "link_id", "ends", "bytes_per_step", "bytes_by_kind", "busy_s", "busy_share_of_step",
                 "step_s", "phases", "link_class")

    def __init__(self, index: int, link_id: str, ends: str, bytes_per_step: float, bytes_by_kind: dict[str, float],
                 busy_s: float, busy_share_of_step: float, step_s: float, phases: list[PhaseLoad] | None = None,
                 link_class: LinkClass | None = None) -> None:
        self.index = index
        self.link_id = link_id
        self.ends = ends
        self.bytes_per_step = bytes_per_step
        self.bytes_by_kind = bytes_by_kind
        self.busy_s = busy_s
        self.busy_share_of_step = busy_share_of_step
        self.step_s = step_s
        self.phases = [] if phases is None else phases
        self.link_class = link_class

    @property
    def phase(self) -> PhaseLoad | None:
        return self.phases[0] if self.phases else None

    @property
    def bottleneck_of(self) -> list[PhaseLoad]:
        return [p for p in self.phases if p.bottleneck]

    @property
    def critical_path(self) -> bool:
        return any(p.critical for p in self.phases)

    def as_json(self) -> dict:
        out = {"link": self.link_id, "bytes_per_step": self.bytes_per_step, "bytes_by_kind": self.bytes_by_kind,
               "busy_s": self.busy_s, "busy_share_of_step": self.busy_share_of_step,
               "phases": [{"phase": p.kind, "phase_s": p.phase_s, "busy_s": p.busy_s, "busy_share_of_phase": p.share,
                           "bottleneck_of_phase": p.bottleneck, "exposed_s": p.exposed_s, "critical_path": p.critical}
                          for p in self.phases],
               "critical_path": self.critical_path, "text": text(self)}
        if self.link_class is not None:
            out["class_links"] = len(self.link_class.members)
            out["class"] = self.link_class.label
        return out


class LinkLoad:
    """The link loads of one evaluation of one document (built once, asked per link)."""

    def __init__(self, result, doc, groups: LinkGroups | None = None):
        """`groups`: the links' tiers and cables of an earlier revision of `doc` (or of a snapshot of
        it), carried forward when only cables' speeds changed since instead of read anew."""
        self.doc = doc  # (not the result: the result keeps its analysis, see link_load())
        self.step_s = float(result.step_time_s)
        self.loads: dict[str, np.ndarray] = dict(result.link_load or {})
        # the kinds with seconds busy (each link's made from its bytes and rate when asked: not kept)
        self.busy_kinds: tuple[str, ...] = tuple(getattr(result, "link_busy_kinds", ()) or ())
        self.phase_s: dict[str, float] = dict(getattr(result, "link_phase_s", {}) or {})
        self.exposed_s: dict[str, float] = dict(getattr(result, "link_exposed_s", {}) or {})
        self.bottleneck: dict[str, np.ndarray] = dict(getattr(result, "link_bottleneck", {}) or {})
        self.phase_exposed: dict[str, bool] = dict(getattr(result, "link_phase_exposed", {}) or {})
        ids = getattr(result, "link_ids", None)
        # the version of the design's link ids these are (SharedIdIndex.of), None when not known
        self.ids_version = getattr(result, "link_ids_version", None) if ids else doc.link_ids_version
        ids = ids or [link.id for link in doc.links]
        self.ids = ids if isinstance(ids, list) else list(ids)  # the evaluation's own list: a copy held 2.4 MB at 131k GPUs
        self.n = len(self.ids)
        self.util = (np.asarray(result.link_utilization_array, dtype=float)
                     if result.link_utilization_array is not None else np.zeros(self.n))
        self.total_busy = np.zeros(self.n)
        if self.busy_kinds:  # summed as the kinds come, one kind's array at a time
            self.total_busy = 0
            for kind in self.busy_kinds:
                self.total_busy = self.total_busy + result.link_busy(kind)
        self.phase_code = getattr(result, "link_phase_code", None)  # (see Evaluation.link_phase)
        self.phase_names: tuple[str, ...] = tuple(getattr(result, "link_phase_names", ()) or ())
        self.link_capacity_Bps = getattr(result, "link_capacity_Bps", None)
        self._position: IdIndex | None = None  # built on the first lookup by id
        self._groups_before = groups
        self._groups: LinkGroups | None | bool = False  # False: not made yet; None: the document lost links
        self._classes: list[LinkClass] | None = None
        self._class_of: np.ndarray | None = None
        self._one_class: dict[int, LinkClass] = {}  # a link's class found alone (while all are not made)

    # ---- one link -----------------------------------------------------------------------
    def index_of(self, link_id: str) -> int | None:
        if self._position is None:
            groups = self.groups()
            if groups is not None:  # kept with the groups: the next result's analysis carries it
                if groups.index is not None:  # carried (moved with the cables added and removed since)
                    self.doc.link_id_index.keep(groups.index, self.ids_version)  # for the check and the fabric
                else:  # the design's shared index of these ids (the check and the fabric read it too)
                    self._groups = groups = groups.with_index(self.doc.link_id_index.of(groups.ids, self.ids_version))
                self._position = groups.index
            else:
                self._position = self.doc.link_id_index.of(self.ids, self.ids_version)
        return self._position.get(link_id)

    def prepare(self) -> None:
        """Make what a question about any one link needs (the links' tiers and cables, the id table),
        so that it then costs ~3 ms at 131k GPUs: off the window's thread."""
        self.index_of("")

    @property
    def prepared(self) -> bool:
        return self._position is not None

    @property
    def made_groups(self) -> LinkGroups | None:
        """The links' tiers and cables if made already (a later analysis of the design carries them)."""
        return self._groups or None

    def groups(self) -> LinkGroups | None:
        """The links' tiers and cables (link_groups.py) for this document at its revision; None when
        it no longer holds every link of the evaluation."""
        if self._groups is False:
            self._groups = LinkGroups.of(self.doc, self.ids, self._groups_before)
            self._groups_before = None
        return self._groups

    def answer(self, index: int, with_class: bool = True) -> LinkAnswer:
        index = int(index)  # (a class's members are numpy integers)
        phases = []
        for kind in self.busy_kinds:
            rate = self.link_capacity_Bps[index]  # (as Evaluation.link_busy_at: the result is not held)
            seconds = float(self.loads[kind][index] / rate) if rate > 0 else 0.0
            if seconds <= 0:
                continue
            phase_s = self.phase_s.get(kind, 0.0)
            exposed_s = self.exposed_s.get(kind, 0.0)
            neck = bool(self.bottleneck[kind][index]) if kind in self.bottleneck else False
            phases.append(PhaseLoad(kind, phase_s, seconds, min(1.0, seconds / phase_s) if phase_s > 0 else 0.0,
                                    neck, exposed_s, neck and self.phase_exposed.get(kind, False)))
        phases.sort(key=lambda p: (p.share, p.busy_s), reverse=True)
        link = self._link(index)
        return LinkAnswer(index=index, link_id=self.ids[index], ends=f"{link.a} - {link.b}" if link else "",
                          bytes_per_step=self.bytes_per_step(index) if self.n else 0.0,
                          bytes_by_kind={k: float(v[index]) for k, v in self.loads.items() if v[index] > 0},
                          busy_s=float(self.total_busy[index]) if self.n else 0.0,
                          busy_share_of_step=float(self.util[index]) if len(self.util) > index else 0.0,
                          step_s=self.step_s, phases=phases,
                          link_class=self.class_of(index) if with_class else None)

    def bytes_per_step(self, index: int) -> float:
        """The bytes one link carries in a step, all kinds together: summed for the link asked about, not
        kept for every link (a fabric-sized array, 2.4 MB at 131k GPUs, held as long as the result)."""
        return float(sum(float(v[index]) for v in self.loads.values()))

    def text(self, index: int) -> str:
        return text(self.answer(index))

    def busiest(self, indices) -> int | None:
        """Of several links (the cables of one bundle on the canvas), the busiest."""
        indices = [i for i in indices if 0 <= i < self.n]
        if not indices:
            return None
        return max(indices, key=lambda i: (float(self.util[i]), float(self.total_busy[i])))

    # ---- classes ------------------------------------------------------------------------
    def class_of(self, index: int) -> LinkClass:
        """The class of one link: read from all classes once they are made, else found alone (among the
        links of its tier, cable, rate and phase loaded about as much or more), the same class."""
        index = int(index)
        if self._classes is not None:
            return self._classes[int(self._class_of[index])]
        if index not in self._one_class:
            self._one_class[index] = self._class_alone(index)
        return self._one_class[index]

    def _class_alone(self, index: int) -> LinkClass:
        """classes()'s class of link `index`, without grouping every link: its group's members loaded
        at least (1 - ALIKE) times as much as it are all that can share its class or bound the classes
        above it (each class takes the members within ALIKE of its busiest, the busiest first)."""
        tier_code, tier_words, cable_code, cable_words, rates = self._tiers_and_cables()
        main, phase_words = self._main_phase()
        load = self.total_busy
        mine = float(load[index])
        same = ((tier_code == tier_code[index]) & (cable_code == cable_code[index]) & (rates == rates[index])
                & (main == main[index]))
        if mine > 0:
            same &= load >= mine * (1 - ALIKE)
        members = np.flatnonzero(same)  # in link order, as classes() holds a group
        order = members[np.argsort(-load[members], kind="stable")]
        ascending = np.sort(load[members])
        place = int(np.flatnonzero(order == index)[0])
        start = 0
        while True:  # classes() walk down the group, to the class that takes this link
            top = ascending[len(order) - 1 - start]
            end = len(order) if top <= 0 else len(order) - int(np.searchsorted(ascending, top * (1 - ALIKE)))
            if place < end:
                chosen = order[start:end]
                return LinkClass(chosen, tier_words[tier_code[index]], cable_words[cable_code[index]],
                                 float(self.util[chosen[0]]), phase_words[main[index]])
            start = end

    def classes(self) -> list[LinkClass]:
        """Every link in one class, the busiest classes first (then the larger)."""
        if self._classes is not None:
            return self._classes
        tier_code, tier_words, cable_code, cable_words, rates = self._tiers_and_cables()
        main, phase_words = self._main_phase()
        group_of = combined_codes([tier_code, cable_code, codes(rates), main], self.n)
        classes: list[LinkClass] = []
        class_of = np.zeros(self.n, dtype=np.int64)
        by_group = np.argsort(group_of, kind="stable")
        bounds = np.flatnonzero(np.r_[True, np.diff(group_of[by_group]) != 0, True]) if self.n else [0]
        for g in range(len(bounds) - 1):  # a few dozen groups even at 131k GPUs
            members_arr = by_group[bounds[g]:bounds[g + 1]]
            first = int(members_arr[0])
            tier, cable, phase = tier_words[tier_code[first]], cable_words[cable_code[first]], phase_words[main[first]]
            load = self.total_busy[members_arr]
            order = members_arr[np.argsort(-load, kind="stable")]
            sorted_load = np.sort(load)[::-1]
            start = 0
            while start < len(order):  # the busiest left opens a class; all within 1 % of it join
                top = sorted_load[start]
                end = start + int(np.count_nonzero(sorted_load[start:] >= top * (1 - ALIKE)))
                if top <= 0:
                    end = len(order)
                chosen = order[start:end]
                class_of[chosen] = len(classes)
                classes.append(LinkClass(chosen, tier, cable, float(self.util[chosen[0]]), phase))
                start = end
        ranked = sorted(range(len(classes)), key=lambda c: (-classes[c].busy_share_of_step,
                                                            -len(classes[c].members)))
        rank = np.empty(len(classes), dtype=np.int32)
        rank[ranked] = np.arange(len(classes))
        self._classes = [classes[c] for c in ranked]
        self._class_of = rank[class_of] if self.n else class_of
        return self._classes

    def _main_phase(self) -> tuple[np.ndarray, list[str]]:
        """Per link the code of the phase it is busiest in, numbered as the phases' names sort
        (as _codes numbers values), and the names by code."""
        codes, names = self.phase_code, self.phase_names
        if codes is None or len(codes) != self.n or not names:
            return np.zeros(self.n, dtype=np.int64), [""]
        words = sorted(set(names))
        rank = {word: i for i, word in enumerate(words)}
        return np.array([rank[name] for name in names], dtype=np.int64)[codes], words

    def _tiers_and_cables(self):
        """Per link: a code of its tier and of its cable with their words (link_groups.py), and the rate
        the engine costs it at (to tell slowed cables apart)."""
        groups = self.groups()
        if groups is not None:
            tier_code, tier_words, cable_code, cable_words = (groups.tier_code, list(groups.tier_words),
                                                              groups.cable_code, list(groups.cable_words))
        else:
            tier_code, tier_words, cable_code, cable_words = self._tiers_and_cables_by_link()
        cap = self.link_capacity_Bps
        rates = (np.round(np.asarray(cap, dtype=float), -6) if cap is not None and len(cap) == self.n
                 else np.zeros(self.n))
        return tier_code, tier_words, cable_code, cable_words, rates

    def _tiers_and_cables_by_link(self):
        """As LinkGroups, link by link: when the document no longer holds every link."""
        tiers, cables = [], []
        for link in (self.doc.find("links", lid) for lid in self.ids):
            tiers.append("links" if link is None else f"{link.kind} links")
            cables.append("" if link is None else f"{link.bandwidth_gbps:g} Gb/s {KIND_NAMES.get(link.kind, link.kind)}")
        tw, tc = np.unique(np.asarray(tiers), return_inverse=True)
        cw, cc = np.unique(np.asarray(cables), return_inverse=True)
        return tc.reshape(-1), list(tw), cc.reshape(-1), list(cw)

    def _link(self, index: int):
        links = self.doc.links
        if index < len(links) and links[index].id == self.ids[index]:
            return links[index]
        return self.doc.find("links", self.ids[index])  # the document changed since: by id


# ---- words ----------------------------------------------------------------------------------
def share_text(x: float) -> str:
    """'97 %', '4.6 %', '0.24 %', '<0.01 %', '0 %': never '0 %' for a link that carries traffic."""
    if x <= 0:
        return "0 %"
    if x < 1e-4:
        return "<0.01 %"
    if x < 0.01:
        return f"{x * 100:.2f} %"
    if x < 0.1:
        return f"{x * 100:.1f} %"
    return f"{x * 100:.0f} %"


def seconds_text(s: float) -> str:
    if s >= 10:
        return f"{s:.1f} s"
    if s >= 0.01:
        return f"{s:.2f} s"
    if s >= 1e-5:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def bytes_text(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.0f} B"


def phase_line(p: PhaseLoad) -> str:
    """'busy 97 % of the DP phase (1.94 s of its 2.00 s): the bottleneck of the DP phase, on the
    critical path (1.15 s of it exposed)'."""
    line = (f"busy {share_text(p.share)} of the {p.name} phase "
            f"({seconds_text(p.busy_s)} of its {seconds_text(p.phase_s)})")
    if p.bottleneck:
        line += f": the bottleneck of the {p.name} phase"
        line += (f", on the critical path ({seconds_text(p.exposed_s)} of the phase exposed)" if p.critical else
                 f", off the critical path (the {p.name} phase is hidden behind compute)")
    return line


def text(answer: LinkAnswer) -> str:
    """The answer in a few lines: who (the class), each phase, the step, the bytes, the verdict."""
    c = answer.link_class
    if c is not None and len(c.members) > 1:
        head = f"{c.label} ({c.cable}) loaded alike, {answer.link_id} among them; each:"
    elif c is not None:
        head = f"{c.label} {answer.link_id} ({c.cable}, {answer.ends}):"
    else:
        head = f"link {answer.link_id} ({answer.ends}):"
    if answer.bytes_per_step <= 0:
        return head + "\n  carries no traffic of this job's step"
    lines = [head]
    lines += ["  " + phase_line(p) for p in answer.phases]
    lines.append(f"  busy {share_text(answer.busy_share_of_step)} of the {seconds_text(answer.step_s)} step "
                 f"({seconds_text(answer.busy_s)})")
    kinds = sorted(answer.bytes_by_kind.items(), key=lambda kv: -kv[1])
    lines.append(f"  {bytes_text(answer.bytes_per_step)} per step: " +
                 ", ".join(f"{PHASE_NAMES.get(k, k)} {bytes_text(v)}" for k, v in kinds))
    if not answer.bottleneck_of:
        lines.append("  not the bottleneck of any phase: off the critical path")
    return "\n".join(lines)


# ---- one analysis for the result shown -----------------------------------------------------------


def link_load(result, doc) -> LinkLoad:
    """The loads of `result`'s links, worded against `doc` (made anew: the window keeps one in LinkLoads)."""
    return LinkLoad(result, doc)


class LinkLoads:
    """The LinkLoad of the result the window shows, for its document at one revision: made once and
    reused by every question about it (the Inspector, a bundle's tooltip); one for another result or
    revision replaces it, so a result the window moved on from is not kept alive (~30 MB at 131k GPUs).
    The links' tiers and cables (LinkGroups, of the design, not of a result) go on to the next one."""

    def __init__(self):
        self._made_for: tuple | None = None  # (result, doc, revision)
        self._analysis: LinkLoad | None = None
        self._groups: LinkGroups | None = None  # the newest made, for an analysis let go of

    @property
    def groups(self) -> LinkGroups | None:
        """The newest links' tiers and cables made for the window's design (for the next analysis)."""
        made = self._analysis.made_groups if self._analysis is not None else None
        return made if made is not None else self._groups

    def forget(self) -> None:
        """Another design: let go of everything made for the one before (its links' ids with them)."""
        self._made_for = self._analysis = self._groups = None

    def _let_go(self) -> None:
        self._groups = self.groups
        self._made_for = self._analysis = None

    def _holds(self, result, doc) -> bool:
        made = self._made_for
        return made is not None and made[0] is result and made[1] is doc and made[2] == doc.revision

    def of(self, result, doc) -> LinkLoad:
        if not self._holds(result, doc):
            self.take(result, doc, LinkLoad(result, doc, self.groups))
        return self._analysis

    def ready(self, result, doc) -> bool:
        """Whether `of(result, doc)` is made and prepared (a question then costs next to nothing)."""
        return self._holds(result, doc) and self._analysis.prepared

    def take(self, result, doc, analysis: LinkLoad) -> None:
        """Take `analysis` (maybe made on a snapshot of `doc` at its revision, off the window's thread)
        as the LinkLoad of this result and document."""
        analysis.doc = doc  # the same links at this revision; the snapshot can go
        self._let_go()
        self._made_for = (result, doc, doc.revision)
        self._analysis = analysis

    def keep_only(self, result) -> None:
        """Let go of an analysis made for another result than `result` (the one now shown)."""
        if self._made_for is not None and self._made_for[0] is not result:
            self._let_go()

    def link_text(self, result, doc, link_id: str) -> str:
        """The answer for one link id ('' when the result has no such link)."""
        analysis = self.of(result, doc)
        index = analysis.index_of(link_id)
        return "" if index is None else analysis.text(index)

    def bundle_text(self, result, doc, indices) -> str:
        """The answer for the busiest of several links (one bundle of cables on the canvas)."""
        analysis = self.of(result, doc)
        index = analysis.busiest(indices)
        return "" if index is None else analysis.text(index)


def classes_json(result, doc, limit: int = 50) -> list[dict]:
    """The busiest classes for `designer evaluate --json` (key link_classes, docs/contract.md)."""
    if not result.link_load:
        return []
    analysis = link_load(result, doc)
    out = []
    for c in analysis.classes()[:limit]:
        answer = analysis.answer(c.members[0])
        row = answer.as_json()
        row.pop("link")
        row.pop("class_links", None)
        row.pop("class", None)
        out.append({"class": c.label, "tier": c.tier, "cable": c.cable, "links": len(c.members),
                    "members": [analysis.ids[i] for i in c.members[:8]]} | row)
    return out
