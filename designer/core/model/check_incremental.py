"""check_model redone only where an edit can change it (the live window checks on every edit).

A full check of a 16,384-GPU design takes ~300 ms, most of it the links' ports; an edit of one
link's speed or of the job changes a few of its problems at most. `ModelChecker.check` keeps
the last full check's parts (check.CheckParts) and, when the document's change log says only such
edits happened since, redoes just those parts with check.py's own rules, and reads only the edited elements (their
numbers, their ends): the work of an edit follows the edit, not the design. The jobs' check, redone
on every check, reads the cluster through the parts' tallies (design_tallies.py), which the edited
elements update. Cables added, removed, renamed or re-pointed keep the parts too: the links' ids and
ends are kept current edit by edit (ElementPositions, the parts' `ends`), the NaN table and the
links' problems move with the list, and the link rules are redone at the devices those cables end at
(link_edits.py); the whole network's checks (servers cut off, the jobs' reach) are redone from the
kept ends and the links' kinds, counts and states kept as arrays (link_columns.py), and not at all
after cables were only renamed. Servers, switches and racks added, removed, renamed or resized keep
them as well: the devices' places are matched by id before and after and the kept ends moved
(device_edits.py), the link rules redone at the devices whose cables or fields changed and at every
dangling end; the racks' and slots' check is kept per element and per rack (rack_slots.py), the
parts' names and the NVLink and NIC-map checks are redone only after an edit of a field they read,
the network's islands only when its shape changed (a server added or removed with its cables moves them:
island_edits.py), and the jobs' tallies follow renames, rack edits
and a server's GPU count by the edit's delta. Repeated ids are counted again at the ids an edit
touched (repeated_ids.py). A new design, an edit of a value of an element whose id repeats, or more
repeats than the check lists, gets the full check. The list is joined as check_model joins it
(check.assemble). Saving and `designer validate` run the full check.
"""
from __future__ import annotations

import dataclasses
from operator import attrgetter

import numpy as np

from ..problems import Problem
from .catalog import Catalog, default_catalog
from .check import (MAX_LISTED_DUPLICATES, CheckParts, assemble, check_parts, has_trays, part_problems,
                    problems_after_links, redo_link_kind)
from .design_tallies import DesignTallies
from .device_edits import devices_moved, end_written, ends_copied, ends_set_one, ends_moved, ends_set, place_map, tail_moved
from .document import Document
from .elements import split_endpoint
from .endpoints import Endpoints, parse_endpoints
from .element_positions import ElementPositions
from .island_edits import SwitchReach
from .link_columns import gathered, kept_places
from .link_edits import DANGLING, SERVER, SWITCH, moved_links, redo_links_at
from .network_follow import NetworkFollow
from .rack_slots import RackSlots, slot_problems, slots_after_edits
from .repeated_ids import RepeatedIds

LINK_SHAPE_FIELDS = frozenset({"id", "a", "b", "kind", "count"})  # ports and ends: redone at their devices
JOB_PARTS = frozenset({"workload", "parallelism", "jobs", "layout"})  # none of the cluster checks read them
# A part marked down or up (or GPUs of a server out): no cluster check reads it; the jobs' check,
# which does, runs on every check (check_plan) and reads them through the tallies the edit updates
STATE_FIELDS = frozenset({"state", "gpus_down"})
DEVICE_PARTS = frozenset({"racks", "nodes", "switches"})
KIND_OF = {"nodes": SERVER, "switches": SWITCH}
# the servers' and switches' fields the network's islands follow from (check.network_islands)
NETWORK_FIELDS = frozenset({"role", "accelerator_count", "tier", "fabric"})
# the servers' and switches' fields that say only where they sit (what the jobs' tallies do not read)
PLACEMENT_FIELDS = frozenset({"rack", "slot", "height_units", "name"})
# the servers' and switches' fields the parts' names read (check.part_problems), and those the NVLink
# domains and trays and the GPU-NIC maps read (check.problems_after_links)
PART_FIELDS = frozenset({"accelerator", "nic_model", "model"})
AFTER_FIELDS = frozenset({"nvlink_domain", "accelerator", "accelerator_count", "fabric", "tier", "gpu_nic_affinity",
                          "nic_count"})
# a server's fields that the jobs' tallies follow by the edit's delta (DesignTallies.server_resized)
RESIZE_FIELDS = frozenset({"accelerator_count", "accelerator"})
# a rack's fields that only the NaN check reads (its place on the canvas, its labels)
RACK_NUMBERS_ONLY = frozenset({"x", "y", "name", "row"})


class ModelChecker:
    def __init__(self, catalog: Catalog | None = None):
        self.catalog = catalog or default_catalog()
        self._key = None  # (lineage, revision) of the parts below
        self._parts: CheckParts | None = None
        self._positions = ElementPositions()
        self._device_ids: dict[str, list[str]] = {}  # the servers' and switches' ids the parts were made for
        self._repeated: RepeatedIds | None = None  # the ids that repeat (None: too many to follow)
        self.full_checks = 0  # how many times the whole design was checked (tests, benchmarks)

    def check(self, doc: Document) -> list[Problem]:
        changes = doc.changes_since(self._key[1]) if self._key and self._key[0] is doc.lineage else None
        ends = self._parts.ends if self._parts is not None else None
        if changes is None or not self._patch(doc, changes):
            self.full_checks += 1
            self._parts = check_parts(doc, self.catalog)
            self._positions = ElementPositions(self._parts.link_ids, doc.link_id_index, doc.link_ids_version)
            self._repeated = RepeatedIds.of(self._parts.duplicates)
            if self._repeated is not None and not self._repeated.within_a_list(doc, self._positions):
                # the racks' and slots' answers per element, for device edits (kept by id: none repeated)
                self._parts.slots = RackSlots(doc)
            self._device_ids = {name: list(map(attrgetter("id"), getattr(doc.spec, name))) for name in KIND_OF}
            # the routes among switches, for the islands to follow servers added and removed (~15 ms at 131k
            # GPUs: made here, with the whole design's check, not by the first server deleted after it)
            if doc.switches and sum(len(island.servers) for island in self._parts.islands) >= 2:
                self._parts.switch_reach = SwitchReach.of(doc, self._parts.ends, self._parts.columns.network,
                                                          self._parts.islands, len(doc.nodes))
        elif self._parts.ends is not ends:  # the ends moved with the edits: the document's parse from now on
            doc.link_ends.keep(doc, self._parts.ends)
        self._key = (doc.lineage, doc.revision)
        return assemble(doc, self._parts, self.catalog)

    def _patch(self, doc: Document, changes) -> bool:
        """Redo the parts these changes can affect; False when only a full check will do."""
        edited: dict[tuple[str, str], set[str]] = {}  # (collection, id) of each element changed -> its fields
        repeated_before = set(self._repeated.ids) if self._repeated is not None else None
        reshaped = []  # cables, servers, switches and racks added, removed, renamed or re-pointed, in order
        for c in changes:
            if c.collection in JOB_PARTS:
                continue
            if c.action == "changed" and c.field in STATE_FIELDS and c.collection in ("nodes", "switches"):
                edited.setdefault((c.collection, c.id), set()).add(c.field)
                continue
            if c.collection == "links" and c.action == "changed" and c.field not in LINK_SHAPE_FIELDS:
                edited.setdefault((c.collection, c.id), set()).add(c.field)
                continue
            if c.collection == "links" and c.action in ("added", "removed", "changed"):
                reshaped.append(c)
                fields = edited.pop((c.collection, c.id), None)  # values edited before: found by the id now
                if fields is not None and c.action == "changed":
                    edited[(c.collection, c.new if c.field == "id" else c.id)] = fields
                continue
            if c.collection in DEVICE_PARTS and c.action in ("added", "removed", "changed"):
                reshaped.append(c)
                continue
            return False
        if reshaped and not self._reshape(doc, reshaped):
            return False
        if edited and self._names_a_repeated_id(doc, edited, repeated_before):
            return False  # which element a repeated id means is the full check's call
        places = [(name, self._positions.find(doc, name, element_id), fields)
                  for (name, element_id), fields in edited.items()]
        if any(position is None for _, position, _ in places):
            return False
        tallies = self._parts.tallies
        for name, position, fields in places:
            self._parts.numbers.redo(doc, name, position)
            edited_in = {"nodes": tallies.server_edited, "links": tallies.link_edited,
                         "switches": tallies.switch_edited}[name]
            for field in fields:
                edited_in(doc, position, field)
            if name == "links":
                link = doc.links[position]
                if "state" in fields:
                    self._parts.columns.redo(position, link)
                ends = [self._positions.device(doc, split_endpoint(end)[0]) for end in (link.a, link.b)]
                redo_link_kind(doc, self._parts, position, ends)
        return True

    def _reshape(self, doc: Document, changes) -> bool:
        """Follow cables, servers, switches and racks added, removed, renamed, re-pointed or resized
        (`changes`, in order) in the kept parts (Reshape). False when only the full check will do (the
        parts are then left half-moved: it replaces them)."""
        if self._repeated is None:
            return False  # more repeated ids than the full check lists: it says how many
        reshape = Reshape(doc, self._parts, self._positions, self._device_ids, self._repeated)
        for c in changes:
            if not (c.collection == "links" and c.action == "changed" and c.field in ("a", "b")):
                reshape.repoint()
            if not (c.collection == "links" and c.action in ("added", "removed")) and not reshape.settle_links():
                return False
            if c.collection in DEVICE_PARTS:
                follow = {"added": reshape.element_added, "removed": reshape.element_removed}.get(
                    c.action, reshape.element_changed)
            else:
                follow = {"added": reshape.added, "removed": reshape.removed}.get(c.action, reshape.changed)
            if not follow(c):
                return False
        reshape.repoint()
        if not reshape.settle_links() or not reshape.finish(self.catalog):
            return False
        self._device_ids = reshape.device_ids
        return True

    def _names_a_repeated_id(self, doc: Document, edited, repeated_before: set[str] | None) -> bool:
        """Whether an edited element, or a device at an edited cable's ends, has an id that another
        element has too, now or before the edits (True too when the check listed only the first of many
        repeats): which element an edit of its values meant is the full check's call."""
        duplicates = self._parts.duplicates
        if repeated_before is None or len(duplicates) > MAX_LISTED_DUPLICATES:
            return True
        repeated = {p.element for p in duplicates} | repeated_before
        if not repeated:
            return False
        for name, element_id in edited:
            if element_id in repeated:
                return True
            if name == "links":
                position = self._positions.find(doc, name, element_id)
                if position is None:
                    return True
                link = doc.links[position]
                if split_endpoint(link.a)[0] in repeated or split_endpoint(link.b)[0] in repeated:
                    return True
        return False


class Reshape:
    """Cables, servers, switches and racks added, removed, renamed, re-pointed or resized, followed
    one change at a time in the kept parts: the links' ids and ends, the NaN table and the links'
    problems move with the list of links. Then (finish) the devices' places are matched by id before
    and after (device_edits.py), the link rules are redone at the devices whose links or fields
    changed, before and after, and at every dangling end when device names changed; the checks that
    read every rack, server or switch are redone where the edit reaches them (finish), and those that
    follow the whole network's shape (servers cut off, the jobs' reach) from the kept ends when that
    shape changed. Each step returns False when only the full check will do."""

    def __init__(self, doc: Document, parts: CheckParts, positions: ElementPositions,
                 device_ids: dict[str, list[str]], repeated: RepeatedIds):
        self.doc, self.parts, self.positions = doc, parts, positions
        self.repeated = repeated  # the ids that repeat, followed through these edits (finish)
        self.repeated_before = set(repeated.ids)
        self.ids_touched: set = set()  # the ids (old and new) of the elements added, removed or renamed
        self.ids_given: set = set()  # the ids of the elements added or renamed to (only these can start a repeat)
        # ids of racks, servers and switches with a value other than the id edited: which element an edit
        # meant, when its id repeats, is the full check's call
        self.values_edited: set = set()
        self.device_ids = device_ids  # collection -> the servers' or switches' ids, as the parts have them
        self.devices: set[tuple[int, int]] = set()  # (kind, index) of each device whose links changed
        self.touched: set[str] = set()  # ids of the links added or changed (their numbers are read again)
        # link id -> the sides (0: a, 1: b) whose devices its edit changes: a cable re-pointed at one end
        # leaves the device at the other end's problems as they were (they name that device and its links)
        self.touched_sides: dict[str, set[int]] = {}
        # ids of the links added, renamed to, or given another kind or count: their ids and values are read
        # again (a cable only re-pointed keeps its id and its numbers)
        self.relinked: set[str] = set()
        self.reshaped = False  # a link added, removed, re-pointed, or of another kind or count (not just renamed)
        self.elements: dict[str, set[str]] = {}  # collection -> ids of racks, servers, switches added or changed
        self.new_ids: set[str] = set()  # ids of racks, servers, switches added or renamed (checked unrepeated)
        self.racked = False  # a rack, server or switch added, removed or changed (not only a rack moved)
        self.renamed = False  # a server or switch added, removed or renamed: the devices' places and names move
        self.named = False  # a server or switch added or renamed: a name a dangling end may now find
        self._own_ends = False  # parts.ends are this reshape's own arrays (a cable re-pointed writes in place)
        self._repointed: list[tuple[int, int, str]] = []  # (side, link position, new end) not yet parsed
        self._source: np.ndarray | None = None  # a run of cables added and removed not yet written (settle_links)
        self._added: list = []  # the cables added in that run
        self._ends_before = parts.ends  # (never written in place: see _own_ends)
        self.network_moved = False  # a link added, removed or of another kind; a device added, removed, or of
        # another role, GPU count, tier or fabric: the network's islands are found again (else: if no end moved)
        self.racks_edited = False  # a rack added, removed or changed
        self.tallied = False  # a server or switch added, removed, or a field the jobs' tallies read changed
        self.devices_renamed = False  # a server or switch renamed
        self.resized: set[str] = set()  # ids of the servers given another GPU count or accelerator
        # a server or switch added, removed or renamed (the parts' names and the checks after the links' name
        # them by id and place), or a field those read changed
        self.devices_edited = {"parts": False, "after": False}
        self.counted = False  # a cable's count changed
        # collection -> ids (old and new) of the racks, servers and switches added, removed or changed, for
        # the racks' and slots' check (rack_slots.py); a rack added, removed or renamed (every missing rack's guess)
        self.placed: dict[str, set[str]] = {name: set() for name in DEVICE_PARTS}
        self.racks_renamed = False
        # the network's islands can follow servers added and removed (island_edits.py): no switch added,
        # removed or of another tier or fabric, no server of another role, no cable's ends, kind or count
        # changed; and (checked when followed) every cable added or removed at a server added or removed
        self.islands_followable = True
        self._network_before = parts.columns.network  # (replaced, not written, by cables added and removed)
        self._cables_removed: list[set[int]] = []  # the servers (old places) at each cable removed
        self._cables_added: list[str] = []  # the ids of the cables added
        self.server_map: np.ndarray | None = None  # each server's place before -> after (_follow_devices)
        self.link_origin: np.ndarray | None = None  # each link's place before the edits (-1: added); None: same
        self.tallied_fields = False  # a field the jobs' tallies read changed (not only servers added, removed)

    def element_added(self, c) -> bool:
        """A rack, server or switch put at `c.position`."""
        if c.position is None or not isinstance(c.id, str):
            return False
        self.parts.numbers.inserted(c.collection, c.position)
        self.ids_touched.add(c.id)
        self.ids_given.add(c.id)
        self._element_put_or_taken(c)
        self._element_moved(c.collection, c.id)
        self.network_moved |= c.collection in KIND_OF
        return True

    def element_removed(self, c) -> bool:
        if c.position is None or not isinstance(c.id, str):
            return False
        self.parts.numbers.removed(c.collection, c.position)
        self.ids_touched.add(c.id)
        self._element_put_or_taken(c)
        self._element_moved(c.collection, None)
        return True

    def _element_put_or_taken(self, c) -> None:
        """What a rack, server or switch added or removed marks alike: its rack's and slots' check, the
        jobs' tallies and every device check for a device, and no islands followed past a switch."""
        device = c.collection in KIND_OF
        self.racks_edited |= c.collection == "racks"
        self.racks_renamed |= c.collection == "racks"
        self.placed[c.collection].add(c.id)
        self.islands_followable &= c.collection != "switches"
        self.tallied |= device
        self._devices_edited(device)

    def element_changed(self, c) -> bool:
        """A field of a rack, server or switch (its id too) changed."""
        new_id = c.new if c.field == "id" else c.id
        if not isinstance(new_id, str):
            return False
        self.elements.setdefault(c.collection, set()).add(new_id)
        self.racks_edited |= c.collection == "racks"
        self.racks_renamed |= c.collection == "racks" and c.field == "id"
        if isinstance(c.id, str):
            self.placed[c.collection].update((c.id, new_id))
        else:
            return False
        if c.field == "id":
            self.ids_touched.update((c.id, new_id))
            self.ids_given.add(new_id)
            self._element_moved(c.collection, new_id)
        else:
            self.values_edited.add(c.id)
            self.racked |= not (c.collection == "racks" and c.field in RACK_NUMBERS_ONLY)
        reshapes_network = c.collection in KIND_OF and c.field in NETWORK_FIELDS and not _same_gpu_side(c)
        self.network_moved |= reshapes_network
        # (a switch renamed: its cables end at none, unless they follow; the servers' NICs on them with them)
        self.islands_followable &= not reshapes_network and not (c.collection == "switches" and c.field == "id")
        resized = c.collection == "nodes" and c.field in RESIZE_FIELDS and type(c.new) is type(c.old)
        if resized:
            self.resized.add(new_id)
        tallied = c.collection in KIND_OF and c.field not in PLACEMENT_FIELDS | {"id"} and not resized
        self.tallied |= tallied
        self.tallied_fields |= tallied
        if c.collection in KIND_OF:
            renamed = c.field == "id"
            self.devices_edited["parts"] |= renamed or c.field in PART_FIELDS
            self.devices_edited["after"] |= renamed or c.field in AFTER_FIELDS
        self.devices_renamed |= c.collection in KIND_OF and c.field == "id"
        return True

    def _devices_edited(self, edited: bool) -> None:
        for check in self.devices_edited:
            self.devices_edited[check] |= edited

    def _element_moved(self, collection: str, element_id: str | None) -> None:
        """A rack, server or switch added, removed or renamed: the ids' index of its list is made again."""
        if element_id is not None:
            self.elements.setdefault(collection, set()).add(element_id)
            self.new_ids.add(element_id)
            self.named |= collection in KIND_OF
        self.positions.forget(collection)
        self.racked = True
        self.renamed |= collection in KIND_OF
        self.network_moved |= collection in KIND_OF and element_id is None

    def added(self, c) -> bool:
        """A cable put at `c.position`; its ends and columns are written with the run's (settle_links)."""
        link, position = c.new, c.position
        if position is None or not isinstance(link.a, str) or not isinstance(link.b, str):
            return False
        self._source = np.insert(self._sources(), position, -1 - len(self._added))
        self._added.append(link)
        self._cables_added.append(c.id)
        self.ids_touched.add(c.id)
        self.ids_given.add(c.id)
        self.positions.link_inserted(position, c.id)
        self._move_link_tables(position, 1)
        self._touch(c.id, (0, 1))
        return True

    def removed(self, c) -> bool:
        position = c.position
        if position is None or self.positions.link_ids[position] != c.id:
            return False
        source = self._sources()
        self.ids_touched.add(c.id)
        kept = int(source[position])
        if kept >= 0:  # (a cable added in this run and taken again: no device of its is changed)
            for side in self.parts.ends:
                self.devices.add((int(side.kind[kept]), int(side.index[kept])) if side.kind[kept] else DANGLING)
            self._cables_removed.append({int(side.index[kept]) for side in self.parts.ends if side.kind[kept] == SERVER})
        self._source = np.delete(source, position)
        self.positions.link_removed(position)
        self._move_link_tables(position, -1)
        return True

    def _sources(self) -> np.ndarray:
        """Where each cable now was in the kept ends (its negative, less one: the cable added so)."""
        if self._source is None:
            self._source = np.arange(len(self.parts.columns.count), dtype=np.int64)
        return self._source

    def settle_links(self) -> bool:
        """A run of cables added and removed written into the kept ends and columns in one go (each
        link's own np.insert of 15 arrays of 295k took ~2 ms at 131k GPUs); the ends of the cables added
        parsed together, their devices to be redone. Called before any other change is followed."""
        source, added = self._source, self._added
        if source is None:
            return True
        self._source, self._added = None, []
        parts, new, at = self.parts, source < 0, kept_places(source)
        # each link's place before the edits, int32 (places < 2**31; half the bytes at the peak of a
        # cable's delete, ~1.2 MB at 131k GPUs); the first run's is the source itself, -1 where added
        if self.link_origin is None:
            self.link_origin = np.maximum(source, -1).astype(np.int32)
        else:
            self.link_origin = np.where(new, np.int32(-1), gathered(self.link_origin, at))
        try:
            parts.columns.moved(source, added)
        except (TypeError, ValueError):
            return False  # a count that is no whole number: the full check says what it says
        present = (-source[new] - 1).tolist()
        texts = [getattr(added[k], side) for side in "ab" for k in present]
        parsed = self._parse_ends(texts) if texts else None
        sides = []
        for s, side in enumerate(parts.ends):
            fields = {}
            for f in dataclasses.fields(Endpoints):
                column = gathered(getattr(side, f.name), at)
                if present:
                    column[new] = getattr(parsed, f.name)[s * len(present):(s + 1) * len(present)]
                fields[f.name] = column
            sides.append(Endpoints(**fields))
        parts.ends = tuple(sides)
        self._own_ends = True
        for position in np.flatnonzero(new).tolist():
            self._devices_at(position)
        return True

    def changed(self, c) -> bool:
        """A cable's id, ends, kind or cable count changed."""
        found = self.positions.link_places(c.id)
        if len(found) != 1:
            return False
        position = found[0]
        sides = ("ab".index(c.field),) if c.field in ("a", "b") else (0, 1)  # (an id: both ends' problems name it)
        self.islands_followable &= c.field == "id"
        self._devices_at(position, sides)
        if c.field == "id":
            if not isinstance(c.new, str):
                return False
            self.positions.link_renamed(position, c.new)
            self.ids_touched.update((c.id, c.new))
            self.ids_given.add(c.new)
            self._touch(c.new, (0, 1))
            return True
        if c.field in ("a", "b"):
            if not isinstance(c.new, str):
                return False
            self._repointed.append((sides[0], position, c.new))  # parsed together (repoint)
        self.network_moved |= c.field == "kind"
        self.counted |= c.field == "count"
        self._touch(c.id, sides, c.field not in ("a", "b"))
        self.reshaped = True
        return True

    def repoint(self) -> None:
        """The cable ends re-pointed since the last call, parsed in one go and written in place (one copy
        of the kept ends for the whole reshape: a switch renamed re-points its 128 cables), then their
        devices marked. Called before any other change is followed: those read the ends."""
        if not self._repointed:
            return
        if not self._own_ends:
            self.parts.ends = tuple(map(ends_copied, self.parts.ends))
            self._own_ends = True
        parsed = self._parse_ends([text for _, _, text in self._repointed])
        for k, (side, position, _) in enumerate(self._repointed):
            end_written(self.parts.ends[side], position, ends_set_one(parsed, k))
        for side, position, _ in self._repointed:
            self._devices_at(position, (side,))
        self._repointed = []

    def finish(self, catalog: Catalog) -> bool:
        """Read the added and changed elements again, then redo the rules at their devices and the network."""
        if not self._ids_kept_current() or not self._reread_touched() or not self._follow_repeats() \
                or not self._reread_elements():
            return False
        if self.renamed and not self._follow_devices():
            return False
        doc, parts = self.doc, self.parts
        redo_links_at(doc, parts, self.devices, self.repeated.device_groups(doc, self.positions))
        network = self._network()
        if self.racked:  # the checks that read every rack, server or switch
            parts.slots = slots_after_edits(parts.slots, doc, self.positions.find,
                                            self.repeated.within_a_list(doc, self.positions), self.placed,
                                            self.racks_renamed)
            if self.devices_edited["parts"]:
                parts.parts = part_problems(doc, catalog)
            parts.before_links = parts.duplicates + slot_problems(parts.slots, doc, self.positions.find) + parts.parts
            # (racks, places and other fields: the parts' names, NVLink domains and trays, NIC maps stand)
            if self.devices_edited["after"] or (self.reshaped and has_trays(doc)):
                parts.after_links = problems_after_links(doc, catalog)
            network.redo(self.network_moved)
            resized = [self.positions.find(doc, "nodes", server) for server in self.resized]
            if self.tallied or None in resized:  # (a server resized, then renamed: made anew)
                before, parts.tallies = parts.tallies, DesignTallies(doc, parts.ends, parts.columns)
                if not (self.tallied_fields or None in resized):  # servers added or removed alone
                    network.follow_reach(before)
                return True
            if self.racks_edited:  # a rack added, removed or changed: the ids the jobs' layout names
                parts.tallies.racks_changed(doc)
            for position in resized:
                parts.tallies.server_resized(doc, position)
            # a device renamed with its cables re-pointed: the cables still join the same ports (renamed
            # alone, its cables now end at none)
            same = not (self.network_moved or self.counted) and network.same_ends(("kind", "index", "nic"))
            if not same:
                parts.tallies.links_reshaped(parts.ends, parts.columns)
            elif self.touched:
                parts.tallies.link_renamed()
            if self.devices_renamed:  # the servers' ids the jobs list, whether or not the cables followed
                parts.tallies.devices_renamed(doc)
            return True
        if not self.reshaped:  # cables renamed only: the network's shape is the same, the reasons name cables
            parts.tallies.link_renamed()
            return True
        if has_trays(doc):  # the trays' check reads the links
            parts.after_links = problems_after_links(doc, catalog)
        network.redo(self.network_moved)
        if not network.follow_reach_through_cables():
            parts.tallies.links_reshaped(parts.ends, parts.columns)
        return True

    def _network(self) -> NetworkFollow:
        """What the edits did to the network, for finding or following its islands and the jobs' reach."""
        return NetworkFollow(self.doc, self.parts, self.positions, self._ends_before, self._network_before,
                             self.server_map, self.link_origin, self.islands_followable, self._cables_removed,
                             self._cables_added)

    def _follow_repeats(self) -> bool:
        """The ids the edits touched counted again, and the repeats' problems made again when any id
        repeats now or did (their places move with the elements added or removed). False when a value of
        an element whose id repeats was edited (which element the edit meant is the full check's call),
        or when more repeat than the check lists."""
        repeated, doc, parts = self.repeated, self.doc, self.parts
        # (an id taken away or renamed from can only end a repeat: counted when it was one)
        repeated.follow(doc, self.positions, self.ids_given | (self.ids_touched & self.repeated_before))
        either = self.repeated_before | set(repeated.ids)
        if not either:
            return True
        if len(repeated.ids) > MAX_LISTED_DUPLICATES or self.values_edited & either:
            return False
        duplicates = repeated.problems(doc, self.positions)
        if len(duplicates) > MAX_LISTED_DUPLICATES:
            return False
        parts.before_links = duplicates + parts.before_links[len(parts.duplicates):]
        parts.duplicates = duplicates
        return True

    def _repeated_devices_redone(self, again_sides: dict[int, set[int]], ends: list) -> None:
        """The servers and switches of an id touched that repeats now or did: a cable's end means the
        first of that id (the links' parse), so every end at one of them is parsed again and their
        problems redone; their cables may have moved from one kept server to another, which the
        network's islands do not follow (islands_edits.py)."""
        touched = (self.repeated_before | set(self.repeated.ids)) & self.ids_touched
        devices = self.repeated.devices_of(self.doc, self.positions, touched)
        if not devices:
            return
        self.islands_followable = False
        self.devices.update(devices)
        for kind in (SERVER, SWITCH):
            places = [place for k, place in devices if k == kind]
            for side, side_ends in enumerate(ends if places else ()):
                at = np.flatnonzero((side_ends.kind == kind) & np.isin(side_ends.index, places))
                for position in at.tolist():
                    again_sides.setdefault(position, set()).add(side)

    def _reread_elements(self) -> bool:
        """The racks, servers and switches added or changed (every one of a repeated id): their numbers
        read again, their devices' links redone."""
        if not self.elements:
            return True
        doc = self.doc
        for name, element_ids in self.elements.items():
            for element_id in element_ids:
                for position in self.positions.places(doc, name, element_id):  # (none: removed again since)
                    self.parts.numbers.redo(doc, name, position)
                    if name in KIND_OF and not self.renamed:  # (renamed: _follow_devices reads the places anew)
                        self.devices.add((KIND_OF[name], position))
        return True

    def _follow_devices(self) -> bool:
        """Servers or switches added, removed or renamed: the kept ends, devices and devices' problems
        moved to the new places; the ends at a device gone, at none, or of a link added or changed
        parsed again from their text; every dangling end's problem redone (the names it may have meant
        changed)."""
        doc, parts = self.doc, self.parts
        new_ids = {name: list(map(attrgetter("id"), getattr(doc.spec, name))) for name in KIND_OF}
        maps = {KIND_OF[name]: place_map(self.device_ids[name], new_ids[name]) for name in KIND_OF}
        self.server_map = maps[SERVER]
        moved = [ends_moved(side, maps) for side in parts.ends]
        # link position -> the sides to parse again whose devices are redone: ends at a device gone
        again_sides: dict[int, set[int]] = {}
        for side, (_, gone) in enumerate(moved):
            for position in gone.tolist():
                again_sides.setdefault(position, set()).add(side)
        if self.named:  # a dangling end may name the device added or renamed to
            for side, (ends, _) in enumerate(moved):
                for position in np.flatnonzero(ends.kind == 0).tolist():
                    again_sides.setdefault(position, set()).add(side)
        self.devices = devices_moved(self.devices, maps)
        self._repeated_devices_redone(again_sides, [ends for ends, _ in moved])
        # the links added or changed: their ends parsed again below, their devices at the new places (the
        # devices their ends had before were marked as each change came, at the places then)
        for element_id, sides in self.touched_sides.items():
            for position in self.positions.link_places(element_id):
                again_sides.setdefault(position, set()).update(sides)
        again = sorted(again_sides)
        links = doc.links
        sides = []
        for (side, _), field in zip(moved, ("a", "b")):
            texts = [getattr(links[i], field) for i in again]
            if not all(isinstance(text, str) for text in texts):
                return False
            sides.append(ends_set(side, again, self._parse_ends(texts)))
        parts.ends = tuple(sides)
        for position in again:
            self._devices_at(position, again_sides[position])
        for name, element_ids in self.elements.items():
            if name in KIND_OF:
                for element_id in element_ids:
                    self.devices.update((KIND_OF[name], position)
                                        for position in self.positions.places(doc, name, element_id))
        self.devices.add(DANGLING)
        parts.tail = tail_moved(parts.tail, maps)
        self.device_ids = new_ids
        return True

    def _touch(self, link_id: str, sides, relinked: bool = True) -> None:
        """The link `link_id` was added or changed at `sides` (`relinked`: not only re-pointed): its devices
        there are redone."""
        self.touched.add(link_id)
        self.touched_sides.setdefault(link_id, set()).update(sides)
        if relinked:
            self.relinked.add(link_id)

    def _move_link_tables(self, position: int, step: int) -> None:
        """A link put at `position` (step 1) or the one there taken (-1): the per-link tables move."""
        parts = self.parts
        if step > 0:
            parts.numbers.inserted("links", position)
        else:
            parts.numbers.removed("links", position)
        parts.per_link = moved_links(parts.per_link, position, step)
        parts.kinds = moved_links(parts.kinds, position, step)
        self.reshaped = self.network_moved = True

    def _devices_at(self, position: int, sides=(0, 1)) -> None:
        """The devices at the link's ends `sides` (DANGLING for an end at none) are to be redone."""
        for k in sides:
            side = self.parts.ends[k]
            self.devices.add((int(side.kind[position]), int(side.index[position])) if side.kind[position] else DANGLING)

    def _ids_kept_current(self) -> bool:
        """Whether the kept ids are as many as the links, and each new one is still no other link's."""
        positions = self.positions
        if len(positions.link_ids) != len(self.doc.links):
            return False
        for element_id in self.relinked:  # (an id a rack, server or switch has too: a repeat _follow_repeats lists)
            if len(positions.link_places(element_id)) > 1:
                return False
        return True

    def _reread_touched(self) -> bool:
        """The numbers and columns of the links added, renamed, or of another kind or count, read again."""
        links = self.doc.links
        for element_id in self.relinked:
            found = self.positions.link_places(element_id)
            if not found:
                continue
            if links[found[0]].id != element_id:
                return False  # the kept ids went astray: the full check makes them again
            self.parts.numbers.redo(self.doc, "links", found[0])
            try:
                self.parts.columns.redo(found[0], links[found[0]])
            except (TypeError, ValueError):
                return False
        return True

    def _parse_ends(self, ends: list[str]):
        """Cable ends as the links' ends read them (in one parse), their devices found through the kept indexes."""
        places = {}
        for device in {end.partition(":")[0] for end in ends}:
            places[device] = (0, -1)
            for kind, name in ((SERVER, "nodes"), (SWITCH, "switches")):
                found = self.positions.places(self.doc, name, device)
                if found:  # (a repeated id: its first, as the links' parse says)
                    places[device] = (kind, found[0])
                    break
        found = [places[end.partition(":")[0]] for end in ends]
        return parse_endpoints(ends, [kind for kind, _ in found], [index for _, index in found])



def _same_gpu_side(c) -> bool:
    """A server's GPU count changed on the same side of 0 (the network's islands join the servers with GPUs)."""
    if c.field != "accelerator_count" or not all(type(v) is int for v in (c.old, c.new)):
        return False
    return (c.old > 0) == (c.new > 0)
