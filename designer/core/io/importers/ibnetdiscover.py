"""`designer import ibnetdiscover`: an InfiniBand fabric as ibnetdiscover(8) prints it.

The format is rdma-core's (infiniband-diags/ibnetdiscover.c, man page ibnetdiscover.8):

    vendid=0x2c9                       header lines of the next record (ignored but checked)
    switchguid=0xec0d9a0300ec8240(ec0d9a0300ec8240)
    Switch  36 "S-ec0d9a0300ec8240"    # "SwitchIB Mellanox Technologies" base port 0 lid 48 lmc 0
    [1]  "H-506b4b03003fa9b6"[1](506b4b03003fa9b6)   # "node018 HCA-1" lid 67 4xEDR
    [13] "S-ec0d9a0300ec81e0"[19]      # "SwitchIB Mellanox Technologies" lid 21 4xEDR

    Ca  1 "H-506b4b03003fa9b6"         # "node018 HCA-1"
    [1](506b4b03003fa9b6)  "S-ec0d9a0300ec8240"[1]   # lid 67 lmc 0 "SwitchIB ..." lid 48 4xEDR

and the ports report of `ibnetdiscover -p`:

    CA    44    1 0x0002c902004885dd 4x SDR - SW     2   17 0x0002c90000000050 ( 'HCA-1' - 'ISR9288 ...' )

Every cable appears twice (once from each end); it becomes one link. Its speed is what the port
trained at (width x lane rate); a cable slower than the fabric's usual speed and than what both
of its ends reach elsewhere is imported at its trained speed and flagged (note + warning).
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from ...model.elements import MAX_PORTS
from ...problems import DesignerError, Problem
from .fabric import FoundFabric, FoundLink, FoundSwitch, build_document, provenance, safe_id
from .host_roles import apply_host_map, classify_hosts, describe
from .ib_devices import device

# Nominal data rate per lane in Gb/s, by the IBTA speed names ibnetdiscover prints
# (InfiniBand Architecture Specification Vol. 2, "Physical Layer"; IBTA roadmap, infinibandta.org).
# A 4x link carries 4 lanes: 4xEDR = 100 Gb/s, 4xHDR = 200, 4xNDR = 400, 4xXDR = 800.
LANE_GBPS = {
    "SDR": 2.5,  # 2.5 GBd, 8b/10b: sold as 10 Gb/s for 4x
    "DDR": 5.0,  # 5 GBd, 8b/10b: 20 Gb/s for 4x
    "QDR": 10.0,  # 10 GBd, 8b/10b: 40 Gb/s for 4x
    "FDR10": 10.0,  # 10.3125 GBd, 64b/66b: 40 Gb/s for 4x (Mellanox FDR10)
    "FDR": 14.0625,  # 14.0625 GBd, 64b/66b: sold as 56 Gb/s for 4x
    "EDR": 25.0,  # 25.78125 GBd, 64b/66b (iblinkinfo prints "4X 25.78125 Gbps"): 100 Gb/s for 4x
    "HDR": 50.0,  # 53.125 GBd PAM4: 200 Gb/s for 4x
    "NDR": 100.0,  # 106.25 GBd PAM4: 400 Gb/s for 4x
    "XDR": 200.0,  # 212.5 GBd PAM4: 800 Gb/s for 4x
}
# When the output names no speed (ibnetdiscover before 1.5 printed none), cables get this.
DEFAULT_LINK_GBPS = 400.0

_HEADER = re.compile(r"^(vendid|devid|sysimgguid|switchguid|caguid|routerguid)\s*=\s*(\S*)\s*$", re.IGNORECASE)
_RECORD = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-((?:0x)?[0-9A-Fa-f]+)"\s*(?:#\s*(.*))?$')
# After a port number: an HCA port's GUID "(2c903003421b2)", or a Quantum-2 switch port's label as
# ibdiagnet and newer ibnetdiscover print it, ASIC/cage/port[/split] "(1/2/1)" (or "(65)"), or both
# (an HCA port in ibdiagnet's file: "(1)(b0cf0e0300e5b948)")
_PORT = re.compile(
    r'^\[(\d+)\](?:\[ext \d+\])?(?:\((?:0x)?[0-9A-Fa-f]+(?:/\d+)*\)){0,2}\s*'
    r'"([SHR])-((?:0x)?[0-9A-Fa-f]+)"\[(\d+)\](?:\[ext \d+\])?(?:\((?:0x)?[0-9A-Fa-f]+(?:/\d+)*\)){0,2}\s*(?:#\s*(.*))?$')
_PORTS_REPORT = re.compile(
    r"^(SW|CA|RT)\s+(\d+)\s+(\d+)\s+(0x[0-9A-Fa-f]+)\s+(\d+[xX])\s+(\S+)\s+-\s+"
    r"(SW|CA|RT)\s+(\d+)\s+(\d+)\s+(0x[0-9A-Fa-f]+)\s+\(\s*'(.*?)'\s+-\s+'(.*?)'\s*\)\s*$")
# A port with nothing plugged in, in the ports report: "SW  2 19 0x... 4X SDR      'desc'".
_PORTS_REPORT_OPEN = re.compile(r"^(SW|CA|RT)\s+\d+\s+\d+\s+0x[0-9A-Fa-f]+\s+\S+\s+\S+\s+'.*'\s*$")
_SPEED = re.compile(r"\b(\d+)x([A-Za-z]+\d*)\s*$")
_QUOTED = re.compile(r'"([^"]*)"')
_LID = re.compile(r"\blid (\d+)")
# Lines ibnetdiscover (or a shell) mixes into its output: chassis headings, libibmad warnings.
_SKIPPABLE = re.compile(r"^(Non-Chassis Nodes|Chassis\b.*|.*\bibwarn\b.*|\S+\.c:\d+;.*|ibwarn:.*|.*Chassis \d+.*)$")
# The part of a node description that names the HCA; what is before it names the host.
_HCA_NAME = re.compile(r"^(\S+)\s+(HCA-\d+|mlx\d+_\d+|mlx\d+_bond_\d+|mthca\d+|ibp\S+|hfi\d+_\d+|qib\d+|"
                       r"bnxt_re\d+|irdma\d+|rocep\S+|ionic_\d+)$")
_MF0_NAME = re.compile(r"^MF0;([^:]+):")
_FIX = "give the whole output of `ibnetdiscover` (or `ibnetdiscover -p`), as the tool printed it"


@dataclass
class _Port:
    """One connected port of an ibnetdiscover record: the peer it goes to and the link's width and speed."""
    port: int
    peer_kind: str  # S, H or R
    peer_guid: str
    peer_port: int
    width: str  # "4x", or "" when not printed
    speed: str  # "EDR", or ""
    line: int
    peer_desc: str = ""


@dataclass
class _Record:
    """One device of ibnetdiscover output (switch, HCA or router) with its connected ports."""
    kind: str  # Switch, Ca, Rt
    nports: int
    guid: str
    desc: str
    line: int
    lid: int | None = None
    ports: list[_Port] = field(default_factory=list)
    devid: int | None = None  # from the `devid=` header line above the record


@dataclass
class ParsedIb:
    """ibnetdiscover output read into records by GUID, with the warnings reading it gave."""
    records: dict[str, _Record]
    warnings: list[str]


def _guid(text: str) -> str:
    return f"{int(text, 16):016x}"


def _speed_of(comment: str, file: str, line: int, warnings: list[str]) -> tuple[str, str]:
    m = _SPEED.search(comment or "")
    if not m:
        return "", ""
    width, name = m.group(1) + "x", m.group(2).upper()
    if name not in LANE_GBPS:
        warnings.append(f"{file}:{line}: unknown link speed {m.group(0)!r}; taken as not given")
        return "", ""
    return width, name


# A GUID shared with its tail hidden: 0x9c05<redacted>, 9c05XXXXXXXXXXXX, 0x9c05****, 0x9c05...
_REDACTED = re.compile(r"((?:0x)?[0-9A-Fa-f]{0,15})(<redacted>|\[redacted\]|<REDACTED>|\[REDACTED\]|[xX]{4,}|\*{3,}|\.\.\.)")
_REDACTED_NAME = re.compile(r'"([SHR])-(' + _REDACTED.pattern + r')"')


def _unredact(text: str) -> tuple[str, list[str]]:
    """The text with each redacted device GUID ("S-9c05<redacted>") replaced by a made-up one (fffe +
    its number). Redactions usually keep only the vendor's prefix, so one text stands for many
    devices: a device is told apart by its LID as well (a record's own, from its header or its first
    port line; a port line's peer, the last `lid N` of its comment). Other redacted GUIDs (header
    lines, port GUIDs in parentheses) become 0x0. Returns the devices so named, in order."""
    lines = text.split("\n")
    if not _REDACTED.search(text):
        return text, []
    names: dict[tuple, str] = {}
    shown: list[str] = []

    def name(token: str, lid: str | None) -> str:
        key = (token, lid)
        if key not in names:
            names[key] = f"fffe{len(names) + 1:012x}"
            shown.append(token + (f" (lid {lid})" if lid else ""))
        return names[key]

    for i, line in enumerate(lines):
        m = _REDACTED_NAME.search(line)
        if m is None:
            continue
        comment = line.split("#", 1)[1] if "#" in line else ""
        lids = re.findall(r"\blid (\d+)", comment)
        if _RECORD_START.match(line.strip()):
            own = lids[0] if lids else None
            if own is None:  # a Ca record: its LID is the first on its first port line
                for after in lines[i + 1:i + 4]:
                    if after.strip().startswith("["):
                        found = re.findall(r"\blid (\d+)", after.split("#", 1)[1] if "#" in after else "")
                        own = found[0] if found else None
                        break
            lid = own
        else:
            lid = lids[-1] if lids else None
        lines[i] = line[:m.start()] + f'"{m.group(1)}-{name(m.group(2), lid)}"' + line[m.end():]
    out = "\n".join(lines)
    out = re.sub(r"(guid\s*=\s*)" + _REDACTED.pattern + r"(\([^)]*\))?", r"\g<1>0x0", out)
    out = re.sub(r"\(" + _REDACTED.pattern + r"\)", "(0)", out)
    return out, shown


def _header_devid(m: re.Match, devid: int | None, file: str, line: int) -> int | None:
    """Check a `key=0x...` header line; the device id of the record it heads (vendid starts a header)."""
    value = m.group(2).split("(")[0]
    if not re.fullmatch(r"0x[0-9A-Fa-f]+", value):
        raise DesignerError([Problem(f"{m.group(1)} is {m.group(2)!r}, not a hexadecimal number such as 0x2c9",
                                     file=file, line=line, fix=_FIX)])
    key = m.group(1).lower()
    return None if key == "vendid" else (int(value, 16) if key == "devid" else devid)


def _redaction_note(redacted: list[str], file: str) -> list[str]:
    if not redacted:
        return []
    shown = ", ".join(redacted[:3]) + (", ..." if len(redacted) > 3 else "")
    return [f"{file}: {len(redacted)} redacted GUID(s) ({shown}) named fffe000000000001.. in the order met; "
            "cables join where the redacted texts are the same"]


def _listed_twice(first: _Record, kind: str, guid: str, shown: str, redacted: list[str], file: str,
                  line: int) -> DesignerError:
    if guid.startswith("fffe") and redacted:
        return DesignerError([Problem(f"{kind} at line {first.line} and this one have the same redacted GUID "
                                      f"{redacted[int(guid[4:], 16) - 1]}: the redaction made two devices one",
                                      file=file, line=line, fix="redact each GUID to a different text (keep a few "
                                      "more digits), or share the output whole")])
    return DesignerError([Problem(f"{kind} {shown} is listed twice (also at line {first.line})", file=file,
                                  line=line, fix="give the output of one ibnetdiscover run")])


_RECORD_START = re.compile(r"^(Switch|Ca|Rt)\s+\d+\s+\"")


def parse_ibnetdiscover(text: str, file: str = "<text>") -> ParsedIb:
    """The records of an ibnetdiscover output; DesignerError (FILE:LINE) when it cannot be read."""
    records: dict[str, _Record] = {}
    warnings: list[str] = []
    text, redacted = _unredact(text)
    warnings += _redaction_note(redacted, file)
    current: _Record | None = None
    skipped: list[int] = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    report_links: list[tuple] = []
    devid: int | None = None

    def fail(line: int, message: str, fix: str = _FIX):
        raise DesignerError([Problem(message, file=file, line=line, fix=fix)])

    for number, raw in enumerate(lines, 1):
        line = raw.strip().replace("\r", "")
        if not line or line.startswith("#"):
            continue
        m = _HEADER.match(line)
        if m:
            devid = _header_devid(m, devid, file, number)
            current = None
            continue
        m = _RECORD.match(line)
        if m:
            kind, nports, guid = m.group(1), int(m.group(2)), _guid(m.group(4).removeprefix("0x"))
            comment = m.group(5) or ""
            desc_m = _QUOTED.search(comment)
            lid_m = _LID.search(comment)
            if guid in records:
                raise _listed_twice(records[guid], kind, guid, f"{m.group(3)}-{m.group(4)}", redacted, file, number)
            current = _Record(kind, nports, guid, desc_m.group(1).strip() if desc_m else "", number,
                              int(lid_m.group(1)) if lid_m else None, devid=devid)
            devid = None
            records[guid] = current
            continue
        m = _PORT.match(line)
        if m:
            if current is None:
                fail(number, "a port line before any Switch or Ca record")
            if not 0 < int(m.group(1)) <= MAX_PORTS or not 0 < int(m.group(4)) <= MAX_PORTS:
                fail(number, f"port number out of range in {line[:80]!r} (InfiniBand ports count from 1 to 254)")
            width, speed = _speed_of(m.group(5) or "", file, number, warnings)
            peer_desc = _QUOTED.search(m.group(5) or "")
            current.ports.append(_Port(int(m.group(1)), m.group(2), _guid(m.group(3).removeprefix("0x")),
                                       int(m.group(4)), width, speed, number,
                                       peer_desc.group(1).strip() if peer_desc else ""))
            continue
        m = _PORTS_REPORT.match(line)
        if m:
            report_links.append((number, m.groups()))
            continue
        if _PORTS_REPORT_OPEN.match(line):
            continue
        if line.startswith("[") or re.match(r"^(Switch|Ca|Rt)\b", line):
            fail(number, f"cannot read this {'port' if line.startswith('[') else 'record'} line: {line[:80]!r}")
        if _SKIPPABLE.match(line):
            if "Chassis" not in line:  # chassis headings are part of the format; warnings are not
                skipped.append(number)
            continue
        fail(number, f"not a line of ibnetdiscover output: {line[:80]!r}")
    if report_links:
        if records:
            fail(report_links[0][0], "a ports report (ibnetdiscover -p) line inside a topology output",
                 "give one of the two outputs per file")
        return _from_ports_report(report_links, file, warnings)
    if not records:
        fail(max(1, len(lines)), "no Switch or Ca record found: this is not ibnetdiscover output")
    if skipped:
        shown = ", ".join(str(n) for n in skipped[:5]) + (", ..." if len(skipped) > 5 else "")
        warnings.append(f"{file}: skipped {len(skipped)} line(s) that are not topology (line {shown})")
    _check_complete(records, file, len(lines), warnings)
    return ParsedIb(records, warnings)


def _from_ports_report(report_links, file: str, warnings: list[str]) -> ParsedIb:
    """`ibnetdiscover -p`: one line per connected port; both ends in one line."""
    kinds = {"SW": "Switch", "CA": "Ca", "RT": "Rt"}
    records: dict[str, _Record] = {}
    for number, g in report_links:
        (k1, _lid1, p1, guid1, width, speed, k2, _lid2, p2, guid2, d1, d2) = g
        speed, width = speed.upper(), width.lower()
        if speed not in LANE_GBPS:
            warnings.append(f"{file}:{number}: unknown link speed {width}{speed!r}; taken as not given")
            width = speed = ""
        for kind, guid, desc, port, peer_kind, peer_guid, peer_port in (
                (k1, guid1, d1, p1, k2, guid2, p2), (k2, guid2, d2, p2, k1, guid1, p1)):
            rec = records.setdefault(_guid(guid), _Record(kinds[kind], 0, _guid(guid), desc, number))
            if all(p.port != int(port) for p in rec.ports):
                rec.ports.append(_Port(int(port), kinds[peer_kind][0].replace("C", "H"), _guid(peer_guid),
                                       int(peer_port), width, speed, number))
    for rec in records.values():
        rec.nports = max((p.port for p in rec.ports), default=0)
    return ParsedIb(records, warnings)


def _check_complete(records: dict[str, _Record], file: str, last_line: int, warnings: list[str]) -> None:
    """A cut-off output names devices on its port lines that have no record of their own.

    An excerpt of only the Switch records (no Ca record at all) is complete: each HCA is then
    read from the switch port line that names it."""
    missing: dict[str, _Port] = {}
    for rec in records.values():
        for p in rec.ports:
            if p.peer_guid not in records and p.peer_guid not in missing:
                missing[p.peer_guid] = p
    last = max(records.values(), key=lambda r: r.line)
    if last.kind == "Switch" and not last.ports:
        raise DesignerError([Problem(f"the output ends early: switch {last.desc or last.guid} has no port lines",
                                     file=file, line=last_line, fix=_FIX)])
    has_ca = any(r.kind == "Ca" for r in records.values())
    cut = {g: p for g, p in missing.items() if p.peer_kind != "H" or has_ca}
    if cut:
        guid, port = next(iter(cut.items()))
        raise DesignerError([Problem(
            f"the output ends early: {len(cut)} device(s) named on port lines have no record of their own "
            f"(first: {port.peer_kind}-{guid}, named at line {port.line})", file=file, line=last_line, fix=_FIX)])
    if missing:
        for guid, port in missing.items():  # only HCAs, and no Ca record anywhere
            records[guid] = _Record("Ca", 1, guid, port.peer_desc, port.line)
        warnings.append(f"{file}: no Ca records: {len(missing)} HCA(s) read from the switches' port lines")


# ---- from records to a fabric -------------------------------------------------------------------

def _gbps(width: str, speed: str) -> float | None:
    if not speed:
        return None
    return int(width[:-1]) * LANE_GBPS[speed]


def _slower(p: _Port, q: _Port) -> bool:
    """p reports a slower (or the only) speed than q."""
    gp, gq = _gbps(p.width, p.speed), _gbps(q.width, q.speed)
    return gp is not None and (gq is None or gp < gq)


def _host_of(rec: _Record) -> str:
    m = _HCA_NAME.match(rec.desc)
    if m:
        return m.group(1)
    return f"H-{rec.guid}"


def _speed_text(width: str, speed: str, gbps: float) -> str:
    return f"{width}{speed} ({gbps:g} Gb/s)" if speed else f"{gbps:g} Gb/s"


@dataclass
class IbImport:
    """The fabric built from ibnetdiscover records, with its warnings and degraded links."""
    fabric: FoundFabric
    warnings: list[str]
    degraded: list[int]  # indexes into fabric.links
    host_guids: dict[str, list[str]] = field(default_factory=dict)  # host -> its HCAs' node GUIDs


@dataclass
class _HostNics:
    """The HCA ports of each host, numbered nic0.. in a stable order."""

    ports: dict[str, list[tuple[str, int]]]  # host -> its (HCA GUID, port) cable ends, as met
    nic_of: dict[tuple[str, int], tuple[str, int]]  # (HCA GUID, port) -> (host, NIC number)
    count: dict[str, int]  # host -> its NICs


@dataclass
class _IbLinks:
    """The cables between kept devices, as found links, with what the degraded check reads."""

    links: list[FoundLink]
    meta: list[tuple[_Record, _Port, tuple[str, str]]]  # each link's reporting end and its width and speed
    unspeeded: int  # links that show no width and speed
    loops: int  # loopback cables left out


def fabric_from_ib(parsed: ParsedIb, file: str, link_gbps: float = DEFAULT_LINK_GBPS) -> IbImport:
    records, warnings = parsed.records, list(parsed.warnings)
    skip = _left_out(records)
    if skip:
        warnings.append(f"{file}: left out {len(skip)} router(s) and SHARP aggregation node(s)")
    cables = _unique_cables(records)
    nics = _host_nics(records, cables, skip)
    found = FoundFabric()
    found.hosts.update(nics.count)
    found.switches.update(_found_switches(records))
    ib = _ib_links(records, cables, skip, nics, link_gbps)
    found.links += ib.links
    if ib.unspeeded:
        warnings.append(f"{file}: {ib.unspeeded} link(s) show no width and speed (an old ibnetdiscover); "
                        f"taken as {link_gbps:g} Gb/s (set --link-gbps)")
    if ib.loops:
        warnings.append(f"{file}: left out {ib.loops} loopback cable(s) between two ports of one switch")
    at_best: list[str] = []
    degraded = _flag_degraded(found, ib.meta, records, at_best)
    warnings += _device_rates_note(records, skip, file) + [f"{file}: {line}" for line in at_best]
    host_guids = {host: sorted({guid for guid, _ in ports}) for host, ports in nics.ports.items()}
    return IbImport(found, warnings, degraded, host_guids)


def _left_out(records: dict[str, _Record]) -> set[str]:
    """The GUIDs of routers and SHARP aggregation nodes: neither servers nor switches of the fabric."""
    skip: set[str] = set()
    for rec in records.values():
        if rec.kind == "Rt":
            skip.add(rec.guid)
        elif rec.kind == "Ca" and "Aggregation Node" in rec.desc:
            skip.add(rec.guid)  # the SHARP aggregation node inside a Quantum switch, not a server
    return skip


def _unique_cables(records: dict[str, _Record]) -> dict[tuple, tuple[_Record, _Port]]:
    """Every cable once, by its two (guid, port) ends, with the end that reports it."""
    cables: dict[tuple, tuple[_Record, _Port]] = {}
    for rec in records.values():
        for p in rec.ports:
            key = tuple(sorted([(rec.guid, p.port), (p.peer_guid, p.peer_port)]))
            # both ends report the cable; when they disagree (4x at one end, 1x at the other) the
            # slower one is what the cable carries
            if key not in cables or _slower(p, cables[key][1]):
                cables[key] = (rec, p)
    return cables


def _host_nics(records: dict[str, _Record], cables: dict[tuple, tuple[_Record, _Port]], skip: set[str]) -> _HostNics:
    host_ports: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for (rec, p) in cables.values():
        for guid, port in ((rec.guid, p.port), (p.peer_guid, p.peer_port)):
            r = records.get(guid)
            if r is not None and r.kind == "Ca" and guid not in skip:
                host_ports[_host_of(r)].append((guid, port))
    nic_index: dict[tuple[str, int], tuple[str, int]] = {}
    count: dict[str, int] = {}
    for host, ports in host_ports.items():
        ordered = sorted(set(ports), key=lambda gp: (records[gp[0]].desc, gp[0], gp[1]))
        for i, gp in enumerate(ordered):
            nic_index[gp] = (host, i)
        count[host] = len(ordered)
    return _HostNics(host_ports, nic_index, count)


def _found_switches(records: dict[str, _Record]) -> dict[str, FoundSwitch]:
    """The switches by GUID: named by their description (with the GUID when two share it), their
    id from the description when it reads as one."""
    names: dict[str, int] = defaultdict(int)
    for rec in records.values():
        if rec.kind == "Switch":
            names[rec.desc] += 1
    switches: dict[str, FoundSwitch] = {}
    for rec in records.values():
        if rec.kind != "Switch":
            continue
        m = _MF0_NAME.match(rec.desc)
        preferred = safe_id(m.group(1)) if m else (safe_id(rec.desc) if re.fullmatch(r"[\w.\-]{1,40}", rec.desc)
                                                   else None)
        shown = rec.desc if rec.desc and names[rec.desc] == 1 else f"{rec.desc or 'switch'} S-{rec.guid}"
        switches[rec.guid] = FoundSwitch(key=rec.guid, name=shown, radix=rec.nports, preferred_id=preferred)
    return switches


def _ib_links(records: dict[str, _Record], cables: dict[tuple, tuple[_Record, _Port]], skip: set[str],
              nics: _HostNics, link_gbps: float) -> _IbLinks:
    """The cables between kept devices (loopbacks left out); a cable without a speed runs at `link_gbps`."""
    out = _IbLinks([], [], 0, 0)
    for (rec, p) in cables.values():
        if rec.guid in skip or p.peer_guid in skip:
            continue
        if rec.guid == p.peer_guid:
            out.loops += 1  # a loopback plug between two ports of one switch: no path for traffic
            continue
        ends = []
        for guid, port in ((rec.guid, p.port), (p.peer_guid, p.peer_port)):
            r = records[guid]
            if r.kind == "Switch":
                ends.append(("switch", guid, max(port - 1, 0)))  # IB ports count from 1, Designer's p0..
            else:
                host, nic = nics.nic_of[(guid, port)]
                ends.append(("host", host, nic))
        gbps = _gbps(p.width, p.speed)
        if gbps is None:
            out.unspeeded += 1
            gbps = link_gbps
        out.links.append(FoundLink(a=ends[0], b=ends[1], gbps=gbps))
        out.meta.append((rec, p, (p.width, p.speed)))
    return out


def _device_rates_note(records: dict[str, _Record], skip: set[str], file: str) -> list[str]:
    known = [r for r in records.values() if r.guid not in skip and device(r.devid)]
    if not known:
        return []
    models = sorted({device(r.devid) for r in known})
    return [f"{file}: rates: the fastest rate of {len(known)} of {len(records) - len(skip)} devices from their "
            f"device id ({', '.join(f'{n} 4x{sp}' for n, sp in models[:6])}{', ...' if len(models) > 6 else ''})"]


def _flag_degraded(found: FoundFabric, meta, records, at_best: list[str] | None = None) -> list[int]:
    """Cables that trained below both the fabric's usual speed and what their ends can reach: the
    fastest rate of each end's device (by its devid) when known, else what it reached elsewhere.
    `at_best` gets a line for each slow cable that runs at its device's best (not a bad cable)."""
    at_best = [] if at_best is None else at_best
    count: dict[tuple, int] = defaultdict(int)
    for link, (_, _, ws) in zip(found.links, meta):
        if ws[1]:
            count[(link.gbps, ws)] += 1
    if not count:
        return []
    usual_gbps, usual_ws = max(count, key=lambda k: (count[k], k[0]))
    best: dict[tuple, float] = defaultdict(float)
    cables: dict[tuple, int] = defaultdict(int)
    for link, (_, _, ws) in zip(found.links, meta):
        if not ws[1]:
            continue
        for end in (link.a, link.b):
            best[end[:2]] = max(best[end[:2]], link.gbps)
            cables[end[:2]] += 1
    flagged = []
    for i, (link, (rec, p, ws)) in enumerate(zip(found.links, meta)):
        if not ws[1]:
            continue
        expected = usual_gbps
        ends_best = []
        for guid in (rec.guid, p.peer_guid):
            known = device(records[guid].devid) if guid in records else None
            if known:  # the device's own fastest rate (these are 4x ports): it can train no higher
                ends_best.append(max(4, int(ws[0][:-1])) * LANE_GBPS[known[1]])
        if len(ends_best) == 2:
            expected = min(expected, *ends_best)  # both ends known: what they can reach together
        else:
            for end in (link.a, link.b):
                if end[0] == "switch" or cables[end[:2]] > 1:  # a one-port HCA tells nothing of its own best
                    expected = min(expected, best[end[:2]])
            expected = min([expected] + ends_best)
        if link.gbps < usual_gbps and link.gbps >= expected and ends_best and link.gbps >= min(ends_best):
            slow_end = min((g for g in (rec.guid, p.peer_guid) if g in records and device(records[g].devid)),
                           key=lambda g: LANE_GBPS[device(records[g].devid)[1]])
            name = records[slow_end].desc or f"{records[slow_end].kind} {slow_end}"
            at_best.append(f"{name}: {device(records[slow_end].devid)[0]} (devid "
                           f"{records[slow_end].devid:#x}) reaches at most 4x{device(records[slow_end].devid)[1]}; "
                           f"it runs at {_speed_text(ws[0], ws[1], link.gbps)}, its best, not a bad cable")
        if link.gbps < expected:
            link.note = (f"degraded: trained at {_speed_text(ws[0], ws[1], link.gbps)}, below the fabric's "
                         f"{_speed_text(usual_ws[0], usual_ws[1], usual_gbps)} (ibnetdiscover line {p.line}); "
                         f"check the cable and both ports")
            flagged.append(i)
    return flagged


def import_ibnetdiscover(text: str, file: str, *, gpu: str = "H100", gpus_per_node: int | None = None,
                         link_gbps: float = DEFAULT_LINK_GBPS, name: str | None = None, compute: str | None = None,
                         host_rules: list | None = None, host_map_file: str = "--hosts"):
    """(document, lines for stderr). DesignerError (exit 65, FILE:LINE) on unreadable input."""
    parsed = parse_ibnetdiscover(text, file)
    imp = fabric_from_ib(parsed, file, link_gbps)
    host_rules, renames = apply_host_map(imp.fabric, host_rules, host_map_file, imp.host_guids)
    roles, why = classify_hosts(imp.fabric.hosts, compute, host_rules, host_map_file)
    if not imp.fabric.links:
        raise DesignerError([Problem("no cables between switches and servers in this output", file=file, line=1,
                                     fix=_FIX)])
    n_sw = len(imp.fabric.switches)
    description = (f"imported from ibnetdiscover output {file}: {n_sw} switch(es), {len(imp.fabric.hosts)} "
                   f"server(s), {len(imp.fabric.links)} cable(s)")
    if imp.degraded:
        description += f"; {len(imp.degraded)} cable(s) trained below the fabric's speed (see the links' notes)"
    doc, said = build_document(imp.fabric, gpu=gpu, gpus_per_node=gpus_per_node,
                               name=name or safe_id(file.rsplit("/", 1)[-1].rsplit(".", 1)[0]) or "imported",
                               description=description, roles=roles)
    messages = list(imp.warnings) + said
    messages += renames
    apart = describe(roles, why)
    if apart:
        messages.append(apart)
    unspeeded = sum(1 for r in parsed.records.values() for p in r.ports if not p.speed)
    known = sum(1 for r in parsed.records.values() if device(r.devid))
    messages.append(provenance(doc, said, rates="read" if not unspeeded else f"--link-gbps {link_gbps:g}",
                               roles_why=why, device_rates=known))
    for i in imp.degraded:
        link = doc.links[i]
        messages.append(f"{file}: warning: link {link.id} {link.a} <-> {link.b}: {link.note}")
    return doc, messages
