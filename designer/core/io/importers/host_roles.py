"""Which hosts on an imported fabric are GPU servers, and which are storage, login or service hosts.

A real fabric holds more than GPU servers: storage (BeeGFS, Lustre, GPFS, NFS, cache) hosts, login
nodes, the UFM host, the Slurm controller, each with one HCA. Imported as GPU servers they would
bring GPUs that do not exist and a `spread` placement would put a job on them. A host's role comes
from, first to last:

1. `--hosts MAP`: lines `PATTERN ROLE [NAME]` (shell-style pattern on the host name, or a GUID of
   one of its HCAs as ibnetdiscover prints it, plain or as the import named a redacted one; first
   match wins; NAME renames the one host it matches);
2. `--compute REGEX`: hosts whose name it matches (re.search) compute, the others are service hosts
   (storage or login when their name says so);
3. the host's name: its leading letters (`bee` of bee01, `login` of login01) against NAME_ROLES;
4. its HCA count: at most half of what most hosts have (1 where most have 8) is not a GPU server.

Rules 3 and 4 are guesses: they never leave a fabric without compute hosts, and the import says
each host they set apart and why.
"""
from __future__ import annotations

import fnmatch
import re
from collections import Counter

from ...model.elements import NODE_ROLES
from ...problems import EXIT_USAGE, DesignerError, Problem

# The leading letters of a host name that say what the host is (lower case).
NAME_ROLES = {
    **{stem: "storage" for stem in ("storage", "stor", "nfs", "lustre", "oss", "mds", "mgs", "bee", "beegfs",
                                    "gpfs", "nsd", "ess", "ddn", "vast", "weka", "cache", "dtn", "fileserver")},
    **{stem: "login" for stem in ("login", "head", "headnode", "frontend", "submit")},
    **{stem: "service" for stem in ("ufm", "opensm", "sm", "controller", "ctl", "ctld", "slurmctld", "slurm",
                                    "mgmt", "mgt", "admin", "master", "bcm", "monitor", "gateway")},
}
_STEM = re.compile(r"[A-Za-z]+")
MAP_FIX = ("write one rule a line: a host-name pattern or an HCA GUID, a role, and optionally a new name, e.g. "
           "`bee* storage`, `gpu[0-9]* compute` or `0x0002c903003421b0 compute gpu17`")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
_GUID = re.compile(r"(?:0x|[SH]-)?([0-9a-fA-F]{8,16})")


def read_host_map(text: str, file: str) -> list[tuple]:
    """(pattern, role, line[, new name]) of each rule; exit 65 with FILE:LINE on a line that is not one."""
    rules = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if len(words) not in (2, 3) or words[1].lower() not in NODE_ROLES:
            raise DesignerError([Problem(f"{line!r} is not `PATTERN ROLE [NAME]` (ROLE one of "
                                         f"{', '.join(NODE_ROLES)})", file=file, line=number, fix=MAP_FIX)])
        if len(words) == 3 and not _NAME.fullmatch(words[2]):
            raise DesignerError([Problem(f"{words[2]!r} cannot name a host (letters, digits, '_', '.', '-')",
                                         file=file, line=number, column=raw.index(words[2]) + 1, fix=MAP_FIX)])
        rules.append((words[0], words[1].lower(), number) + ((words[2],) if len(words) == 3 else ()))
    return rules


def guid_key(text: str) -> str | None:
    """A GUID as one form (lower-case hex, no 0x, no leading zeros), or None when `text` is none."""
    m = _GUID.fullmatch(text)
    return m.group(1).lower().lstrip("0") or "0" if m else None


def rename_hosts(hosts: dict[str, list[str]], rules: list[tuple] | None, map_file: str) -> tuple[dict[str, str], list]:
    """({old name: new name} for the hosts a rule renames or names by GUID, the rules with each GUID
    pattern replaced by the (new) name of the host it matches). `hosts`: name -> its HCAs' GUIDs.
    Exit 65 at the MAP line when a rule would give two hosts one name."""
    if not rules:
        return {}, rules
    by_guid = {}
    for host, guids in hosts.items():
        for guid in guids:
            by_guid.setdefault(guid_key(guid), host)
    def hosts_of(glob: str) -> list[str]:
        host = by_guid.get(guid_key(glob)) if not any(c in glob for c in "*?[") else None
        return [host] if host else [h for h in hosts if fnmatch.fnmatchcase(h, glob)]

    renamed: dict[str, str] = {}
    for glob, role, line, *new in rules:
        matched = hosts_of(glob)
        if not new or not matched:
            continue
        if len(matched) > 1:
            raise DesignerError([Problem(f"{glob!r} matches {len(matched)} hosts ({', '.join(matched[:3])}, ...): "
                                         "one name cannot go to several", file=map_file, line=line,
                                         fix="give the host's GUID or its exact name to rename it")])
        if matched[0] in renamed:
            continue  # first match wins
        if new[0] in (set(hosts) - {matched[0]} - set(renamed)) | set(renamed.values()):
            raise DesignerError([Problem(f"{new[0]!r} is already the name of another host", file=map_file, line=line,
                                         fix="give each host its own name")])
        renamed[matched[0]] = new[0]
    # every rule as the exact (new) names of the hosts it matches, in the map's order
    out = [(renamed.get(h, h), role, line) for glob, role, line, *_ in rules for h in hosts_of(glob)]
    return renamed, out


def compile_compute(pattern: str | None):
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise DesignerError([Problem(f"--compute {pattern!r} is not a regular expression: {exc}", "--compute",
                                     fix="give a Python regular expression matching the GPU servers' names, "
                                         "e.g. '^(gpu|node)[0-9]+'")], EXIT_USAGE) from None


def _by_name(host: str) -> str | None:
    m = _STEM.match(host)
    return NAME_ROLES.get(m.group(0).lower()) if m else None


def classify_hosts(hcas: dict[str, int], compute: str | None = None,
                   rules: list[tuple[str, str, int]] | None = None,
                   map_file: str = "--hosts") -> tuple[dict[str, str], dict[str, str]]:
    """(role of each host, why: for each host that is not compute, or that a rule named)."""
    pattern = compile_compute(compute)
    roles: dict[str, str] = {}
    why: dict[str, str] = {}
    for host in hcas:
        for glob, role, line in rules or []:
            if fnmatch.fnmatchcase(host, glob):
                roles[host], why[host] = role, f"{map_file}:{line}"
                break
        else:
            if pattern is not None:
                if pattern.search(host):
                    roles[host] = "compute"
                else:
                    named = _by_name(host)
                    roles[host] = named if named in ("storage", "login") else "service"
                    why[host] = "--compute does not match it"
    rest = [h for h in hcas if h not in roles]
    guessed: dict[str, tuple[str, str]] = {}
    for host in rest:
        named = _by_name(host)
        if named:
            guessed[host] = (named, "its name")
    counts = Counter(hcas[h] for h in rest)
    usual = max(counts, key=lambda c: (counts[c], c)) if counts else 0
    if usual >= 2:
        for host in rest:
            if host not in guessed and hcas[host] * 2 <= usual:
                guessed[host] = ("service", f"{hcas[host]} HCA port(s) where most hosts have {usual}")
    compute_left = sum(1 for r in roles.values() if r == "compute") + len(rest) - len(guessed)
    if compute_left > 0:  # a guess never leaves the fabric without GPU servers
        for host, (role, reason) in guessed.items():
            roles[host], why[host] = role, reason
    for host in rest:
        roles.setdefault(host, "compute")
    return roles, why


def apply_host_map(found, rules: list[tuple] | None, map_file: str,
                   guids: dict[str, list[str]] | None = None) -> tuple[list | None, list[str]]:
    """The renames of a --hosts MAP applied to an imported fabric (a FoundFabric: its hosts and its
    cables' ends): (the rules as classify_hosts takes them, the line for stderr, if any). `guids`: each
    host's HCA GUIDs where the input gives them; a host named by a GUID (sharp_cmd's) is its own."""
    from .fabric import rename_found_hosts

    known = {h: list((guids or {}).get(h, [])) + ([h] if _GUID.fullmatch(h) else []) for h in found.hosts}
    renamed, rules = rename_hosts(known, rules, map_file)
    rename_found_hosts(found, renamed)
    if not renamed:
        return rules, []
    shown = ", ".join(f"{old} -> {new}" for old, new in list(renamed.items())[:6])
    return rules, [f"{map_file}: renamed {len(renamed)} host(s): {shown}{', ...' if len(renamed) > 6 else ''}"]


def describe(roles: dict[str, str], why: dict[str, str], limit: int = 12) -> str | None:
    """One line for the import summary: the hosts that are not GPU servers, each with its reason."""
    others = [h for h, r in roles.items() if r != "compute"]
    if not others:
        return None
    shown = ", ".join(f"{h} ({roles[h]}: {why.get(h, 'named')})" for h in others[:limit])
    more = f", and {len(others) - limit} more" if len(others) > limit else ""
    return (f"{len(others)} host(s) are not GPU servers: imported as endpoints no job is placed on "
            f"(set --compute REGEX or --hosts MAP to change): {shown}{more}")
