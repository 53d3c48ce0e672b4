"""The cluster document: the single source of truth that the canvas, panels and CLI read.

Elements live in ordered lists (the file's order) with an id index beside them. Edits go
through `add`, `remove`, `update`, `set_job`: each keeps the index right and announces a
`Change`. Duplicate ids can exist after loading a broken file; the checker reports them
and the index then points at the first one.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import weakref
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Iterable, Iterator

import numpy as np

from ..by_name import FieldsByName, compared_by_value
from ..parts import array_in_parts, list_in_parts
from .elements import Link, Metadata, Node, Rack, Switch, refuse_unknown_choices
from .device_links import DeviceLinks
from .endpoints import LinkEnds
from .id_index import SharedIdIndex
from .switch_links import SwitchLinksMemo
from .events import Change, Events
from .job import Parallelism, Workload
from .jobs import JobSpec

COLLECTIONS = {"racks": Rack, "nodes": Node, "switches": Switch, "links": Link}
COLLECTION_OF = {cls: name for name, cls in COLLECTIONS.items()}


# init=False: its __init__ takes the fields by name (core/by_name.py), not a generated one of 10 parameters;
# its __eq__ and __repr__ are written there too.
@compared_by_value
@dataclass(init=False, eq=False, repr=False)
class ClusterSpec:
    """The `spec` section of a design: racks, servers, switches, cables, the job(s) and calibration."""
    racks: list[Rack] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    switches: list[Switch] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    workload: Workload | None = None
    parallelism: Parallelism | None = None
    # Several jobs sharing the cluster (model/jobs.py); empty: the one job of workload + parallelism
    jobs: list[JobSpec] = field(default_factory=list)
    calibration: dict[str, Any] = field(default_factory=dict)
    # Overrides of resources/catalog/prices.yaml for `designer cost` (model/prices.py checks them)
    prices: dict[str, Any] = field(default_factory=dict)
    layout: dict[str, Any] = field(default_factory=dict)

    def __init__(self, **values):
        _CLUSTER_SPEC_INIT.set(self, values)


_CLUSTER_SPEC_INIT = FieldsByName(ClusterSpec)  # its __init__


class ChangeLog:
    """A document's edit counter and its recent changes: a listener of the document's events that
    holds nothing of the document, so that a dropped design is freed by its reference counts at once
    (a bound method of the document among its own listeners made every design a reference cycle,
    left for the cyclic collector: ~45k objects to walk at 16k GPUs, ~0.3 s of CPU at 131k)."""

    __slots__ = ("revision", "entries")

    def __init__(self, revision: int = 0, entries: list[tuple[int, Change]] | None = None):
        self.revision = revision
        self.entries: list[tuple[int, Change]] = [] if entries is None else entries

    def __call__(self, changes: list[Change]) -> None:
        for change in changes:
            self.revision += 1
            self.entries.append((self.revision, change))
        if len(self.entries) > Document.CHANGE_LOG_LIMIT:
            del self.entries[: len(self.entries) - Document.CHANGE_LOG_LIMIT]


class Document:
    def __init__(self, spec: ClusterSpec | None = None, metadata: Metadata | None = None,
                 link_fields: dict[str, list] | None = None):
        """`link_fields`: every field of the links as one list each, as the reader made the links from
        them (files.LinkFieldsKept), each number within its field's bounds: the first held_still block
        takes them as its reading of the links."""
        self.metadata = metadata or Metadata()
        self.spec = spec or ClusterSpec()
        self.events = Events()
        self._index: dict[str, dict[str, Any]] = _IndexOnDemand(self.spec)
        # A counter of edits and the recent changes, so that an engine can tell what it may reuse.
        self._changes = ChangeLog()
        self.lineage = object()  # shared by snapshots: "the same design, maybe edited since"
        self._snapshots: list[weakref.ref] = []  # snapshots (maybe gone) that share our elements
        # ids of the element copies `_own` made since the newest snapshot: no snapshot holds them
        self._owned: set[int] = set()
        self._positions: dict[str, tuple[list, np.ndarray]] = {}  # _position's arrays, per collection
        self.link_ends = LinkEnds()  # the links' ends parsed, for the check, the fabric and the analyses
        self.link_id_index = SharedIdIndex()  # the links' ids indexed, for the same readers
        self.switch_links = SwitchLinksMemo()  # the switch-to-switch cables' roles, for the check and the fabric
        # replaced by each edit that adds, removes or renames a link (shared by snapshots until then):
        # a reader holding the ids of one version finds their index again by it (SharedIdIndex.of)
        self.link_ids_version = object()
        self._held: _LinkFields | None = None  # the links' fields read once, while the design is held still
        self._device_links: DeviceLinks | None = None  # made when first asked for (make_index), then kept
        # the reader's columns of the links' fields and the list they made, until an edit or held_still
        self._read_fields = None if link_fields is None else (self.spec.links, link_fields)
        self.events.connect(self._changes)

    CHANGE_LOG_LIMIT = 256

    @property
    def revision(self) -> int:
        return self._changes.revision

    @revision.setter
    def revision(self, value: int) -> None:
        self._changes.revision = value

    @property
    def change_log(self) -> list[tuple[int, Change]]:
        return self._changes.entries

    @change_log.setter
    def change_log(self, entries: list[tuple[int, Change]]) -> None:
        self._changes.entries = entries

    def changes_since(self, revision: int) -> list[Change] | None:
        """The changes after `revision`, or None when the log no longer reaches back that far."""
        if revision == self.revision:
            return []
        if not self.change_log or self.change_log[0][0] > revision + 1:
            return None
        # from the end: the log is in revision order, and an engine asks for the last few changes
        log = self.change_log
        i = len(log)
        while i and log[i - 1][0] > revision:
            i -= 1
        return [c for _, c in log[i:]]

    # ---- reading -------------------------------------------------------------
    @property
    def racks(self) -> list[Rack]:
        return self.spec.racks

    @property
    def nodes(self) -> list[Node]:
        return self.spec.nodes

    @property
    def switches(self) -> list[Switch]:
        return self.spec.switches

    @property
    def links(self) -> list[Link]:
        return self.spec.links

    def get(self, element_id: str) -> Rack | Node | Switch | Link | None:
        """Any element by id, whatever its kind."""
        for name in ("nodes", "switches", "racks", "links"):
            found = self._index[name].get(element_id)
            if found is not None:
                return found
        return None

    def find(self, collection: str, element_id: str):
        return self._index[collection].get(element_id)

    def device(self, device_id: str) -> Node | Switch | None:
        """A link endpoint's device: a node or a switch."""
        return self._index["nodes"].get(device_id) or self._index["switches"].get(device_id)

    def num_gpus(self) -> int:
        """GPUs jobs can run on: those of compute servers (storage, login and service hosts have none)."""
        return sum(n.accelerator_count for n in self.spec.nodes if n.role == "compute")

    def counts(self) -> dict[str, int]:
        return {
            "racks": len(self.racks),
            "nodes": len(self.nodes),
            "gpus": self.num_gpus(),
            "switches": len(self.switches),
            "links": len(self.links),
            "cables": sum(link.count for link in self.links),
        }

    def links_of(self, device_id: str) -> list[Link]:
        prefix = device_id + ":"
        return [
            link
            for link in self.spec.links
            if link.a == device_id or link.b == device_id or link.a.startswith(prefix) or link.b.startswith(prefix)
        ]

    def links_of_devices(self, device_ids) -> list[Link]:
        """The links with an end on any of `device_ids` (servers or switches of the design), each once,
        in no set order: looked up per device (DeviceLinks), not found among every link's ends (a
        server's delete read 590k of them, 40-60 ms at 131k GPUs). A repeated link id stands for the
        first link that holds it (as `find` does)."""
        by_device = self.device_links()
        wanted = [d for d in dict.fromkeys(device_ids) if self.device(d) is not None]
        found = dict.fromkeys(link_id for d in wanted for link_id in by_device.of(d))
        index = self._index["links"]
        return [index[link_id] for link_id in found]

    def device_links(self) -> DeviceLinks:
        """Which links end on each device: made the first time it is asked for (an open makes it off the
        window's thread, make_index), then kept by every add, remove and update of a link."""
        if self._device_links is None:
            self._device_links = DeviceLinks.of_design(self)
        return self._device_links

    def new_id(self, prefix: str) -> str:
        """A fresh id `prefix{n}` not used by any element."""
        taken = set().union(*(set(ix) for ix in self._index.values()))
        n = 0
        while f"{prefix}{n}" in taken:
            n += 1
        return f"{prefix}{n}"

    def link_values(self, name: str) -> Iterable:
        """Every link's field `name`, in order: read from the links now (an iterator), or, while the
        design is held still, the list read the first time any reader asked for it."""
        if self._held is not None:
            return self._held.values(name)
        return map(attrgetter(name), self.spec.links)

    def link_numbers_finite(self, name: str) -> bool:
        """Whether link_values(name) is the reader's list (`link_fields`), whose numbers the reader held
        within their fields' bounds: none is NaN or infinite (no need to look at 295k values for one)."""
        return self._held is not None and name in self._held.from_reader

    def link_codes(self, name: str) -> tuple[np.ndarray, list]:
        """link_values(name) as (each link's place among the distinct values, the distinct values), equal
        values one place (column_codes); made once while the design is held still (read-only then)."""
        if self._held is not None:
            return self._held.codes(name)
        return column_codes(self.link_list(name))

    def link_array(self, name: str, dtype) -> np.ndarray:
        """link_values(name) as a numpy array of `dtype` (np.fromiter's conversion, and its errors); made
        once while the design is held still (read-only then: a reader that changes it takes a copy)."""
        if self._held is not None:
            return self._held.array(name, dtype)
        return array_in_parts(attrgetter(name), self.spec.links, dtype)

    def link_list(self, name: str) -> list:
        """link_values as a list (one that nothing changes afterwards)."""
        values = self.link_values(name)
        return values if isinstance(values, list) else list_in_parts(attrgetter(name), self.spec.links)

    @contextlib.contextmanager
    def held_still(self) -> Iterator["Document"]:
        """A block in which nothing edits the design: each link field read in it (link_values) is read
        from the link objects once and shared by every reader, as the check, the engine's fabric and
        the link classes of `designer evaluate` read the same ~10 fields (at 131k GPUs a read of one
        field of 295k links is ~17 ms). An edit through the document ends the sharing; a link changed
        in place (no edit of the document) is not seen in the block: the caller edits nothing.

        The first block of a document read with its links' fields kept (files.load_document) starts from
        the reader's lists, when nothing has edited the links through the document since."""
        read = self._take_read_fields()
        self._held = _LinkFields(self.spec.links, read or {}, as_read=read is not None)
        try:
            yield self
        finally:
            self._held = None

    def elements_as_read(self) -> bool:
        """Whether the design is held still (held_still) in the first block after it was read whole from its
        file (files.load_document with its links' fields kept), with no edit since: every number of its
        elements is then within its field's bounds (the reader takes no other)."""
        return self._held is not None and self._held.as_read

    def _take_read_fields(self) -> dict[str, list] | None:
        """The reader's lists of the links' fields (once), while the links are still the list they made;
        None when the design was not read whole or has been edited since."""
        kept, self._read_fields = self._read_fields, None
        if kept is None or kept[0] is not self.spec.links:
            return None
        links, fields = kept
        return {name: values for name, values in fields.items() if len(values) == len(links)}

    # ---- editing -------------------------------------------------------------
    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group edits: listeners hear them once, together, at the end."""
        self.events.begin()
        try:
            yield
        finally:
            self.events.end()

    def add(self, element, index: int | None = None) -> None:
        """Add an element; UnknownChoice (nothing changes) when a field is outside its choices."""
        name = COLLECTION_OF[type(element)]
        refuse_unknown_choices(element)
        self._held = self._read_fields = None
        items = getattr(self.spec, name)
        if index is None or index >= len(items):
            index = len(items)
            items.append(element)
        else:
            index = max(0, index + len(items) if index < 0 else index)
            items.insert(index, element)
        kept = self._positions.get(name)
        if kept is not None and kept[0] is items and len(kept[1]) + 1 == len(items):
            # the identity array follows the list (made again it cost each undo's add ~12 ms at 131k GPUs)
            self._positions[name] = (items, np.insert(kept[1], index, np.uint64(id(element))))
        self._index[name].learn(items, element)
        if name == "links":
            self.link_ids_version = object()
            if self._device_links is not None:
                self._device_links.learn(element)
        self.events.emit(Change("added", name, element.id, new=element, position=index))

    def remove(self, element_id: str) -> tuple[str, int, Any]:
        """Remove an element; returns (collection, position, element) for undo."""
        for name in COLLECTIONS:
            index = self._index[name]
            element = index.get(element_id)
            if element is not None:
                items = getattr(self.spec, name)
                self._held = self._read_fields = None
                position = self._position(name, items, element)
                del items[position]
                self._positions[name] = (items, np.delete(self._positions[name][1], position))
                index.forget(items, element_id)
                if name == "links":
                    self.link_ids_version = object()
                    if self._device_links is not None:
                        self._device_links.forget(element.id, element.a, element.b)
                self.events.emit(Change("removed", name, element_id, old=element, position=position))
                return name, position, element
        raise KeyError(f"no element with id {element_id!r}")

    def update(self, element_id: str, **changes: Any) -> dict[str, Any]:
        """Set fields of an element; returns the old values (for undo)."""
        element = self.get(element_id)
        if element is None:
            raise KeyError(f"no element with id {element_id!r}")
        name = COLLECTION_OF[type(element)]
        known = {f.name for f in dataclasses.fields(element)}
        unknown = [key for key in changes if key not in known]
        if unknown:
            raise KeyError(f"{name} have no field {unknown[0]!r}")
        refuse_unknown_choices(element, changes)  # before any change: all or nothing
        self._held = self._read_fields = None
        element = self._own(name, element)  # a snapshot a worker reads keeps the values it had
        ends_moved = name == "links" and self._device_links is not None and not {"id", "a", "b"}.isdisjoint(changes)
        if ends_moved:  # under its old id and ends out, under the new ones in, after the loop
            self._device_links.forget(element.id, element.a, element.b)
        old = {}
        with self.batch():
            for key, value in changes.items():
                if key not in known:
                    raise KeyError(f"{name} have no field {key!r}")
                old[key] = getattr(element, key)
                setattr(element, key, value)
                if key == "id" and value != old[key]:
                    items, index = getattr(self.spec, name), self._index[name]
                    index.forget(items, old[key])
                    index.learn(items, element)
                    if name == "links":
                        self.link_ids_version = object()
                self.events.emit(Change("changed", name, element_id, key, old[key], value))
            if ends_moved:
                self._device_links.learn(element)
        return old

    def set_job(self, workload: Workload | None = None, parallelism: Parallelism | None = None) -> None:
        with self.batch():
            if workload is not None:
                old, self.spec.workload = self.spec.workload, workload
                self.events.emit(Change("replaced", "workload", old=old, new=workload))
            if parallelism is not None:
                old, self.spec.parallelism = self.spec.parallelism, parallelism
                self.events.emit(Change("replaced", "parallelism", old=old, new=parallelism))

    def replace_job(self, workload: Workload | None, parallelism: Parallelism | None) -> None:
        """Set both (None removes them), announced once."""
        with self.batch():
            old_w, self.spec.workload = self.spec.workload, workload
            self.events.emit(Change("replaced", "workload", old=old_w, new=workload))
            old_p, self.spec.parallelism = self.spec.parallelism, parallelism
            self.events.emit(Change("replaced", "parallelism", old=old_p, new=parallelism))

    def set_jobs(self, jobs: list[JobSpec]) -> None:
        """Replace the list of jobs (add, remove, rename or edit one: the panel hands the whole list)."""
        old, self.spec.jobs = self.spec.jobs, list(jobs)
        self.events.emit(Change("replaced", "jobs", old=old, new=self.spec.jobs))

    def set_overrides(self, section: str, value: dict) -> None:
        """Replace spec.prices or spec.calibration (the Parts/Costs panel), announced as one change."""
        if section not in ("prices", "calibration"):
            raise ValueError(f"not an overrides section: {section}")
        old = getattr(self.spec, section)
        setattr(self.spec, section, value)
        self.events.emit(Change("replaced", section, old=old, new=value))

    def set_layout(self, layout: dict) -> None:
        """Canvas-only state (positions of loose elements, view): not part of the cluster."""
        old, self.spec.layout = self.spec.layout, layout
        self.events.emit(Change("replaced", "layout", old=old, new=layout))

    def replace_all(self, other: "Document", adopt: bool = False) -> None:
        """Take over another document's content (open, generate, undo of a generate).

        `adopt`: take `other`'s objects as they are (it must not be used afterwards); a fresh
        file does not need the copy, which costs a second on 16k GPUs."""
        self.metadata = other.metadata if adopt else copy.deepcopy(other.metadata)
        self.spec = other.spec if adopt else copy.deepcopy(other.spec)
        if adopt:  # its index too, built where it was read (off the UI thread): 0.1-0.3 s at 131k GPUs
            self._index, other._index = other._index, _IndexOnDemand(other.spec)
            self._positions, other._positions = other._positions, {}
        else:
            self._reindex()
            self._positions = {}
        self.lineage = object()  # a different design: nothing cached about the old one applies
        # an adopted design's parsed ends too (its links by device were made from them where it was read):
        # they are keyed on the links' texts, which it brings along
        self.link_ends = other.link_ends if adopt else LinkEnds()
        self.link_id_index = SharedIdIndex()
        self.switch_links = SwitchLinksMemo()
        self.link_ids_version = object()
        self._held = self._read_fields = None
        self._device_links = other._device_links if adopt else None
        self._owned = set()
        self.events.emit(Change("replaced", "document"))

    def exchange(self, spec: ClusterSpec, metadata: Metadata) -> tuple[ClusterSpec, Metadata]:
        """Take `spec` and `metadata` as they are, hand back the ones held (a generate and its undo
        swap two designs: nothing is copied, so a 131k-GPU generate costs no second design)."""
        old = self.spec, self.metadata
        self.spec, self.metadata = spec, metadata
        self._reindex()
        self._positions = {}
        self._owned = set()
        self.lineage = object()
        self.link_ends = LinkEnds()
        self.link_id_index = SharedIdIndex()
        self.switch_links = SwitchLinksMemo()
        self.link_ids_version = object()
        self._held = self._read_fields = None
        self._device_links = None
        self.events.emit(Change("replaced", "document"))
        return old

    def copy(self) -> "Document":
        return Document(copy.deepcopy(self.spec), copy.deepcopy(self.metadata))

    def snapshot(self) -> "Document":
        """A frozen view for a worker thread, copy-on-write: it shares the element objects
        (its lists are its own, copied in C at ~10 ns an element; its index is built from them
        when first read, by the worker, not here: 20-40 ms of the window's thread at 131k GPUs),
        and `update` gives this document a fresh copy of an element before changing one a
        snapshot may hold, so a snapshot never sees a later edit. It keeps the lineage, revision
        and change log, so an engine can tell what changed since its last snapshot."""
        spec = self.spec
        snap = Document.__new__(Document)
        snap.metadata = copy.copy(self.metadata)
        snap.spec = ClusterSpec(
            racks=list(spec.racks), nodes=list(spec.nodes), switches=list(spec.switches), links=list(spec.links),
            workload=copy.copy(spec.workload), parallelism=copy.copy(spec.parallelism),
            jobs=list(spec.jobs),
            calibration=copy.deepcopy(spec.calibration), prices=copy.deepcopy(spec.prices),
            layout=dict(spec.layout))
        snap.events = Events()
        snap._index = _IndexOnDemand(snap.spec)
        snap._changes = ChangeLog(self.revision, list(self.change_log))  # not listening: a snapshot is not edited
        snap.lineage = self.lineage
        snap.link_ends = self.link_ends  # the same design: a parse made for either serves both
        snap.link_id_index = self.link_id_index
        snap.switch_links = self.switch_links  # (keyed on what it is asked of)
        snap.link_ids_version = self.link_ids_version
        snap._held = snap._read_fields = None
        snap._device_links = None  # (made when asked for: a snapshot is read, not edited)
        snap._snapshots = []
        snap._owned = set()
        snap._positions = {}
        self._snapshots = [r for r in self._snapshots if r() is not None] + [weakref.ref(snap)]
        self._owned = set()  # every element now is in this snapshot
        return snap

    def _own(self, name: str, element):
        """`element` itself, or (when a live snapshot may share it) a copy put in its place. Only the
        copies made since the newest snapshot are surely in none (an object made after a snapshot
        cannot be in it, even at the address of one freed since); any other may be: copied."""
        if id(element) in self._owned or not any(r() is not None for r in self._snapshots):
            return element
        items = getattr(self.spec, name)
        position = self._position(name, items, element)
        mine = copy.copy(element)
        items[position] = mine
        self._positions[name][1][position] = id(mine)
        if self._index[name].get(element.id) is element:
            self._index[name][element.id] = mine
        self._owned.add(id(mine))
        return mine

    def _position(self, name: str, items: list, element) -> int:
        """Where `element` (itself, not an equal one) is in `items`: in an array of the list's object
        ids kept between edits (one vector compare: a search of 295k links cost each first edit
        8-10 ms at 131k GPUs), checked by identity, else found and the array made again."""
        kept = self._positions.get(name)
        if kept is not None and kept[0] is items and len(kept[1]) == len(items):
            for position in np.flatnonzero(kept[1] == id(element)).tolist():
                if items[position] is element:
                    return position
        ids = _identities(items)
        self._positions[name] = (items, ids)
        return int(np.flatnonzero(ids == id(element))[0])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Document) and self.metadata == other.metadata and self.spec == other.spec

    __hash__ = None  # mutable

    # ---- index ---------------------------------------------------------------
    def _reindex(self) -> None:
        """Each collection's id index made when first looked up: a command that reads the design whole
        (`designer evaluate`) looks up no element by id, and 295k links' index took 50 ms at 131k GPUs."""
        self._index = _IndexOnDemand(self.spec)
        self.link_ids_version = object()  # (its lists may have been replaced)
        self._device_links = None

    def make_index(self) -> None:
        """Make every collection's id index and positions, and which links end on each device, now (a
        design read off the window's thread: there, not on it; the positions of 295k links cost the first
        delete ~13 ms at 131k GPUs, the links by device ~0.1 s)."""
        self._index._complete()
        for name in COLLECTIONS:
            items = getattr(self.spec, name)
            self._positions[name] = (items, _identities(items))
        self.device_links()


def _identities(items: list) -> np.ndarray:
    """The elements' object ids, in order: where each element is, by identity (== would compare fields)."""
    return array_in_parts(id, items, np.uint64)


class _LinkFields:
    """The links' fields as lists, each read from the link objects the first time it is asked for."""

    __slots__ = ("links", "lists", "from_reader", "arrays", "as_read")

    def __init__(self, links: list, lists: dict[str, list], as_read: bool = False):
        self.links = links
        self.lists = lists
        self.from_reader = frozenset(lists)  # the reader's lists (Document's `link_fields`)
        self.as_read = as_read  # the design as its file was read (Document.elements_as_read)
        self.arrays: dict[tuple, object] = {}  # what `codes` and `array` made, by what they were asked

    def values(self, name: str) -> list:
        values = self.lists.get(name)
        if values is None:
            values = self.lists[name] = list_in_parts(attrgetter(name), self.links)
        return values

    def codes(self, name: str) -> tuple[np.ndarray, list]:
        made = self.arrays.get(("codes", name))
        if made is None:
            made = self.arrays[("codes", name)] = column_codes(self.values(name))
        return made

    def array(self, name: str, dtype) -> np.ndarray:
        made = self.arrays.get((name, dtype))
        if made is None:
            made = self.arrays[(name, dtype)] = _read_only(array_in_parts(None, self.values(name), dtype))
        return made


def column_codes(values: list) -> tuple[np.ndarray, list]:
    """(the place of each value among the distinct values, the distinct values in the order they come):
    equal values one place; TypeError for an unhashable value. A column of one value (a design's one
    link kind, its links all up) is told by one count in C."""
    try:
        uniform = not values or values.count(values[0]) == len(values)
    except (TypeError, ValueError):  # a value whose == is no answer (an array set through the API)
        uniform = False
    if uniform:
        return _read_only(np.zeros(len(values), np.int32)), values[:1]
    place = {value: None for value in values}
    for k, value in enumerate(place):
        place[value] = k
    return _read_only(array_in_parts(place.__getitem__, values, np.int32)), list(place)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False  # shared by every reader of the design held still
    return array


class _IdIndex(dict):
    """Id -> element of one collection: the first of a repeated id (the check names the repeats), and
    in `repeated` the ids that more than one element holds, so that a remove or an add looks among
    the other elements only for those."""

    __slots__ = ("repeated",)

    def __init__(self):
        super().__init__()
        self.repeated: set[str] = set()

    def learn(self, items: list, element) -> None:
        """`element` joined `items` (added, or given a new id): it stands for its id unless an element
        before it in `items` holds the same id."""
        if self.setdefault(element.id, element) is not element:
            self.repeated.add(element.id)
            self[element.id] = next(e for e in items if e.id == element.id)

    def forget(self, items: list, element_id: str) -> None:
        """An element of id `element_id` left `items` (removed, or given another id): only an id known
        to repeat is looked for among the others (a pass over 295k links' ids on every remove held the
        window ~18 ms at 131k GPUs)."""
        self.pop(element_id, None)
        if element_id in self.repeated:
            holders = [e for e in items if e.id == element_id]
            if holders:
                self[element_id] = holders[0]
            if len(holders) < 2:
                self.repeated.discard(element_id)


def _index_of(elements: list) -> _IdIndex:
    index = _IdIndex()
    for element in elements:
        index.setdefault(element.id, element)
    if len(index) != len(elements):  # a broken file: a second pass names the repeated ids
        seen: set[str] = set()
        for element in elements:
            (index.repeated if element.id in seen else seen).add(element.id)
    return index


class _IndexOnDemand(dict):
    """A document's (or a snapshot's) index: each collection's made the first time it is read, from the
    spec's own lists (two threads that both make one make the same)."""

    def __init__(self, spec: ClusterSpec):
        super().__init__()
        self._spec = spec

    def __missing__(self, name: str) -> dict[str, Any]:
        index = self[name] = _index_of(getattr(self._spec, name))
        return index

    def _complete(self) -> None:
        for name in COLLECTIONS:
            self[name]  # noqa: B018 - made by __missing__

    def values(self):
        self._complete()
        return super().values()

    def items(self):
        self._complete()
        return super().items()
