"""Which links of a design may share a class of alike loads: per link its tier ("rail links",
"leaf-spine links", ...) and its cable ("400 Gb/s InfiniBand"), as small integer codes with their words.

They belong to the design, not to an evaluation: made once (every link's ends and cable read, ~0.15 s
of CPU at 131k GPUs) and carried across the edits that only change cables' speeds or counts, which re-read the
changed links alone. The link-load analysis (link_load.py) reads them for one selected link or for all.
Pure: no Qt, no engine imports.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import repeat
from operator import attrgetter

import numpy as np

from ..model.id_index import IdIndex
from ..model.link_columns import per_value

KIND_NAMES = {"infiniband": "InfiniBand", "ethernet": "Ethernet", "nvlink": "NVLink", "pcie": "PCIe"}
CABLE_KINDS = ("infiniband", "ethernet", "nvlink", "pcie")  # a cable's kind code is its place here
CABLE_FIELDS = ("bandwidth_gbps", "count")  # a link's fields that change its cable, not its tier
# A link's fields that change neither its tier nor its cable (the engine's rate of it is in the result)
OTHER_LINK_FIELDS = ("latency_us", "slowdown", "note", "state")
# What a server's or switch's edit can change of its links' tiers: its id (the links' ends find it by
# it) and a switch's tier; a box placed on the canvas or renamed in words changes nothing
DEVICE_FIELDS = ("id", "tier")
TIER_RANK = {"leaf": 0, "spine": 1, "core": 2, "nvlink": 3}  # a switch's tier in a link's tier key (9: other)
# Cables added or removed since the groups before that are followed one by one (each moves two arrays of
# every link's codes); more are read anew with the rest
MOVES_FOLLOWED = 64
# Links read at a time: one C loop over 295k links (a 131k-GPU design) holds the interpreter 10-40 ms,
# and the window's thread waits that long for it; between parts it gets its turn (at its switch interval)
PART_LINKS = 16384


@dataclass(eq=False, repr=False, init=False)  # its __init__ written: dataclass would compile one at start
class LinkGroups:
    """Every link's tier and cable of one document at one revision (read-only arrays; an edit makes a
    new LinkGroups, so a thread may read one while another carries it forward)."""
    lineage: object  # the document's (Document.lineage)
    revision: int
    ids: list[str]  # the links' ids in the evaluation's order (the document's, unless it changed since)
    index: IdIndex | None  # id -> position among `ids` (made by with_index: `evaluate --json` needs none)
    tier_code: np.ndarray  # per link: its tier, an index into tier_words
    tier_words: tuple[str, ...]
    tier_keys: tuple[int, ...]  # per tier code: its key (_tier_key), to code a cable added since
    cable_code: np.ndarray  # per link: its cable, an index into cable_words
    cable_words: tuple[str, ...]
    cable_of: dict  # (bandwidth Gb/s, count, kind code) -> its cable code

    def __init__(self, lineage: object, revision: int, ids: list[str], index: IdIndex | None,
                 tier_code: np.ndarray, tier_words: tuple[str, ...], tier_keys: tuple[int, ...],
                 cable_code: np.ndarray, cable_words: tuple[str, ...], cable_of: dict) -> None:
        self.lineage = lineage
        self.revision = revision
        self.ids = ids
        self.index = index
        self.tier_code = tier_code
        self.tier_words = tier_words
        self.tier_keys = tier_keys
        self.cable_code = cable_code
        self.cable_words = cable_words
        self.cable_of = cable_of

    @classmethod
    def of(cls, doc, ids: list[str], before: "LinkGroups | None" = None) -> "LinkGroups | None":
        """The groups of `doc` at its revision for links `ids` (the evaluation's order): `before` carried
        forward when only cables' speeds or counts changed since it, or cables were added or removed
        (other than a server's NIC cables, whose rails may change the tiers' words), else read anew; None
        when the document no longer holds every link of `ids` (removed or renamed since the evaluation)."""
        if before is not None and before.lineage is doc.lineage:
            carried = before._carried_to(doc, ids)
            if carried is not None:
                return carried
        links = doc.links
        if len(links) != len(ids) or _field(doc, links, "id") != ids:
            links = [doc.find("links", link_id) for link_id in ids]  # the document changed since: by id
            if any(link is None for link in links):
                return None
        return cls.read(doc, links, ids)

    @classmethod
    def read(cls, doc, links: list, ids: list[str]) -> "LinkGroups":
        """Every link's tier and cable, vectorised over the design's parsed endpoints (model/endpoints.py):
        words are made once per distinct (ends, cable), a few dozen even at 131k GPUs. `links`: the
        document's link of each id."""
        n = len(links)
        node_ids = [node.id for node in doc.nodes]
        switch_ids = [switch.id for switch in doc.switches]
        a = doc.link_ends.parse(_field(doc, links, "a"), node_ids, switch_ids)  # the check's parse
        b = doc.link_ends.parse(_field(doc, links, "b"), node_ids, switch_ids)
        tier_rank = TIER_RANK
        # small integers per link (8-bit): the analysis runs beside the window's whole design (131k GPUs)
        switch_tier = np.array([tier_rank.get(s.tier, 9) for s in doc.switches] + [9], dtype=np.int8)
        kind_code = {name: i for i, name in enumerate(CABLE_KINDS)}  # in C per link: 0.15 s at 131k GPUs by a generator
        kind = _kind_column(doc, links, kind_code)
        a_node, b_node = a.kind == 1, b.kind == 1
        ta = np.where(a.kind == 2, switch_tier[np.where(a.kind == 2, a.index, -1)], 9)
        tb = np.where(b.kind == 2, switch_tier[np.where(b.kind == 2, b.index, -1)], 9)
        # rail-optimized: each server's NICs go to different leaves
        nic = (kind != 2) & (a_node ^ b_node) & ((a.kind == 2) | (b.kind == 2))
        server = np.where(a_node, a.index, b.index)[nic]
        leaf = np.where(a_node, b.index, a.index)[nic]
        rails = False
        if server.size:
            # the distinct (server, leaf) pairs as one integer each: np.unique of rows (axis=0) sorted them
            # as records, ~80 ms at 131k GPUs in one call that holds the interpreter from the window's thread
            # (return_index: np.unique without one imports numpy.ma, 7 ms of a 16k-GPU `evaluate --json`)
            width = int(leaf.max()) + 1
            pairs = np.unique(server.astype(np.int64) * width + leaf, return_index=True)[0]
            per_server = np.bincount(server, minlength=len(node_ids))
            distinct = np.bincount(pairs // width, minlength=len(node_ids))
            rails = bool(np.all(per_server == distinct)) and int(per_server.max()) > 1
        key = ((((kind == 2).astype(np.int16) * 2 + a_node) * 2 + b_node) * 10 + ta) * 10 + tb  # below 800
        uniq, tier_code = small_codes(key, 800)
        tier_code = tier_code.astype(np.int16)  # (kept as such: its 64-bit codes lived on through the cables' read)
        names = {v: k for k, v in tier_rank.items()}
        tier_words = []
        for packed in uniq.tolist():
            packed, xb = divmod(packed, 10)
            packed, xa = divmod(packed, 10)
            packed, bn = divmod(packed, 2)
            nvlink, an = divmod(packed, 2)
            if nvlink:
                tier_words.append("NVLink links")
            elif an != bn:
                other = names.get(xb if an else xa)
                tier_words.append("rail links" if rails else f"server-{other or 'switch'} links")
            elif an:
                tier_words.append("server-to-server links")
            else:
                low, high = sorted((names.get(xa, "switch"), names.get(xb, "switch")), key=lambda t: tier_rank.get(t, 9))
                tier_words.append(f"{low}-{high} links")
        bw = _numbers(doc, links, "bandwidth_gbps", float)
        count = _numbers(doc, links, "count", np.int64)
        cable_code = combined_codes([codes(bw), codes(count), kind], n)
        first_of = np.zeros(int(cable_code.max(initial=-1)) + 1, dtype=np.int64)
        first_of[cable_code[::-1]] = np.arange(n)[::-1]  # a link of each cable code
        cables = list(zip(bw[first_of].tolist(), count[first_of].tolist(), kind[first_of].tolist()))
        # (small integers: kept from one edit to the next beside a 131k-GPU design)
        tier_code, cable_code = tier_code.reshape(-1).astype(np.int16), cable_code.reshape(-1).astype(np.int32)
        for array in (tier_code, cable_code):
            array.flags.writeable = False
        return cls(doc.lineage, doc.revision, ids, None, tier_code, tuple(tier_words), tuple(uniq.tolist()), cable_code,
                   tuple(_cable_words(*cable) for cable in cables), {cable: c for c, cable in enumerate(cables)})

    def with_index(self, index: IdIndex | None = None) -> "LinkGroups":
        """These groups with their id table (kept by the groups carried from them): `index`, an IdIndex of
        `ids` already made (the design's shared one), else made here."""
        return self if self.index is not None else replace(self, index=index or IdIndex(self.ids))

    def _position(self, link_id: str) -> int | None:
        if self.index is not None:
            return self.index.get(link_id)
        try:
            return self.ids.index(link_id)
        except ValueError:
            return None

    def _carried_to(self, doc, ids: list[str]) -> "LinkGroups | None":
        """These groups at `doc`'s revision for the links `ids`, or None when an edit since may move a
        link to another tier (read them anew). Cables added or removed since move the codes by their
        places in the list (a cable's delete and its undo read every link again: ~0.3 s of CPU and a
        peak of ~24 MB at 131k GPUs)."""
        changes = doc.changes_since(self.revision)
        if changes is None:
            return None
        recabled: set[str] = set()
        moves = []
        for change in changes:
            if change.collection == "links":
                if change.action in ("added", "removed") and change.position is not None:
                    moves.append(change)
                elif change.action != "changed" or change.field not in CABLE_FIELDS + OTHER_LINK_FIELDS:
                    return None
                elif change.field in CABLE_FIELDS:
                    recabled.add(change.id)
            elif change.collection in ("nodes", "switches"):
                if change.action != "changed" or change.field in DEVICE_FIELDS:
                    return None
        if moves:
            # (a cable re-rated among them is found by its place in the list before the moves: read anew)
            return self._moved(doc, ids, moves) if not recabled else None
        if not (self.ids is ids or self.ids == ids):
            return None
        if not recabled:
            return replace(self, revision=doc.revision)
        cable_code = self.cable_code.copy()
        cable_words, cable_of = list(self.cable_words), dict(self.cable_of)
        links = doc.links
        for link_id in recabled:
            position = self._position(link_id)
            if position is None:
                return None
            # by its place (a snapshot's first find by id indexes all its links: 0.27 s at 131k GPUs)
            link = links[position] if position < len(links) and links[position].id == link_id else None
            if link is None:
                link = doc.find("links", link_id)  # the groups follow an evaluation's order, not the document's
            if link is None:
                return None
            cable_code[position] = _cable_code(link, cable_words, cable_of)
        cable_code.flags.writeable = False
        return replace(self, revision=doc.revision, cable_code=cable_code, cable_words=tuple(cable_words),
                       cable_of=cable_of)

    def _moved(self, doc, ids: list[str], moves: list) -> "LinkGroups | None":
        """These groups after the cables added and removed by `moves` (the document's changes, in order,
        each with its place in the list), for the links `ids`; None when one is a server's NIC cable (the
        rails of every server decide those cables' words) or of a tier no link had."""
        if len(moves) > MOVES_FOLLOWED:
            return None
        running = list(self.ids)  # the links' ids as each move found them
        tier_code, cable_code = self.tier_code, self.cable_code
        cable_words, cable_of = list(self.cable_words), dict(self.cable_of)
        tier_of = {key: code for code, key in enumerate(self.tier_keys)}
        for change in moves:
            position = change.position
            link = change.old if change.action == "removed" else change.new
            key, nic_cable = _tier_key(doc, link)
            if nic_cable:
                return None
            if change.action == "removed":
                if position >= len(running) or running[position] != change.id:
                    return None
                del running[position]
                tier_code, cable_code = np.delete(tier_code, position), np.delete(cable_code, position)
            else:
                if key not in tier_of or position > len(running):
                    return None  # a tier no link had: its words' order is a fresh read's
                running.insert(position, change.id)
                tier_code = np.insert(tier_code, position, tier_of[key])
                cable_code = np.insert(cable_code, position, _cable_code(link, cable_words, cable_of))
        if running != ids:  # (the same strings: compared by identity first)
            return None
        del running
        for array in (tier_code, cable_code):
            array.flags.writeable = False
        index = self.index.moved(ids, [(c.action == "added", c.position, c.id) for c in moves]) \
            if self.index is not None else None
        return replace(self, revision=doc.revision, ids=ids, index=index, tier_code=tier_code, cable_code=cable_code,
                       cable_words=tuple(cable_words), cable_of=cable_of)


def _cable_code(link, cable_words: list[str], cable_of: dict) -> int:
    """The code of `link`'s cable, a new one (its words appended) for a cable no link had."""
    key = (float(link.bandwidth_gbps), int(link.count), _kind_code(link.kind))
    if key not in cable_of:
        cable_of[key] = len(cable_words)
        cable_words.append(_cable_words(*key))
    return cable_of[key]


def _tier_key(doc, link) -> tuple[int, bool]:
    """(the key of `link`'s tier as LinkGroups.read packs it, whether it is a server's NIC cable), its
    ends found by id as the design's parse finds them (the first server of that id, else the first switch)."""
    kind = _kind_code(link.kind)
    ends = []
    for end in (link.a, link.b):
        device = end.partition(":")[0]
        if doc.find("nodes", device) is not None:
            ends.append((True, False, 9))
        else:
            switch = doc.find("switches", device)
            ends.append((False, switch is not None, 9 if switch is None else TIER_RANK.get(switch.tier, 9)))
    (a_node, a_switch, ta), (b_node, b_switch, tb) = ends
    key = ((((kind == 2) * 2 + a_node) * 2 + b_node) * 10 + ta) * 10 + tb
    return key, kind != 2 and a_node != b_node and (a_switch or b_switch)


def _held(doc, links: list, name: str) -> list | None:
    """The links' field `name` as a design held still has read it (Document.held_still), when `links`
    are the document's own; else None."""
    values = doc.link_values(name) if links is doc.links else None
    return values if isinstance(values, list) else None


def _field(doc, links: list, name: str) -> list:
    """[link.name for link in links]: the design's held reading, else read PART_LINKS at a time."""
    out = _held(doc, links, name)
    if out is not None:
        return out
    out = []
    for start in range(0, len(links), PART_LINKS):
        out.extend(map(attrgetter(name), links[start:start + PART_LINKS]))
    return out


def _column(doc, links: list, name: str, values, dtype) -> np.ndarray:
    """An array of values(the links' field `name`): over the design's held reading, else read
    PART_LINKS at a time."""
    held = _held(doc, links, name)
    if held is not None:
        return np.fromiter(values(held), dtype, len(held))
    out = np.empty(len(links), dtype=dtype)
    for start in range(0, len(links), PART_LINKS):
        part = links[start:start + PART_LINKS]
        out[start:start + len(part)] = np.fromiter(values(map(attrgetter(name), part)), dtype, len(part))
    return out


def _kind_column(doc, links: list, kind_code: dict[str, int]) -> np.ndarray:
    """The links' kinds as CABLE_KINDS codes (0 for another): over the held design, one look-up per
    distinct kind (per_value, on the codes of its kinds the check made too)."""
    if _held(doc, links, "kind") is not None:
        return per_value(doc, "kind", lambda kind: kind_code.get(kind, 0), np.int8)
    return _column(doc, links, "kind", lambda values: map(kind_code.get, values, repeat(0)), np.int8)


def _numbers(doc, links: list, name: str, dtype) -> np.ndarray:
    """The links' field `name` as an array: the held design's (Document.link_array, shared with the
    check: read-only), else read here."""
    if _held(doc, links, name) is not None:
        return doc.link_array(name, dtype)
    return _column(doc, links, name, iter, dtype)


def _kind_code(kind: str) -> int:
    return CABLE_KINDS.index(kind) if kind in CABLE_KINDS else 0


def _cable_words(gbps: float, count: int, kind: int) -> str:
    name = CABLE_KINDS[kind]
    words = f"{gbps:g} Gb/s {KIND_NAMES.get(name, name)}"
    return f"{count} x {words}" if count > 1 else words


def small_codes(values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_inverse=True) of integers in 0..size-1, by a table instead of a sort
    (its copies of 295k values at 131k GPUs were most of the analysis's peak)."""
    present = np.zeros(size, dtype=bool)
    present[values] = True
    return np.flatnonzero(present), (np.cumsum(present) - 1)[values]


def codes(values: np.ndarray) -> np.ndarray:
    """0, 1, 2, ... for the distinct values (in sorted order), per item: np.unique's inverse, found by a
    search among the few distinct values (np.unique(return_inverse=True) keeps several copies of all
    295k values at once at 131k GPUs)."""
    if not len(values):
        return np.zeros(0, dtype=np.int64)
    values = np.asarray(values).reshape(-1)
    distinct = np.unique(values, return_index=True)[0]  # return_index: plain np.unique imports numpy.ma
    return np.searchsorted(distinct, values).astype(np.int64, copy=False)


def combined_codes(per_item: list[np.ndarray], n: int) -> np.ndarray:
    """One code per distinct combination of several per-item codes (numbered in sorted order)."""
    if not n:
        return np.zeros(0, dtype=np.int64)
    key = np.zeros(n, dtype=np.int64)
    size = 1  # the combinations there can be (0: a code below 0, not counted so)
    for c in per_item:
        c = np.asarray(c).reshape(-1)
        if c.dtype.kind not in "biu":
            c = c.astype(np.int64)
        width = int(c.max(initial=0)) + 1
        key *= width  # in place: each step's copies of all 295k keys were most of the analysis's peak
        key += c
        size = size * width if int(c.min(initial=0)) >= 0 else 0
    # a table of every combination when it is no larger than the keys (np.unique sorts copies of them)
    return small_codes(key, size)[1] if 0 < size <= n else codes(key)
