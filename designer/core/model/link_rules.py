"""The links' part of the design check: each rule states its condition once, on whole columns.

A rule is a condition over the links' columns (their kinds, speeds and cable counts, and the
devices and ports of their two ends) that marks the offending links, and a message made for those
links only. The full check runs every rule over all links at once (a 131k-GPU design's 295k links
in a few numpy passes); the live check of an edited link runs the kind rules over that one link's
columns. A link's problems are listed in the order of the links: its `a` end's, its `b` end's
(at most one each: the first end rule it breaks), then its kind's and speed's.

End rules, in order: the end's device exists; its port is a port of that device for the link's
kind (p0.. on a switch; nic0.., or nvl0.. / pcie0.. for NVLink / PCIe links, on a server), written
plainly; the link's cables from that port stay within the device's ports; no port is used twice
(the earlier link keeps it). Kind rules: a switch end's fabric is the link's kind and its ports are
at least as fast; a server end of a network link has NICs of that kind; a network link does not
join two servers directly; a link does not join a device to itself.
"""
from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING

import numpy as np

from ..problems import Problem
from .elements import Switch, split_endpoint
from .endpoints import PORT_NIC, PORT_NVL, PORT_P, PORT_PCIE, PORT_PREFIXES

if TYPE_CHECKING:
    from .close_names import CloseNames

NETWORK = ("ethernet", "infiniband")
MAX_PORT = 1 << 62  # a port number written with more digits: past any device's ports


def _p(message, path, element=None, fix=None, severity="error") -> Problem:
    return Problem(message, path, element=element, fix=fix, severity=severity)


class _Codes:
    """Kinds, fabrics and NIC kinds as small integers, one numbering for all (equal names, equal
    codes); a value that is no name (an edit through the API) gets a code of its own."""

    def __init__(self):
        self.vocab = {name: i for i, name in enumerate(NETWORK + ("nvlink", "pcie", ""))}

    def of(self, values: list) -> np.ndarray:
        vocab = self.vocab
        try:
            for name in set(values) - vocab.keys():
                vocab[name] = len(vocab)
            return np.fromiter(map(vocab.__getitem__, values), np.int32, len(values))
        except TypeError:  # unhashable: compared by ==, as the rules read
            return np.array([self._one(v) for v in values], np.int32)

    def _one(self, value) -> int:
        try:
            return self.vocab.setdefault(value, len(self.vocab))
        except TypeError:
            self.vocab[object()] = len(self.vocab)
            return len(self.vocab) - 1


class Devices:
    """The design's servers, then its switches, as columns (index: server i, or n_nodes + switch j),
    and a last entry that is no device (an end that names none: -1)."""
    items: list  # the Node or Switch of each index
    is_switch: np.ndarray
    kind: np.ndarray  # the kind of link it takes (code): a switch's fabric, a server's NIC kind
    port_gbps: np.ndarray
    radix: np.ndarray
    nic_count: np.ndarray
    gpus: np.ndarray

    __slots__ = ("items", "is_switch", "kind", "port_gbps", "radix", "nic_count", "gpus")

    def __init__(self, items: list, is_switch: np.ndarray, kind: np.ndarray, port_gbps: np.ndarray, radix: np.ndarray,
                 nic_count: np.ndarray, gpus: np.ndarray) -> None:
        self.items = items
        self.is_switch = is_switch
        self.kind = kind
        self.port_gbps = port_gbps
        self.radix = radix
        self.nic_count = nic_count
        self.gpus = gpus

    @classmethod
    def of(cls, nodes: list, switches: list, codes: _Codes) -> "Devices":
        n, m = len(nodes), len(switches)
        return cls(
            items=[*nodes, *switches, None],
            is_switch=np.arange(n + m + 1) >= n,
            kind=codes.of(list(map(attrgetter("nic_kind"), nodes)) + list(map(attrgetter("fabric"), switches)) + [""]),
            port_gbps=np.array([0.0] * n + list(map(attrgetter("port_gbps"), switches)) + [0.0], float),
            radix=np.array([0] * n + list(map(attrgetter("radix"), switches)) + [0], np.int64),
            nic_count=np.array(list(map(attrgetter("nic_count"), nodes)) + [0] * (m + 1), np.int64),
            gpus=np.array(list(map(attrgetter("accelerator_count"), nodes)) + [0] * (m + 1), np.int64))


class Links:
    """Links as columns, with the device of each end (-1: none)."""
    items: list
    kind: np.ndarray  # code
    bw: np.ndarray
    count: np.ndarray
    dev: tuple[np.ndarray, np.ndarray]  # the `a` and `b` ends' devices
    network: np.ndarray
    nvlink: np.ndarray
    pcie: np.ndarray

    __slots__ = ("items", "kind", "bw", "count", "dev", "network", "nvlink", "pcie")

    def __init__(self, items: list, kind: np.ndarray, bw: np.ndarray, count: np.ndarray,
                 dev: tuple[np.ndarray, np.ndarray], network: np.ndarray, nvlink: np.ndarray, pcie: np.ndarray) -> None:
        self.items = items
        self.kind = kind
        self.bw = bw
        self.count = count
        self.dev = dev
        self.network = network
        self.nvlink = nvlink
        self.pcie = pcie

    @classmethod
    def of(cls, links: list, dev: tuple[np.ndarray, np.ndarray], codes: _Codes, doc=None) -> "Links":
        """`doc`: the document whose links `links` are, all of them in order (its link_values read them)."""
        n = len(links)
        if doc is not None:
            kind = _kind_codes(doc, codes)
            bw, count = doc.link_array("bandwidth_gbps", float), doc.link_array("count", np.int64)
        else:
            kind = codes.of([link.kind for link in links])
            bw = np.fromiter(map(attrgetter("bandwidth_gbps"), links), float, n)
            count = np.fromiter(map(attrgetter("count"), links), np.int64, n)
        vocab = codes.vocab
        return cls(links, kind, bw, count, dev, (kind == vocab["ethernet"]) | (kind == vocab["infiniband"]),
                   kind == vocab["nvlink"], kind == vocab["pcie"])


def _kind_codes(doc, codes: _Codes) -> np.ndarray:
    """The links' kinds as codes, coded once per distinct kind (Document.link_codes, shared with the
    network checks' columns)."""
    try:
        place, kinds = doc.link_codes("kind")
    except TypeError:  # an unhashable kind (an edit through the API)
        return codes.of(doc.link_list("kind"))
    return codes.of(kinds)[place]


# ---- kind rules: one link's kind and speed on its two ends ---------------------------------------

class _Ends:
    """The devices at the links' two ends, as columns per end (a side: 0 for `a`, 1 for `b`)."""
    dev: tuple[np.ndarray, np.ndarray]
    switch: list[np.ndarray]  # the end is a switch
    server: list[np.ndarray]  # the end is a server
    kind: list[np.ndarray]  # the kind of link the end's device takes
    port_gbps: list[np.ndarray]

    __slots__ = ("dev", "switch", "server", "kind", "port_gbps")

    def __init__(self, dev: tuple[np.ndarray, np.ndarray], switch: list[np.ndarray], server: list[np.ndarray],
                 kind: list[np.ndarray], port_gbps: list[np.ndarray]) -> None:
        self.dev = dev
        self.switch = switch
        self.server = server
        self.kind = kind
        self.port_gbps = port_gbps

    @classmethod
    def of(cls, links: Links, devices: Devices) -> "_Ends":
        there = [d >= 0 for d in links.dev]
        switch = [devices.is_switch[d] for d in links.dev]
        return cls(links.dev, [t & s for t, s in zip(there, switch)], [t & ~s for t, s in zip(there, switch)],
                   [devices.kind[d] for d in links.dev], [devices.port_gbps[d] for d in links.dev])


def _switch_of_another_fabric(links: Links, e: _Ends, side: int) -> np.ndarray:
    return e.switch[side] & (links.kind != e.kind[side])


def _faster_than_the_switch(links: Links, e: _Ends, side: int) -> np.ndarray:
    return e.switch[side] & (links.kind == e.kind[side]) & (links.bw > e.port_gbps[side])


def _nic_of_another_kind(links: Links, e: _Ends, side: int) -> np.ndarray:
    return e.server[side] & links.network & (links.kind != e.kind[side])


def _two_servers_joined(links: Links, e: _Ends, side: int) -> np.ndarray:
    return e.server[0] & e.server[1] & links.network


def _to_itself(links: Links, e: _Ends, side: int) -> np.ndarray:
    a, b = e.dev
    return (a >= 0) & (a == b)


def _say_switch_of_another_fabric(link, device, where) -> Problem:
    return _p(f"{link.kind} link {link.id} is plugged into {device.fabric} switch {device.id}", f"{where}.kind",
              link.id, f"use a {device.fabric} link or an {link.kind} switch" if link.kind in NETWORK
              else f"use a {device.fabric} link")


def _say_faster_than_the_switch(link, device, where) -> Problem:
    return _p(f"link {link.id} at {link.bandwidth_gbps:g} Gb/s is faster than the {device.port_gbps:g} Gb/s "
              f"ports of {device.id}", f"{where}.bandwidth_gbps", link.id,
              f"set bandwidth_gbps to {device.port_gbps:g} or less", "warning")


def _say_nic_of_another_kind(link, device, where) -> Problem:
    return _p(f"{link.kind} link {link.id} is plugged into an {device.nic_kind} NIC of {device.id}", f"{where}.kind",
              link.id, f"use an {device.nic_kind} link or change nic_kind")


def _say_two_servers_joined(link, device, where) -> Problem:
    return _p(f"{link.kind} link {link.id} joins two servers directly", where, link.id,
              "connect servers through a switch", "warning")


def _say_to_itself(link, device, where) -> Problem:
    return _p(f"link {link.id} connects {device.id} to itself", where, link.id, "pick another endpoint")


# (condition, message, end it names) in the order a link's problems are listed
KIND_RULES = (
    (_switch_of_another_fabric, _say_switch_of_another_fabric, 0),
    (_faster_than_the_switch, _say_faster_than_the_switch, 0),
    (_nic_of_another_kind, _say_nic_of_another_kind, 0),
    (_switch_of_another_fabric, _say_switch_of_another_fabric, 1),
    (_faster_than_the_switch, _say_faster_than_the_switch, 1),
    (_nic_of_another_kind, _say_nic_of_another_kind, 1),
    (_two_servers_joined, _say_two_servers_joined, 0),
    (_to_itself, _say_to_itself, 0),
)


def _kind_problems(links: Links, devices: Devices, positions: np.ndarray) -> dict[int, list[Problem]]:
    """Link position -> its kind's and speed's problems, for every link breaking a kind rule."""
    found: list[tuple[int, int, Problem]] = []
    ends = _Ends.of(links, devices)
    for rank, (condition, say, side) in enumerate(KIND_RULES):
        for i in np.flatnonzero(condition(links, ends, side)).tolist():
            device = devices.items[int(links.dev[side][i])]
            found.append((i, rank, say(links.items[i], device, f"spec.links[{int(positions[i])}]")))
    out: dict[int, list[Problem]] = {}
    for i, _, problem in sorted(found, key=lambda f: f[:2]):
        out.setdefault(int(positions[i]), []).append(problem)
    return out


def link_kind_problems(link, ends: list, position: int) -> list[Problem]:
    """The kind rules on one link (its `ends`: the devices of its `a` and `b` ends, None for none):
    the live check of an edit of a link's values."""
    present = [e for e in ends if e is not None]
    codes = _Codes()
    devices = Devices.of([e for e in present if type(e) is not Switch], [e for e in present if type(e) is Switch],
                         codes)
    dev = tuple(np.array([-1 if e is None else next(k for k, d in enumerate(devices.items) if d is e)])
                for e in ends)
    return _kind_problems(Links.of([link], dev, codes), devices, np.array([position])).get(position, [])


# ---- end rules: each end's device and ports ------------------------------------------------------

class _Side:
    """One end of every link: its device, the port it names and the ports a link of its kind may use."""
    dev: np.ndarray
    has_port: np.ndarray
    prefix: np.ndarray  # the port prefix a link of this kind uses on this device (PORT_*)
    limit: np.ndarray  # how many such ports the device has
    first: np.ndarray  # the port's number (-1: not a port of that prefix, written plainly)

    __slots__ = ("dev", "has_port", "prefix", "limit", "first")

    def __init__(self, dev: np.ndarray, has_port: np.ndarray, prefix: np.ndarray, limit: np.ndarray,
                 first: np.ndarray) -> None:
        self.dev = dev
        self.has_port = has_port
        self.prefix = prefix
        self.limit = limit
        self.first = first


def _side(links: Links, devices: Devices, dev: np.ndarray, ends, name: str) -> _Side:
    server = ~devices.is_switch[dev]
    prefix = np.where(~server, PORT_P, np.where(links.nvlink, PORT_NVL, np.where(links.pcie, PORT_PCIE, PORT_NIC)))
    limit = np.where(~server, devices.radix[dev], np.where(links.nvlink | links.pcie, devices.gpus[dev],
                                                           devices.nic_count[dev]))
    first = np.where(ends.port_code == prefix, ends.port_number, -1).astype(np.int64)
    # a port written otherwise (non-ASCII digits, more than 9 of them): read as Python reads digits
    for i in np.flatnonzero((dev >= 0) & ends.has_port & (first < 0)).tolist():
        first[i] = _port_number(split_endpoint(getattr(links.items[i], name))[1], PORT_PREFIXES[prefix[i]])
    return _Side(dev, ends.has_port, prefix, limit, first)


def _port_number(port: str, prefix: str) -> int:
    digits = port[len(prefix):] if port.startswith(prefix) else ""
    if not digits.isdigit() or (len(digits) > 1 and digits[0] == "0"):
        return -1
    try:
        return min(int(digits), MAX_PORT)
    except ValueError:  # a digit that is no number (a superscript)
        return -1


def _dangling(links: Links, s: _Side) -> np.ndarray:
    return s.dev < 0


def _not_a_port(links: Links, s: _Side) -> np.ndarray:
    return (s.dev >= 0) & s.has_port & (s.first < 0)


def _past_the_last_port(links: Links, s: _Side) -> np.ndarray:
    return (s.dev >= 0) & s.has_port & (s.first >= 0) & (s.first + links.count > s.limit)


def device_names(devices) -> list[str]:
    """The servers' ids, then the switches', each once, in the design's order: the names a dangling
    cable end may have meant."""
    return (list(dict.fromkeys(d.id for d in devices if type(d) is not Switch))
            + list(dict.fromkeys(d.id for d in devices if type(d) is Switch)))


class _Say:
    """The end rules' messages: the texts of the ends and the names a dangling end may have meant."""

    def __init__(self, devices: Devices, names: list[str] | None = None):
        self.devices = devices
        self._names = names
        self._close: CloseNames | None = None  # the names, indexed for did-you-mean (made when first asked)
        # unknown device name -> the name it may have meant: the cables of a renamed switch all name its old id
        self._guesses: dict[str, str | None] = {}

    def dangling(self, link, side: str, s: _Side, i: int, where: str) -> Problem:
        device_id = split_endpoint(getattr(link, side))[0]
        guess = self._guesses.get(str(device_id), "")
        if guess == "":
            if self._close is None:
                from .close_names import CloseNames  # here: only a dangling cable needs difflib and the index

                self._close = CloseNames(self._device_names())
            guess = self._guesses[str(device_id)] = self._close.guess(str(device_id))
        return _p(f"link {link.id} ends at {device_id!r}, which does not exist (dangling)", f"{where}.{side}",
                  link.id, f"did you mean {guess}?" if guess else "connect it to an existing server or switch")

    def _device_names(self) -> list[str]:
        if self._names is None:
            self._names = device_names(self.devices.items[:-1])
        return self._names

    def not_a_port(self, link, side: str, s: _Side, i: int, where: str) -> Problem:
        port, prefix, n_ports = split_endpoint(getattr(link, side))[1], PORT_PREFIXES[s.prefix[i]], int(s.limit[i])
        return _p(f"port {port!r} of {self.devices.items[s.dev[i]].id} is not {_article(link.kind)} {link.kind} port", f"{where}.{side}",
                  link.id, f"use {prefix}0..{prefix}{n_ports - 1}")

    def past_the_last_port(self, link, side: str, s: _Side, i: int, where: str) -> Problem:
        port, prefix, n_ports = split_endpoint(getattr(link, side))[1], PORT_PREFIXES[s.prefix[i]], int(s.limit[i])
        return _p(f"{link.count} cable(s) from port {port} go past the last port of "
                  f"{self.devices.items[s.dev[i]].id} ({prefix}{n_ports - 1})", f"{where}.{side}", link.id,
                  "start at a lower port or reduce count")


END_RULES = ((_dangling, _Say.dangling), (_not_a_port, _Say.not_a_port),
             (_past_the_last_port, _Say.past_the_last_port))


class _Cables:
    """Each port a sound end takes, in the order of the ends (all `a` ends, then all `b` ends), then
    of the links, then of their ports."""
    port: np.ndarray
    group: np.ndarray  # device * 4 + port prefix
    named: list[np.ndarray]  # per end: the links whose end takes ports
    ends_at: list[np.ndarray]  # per end: where each of those links' cables end (a running sum)

    __slots__ = ("port", "group", "named", "ends_at")

    def __init__(self, port: np.ndarray, group: np.ndarray, named: list[np.ndarray], ends_at: list[np.ndarray]) -> None:
        self.port = port
        self.group = group
        self.named = named
        self.ends_at = ends_at

    def links_and_ends(self, cables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(link, end: 0 or 1) of each of these cables."""
        a_total = int(self.ends_at[0][-1]) if len(self.ends_at[0]) else 0
        side = (cables >= a_total).astype(np.int8)
        link = np.empty(len(cables), np.int64)
        for k, base in ((0, 0), (1, a_total)):
            mine = side == k
            link[mine] = self.named[k][np.searchsorted(self.ends_at[k], cables[mine] - base, "right")]
        return link, side


def _cables(links: Links, sides: list[_Side], sound: list[np.ndarray]) -> _Cables:
    ports, groups, named, ends_at = [], [], [], []
    for s, ok in zip(sides, sound):
        these = np.flatnonzero(ok)
        group = s.dev[these].astype(np.int64) * 4 + s.prefix[these]
        reps = np.maximum(links.count[these], 0)
        named.append(these)
        ends_at.append(np.cumsum(reps))
        if (reps == 1).all():  # the usual case: one cable a link, one port an end
            ports.append(s.first[these])
            groups.append(group)
            continue
        offset = np.arange(int(reps.sum())) - np.repeat(ends_at[-1] - reps, reps)
        ports.append(np.repeat(s.first[these], reps) + offset)
        groups.append(np.repeat(group, reps))
    return _Cables(np.concatenate(ports), np.concatenate(groups), named, ends_at)


def _taken_twice(cables: _Cables, capacity: np.ndarray) -> np.ndarray:
    """Which cables' ports some other cable takes too. Each device's ports of a prefix are numbered
    below its count of them (the rules before say so), so a port is a place in one table of every
    port of the design, counted in one pass; a sort when that table would be much larger."""
    if not len(cables.port):
        return np.zeros(0, bool)
    total = int(capacity.sum())
    if total <= 4 * len(cables.port) + (1 << 20):
        place = (np.cumsum(capacity) - capacity)[cables.group] + cables.port
        return np.bincount(place, minlength=total)[place] > 1
    _, where, times = np.unique(np.stack([cables.group, cables.port]), axis=1, return_inverse=True,
                                return_counts=True)
    return times[where.reshape(-1)] > 1


def _ports_used_twice(links: Links, devices: Devices, cables: _Cables, taken_twice: np.ndarray):
    """The rule that no port is used twice, in the order of the links: the first link to name a port
    keeps it; a later one is named, and its end takes no further port. Returns {(link, end): its
    problem} and which cables' ports stay free because of it."""
    registered: dict[tuple[int, int], str] = {}
    stopped: dict[tuple[int, int], int] = {}  # (link, end) -> the port where it stopped
    said = {}
    contested = np.flatnonzero(taken_twice)
    link_of, side_of = cables.links_and_ends(contested)
    order = np.lexsort((cables.port[contested], side_of, link_of))  # the links, then their ends, then ports
    for c, i, side in zip(contested[order].tolist(), link_of[order].tolist(), side_of[order].tolist()):
        port, group = int(cables.port[c]), int(cables.group[c])
        if (i, side) in stopped:
            continue
        other = registered.get((group, port))
        if other is None:
            registered[(group, port)] = links.items[i].id
            continue
        stopped[(i, side)] = port
        link, device, prefix = links.items[i], devices.items[group >> 2], PORT_PREFIXES[group & 3]
        said[(i, side)] = _p(f"port {prefix}{port} of {device.id} is used by links {other} and {link.id}",
                             f"spec.links[{i}].{'ab'[side]}", link.id, "move one of them to a free port")
    # the ports of a stopped end after the one in use stay free
    if not stopped:
        return said, np.zeros(len(cables.port), bool)
    ends = np.array([i * 2 + side for i, side in stopped], np.int64)
    at = np.array(list(stopped.values()), np.int64)
    order = np.argsort(ends)
    ends, at = ends[order], at[order]
    link_of, side_of = cables.links_and_ends(np.arange(len(cables.port)))
    mine = link_of * 2 + side_of
    k = np.minimum(np.searchsorted(ends, mine), len(ends) - 1)
    return said, (ends[k] == mine) & (cables.port > at[k])


def link_problems(doc, ends=None, names: list[str] | None = None
                  ) -> tuple[dict[int, list[Problem]], dict[int, list[Problem]], list[Problem]]:
    """(link index -> its ends' problems, link index -> its kind's and speed's problems, the switches'
    and servers' problems that follow from the links). `ends`: the links' ends as
    `doc.link_ends.sides(doc)` gives them, when the caller has them; `names`: the device names a
    dangling end may have meant (device_names of the whole design, when `doc` is a part of it)."""
    nodes, switches, items = doc.nodes, doc.switches, doc.links
    codes = _Codes()
    devices = Devices.of(nodes, switches, codes)
    n_nodes = len(nodes)
    ends = ends or doc.link_ends.sides(doc)
    ids = list(map(attrgetter("id"), nodes)) + list(map(attrgetter("id"), switches))
    meant = None if len(set(ids)) == len(ids) else _meant_by_id(ids, n_nodes)
    resolve = _resolver(ids, n_nodes, meant)
    dev = tuple(resolve(np.where(e.kind == 1, e.index, np.where(e.kind == 2, n_nodes + e.index, -1)).astype(np.int64))
                for e in ends)
    links = Links.of(items, dev, codes, doc)
    kinds = _kind_problems(links, devices, np.arange(len(items)))

    sides = [_side(links, devices, dev[k], ends[k], "ab"[k]) for k in (0, 1)]
    say = _Say(devices, names)
    per_end: list[tuple[int, int, Problem]] = []
    sound = []
    for k, s in enumerate(sides):
        left = np.ones(len(items), bool)  # no end rule broken yet: an end breaks one at most
        for condition, message in END_RULES:
            broken = left & condition(links, s)
            for i in np.flatnonzero(broken).tolist():
                per_end.append((i, k, message(say, items[i], "ab"[k], s, i, f"spec.links[{i}]")))
            left &= ~broken
        sound.append(left & s.has_port)
    cables = _cables(links, sides, sound)
    capacity = np.maximum(np.stack([devices.radix, devices.nic_count, devices.gpus, devices.gpus], axis=1), 0)
    said, free_ports = _ports_used_twice(links, devices, cables, _taken_twice(cables, capacity.ravel()))
    per_end += [(i, k, problem) for (i, k), problem in said.items()]
    per_link: dict[int, list[Problem]] = {}
    for i, _, problem in sorted(per_end, key=lambda f: f[:2]):
        per_link.setdefault(i, []).append(problem)
    return per_link, kinds, _device_problems(doc, links, devices, sides, cables, free_ports, resolve, meant)


def _resolver(ids: list[str], n_nodes: int, meant: dict[str, int] | None):
    """(an array of device indices -> the device each means): with repeated ids, the last server of
    that id, else the last switch (the parse says the first; the repeats are reported)."""
    if meant is None:
        return lambda dev: dev
    last_of_kind = {}
    for i, x in enumerate(ids):
        last_of_kind[(i < n_nodes, x)] = i
    to_last = np.array([last_of_kind[(i < n_nodes, x)] for i, x in enumerate(ids)] + [-1], np.int64)
    return lambda dev: to_last[dev]  # -1 stays -1 (the last entry)


def _device_problems(doc, links: Links, devices: Devices, sides: list[_Side], cables: _Cables,
                     free_ports: np.ndarray, resolve, meant: dict[str, int] | None) -> list[Problem]:
    """Switches with more cables than ports; servers' NICs that no link takes (links without a port
    take a server's free NICs in order)."""
    n_dev = len(devices.items)
    on = np.zeros(n_dev, np.int64)
    anonymous = np.zeros(n_dev, np.int64)
    for s in sides:
        there = s.dev >= 0
        on += np.bincount(s.dev[there], weights=links.count[there], minlength=n_dev).astype(np.int64)
        bare = there & ~s.has_port & ~devices.is_switch[s.dev] & links.network
        anonymous += np.bincount(s.dev[bare], weights=links.count[bare], minlength=n_dev).astype(np.int64)
    nodes, switches = doc.nodes, doc.switches
    n_nodes = len(nodes)
    out = []
    for j, sw in enumerate(switches):
        cables_on = int(on[n_nodes + j if meant is None else meant[sw.id]])
        if cables_on > sw.radix:
            out.append(_p(f"switch {sw.id} has {cables_on} cables but only {sw.radix} ports",
                          f"spec.switches[{j}]", sw.id, "remove links, or use a switch with a larger radix"))
    nic_count = devices.nic_count[:n_nodes]
    used = np.zeros((n_nodes, max(int(nic_count.max()) if n_nodes else 0, 1)), bool)
    nic = ((cables.group & 3) == PORT_NIC) & ~free_ports
    used[cables.group[nic] >> 2, cables.port[nic]] = True  # below nic_count: the rules before say so
    row = resolve(np.arange(n_nodes, dtype=np.int64))
    free = ~used[row] & (np.arange(used.shape[1]) < nic_count[:, None])
    for i in np.flatnonzero(free.sum(axis=1) > anonymous[row]).tolist():
        node = nodes[i]
        ks = np.flatnonzero(free[i]).tolist()[int(anonymous[row[i]]):]
        shown = ", ".join(f"nic{k}" for k in ks[:4]) + (", ..." if len(ks) > 4 else "")
        out.append(_p(f"{len(ks)} NIC(s) of {node.id} not connected ({shown})", f"spec.nodes[{i}]", node.id,
                      "connect them to a leaf switch, or lower nic_count", "warning"))
    return out


def _meant_by_id(ids: list[str], n_nodes: int) -> dict[str, int]:
    """Id -> the device an end of that id means (the last server of that id, else the last switch)."""
    meant = {x: n_nodes + j for j, x in enumerate(ids[n_nodes:])}
    meant.update((x, i) for i, x in enumerate(ids[:n_nodes]))
    return meant


def _article(word: str) -> str:
    """"an" before a vowel (an ethernet port, an infiniband port), else "a"."""
    return "an" if word[:1] in tuple("aeiou") else "a"
