"""Slurm's topology.conf in and out (`designer import slurm-topology`, `designer export slurm-topology`).

The format is Slurm's topology.conf(5): one line per switch, `SwitchName=s0 Nodes=tux[0-3]` for a
leaf and `SwitchName=s4 Switches=s[0-3]` above it (topology/tree), or one line per block,
`BlockName=b1 Nodes=node[1-4]` and `BlockSizes=4,8` (topology/block). Keys are case-insensitive;
`#` starts a comment; node and switch lists are hostlist expressions. `LinkSpeed` is in
arbitrary units (Slurm ignores it), so cable speeds come from --link-gbps.

A topology.conf describes cables, and sites write them as they are: NVIDIA's `sharp_cmd topology`
lists every switch pair from both ends, site generators cable spines to spines. The import reads
the file as a graph (each pair of switches one cable, however often it is listed) and says where
Slurm's topology/tree plugin, which wants a tree, would not take the file as written.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from ...model.document import Document
from ...model.elements import split_endpoint
from ...problems import DesignerError, Problem, did_you_mean
from .fabric import FoundFabric, FoundLink, FoundSwitch, build_document, infer_tiers, provenance, safe_id
from .host_roles import apply_host_map, classify_hosts, describe
from .hostlist import HostlistError, compress, expand

DEFAULT_LINK_GBPS = 400.0  # NDR InfiniBand, what the generator defaults to as well
DEFAULT_SWITCH_RADIX = 64
BLOCK_TOP = "block-top"  # the switch joining the blocks of a topology/block file
_KEYS = {"switchname", "switches", "nodes", "linkspeed", "blockname", "blocksizes"}
_FIX = "see topology.conf(5): SwitchName=NAME Nodes=HOSTLIST | Switches=HOSTLIST, or BlockName=NAME Nodes=HOSTLIST"


@dataclass
class SlurmSwitch:
    """One switch (or block) line of a Slurm topology.conf: its servers and switches below."""
    name: str
    line: int
    nodes: list[str] = field(default_factory=list)
    switches: list[str] = field(default_factory=list)
    block: bool = False


@dataclass
class SlurmTopology:
    """A Slurm topology.conf read into switches and cables (tree) or blocks."""
    switches: dict[str, SlurmSwitch]
    block_sizes: list[int]
    form: str  # "tree" or "block"
    # each pair of switches once: (listing switch, listed switch), in the order first met
    cables: list[tuple[str, str]] = field(default_factory=list)
    not_a_tree: list[str] = field(default_factory=list)  # why Slurm's topology/tree would not take it as is


def parse_topology_conf(text: str, file: str = "<text>") -> SlurmTopology:
    """DesignerError (FILE:LINE, with the fix) for anything Slurm would not read either."""
    lines = _ConfLines(file)
    for number, raw in enumerate(text.split("\n"), 1):
        lines.read(number, raw)
    problems = lines.problems + _file_problems(lines)
    if problems:
        raise DesignerError(problems)
    topo = SlurmTopology(lines.switches, lines.block_sizes, "block" if "block" in lines.forms else "tree")
    topo.cables, topo.not_a_tree = _cables(lines.switches, file)
    return topo


class _ConfLines:
    """The lines of a topology.conf read one by one: the switches (or blocks) by name, BlockSizes,
    the forms met (tree, block), and the problems of each line."""

    def __init__(self, file: str):
        self.file = file
        self.switches: dict[str, SlurmSwitch] = {}
        self.block_sizes: list[int] = []
        self.forms: set[str] = set()
        self.problems: list[Problem] = []

    def bad(self, line: int, message: str, fix: str = _FIX) -> None:
        self.problems.append(Problem(message, file=self.file, line=line, fix=fix))

    def read(self, number: int, raw: str) -> None:
        line = raw.split("#", 1)[0].strip()
        if not line:
            return
        pairs = self._pairs(number, line)
        if pairs is None:
            return
        try:
            self._entry(number, pairs)
        except HostlistError as exc:
            self.bad(number, f"cannot read the host list: {exc}", "write ranges like node[001-128] or node[01-04,07]")

    def _pairs(self, number: int, line: str) -> dict[str, str] | None:
        """The line's KEY=VALUE pairs, keys in lower case; None (a problem said) at the first bad token."""
        pairs: dict[str, str] = {}
        for token in line.split():
            key, eq, value = token.partition("=")
            if not eq or not key:
                self.bad(number, f"{token!r} is not KEY=VALUE")
                return None
            low = key.lower()
            if low not in _KEYS:
                guess = did_you_mean(low, _KEYS)
                self.bad(number, f"unknown key {key!r}" + (f" (did you mean {guess}?)" if guess else ""),
                         "topology.conf knows SwitchName, Switches, Nodes, LinkSpeed, BlockName, BlockSizes "
                         "(RingName and torus layouts are not imported)")
                return None
            pairs[low] = value
        return pairs

    def _entry(self, number: int, pairs: dict[str, str]) -> None:
        """A BlockSizes= line, or a switch or block with its servers and switches below."""
        if "blocksizes" in pairs:
            sizes = [s for s in pairs["blocksizes"].split(",") if s]
            if not sizes or not all(s.isdigit() and int(s) > 0 for s in sizes):
                self.bad(number, f"BlockSizes={pairs['blocksizes']} is not a list of whole numbers",
                         "write e.g. BlockSizes=18,72")
            else:
                self.block_sizes = [int(s) for s in sizes]
            self.forms.add("block")
            return
        name_key = "switchname" if "switchname" in pairs else ("blockname" if "blockname" in pairs else None)
        if name_key is None:
            self.bad(number, "a line without SwitchName= or BlockName=")
            return
        name = pairs[name_key]
        if not name:
            self.bad(number, f"{name_key} is empty")
            return
        if name in self.switches:
            self.bad(number, f"{name!r} is defined twice (also at line {self.switches[name].line})",
                     "give each switch or block one line")
            return
        sw = SlurmSwitch(name, number, block=name_key == "blockname")
        self.forms.add("block" if sw.block else "tree")
        if "nodes" in pairs:
            sw.nodes = expand(pairs["nodes"])
        if "switches" in pairs:
            if sw.block:
                self.bad(number, "a block has Nodes=, not Switches=")
                return
            sw.switches = expand(pairs["switches"])
        if not sw.nodes and not sw.switches:
            self.bad(number, f"{name!r} has neither Nodes= nor Switches=", f"add Nodes=... or Switches=... to {name}")
        self.switches[name] = sw


def _file_problems(lines: _ConfLines) -> list[Problem]:
    """What is wrong with the file as a whole: no switch, both forms, a switch named but not defined,
    a switch under itself."""
    file, switches = lines.file, lines.switches
    problems: list[Problem] = []
    if not lines.problems and not switches:
        problems.append(Problem("no SwitchName= or BlockName= line: this is not a topology.conf", file=file, line=1,
                                fix=_FIX))
    if len(lines.forms) > 1 and not lines.problems and not problems:
        first = min(switches.values(), key=lambda s: s.line)
        problems.append(Problem("the file mixes SwitchName= (topology/tree) and BlockName= (topology/block) lines",
                                file=file, line=first.line, fix="keep one of the two forms"))
    for sw in switches.values():
        for child in sw.switches:
            if child not in switches:
                guess = did_you_mean(child, switches)
                problems.append(Problem(f"switch {sw.name} names switch {child!r}, which has no SwitchName= line",
                                        file=file, line=sw.line,
                                        fix=(f"did you mean {guess}? " if guess else "") +
                                        f"add a line SwitchName={child} Nodes=..., or remove it from Switches="))
    for sw in switches.values():
        if sw.name in sw.switches:
            problems.append(Problem(f"switch {sw.name} lists itself under Switches=", file=file, line=sw.line,
                                    fix=f"remove {sw.name} from its own Switches= list"))
    return problems


def _cables(switches: dict[str, SlurmSwitch], file: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Each switch pair once, and why Slurm's tree plugin would not take the listing as it is."""
    seen: dict[frozenset, tuple[str, str]] = {}
    both_ways: list[tuple[str, str]] = []
    for sw in switches.values():
        for child in sw.switches:
            key = frozenset((sw.name, child))
            if key in seen:
                if seen[key] != (sw.name, child):
                    both_ways.append(seen[key])
                continue
            seen[key] = (sw.name, child)
    cables = list(seen.values())
    said = []
    if both_ways:
        shown = ", ".join(f"{a} (line {switches[a].line}) - {b} (line {switches[b].line})"
                          for a, b in both_ways[:3])
        said.append(f"{len(both_ways)} switch pair(s) listed from both ends, e.g. {shown}: read as one cable "
                    "each; Slurm's topology/tree reads Switches= as parent -> child, so each such pair is a loop "
                    "it cannot level (`designer export slurm-topology` writes a file it accepts)")
    # loops beyond the pairs listed twice: Switches= read as parent -> child comes back to a switch
    children: dict[str, list[str]] = defaultdict(list)
    for a, b in cables:
        children[a].append(b)
    loop = _directed_loop(list(switches), children)
    if loop:
        said.append(f"Switches= lists come back around: {' -> '.join(loop)} (line {switches[loop[0]].line}): "
                    "Slurm's topology/tree wants a tree and would refuse this loop; read as cables")
    return cables, [f"{file}: {line}" for line in said]


def _directed_loop(names: list[str], children: dict[str, list[str]]) -> list[str]:
    """One parent -> child loop (its switches, the first repeated at the end), or []; iterative."""
    state: dict[str, int] = {}
    for start in names:
        if start in state:
            continue
        path, stack = [start], [iter(children[start])]
        state[start] = 1
        while stack:
            child = next(stack[-1], None)
            if child is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif child not in state:
                state[child] = 1
                path.append(child)
                stack.append(iter(children[child]))
    return []


def fabric_from_slurm(topo: SlurmTopology, link_gbps: float, switch_radix: int, fabric: str = "infiniband"):
    """Switches, servers and one cable per parent-child pair; (FoundFabric, lines for the user)."""
    found = FoundFabric(fabric=fabric)
    said: list[str] = []
    next_port: dict[str, int] = defaultdict(int)

    def port(switch: str) -> int:
        next_port[switch] += 1
        return next_port[switch] - 1

    for sw in topo.switches.values():
        found.switches[sw.name] = FoundSwitch(sw.name, sw.name, 0, preferred_id=safe_id(sw.name))
    nic_count: dict[str, int] = defaultdict(int)
    for sw in topo.switches.values():
        for node in sw.nodes:
            found.links.append(FoundLink(("host", node, nic_count[node]), ("switch", sw.name, port(sw.name)),
                                         link_gbps))
            nic_count[node] += 1
    for upper, lower in topo.cables:  # each pair of switches once, however often the file lists it
        found.links.append(FoundLink(("switch", lower, port(lower)), ("switch", upper, port(upper)), link_gbps))
    if topo.form == "block" and len(topo.switches) > 1:
        found.switches[BLOCK_TOP] = FoundSwitch(BLOCK_TOP, BLOCK_TOP, 0, preferred_id=BLOCK_TOP)
        for sw in topo.switches.values():
            found.links.append(FoundLink(("switch", sw.name, port(sw.name)), ("switch", BLOCK_TOP, port(BLOCK_TOP)),
                                         link_gbps))
        said.append(f"topology/block names no switches: each block became a leaf switch, joined by one switch "
                    f"{BLOCK_TOP!r}" + (f" (BlockSizes={','.join(map(str, topo.block_sizes))} is in the "
                                        f"description)" if topo.block_sizes else ""))
    for sw in found.switches.values():
        sw.radix = max(switch_radix, next_port[sw.key])
    found.hosts.update(nic_count)
    said.append(f"cables: topology.conf gives no speeds (LinkSpeed is in arbitrary units): all at {link_gbps:g} "
                f"Gb/s (set --link-gbps)")
    return found, said


def import_slurm_topology(text: str, file: str, *, gpu: str = "H100", gpus_per_node: int | None = 8,
                          link_gbps: float = DEFAULT_LINK_GBPS, switch_radix: int = DEFAULT_SWITCH_RADIX,
                          fabric: str = "infiniband", name: str | None = None, compute: str | None = None,
                          host_rules: list | None = None, host_map_file: str = "--hosts"):
    topo = parse_topology_conf(text, file)
    found, said = fabric_from_slurm(topo, link_gbps, switch_radix, fabric)
    guids = [h for h in found.hosts if re.fullmatch(r"0x[0-9A-Fa-f]{8,16}", h)]
    if guids:
        said.append(f"{file}: {len(guids)} of {len(found.hosts)} nodes are named by a GUID ({guids[0]}, ...): "
                    "`sharp_cmd topology` lists HCA ports, not hosts, so each became a server with one NIC and "
                    f"{gpus_per_node or 'one per HCA'} GPU(s); a host with 8 HCAs is 8 servers here: set "
                    "--gpus-per-node 1 to count one GPU per HCA")
    host_rules, renames = apply_host_map(found, host_rules, host_map_file)
    said += renames
    roles, why = classify_hosts(found.hosts, compute, host_rules, host_map_file)
    tiers = infer_tiers(found, roles)
    lateral = [(a, b) for a, b in topo.cables if tiers[a] == tiers[b]]
    if lateral:
        a, b = lateral[0]
        topo.not_a_tree.append(f"{file}: {len(lateral)} cable(s) between two {tiers[a]} switches, e.g. {a} - {b} "
                               f"(line {topo.switches[a].line}): imported as cables; Slurm's topology/tree has no "
                               "place for them (it would rank one above the other)")
    said = topo.not_a_tree + said
    if not found.hosts:
        raise DesignerError([Problem("no nodes in this topology.conf: no switch or block has Nodes=", file=file,
                                     line=min(s.line for s in topo.switches.values()), fix=_FIX)])
    description = (f"imported from Slurm topology.conf {file} ({topo.form} form): {len(topo.switches)} "
                   f"{'block' if topo.form == 'block' else 'switch'}(es), {len(found.hosts)} node(s)")
    if topo.block_sizes:
        description += f"; BlockSizes={','.join(map(str, topo.block_sizes))}"
    doc, more = build_document(found, gpu=gpu, gpus_per_node=gpus_per_node,
                               name=name or safe_id(file.rsplit("/", 1)[-1].rsplit(".", 1)[0]) or "imported",
                               description=description, roles=roles)
    apart = describe(roles, why)
    return doc, said + more + ([apart] if apart else []) + [
        provenance(doc, more, rates=f"--link-gbps {link_gbps:g}: topology.conf has none", roles_why=why)]


def export_topology_conf(doc: Document, source: str = "", form: str = "tree") -> tuple[str, list[str]]:
    """topology.conf of a design that Slurm accepts, and the cables it had to leave out.

    tree: each switch with the servers and lower-tier switches cabled to it (a cable between two
    switches of one tier has no place in Slurm's tree: left out, named in a comment and returned).
    block: one block per leaf switch, its servers (topology/block knows no switches)."""
    tier_rank = {"leaf": 0, "spine": 1, "core": 2}
    switches = {s.id: s for s in doc.switches}
    nodes = {n.id: n for n in doc.nodes}
    child_nodes: dict[str, list[str]] = defaultdict(list)
    child_switches: dict[str, list[str]] = defaultdict(list)
    left_out: list[str] = []
    for link in doc.links:
        if link.kind not in ("infiniband", "ethernet"):
            continue
        a, b = split_endpoint(link.a)[0], split_endpoint(link.b)[0]
        if a in nodes and b in switches:
            a, b = b, a
        if a in switches and b in nodes:
            name = nodes[b].name or b
            if name not in child_nodes[a]:
                child_nodes[a].append(name)
        elif a in switches and b in switches and a != b:
            ra, rb = tier_rank.get(switches[a].tier, 0), tier_rank.get(switches[b].tier, 0)
            if ra == rb:
                left_out.append(f"{link.id} ({a} - {b}: two {switches[a].tier} switches)")
                continue
            parent, child = (a, b) if ra > rb else (b, a)
            if child not in child_switches[parent]:
                child_switches[parent].append(child)
    plugin = "topology/block" if form == "block" else "topology/tree"
    lines = [f"# topology.conf for Slurm's {plugin} plugin (TopologyPlugin={plugin})",
             f"# written by `designer export slurm-topology`{' from ' + source if source else ''}"]
    order = sorted(doc.switches, key=lambda s: tier_rank.get(s.tier, 0))
    if form == "block":
        left_out = []  # blocks name no switches: no cable between switches is written, none is left out
        placed: set[str] = set()
        for sw in order:
            members = [n for n in child_nodes[sw.id] if n not in placed]
            if members:
                placed.update(members)
                lines.append(f"BlockName={sw.id} Nodes={compress(members)}")
        return "\n".join(lines) + "\n", left_out
    for cable in left_out:
        lines.append(f"# left out: cable {cable}, not part of a tree")
    for sw in order:
        parts = [f"SwitchName={sw.id}"]
        if child_switches[sw.id]:
            parts.append(f"Switches={compress(child_switches[sw.id])}")
        if child_nodes[sw.id]:
            parts.append(f"Nodes={compress(child_nodes[sw.id])}")
        if len(parts) == 1:
            continue  # a switch with nothing below it says nothing to Slurm
        lines.append(" ".join(parts))
    return "\n".join(lines) + "\n", left_out
