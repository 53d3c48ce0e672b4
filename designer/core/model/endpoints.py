"""Link endpoints ("leaf3:p17", "node0:nic2") as integer arrays, parsed once per design.

The check and the engine's fabric both need every link's two ends as device indices; a cold
`designer evaluate` parsed the same 300k strings twice (a large share of its time). The parse
is vectorised with numpy on the characters of all the texts joined into one string (the ':' of each
found among them; ids by a sorted search, of one integer key per id (up to 9 ASCII characters) or
of the strings; port names on their characters' codes, once per distinct name). A document owns a
LinkEnds (shared with its snapshots) that remembers its last two parses (one design's two sides): keyed on the endpoint
strings themselves (list equality, which compares the very same string objects by identity first),
so an edit made in place, outside the document's change log, is never served a stale parse. The one
parse taken on trust is the live check's, moved with the change log's edits (LinkEnds.keep): it serves
the design at the revision it was made for.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

# one design's two sides: the live check hands each edit's parse over (LinkEnds.keep), so the design
# before an edit is not parsed again; keeping it too held ~14 MB more at 131k GPUs
MEMO_ENTRIES = 2
PART_ENDPOINTS = 32768  # parsed at a time (_parse_in_parts)
# The port prefixes by code: a switch's p0.., a server's nic0..,
# nvl0.. (its GPUs on NVLink) and pcie0..
PORT_PREFIXES = ("p", "nic", "nvl", "pcie")
PORT_P, PORT_NIC, PORT_NVL, PORT_PCIE = range(4)


@dataclass(eq=False, repr=False, init=False)  # its __init__ written: dataclass would compile one at start
class Endpoints:
    """The cables' ends resolved to devices and ports, one array entry per end, for fast checks."""
    kind: np.ndarray  # 0: no such device, 1: a server, 2: a switch
    # (the integers are 32-bit: two sides of 295k links are kept per design, 7 MB less at 131k GPUs)
    index: np.ndarray  # its index among the servers or among the switches (-1: none)
    nic: np.ndarray  # the NIC number of a server's "nicK" port, else -1
    has_port: np.ndarray  # the endpoint names a port ("device:port"); its name is not kept (12 MB at 131k GPUs)
    port_code: np.ndarray  # the port's prefix (PORT_PREFIXES) when it is written plainly (p17: no
    # leading zero, 1 to 9 ASCII digits), else -1
    port_number: np.ndarray  # the port's number when port_code >= 0, else -1

    def __init__(self, kind: np.ndarray, index: np.ndarray, nic: np.ndarray, has_port: np.ndarray,
                 port_code: np.ndarray, port_number: np.ndarray) -> None:
        self.kind = kind
        self.index = index
        self.nic = nic
        self.has_port = has_port
        self.port_code = port_code
        self.port_number = port_number


class LinkEnds:
    """A design's links' two ends, parsed, for the check, the fabric and the analyses that read the
    same design (the document owns one; its snapshots share it). Remembers its last two parses."""

    def __init__(self):
        self._parses: tuple[tuple[list[str], list[str], list[str], Endpoints], ...] = ()
        # (lineage, revision, links, (a, b)): the live check's parse of the design at that revision (keep)
        self._kept: tuple | None = None
        self.parsed_lists = 0  # how many lists of ends it parsed rather than took from its memo (tests)

    def sides(self, doc) -> tuple[Endpoints, Endpoints]:
        """(the `a` ends, the `b` ends) of every link of `doc`."""
        node_ids, switch_ids = list(map(attrgetter("id"), doc.nodes)), list(map(attrgetter("id"), doc.switches))
        a, b = doc.link_list("a"), doc.link_list("b")
        kept = self._kept
        if kept is not None and kept[:3] == (doc.lineage, doc.revision, len(a)):
            self._kept = None
            if not self._knows(a, b, node_ids, switch_ids):
                for texts, side in zip((a, b), kept[3]):  # the check's parse of these very texts
                    self._remember(texts, node_ids, switch_ids, side)
        return self.parse(a, node_ids, switch_ids), self.parse(b, node_ids, switch_ids)

    def _knows(self, a: list[str], b: list[str], node_ids: list[str], switch_ids: list[str]) -> bool:
        return all(any((ends is texts or ends == texts) and nodes == node_ids and switches == switch_ids
                       for ends, nodes, switches, _ in self._parses) for texts in (a, b))

    def parse(self, endpoints: list[str], node_ids: list[str], switch_ids: list[str]) -> Endpoints:
        """Every endpoint as arrays (a repeated id means the first element of that id, servers before
        switches: the check reports repeated ids). The memo keeps the `endpoints` list itself, not a copy
        (2 x 2.4 MB at 131k GPUs): pass a list made for the call, that nothing changes afterwards."""
        for ends, nodes, switches, parsed in self._parses:
            if (ends is endpoints or ends == endpoints) and nodes == node_ids and switches == switch_ids:
                return parsed
        parsed = _parse_in_parts(endpoints, node_ids, switch_ids)
        self.parsed_lists += 1
        self._remember(endpoints, node_ids, switch_ids, parsed)
        return parsed

    def keep(self, doc, sides: tuple[Endpoints, Endpoints]) -> None:
        """Take `sides` as the parse of `doc`'s links' ends at its revision: the live check keeps its
        parse current edit by edit, through the document's change log (check_incremental.py), and the
        fabric and the analyses then read that one rather than parsing the same 590k ends again (~9 MB
        more and ~0.1 s of each edit at 131k GPUs). The next `sides` of the design at that revision takes
        it, keyed on the endpoint strings it reads anyway (reading them here too cost ~33 ms an edit)."""
        for side in sides:
            for f in dataclasses.fields(Endpoints):
                getattr(side, f.name).flags.writeable = False  # shared by every reader from now on
        self._kept = (doc.lineage, doc.revision, len(doc.links), tuple(sides))

    def _remember(self, endpoints: list[str], node_ids: list[str], switch_ids: list[str], parsed: Endpoints) -> None:
        # one assignment: a worker thread and the window's thread may both parse
        self._parses = (*self._parses[1 - MEMO_ENTRIES:], (endpoints, list(node_ids), list(switch_ids), parsed))

    def __deepcopy__(self, memo) -> "LinkEnds":
        return LinkEnds()  # a copy of a design parses its own (and may be edited apart)

    def __getstate__(self):
        return {"_parses": (), "_kept": None, "parsed_lists": 0}


def _parse_in_parts(endpoints: list[str], node_ids: list[str], switch_ids: list[str]) -> Endpoints:
    """_parse a part of PART_ENDPOINTS at a time: the character tables of all 295k ends of a 131k-GPU
    design at once were ~60 MB more at the check's peak (memory a process keeps once it has it)."""
    if len(endpoints) <= PART_ENDPOINTS:
        return _parse(endpoints, node_ids, switch_ids)
    names = _sorted_names(node_ids, switch_ids)
    parts = [_parse(endpoints[i:i + PART_ENDPOINTS], node_ids, switch_ids, names)
             for i in range(0, len(endpoints), PART_ENDPOINTS)]
    fields = [np.concatenate([getattr(p, f.name) for p in parts]) for f in dataclasses.fields(Endpoints)]
    for array in fields:
        array.flags.writeable = False
    return Endpoints(*fields)


def _sorted_names(node_ids: list[str], switch_ids: list[str]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(the order that sorts the ids, the ids sorted, their keys sorted: None when an id has none)."""
    names = np.array(node_ids + switch_ids) if (node_ids or switch_ids) else np.array([""])
    keys = _keys(names)
    if (keys >= 0).all():
        order = np.argsort(keys, kind="stable")  # stable: a repeated id means its first element
        return order, names[order], keys[order]
    order = np.argsort(names, kind="stable")
    return order, names[order], None


KEY_CHARACTERS = 9  # 7 bits each: 63 bits, one 64-bit integer


def _keys(texts: np.ndarray) -> np.ndarray:
    """Each text of at most 9 ASCII characters as one integer, 7 bits a character (-1 for any other
    text): ids and port names as written are told apart by integers, which numpy sorts and searches
    ~3x faster than strings."""
    width = texts.dtype.itemsize // 4
    table = texts.view(np.uint32).reshape(len(texts), width)
    keyed = min(width, KEY_CHARACTERS)
    key = np.zeros(len(texts), dtype=np.int64)
    for column in range(keyed):  # column by column: a matrix product on integers was 3x slower
        key *= 128
        key += table[:, column]
    key *= 128 ** (KEY_CHARACTERS - keyed)
    other = np.zeros(len(texts), dtype=bool)
    if table.max(initial=0) >= 128:  # a text past ASCII (rare: tested row by row only then)
        other |= (table >= 128).any(axis=1)
    if width > keyed and table[:, keyed:].any():  # a text past 9 characters
        other |= table[:, keyed:].any(axis=1)
    return np.where(other, -1, key)


def _characters(endpoints: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(every character's code, the endpoints' texts one after another, a line break after each; where
    each text starts; where it ends: its line break). The texts are joined and encoded at once, in C:
    a numpy array made from the list of strings (one conversion per string) took 2.3 ms per 32k ends,
    the join 0.3 ms."""
    text = "\n".join(endpoints) + "\n"
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:  # one code per character, as str's indices count them
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    n = len(endpoints)
    if text.count("\n") == n:  # no text has a line break of its own: the breaks end the texts
        end = np.flatnonzero(codes == ord("\n"))
    else:
        end = np.cumsum(np.fromiter(map(len, endpoints), dtype=np.int64, count=n) + 1) - 1
    start = np.empty(n, dtype=np.int64)
    start[0], start[1:] = 0, end[:-1] + 1
    return codes, start, end


def _texts(codes: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The pieces codes[start:start + length] as a numpy string array (a table of the longest piece's
    width, the rest padded with code 0 as numpy pads its strings)."""
    width = max(int(length.max(initial=0)), 1)
    column = np.arange(width)
    at = np.minimum(start[:, None] + column, len(codes) - 1)
    table = codes[at].astype(np.uint32)
    table[column >= length[:, None]] = 0
    return table.view(f"<U{width}").reshape(len(start))


def _distinct(codes: np.ndarray, start: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct pieces codes[start:start + length] as a string array, the place of each piece among
    them), by their keys when all have one: the distinct keys sorted, spelled back (a few hundred port
    names even at 131k GPUs) (the table of every piece's characters, then their keys' distinct values
    with the first place of each, took 2.6 ms per 32k port names, this 1.2 ms)."""
    keys = _piece_keys(codes, start, length)
    if (keys < 0).any():
        return np.unique(_texts(codes, start, length), return_inverse=True)
    distinct, position = np.unique(keys, return_inverse=True)
    return _spelled(distinct), position


def _spelled(keys: np.ndarray) -> np.ndarray:
    """The texts of _keys's keys (each >= 0), as a string array: 7 bits a character, the first the highest."""
    shifts = 7 * np.arange(KEY_CHARACTERS - 1, -1, -1, dtype=np.int64)
    table = ((keys[:, None] >> shifts) & 127).astype(np.uint32)
    return table.view(f"<U{KEY_CHARACTERS}").reshape(len(keys))


def _piece_keys(codes: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """_keys(_texts(codes, start, length)), read from the codes a column at a time without the table of
    the pieces' characters (half the time per 32k ends)."""
    longest = int(length.max(initial=0))
    keyed = min(max(longest, 1), KEY_CHARACTERS)
    key = np.zeros(len(start), dtype=np.int64)
    past_ascii = np.zeros(len(start), dtype=bool)
    for column in range(keyed):
        code = codes.take(start + column, mode="clip")  # (past the last code: a piece shorter, masked)
        code *= column < length
        if codes.dtype != np.uint8:  # a text past ASCII
            past_ascii |= code >= 128
        key *= 128
        key += code
    key *= 128 ** (KEY_CHARACTERS - keyed)
    key[past_ascii] = -1
    if longest > KEY_CHARACTERS:  # the pieces past 9 characters (rare) as _keys reads them
        long = np.flatnonzero(length > KEY_CHARACTERS)
        key[long] = _keys(_texts(codes, start[long], length[long]))
    return key


def _parse(endpoints: list[str], node_ids: list[str], switch_ids: list[str], names=None) -> Endpoints:
    n = len(endpoints)
    if n == 0:
        empty = np.zeros(0, dtype=np.int32)
        return Endpoints(empty.astype(np.int8), empty, empty, empty.astype(bool), empty.astype(np.int8), empty)
    codes, start, end = _characters(endpoints)
    # each endpoint's first ':' (str.partition's): the colons in order, the first of each endpoint's run
    colons = np.flatnonzero(codes == ord(":"))
    if len(colons) == n and (colons < end).all() and (colons[1:] > end[:-1]).all():
        colon = colons  # the usual case: each endpoint has one
    else:
        owner = np.searchsorted(end, colons)
        first = np.ones(len(colons), dtype=bool)
        first[1:] = owner[1:] != owner[:-1]
        colon = np.full(n, -1, dtype=np.int64)
        colon[owner[first]] = colons[first]
    has_port = colon >= 0
    dev_length = np.where(has_port, colon, end) - start
    order, sorted_names, sorted_keys = names or _sorted_names(node_ids, switch_ids)
    if sorted_keys is not None:  # every id has a key: a device without one is no id
        key = _piece_keys(codes, start, dev_length)
        pos = np.minimum(np.searchsorted(sorted_keys, key), len(sorted_keys) - 1)
        found = (sorted_keys[pos] == key) & (key >= 0)
    else:
        dev = _texts(codes, start, dev_length)
        pos = np.minimum(np.searchsorted(sorted_names, dev), len(sorted_names) - 1)
        found = sorted_names[pos] == dev
    which = np.where(found, order[pos], -1)
    kind = np.where(~found, 0, np.where(which < len(node_ids), 1, 2)).astype(np.int8)
    index = np.where(kind == 1, which, np.where(kind == 2, which - len(node_ids), -1)).astype(np.int32)
    # on the distinct port names (a few hundred even at 131k GPUs), then spread: the table of every
    # endpoint's characters took 0.12 s at 131k GPUs
    distinct, position = _distinct(codes, colon + 1, np.where(has_port, end - colon - 1, 0))
    port_code, port_number = _port_codes(distinct)
    nic_named = np.array([text.startswith("nic") for text in distinct.tolist()], dtype=bool)[position]
    port_code, port_number = port_code[position], port_number[position]
    nic = np.where((kind == 1) & (port_code == PORT_NIC), port_number, -1)
    # a NIC port written otherwise (nic007): still that NIC for the engine (the check names it)
    odd = np.flatnonzero((kind == 1) & has_port & (port_code != PORT_NIC) & nic_named)  # not NVLink ports, say
    for i in odd.tolist():
        digits = str(distinct[position[i]])[3:]
        if digits.isdigit():
            try:
                nic[i] = min(int(digits), NO_SUCH_NIC)
            except ValueError:  # a digit that is no number (a superscript)
                pass
    for array in (kind, index, nic, has_port, port_code, port_number):
        array.flags.writeable = False  # shared by every reader of the design's LinkEnds
    return Endpoints(kind, index, nic, has_port, port_code, port_number)


MAX_PORT_DIGITS = 9  # below 2**31: a port number fits the arrays' 32 bits (and the check's keys)
NO_SUCH_NIC = 2**31 - 1  # a NIC number written with more digits than that: past any server's NICs


def _port_codes(port: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(prefix code, number) of each port written plainly: a known prefix, then 1 to 9 ASCII digits
    without a leading zero ("p17", "nic0"); (-1, -1) for any other text. On the characters' codes,
    as a table of n rows: numpy's string functions took a quarter of a second at 131k GPUs."""
    n = len(port)
    if port.dtype.itemsize < 4 * 5:
        port = port.astype("<U5")  # room for "pcie" and a digit: the prefix tests below index 0..4
    width = port.dtype.itemsize // 4
    c = port.view(np.uint32).reshape(n, width)
    is_pcie = (c[:, 0] == ord("p")) & (c[:, 1] == ord("c")) & (c[:, 2] == ord("i")) & (c[:, 3] == ord("e"))
    is_nic = (c[:, 0] == ord("n")) & (c[:, 1] == ord("i")) & (c[:, 2] == ord("c"))
    is_nvl = (c[:, 0] == ord("n")) & (c[:, 1] == ord("v")) & (c[:, 2] == ord("l"))
    is_p = (c[:, 0] == ord("p")) & ~is_pcie
    code = np.select([is_pcie, is_p, is_nic, is_nvl], [PORT_PCIE, PORT_P, PORT_NIC, PORT_NVL], -1)
    start = np.select([is_pcie, is_p, is_nic | is_nvl], [4, 1, 3], 0)
    column = np.arange(width)
    # each text's length: past its last character not NUL (as np.strings.str_len, whose module, loaded
    # on first use, cost every design's load ~1 ms)
    length = np.where(c != 0, column + 1, 0).max(axis=1)
    digits = length - start
    in_number = (column >= start[:, None]) & (column < length[:, None])
    is_digit = (c >= ord("0")) & (c <= ord("9"))
    lead = c[np.arange(n), np.minimum(start, width - 1)]
    plain = ((code >= 0) & (digits >= 1) & (digits <= MAX_PORT_DIGITS) & (is_digit | ~in_number).all(axis=1)
             & ((digits == 1) | (lead != ord("0"))))
    place = np.power(10, np.clip(length[:, None] - 1 - column, 0, MAX_PORT_DIGITS), dtype=np.int64)
    number = np.where(in_number & is_digit, (c.astype(np.int64) - ord("0")) * place, 0).sum(axis=1)
    return np.where(plain, code, -1).astype(np.int8), np.where(plain, number, -1).astype(np.int32)


def parse_endpoint(endpoint: str, kind: int, index: int) -> Endpoints:
    """One endpoint as `_parse` reads it, its device found by the caller (`kind`: 1 a server, 2 a
    switch, 0 none; `index` among those): no table of every device's name is made for it."""
    device = endpoint.partition(":")[0]
    parsed = _parse([endpoint], [device] if kind == 1 else [], [device] if kind == 2 else [])
    return dataclasses.replace(parsed, kind=np.array([kind], np.int8),
                               index=np.array([index if kind else -1], np.int32),
                               nic=parsed.nic if kind == 1 else np.array([-1], np.int32))


def ends_inserted(ends: Endpoints, position: int, one: Endpoints) -> Endpoints:
    """`ends` with the endpoint `one` put at `position` (a link added there)."""
    return Endpoints(*(np.insert(getattr(ends, f.name), position, getattr(one, f.name)[0])
                       for f in dataclasses.fields(Endpoints)))


def ends_removed(ends: Endpoints, position: int) -> Endpoints:
    """`ends` without the endpoint at `position` (a link removed there)."""
    return Endpoints(*(np.delete(getattr(ends, f.name), position) for f in dataclasses.fields(Endpoints)))


def ends_replaced(ends: Endpoints, position: int, one: Endpoints) -> Endpoints:
    """`ends` with the endpoint at `position` replaced by `one` (a link re-pointed)."""
    return ends_inserted(ends_removed(ends, position), position, one)


def parse_endpoints(endpoints: list[str], kinds: list[int], indexes: list[int]) -> Endpoints:
    """parse_endpoint of each of `endpoints` in one parse (`kinds`, `indexes`: the device of each, found
    by the caller)."""
    devices = [endpoint.partition(":")[0] for endpoint in endpoints]
    servers = sorted({d for d, kind in zip(devices, kinds) if kind == 1})
    switches = sorted({d for d, kind in zip(devices, kinds) if kind == 2})
    parsed = _parse(endpoints, servers, switches)
    kind = np.array(kinds, np.int8)
    return dataclasses.replace(parsed, kind=kind, index=np.where(kind != 0, np.array(indexes, np.int64), -1).astype(np.int32),
                               nic=np.where(kind == 1, parsed.nic, -1).astype(parsed.nic.dtype))
