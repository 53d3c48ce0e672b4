"""Consistency of a design: each problem names the element, what is wrong and the fix.

Runs in linear time over the elements, so a 131k-GPU design checks in well under a second.
The plan (workload x parallelism x GPU count) is checked by `plan.check_plan`.

The check is made of parts (CheckParts) joined in one order (assemble): the live window keeps the
parts and, after an edit, redoes only the parts the edit can change with these same rules
(check_incremental.py), so its list is check_model's by construction.
"""
from __future__ import annotations

from collections import defaultdict
from itertools import chain
from operator import attrgetter

import numpy as np

from ..parts import array_in_parts
from ..problems import Problem
from .catalog import Catalog, default_catalog
from .design_tallies import DesignTallies
from .document import Document
from .link_columns import LinkColumns
from .link_rules import link_kind_problems, link_problems
from .non_finite import NonFiniteNumbers
from .plan import check_plan


def check_model(doc: Document, catalog: Catalog | None = None) -> list[Problem]:
    """Every problem of the document and its jobs' plans, errors and warnings, in a stable order
    (the calibration's constants are the engine's: design_check.check_document adds them)."""
    catalog = catalog or default_catalog()
    return assemble(doc, check_parts(doc, catalog), catalog)


class CheckParts:
    """The cluster's problems in the parts an edit can leave alone or redo on its own."""
    duplicates: list[Problem]  # repeated ids
    before_links: list[Problem]  # repeated ids, racks and slots, parts from the catalog
    per_link: dict[int, list[Problem]]  # link index -> its ends' and ports' problems (link_rules.py)
    kinds: dict[int, list[Problem]]  # link index -> its kind's and speed's problems
    tail: list[Problem]  # the switches' and servers' problems that follow from their links
    after_links: list[Problem]  # NVLink domains, trays, GPU-NIC affinity
    network: list[Problem]  # servers cut off from the others (leaves without up-links, ...)
    islands: list  # the servers the network's routes join (network_islands), whence `network`
    numbers: NonFiniteNumbers  # NaN / infinity: an API edit or a recovered design
    tallies: DesignTallies  # what the jobs' check reads of the cluster (check_plan)
    ends: tuple  # the links' ends (doc.link_ends.sides), kept current by the live check's link edits
    link_ids: list[str]  # the links' ids in order, kept current likewise
    columns: LinkColumns  # the links' kinds, counts and states that the network checks read, likewise
    slots: object  # the racks' and slots' check kept per element (rack_slots.RackSlots), for the live check
    parts: list[Problem] | None  # part_problems (in before_links)
    switch_reach: object  # the routes among switches that `islands` came of (island_edits.SwitchReach),
    # made by the live check when a server added or removed is first followed

    __slots__ = ("duplicates", "before_links", "per_link", "kinds", "tail", "after_links", "network", "islands",
                 "numbers", "tallies", "ends", "link_ids", "columns", "slots", "parts", "switch_reach")

    def __init__(self, duplicates: list[Problem], before_links: list[Problem], per_link: dict[int, list[Problem]],
                 kinds: dict[int, list[Problem]], tail: list[Problem], after_links: list[Problem],
                 network: list[Problem], islands: list, numbers: NonFiniteNumbers, tallies: DesignTallies, ends: tuple,
                 link_ids: list[str], columns: LinkColumns, slots: object = None, parts: list[Problem] | None = None,
                 switch_reach: object = None) -> None:
        self.duplicates = duplicates
        self.before_links = before_links
        self.per_link = per_link
        self.kinds = kinds
        self.tail = tail
        self.after_links = after_links
        self.network = network
        self.islands = islands
        self.numbers = numbers
        self.tallies = tallies
        self.ends = ends
        self.link_ids = link_ids
        self.columns = columns
        self.slots = slots
        self.parts = parts
        self.switch_reach = switch_reach


def check_parts(doc: Document, catalog: Catalog) -> CheckParts:
    link_ids = doc.link_list("id")
    duplicates = _duplicate_ids(doc, link_ids)
    parts_named = part_problems(doc, catalog)
    before_links = duplicates + racks_and_slots(doc) + parts_named
    # the links' ends parsed once for every rule that reads them (asking the document's LinkEnds again
    # reads every link's two ends to prove its parse current: ~35 ms a time at 131k GPUs)
    ends = doc.link_ends.sides(doc)
    per_link, kinds, tail = link_problems(doc, ends)
    columns = LinkColumns.of(doc)
    islands = network_islands(doc, ends, columns)
    return CheckParts(duplicates, before_links, per_link, kinds, tail, problems_after_links(doc, catalog),
                      network_problems(doc, islands), islands, NonFiniteNumbers(doc),
                      DesignTallies(doc, ends, columns), ends, list(link_ids), columns, parts=parts_named)


def assemble(doc: Document, parts: CheckParts, catalog: Catalog) -> list[Problem]:
    """The check's list from its parts; the jobs' plans are redone every time."""
    problems = parts.numbers.problems(doc)
    problems += parts.before_links
    problems += join_link_problems(parts.per_link, parts.kinds, parts.tail)
    problems += parts.after_links
    problems += parts.network
    return problems + check_plan(doc, catalog, parts.tallies)


def redo_link_kind(doc: Document, parts: CheckParts, position: int, ends: list) -> None:
    """The kind-and-speed part of the link at `position` again (after an edit of its values); `ends`:
    the devices of its two ends (None: no such device)."""
    link = doc.links[position]
    kind = link_kind_problems(link, ends, position)
    if kind:
        parts.kinds[position] = kind
    else:
        parts.kinds.pop(position, None)


def problems_after_links(doc: Document, catalog: Catalog) -> list[Problem]:
    """The cluster checks that follow the links' but the network's (one part of CheckParts). Only the
    trays' check reads links, and only when there are NVLink switch trays (has_trays)."""
    problems = _nvlink_domains(doc, catalog)
    from .check_nvlink_trays import nvlink_tray_problems  # one job per module: the trays of a domain

    problems += nvlink_tray_problems(doc)
    problems += _gpu_nic_affinity(doc)
    return problems


def has_trays(doc: Document) -> bool:
    """Whether a switch is an NVLink switch tray (problems_after_links then reads the links)."""
    return any(s.fabric == "nvlink" for s in doc.switches)


def network_islands(doc: Document, ends=None, columns: LinkColumns | None = None) -> list:
    """The groups of compute servers the engine's routes join (network_reach.server_islands), the
    servers by place: what network_problems reads. An edit that leaves the network's shape (the links'
    ends and kinds, the servers' roles and GPU counts, the switches' tiers and fabrics) keeps them, a
    rename too. `ends`, `columns`: the links' ends and kinds, when the caller has them."""
    from .network_reach import server_islands

    return server_islands(doc, ends=ends, columns=columns, positions=True)  # on whole arrays


def network_problems(doc: Document, islands: list) -> list[Problem]:
    """The checks of the whole network's shape, the last of the cluster's (one part of CheckParts),
    from its islands (network_islands)."""
    return _leaves_without_uplinks(doc, islands)


def _p(message, path, element=None, fix=None, severity="error") -> Problem:
    return Problem(message, path, element=element, fix=fix, severity=severity)


# A file with 80,000 repeated ids needs its first few listed, not all: the rest is one line.
MAX_LISTED_DUPLICATES = 100


def _duplicate_ids(doc: Document, link_ids: list[str]) -> list[Problem]:
    """Linear: one pass to find the repeats, one set of taken ids for the suggested new names."""
    ids = list(chain.from_iterable(map(attrgetter("id"), getattr(doc.spec, name))
                                   for name in ("racks", "nodes", "switches")))
    ids += link_ids
    if _hashes_distinct(ids) or len(set(ids)) == len(ids):  # the usual case, in C: no path strings for
        return []  # 40k elements (~60 ms at 16k)
    seen: dict[str, str] = {}
    repeats: list[tuple[str, str, str]] = []  # (path, id, path of the first use)
    for name in ("racks", "nodes", "switches", "links"):
        for i, element in enumerate(getattr(doc.spec, name)):
            first = seen.get(element.id)
            if first is not None:
                repeats.append((f"spec.{name}[{i}]", element.id, first))
            else:
                seen[element.id] = f"spec.{name}[{i}]"
    return duplicate_problems(repeats, lambda names: [name in seen for name in names])


def _hashes_distinct(ids: list[str]) -> bool:
    """True when no two ids have the same hash, so no two are equal: the hashes sorted, in C. A set of the
    320k ids of a 131k-GPU design spent ~60 ms mostly waiting on its 16 MB table; this is ~20 ms."""
    hashes = array_in_parts(hash, ids, np.int64)
    hashes.sort()
    return not (hashes[1:] == hashes[:-1]).any()


def duplicate_problems(repeats: list[tuple[str, str, str]], taken) -> list[Problem]:
    """The problems of the repeated ids: `repeats`, (path, id, path of the first use) of each element
    whose id an element before it has, in the lists' order (racks, servers, switches, links); `taken`:
    whether each of a list of ids is any element's (the suggested new names are none; asked a run of
    names at a time: node0, node1, ... are all taken in a design of 16k servers)."""
    if not repeats:
        return []
    suggested: set[str] = set()
    next_number: dict[str, int] = {}

    def fresh(prefix: str) -> str:  # each suggestion differs from every id and every other suggestion
        n, run = next_number.get(prefix, 0), 16
        while True:
            names = [f"{prefix}{k}" for k in range(n, n + run)]
            free = next((k for k, (name, used) in enumerate(zip(names, taken(names)))
                         if not used and name not in suggested), None)
            if free is not None:
                next_number[prefix] = n + free + 1
                suggested.add(names[free])
                return names[free]
            n, run = n + run, run * 4

    out = [_p(f"duplicate id {element_id!r} (also {first})", where + ".id", element_id,
              f"rename it, e.g. {fresh(element_id.rstrip('0123456789') or 'x')}")
           for where, element_id, first in repeats[:MAX_LISTED_DUPLICATES]]
    if len(repeats) > MAX_LISTED_DUPLICATES:
        more = len(repeats) - MAX_LISTED_DUPLICATES
        out.append(_p(f"... and {more:,} more duplicate id{'s' if more > 1 else ''} "
                      f"({len(repeats):,} in all; the first {MAX_LISTED_DUPLICATES} are listed)", "spec",
                      fix="give every rack, server, switch and link its own id"))
    return out


def racks_and_slots(doc: Document) -> list[Problem]:
    """Each server in a rack that exists, at a slot within it, none overlapping another (rack_slots.py
    keeps the same answers per element and per rack for the live check)."""
    out = []
    racks = {r.id: r for r in doc.racks}
    guesses: dict[str, str | None] = {}  # a missing rack's name -> its guess: a renamed rack's servers all name it
    occupied: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    for name in ("nodes", "switches"):
        for i, element in enumerate(getattr(doc.spec, name)):  # `where` made only for a problem: 25k at 131k
            if element.rack is None:
                if name == "nodes":
                    out.append(no_rack_problem(i, element))
                continue
            rack = racks.get(element.rack)
            if rack is None:
                if str(element.rack) not in guesses:
                    guesses[str(element.rack)] = guess_rack(element.rack, racks)
                out.append(missing_rack_problem(name, i, element, guesses[str(element.rack)]))
                continue
            if element.slot is not None:
                top = element.slot + element.height_units
                if top > rack.units:
                    out.append(too_high_problem(name, i, element, rack))
                occupied[rack.id].append((element.slot, top, element.id))
    for rack_id, spans in occupied.items():
        out += overlap_problems(rack_id, spans)
    return out


def no_rack_problem(i: int, node) -> Problem:
    return _p(f"server {node.id} is in no rack", f"spec.nodes[{i}]", node.id,
              "set rack: to one of the racks (or drag it into a rack)", "warning")


def missing_rack_problem(name: str, i: int, element, guess: str | None) -> Problem:
    kind = "server" if name == "nodes" else "switch"
    return _p(f"{kind} {element.id} names rack {element.rack!r}, which does not exist",
              f"spec.{name}[{i}].rack", element.id, guess or "add the rack or fix the name")


def too_high_problem(name: str, i: int, element, rack) -> Problem:
    kind = "server" if name == "nodes" else "switch"
    top = element.slot + element.height_units
    return _p(f"{kind} {element.id} at slot {element.slot} needs units up to {top}, "
              f"rack {rack.id} has {rack.units}", f"spec.{name}[{i}].slot", element.id,
              f"use a slot from 0 to {max(0, rack.units - element.height_units)}")


def overlap_problems(rack_id: str, spans: list[tuple[int, int, str]]) -> list[Problem]:
    """The overlaps among a rack's (slot, top, id) spans (sorted here, in place)."""
    out = []
    spans.sort()
    for (lo1, hi1, id1), (lo2, hi2, id2) in zip(spans, spans[1:]):
        if lo2 < hi1:
            out.append(_p(f"{id2} overlaps {id1} in rack {rack_id} (units {lo2}-{hi2 - 1})",
                          f"spec.racks[{rack_id}]", id2, f"move {id2} to slot {hi1} or higher"))
    return out


def guess_rack(name, known) -> str | None:
    from ..problems import did_you_mean

    g = did_you_mean(str(name), known)
    return f"did you mean {g}?" if g else None


def _nvlink_domains(doc: Document, catalog: Catalog) -> list[Problem]:
    """A domain is a run of whole trays of one accelerator, listed together, within the part's largest domain.

    One nvlink_domain field per server means a tray can only be in one domain; listing the trays of a
    domain together keeps its GPUs one block of ranks (as launchers place them)."""
    out: list[Problem] = []
    first: dict[str, int] = {}
    gpus: dict[str, int] = defaultdict(int)
    last_domain = None
    for i, node in enumerate(doc.nodes):
        d = node.nvlink_domain
        if d is None:
            last_domain = None
            continue
        where = f"spec.nodes[{i}].nvlink_domain"
        if d in first:
            lead = doc.nodes[first[d]]
            if d != last_domain:
                out.append(_p(f"server {node.id} is in NVLink domain {d!r}, but that domain's trays are not "
                              f"listed together (it starts at server {lead.id})", where, node.id,
                              f"list the trays of {d!r} one after another, or give {node.id} its own domain"))
            elif (node.accelerator, node.accelerator_count) != (lead.accelerator, lead.accelerator_count):
                out.append(_p(f"NVLink domain {d!r} mixes trays: {node.id} has {node.accelerator_count} "
                              f"{node.accelerator}, {lead.id} has {lead.accelerator_count} {lead.accelerator}",
                              where, node.id, f"give {node.id} the accelerators of {lead.id} or another domain"))
        else:
            first[d] = i
        gpus[d] += node.accelerator_count
        last_domain = d
    for d, count in gpus.items():
        lead = doc.nodes[first[d]]
        name = catalog.resolve("accelerators", lead.accelerator)
        if name is None:
            continue
        most = max(catalog.accelerators[name].scale_up_domain_max, lead.accelerator_count)
        if count > most:
            trays = max(1, most // lead.accelerator_count)
            out.append(_p(f"NVLink domain {d!r} holds {count} {name} GPUs; one {name} NVLink domain holds at most "
                          f"{most}", f"spec.nodes[{first[d]}].nvlink_domain", lead.id,
                          f"put at most {trays} trays ({trays * lead.accelerator_count} GPUs) in {d!r}"))
    return out


def _gpu_nic_affinity(doc: Document) -> list[Problem]:
    """A server's per-GPU NIC map (from an NCCL topology dump) names real GPUs and real NICs."""
    out = []
    for i, node in enumerate(doc.nodes):
        affinity = node.gpu_nic_affinity
        if not affinity:
            continue
        where = f"spec.nodes[{i}].gpu_nic_affinity"
        if len(affinity) != node.accelerator_count:
            out.append(_p(f"{len(affinity)} entries for {node.accelerator_count} GPUs", where, node.id,
                          "give one NIC index per GPU, or remove the key"))
        for j, nic in enumerate(affinity):
            if not float(nic).is_integer() or not 0 <= nic < max(node.nic_count, 1) or node.nic_count == 0:
                out.append(_p(f"GPU {j}: NIC {nic!r} is not one of nic0..nic{node.nic_count - 1}", f"{where}[{j}]",
                              node.id, f"use a whole number from 0 to {node.nic_count - 1}" if node.nic_count
                              else "the server has no NICs: remove the key"))
                break
    return out


def part_problems(doc: Document, catalog: Catalog) -> list[Problem]:
    """The servers' accelerators and NICs and the switches' models the catalog does not know."""
    out = []
    reported: set[str] = set()
    # one look-up per distinct name, not per server: nearly every server names a known part
    known = {name for name in {n.accelerator for n in doc.nodes} if catalog.resolve("accelerators", name) is not None}
    known_nics = {name for name in {n.nic_model for n in doc.nodes} if catalog.resolve("nics", name) is not None}
    for i, node in enumerate(doc.nodes):
        if node.accelerator in known and (not node.nic_model or node.nic_model in known_nics):
            continue
        if catalog.resolve("accelerators", node.accelerator) is None and node.accelerator not in reported:
            reported.add(node.accelerator)
            out.append(_p(f"unknown accelerator {node.accelerator!r}", f"spec.nodes[{i}].accelerator", node.id,
                          catalog.suggest("accelerators", node.accelerator)))
        if node.nic_model and catalog.resolve("nics", node.nic_model) is None and node.nic_model not in reported:
            reported.add(node.nic_model)
            out.append(_p(f"unknown NIC model {node.nic_model!r}", f"spec.nodes[{i}].nic_model", node.id,
                          catalog.suggest("nics", node.nic_model)))
    for i, sw in enumerate(doc.switches):
        if sw.model and catalog.resolve("switches", sw.model) is None and sw.model not in reported:
            reported.add(sw.model)
            out.append(_p(f"unknown switch model {sw.model!r}", f"spec.switches[{i}].model", sw.id,
                          catalog.suggest("switches", sw.model)))
    return out


def join_link_problems(per_link: dict[int, list[Problem]], kinds: dict[int, list[Problem]],
                       tail: list[Problem]) -> list[Problem]:
    """The links' problems in the order of the links, then the switches' and servers'."""
    out: list[Problem] = []
    for i in sorted(per_link.keys() | kinds.keys()):
        out += per_link.get(i, []) + kinds.get(i, [])
    return out + tail


def _leaves_without_uplinks(doc: Document, islands: list) -> list[Problem]:
    """Servers that no route of the engine joins to the other servers of the network (a step across
    them would never end): a switch with servers but no up-link (network_reach's rules: a cable to
    a higher tier, or to a switch without servers), a pod of leaves and spines with no cable to the
    core while other pods wait beyond it, core switches no cable joins. A rail-only fabric (every
    server on every rail switch) stays one network and passes."""
    if len(islands) < 2:
        return []
    switches, nodes = doc.switches, doc.nodes
    total = sum(len(island.servers) for island in islands)
    out = []
    for island in islands:
        mine = [nodes[i].id for i in island.servers[:3]]
        count = len(island.servers)
        shown = ", ".join(mine) + (", ..." if count > 3 else "")
        cut = f"its {count} server(s) ({shown}) cannot reach the other {total - count} server(s) of the network"
        for s in island.bare_leaves:
            sw = switches[s].id
            out.append(_p(f"{switches[s].tier} switch {sw} has no up-links: {cut}", f"spec.switches[{s}]", sw,
                          f"connect {sw} to a spine switch as the other leaves are, or cable its servers to a leaf "
                          f"that has up-links"))
        for s in [] if island.bare_leaves else island.pods_without_core:
            sw = switches[s].id
            out.append(_p(f"the pod of {sw} (its leaves and spines) has no cable to a core switch, the only way "
                          f"to the other pods: {cut}", f"spec.switches[{s}]", sw,
                          f"connect the spines of {sw}'s pod to the core switches as the other pods are"))
        if island.core and not island.bare_leaves and not island.pods_without_core:
            names = ", ".join(switches[s].id for s in island.core[:4])
            s = island.core[0]
            out.append(_p(f"core switch(es) {names} reach no other core switch: {cut}", f"spec.switches[{s}]",
                          switches[s].id, "connect the pods to the same core switches, or the core switches "
                                          "to each other"))
    out.sort(key=lambda p: int(p.path.split("[")[1].rstrip("]")))
    return out
