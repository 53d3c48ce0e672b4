"""`designer import iblinkinfo`: an InfiniBand fabric as iblinkinfo(8) prints it.

The format is rdma-core's (infiniband-diags/iblinkinfo.c): a header per node, then one line per
port with the local LID and port, the link's width, lane rate and state, and the peer's LID, port
and node description:

    CA: n02 HCA-1:
          0xec0d9a03003d62be      4    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       2   17[  ] "MF0;SB7700:MSB7700/U1" ( )
    Switch: 0x506b4b0300820910 MF0;SB7700:MSB7700/U1:
               2    1[  ] ==(                Down/ Polling)==>             [  ] "" ( )
               2   17[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       4    1[  ] "n02 HCA-1" ( )

With `--line` (-l) every port is one line, headed by the port's GUID and its node's description
(right-aligned in 30 characters), the peer's GUID before its LID:

    0x248a07030017b128 "                  thing4 HCA-1"    612    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>  0xec0d9a030002b810    496   20[  ] "SwitchIB Mellanox Technologies" ( )

There a device is a switch when its LID shows more than one port (an HCA port has a LID of its own),
or when its description says so.

A device is known by its LID (a switch has one for all its ports, an HCA one per port); every cable
is seen from both ends where the output lists both, once otherwise (a partial listing still gives
each cable it shows). The lane rate is printed in Gb/s (25.78125 is EDR's signalling rate).
"""
from __future__ import annotations

import re
from collections import defaultdict

from ...problems import DesignerError, Problem
from .fabric import FoundFabric, FoundLink, FoundSwitch, build_document, provenance, safe_id
from .host_roles import apply_host_map, classify_hosts, describe
from .ibnetdiscover import _HCA_NAME, _MF0_NAME, LANE_GBPS

# iblinkinfo prints the lane's signalling rate; the IBTA speed it stands for
LANE_RATES = {"2.5": "SDR", "5.0": "DDR", "10.0": "QDR", "14.0625": "FDR", "25.78125": "EDR", "53.125": "HDR",
              "106.25": "NDR", "212.5": "XDR"}
_HEADER = re.compile(r"^(CA|Switch|Router):\s*(?:(0x[0-9A-Fa-f]+)\s+)?(.*?):?\s*$")
_PORT = re.compile(r"^\s*(?:0x[0-9A-Fa-f]+\s+)?(\d+)\s+(\d+)\[[^\]]*\]\s*==\((.*?)\)==>\s*(?:(\d+)\s+(\d+))?"
                   r"\s*\[[^\]]*\]\s*\"([^\"]*)\"")
_LINE_MODE = re.compile(r"^\s*0x[0-9A-Fa-f]+\s+\"(.*?)\"\s+(\d+)\s+(\d+)\[[^\]]*\]\s*==\((.*?)\)==>\s*"
                        r"(?:0x[0-9A-Fa-f]+\s+(\d+)\s+(\d+))?\s*\[[^\]]*\]\s*\"([^\"]*)\"")
_LINK = re.compile(r"^\s*(\d+)X\s+([\d.]+)\s+Gbps\s*(?:\((\w+)\))?\s*(\w+)/\s*(\w+)")
FIX = "give the whole output of `iblinkinfo` (or `iblinkinfo --line`), as the tool printed it"


def _bad(file: str, line: int, message: str, fix: str = FIX) -> DesignerError:
    return DesignerError([Problem(message, file=file, line=line, fix=fix)])


def _host(desc: str, lid: int) -> str:
    m = _HCA_NAME.match(desc)
    return m.group(1) if m else (safe_id(desc) if desc else f"lid{lid}")


def parse_iblinkinfo(text: str, file: str):
    """(nodes {lid: (kind, desc)}, cables {key: (lid, port, rlid, rport, gbps, speed text, line)},
    switch ports {lid: most port number seen})."""
    nodes: dict[int, tuple[str, str]] = {}
    cables: dict[frozenset, tuple] = {}
    top_port: dict[int, int] = defaultdict(int)
    ports_of: dict[int, set[int]] = defaultdict(set)  # --line: the ports listed under each LID
    kind = desc = None
    seen_header = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        header = _HEADER.match(line.strip())
        if header and "==(" not in line:
            kind, desc = ("Switch" if header.group(1) == "Switch" else "Ca"), header.group(3).strip()
            seen_header = True
            continue
        line_mode = _LINE_MODE.match(line)
        if line_mode:  # --line: the node's description on every port line, no header
            desc = line_mode.group(1).strip()
            lid, port = int(line_mode.group(2)), int(line_mode.group(3))
            ports_of[lid].add(port)
            nodes.setdefault(lid, ("?", desc))
            seen_header = True
            m = line_mode
            groups = (lid, port, m.group(4), m.group(5), m.group(6), m.group(7))
        else:
            m = _PORT.match(line)
            groups = None if m is None else (int(m.group(1)), int(m.group(2)), m.group(3), m.group(4), m.group(5),
                                             m.group(6))
        if m is None:
            if "==(" in line:
                raise _bad(file, number, f"cannot read this port line: {line.strip()[:80]!r}")
            if not seen_header:
                continue  # a prompt or a command line above the output
            raise _bad(file, number, f"not a line of iblinkinfo output: {line.strip()[:80]!r}")
        lid, port, link_text, peer_lid, peer_port, rdesc = groups
        if line_mode is None:
            if kind is None:
                raise _bad(file, number, "a port line before any `CA:` or `Switch:` header")
            nodes.setdefault(lid, (kind, desc))
            if kind == "Switch":
                top_port[lid] = max(top_port[lid], port)
        state = _LINK.match(link_text)
        if state is None or peer_lid is None:
            continue  # Down / Polling, Disabled: nothing plugged in or no link
        width, rate, named, logical, physical = state.groups()
        if logical != "Active" and physical != "LinkUp":
            continue
        speed = named.upper() if named else LANE_RATES.get(rate)
        if speed not in LANE_GBPS:
            raise _bad(file, number, f"unknown lane rate {rate} Gbps", "iblinkinfo prints 2.5 .. 212.5 Gbps per lane")
        rlid, rport = int(peer_lid), int(peer_port)
        nodes.setdefault(rlid, ("?", rdesc))
        if nodes[rlid][0] == "?" and nodes[rlid][1] != rdesc:
            nodes[rlid] = ("?", rdesc)
        gbps = int(width) * LANE_GBPS[speed]
        key = frozenset({(lid, port), (rlid, rport)})
        if key not in cables or gbps < cables[key][4]:
            cables[key] = (lid, port, rlid, rport, gbps, f"{width}x{speed}", number)
    if not cables:
        raise _bad(file, max(1, len(text.splitlines())), "no active link in this output: this is not iblinkinfo "
                   "output, or every port is down")
    for lid, ports in ports_of.items():  # --line: a LID with several ports is a switch's
        if len(ports) > 1 and nodes[lid][0] == "?":
            nodes[lid] = ("Switch", nodes[lid][1])
        if nodes[lid][0] == "Switch":
            top_port[lid] = max(top_port[lid], *ports)
    switch_lids = {lid for lid, (k, _) in nodes.items() if k == "Switch"}
    for lid, (k, d) in list(nodes.items()):
        if k == "?":  # seen only from its peer: a switch when its name says so, else an HCA
            nodes[lid] = ("Switch" if lid in switch_lids or d.startswith("MF0;") or "switch" in d.lower()
                          or "Mellanox Technologies" in d and not _HCA_NAME.match(d) else "Ca", d)
    return nodes, cables, top_port


def import_iblinkinfo(text: str, file: str, *, gpu: str = "H100", gpus_per_node: int | None = None,
                      name: str | None = None, compute: str | None = None, host_rules: list | None = None,
                      host_map_file: str = "--hosts"):
    """(document, lines for stderr)."""
    nodes, cables, top_port = parse_iblinkinfo(text, file)
    found = FoundFabric()
    for lid, (kind, desc) in nodes.items():
        if kind == "Switch":
            m = _MF0_NAME.match(desc)
            preferred = safe_id(m.group(1)) if m else None
            found.switches[str(lid)] = FoundSwitch(str(lid), desc or f"switch lid {lid}", top_port.get(lid, 0),
                                                   preferred_id=preferred)
    host_ports: dict[str, list[int]] = defaultdict(list)
    for lid, (kind, desc) in nodes.items():
        if kind == "Ca":
            host_ports[_host(desc, lid)].append(lid)
    nic_of: dict[int, tuple[str, int]] = {}
    for host, lids in host_ports.items():
        for i, lid in enumerate(sorted(lids, key=lambda x: (nodes[x][1], x))):
            nic_of[lid] = (host, i)
        found.hosts[host] = len(lids)
    said = []
    for lid, port, rlid, rport, gbps, _, _ in sorted(cables.values(), key=lambda c: c[6]):
        ends = []
        for l, p in ((lid, port), (rlid, rport)):
            if nodes[l][0] == "Switch":
                ends.append(("switch", str(l), max(p - 1, 0)))  # IB ports count from 1, Designer's p0..
            else:
                host, nic = nic_of[l]
                ends.append(("host", host, nic))
        if ends[0] == ends[1] or (ends[0][0] == ends[1][0] == "switch" and ends[0][1] == ends[1][1]):
            continue  # a loopback plug
        found.links.append(FoundLink(ends[0], ends[1], gbps))
    host_rules, renames = apply_host_map(found, host_rules, host_map_file)
    said += renames
    roles, why = classify_hosts(found.hosts, compute, host_rules, host_map_file)
    description = (f"imported from iblinkinfo output {file}: {len(found.switches)} switch(es), {len(found.hosts)} "
                   f"host(s), {len(found.links)} cable(s)")
    doc, more = build_document(found, gpu=gpu, gpus_per_node=gpus_per_node,
                               name=name or safe_id(file.rsplit("/", 1)[-1].rsplit(".", 1)[0]) or "imported",
                               description=description, roles=roles)
    apart = describe(roles, why)
    return doc, said + more + ([apart] if apart else []) + [provenance(doc, more, rates="read", roles_why=why)]
