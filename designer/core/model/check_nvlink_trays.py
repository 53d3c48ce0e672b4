"""Checks of NVLink switch trays (switches of fabric "nvlink"): each belongs to one NVLink domain.

A tray names its domain (nvlink_domain), that domain has servers, and every server cabled to the
tray is in it: a domain's GPUs are then exactly its compute trays' GPUs, whatever the cables say.
"""
from __future__ import annotations

from ..problems import Problem
from .document import Document
from .elements import split_endpoint


def nvlink_tray_problems(doc: Document) -> list[Problem]:
    out: list[Problem] = []
    cabled: dict[str, list[str]] = {}  # tray id -> servers cabled to it, file order
    trays = {s.id for s in doc.switches if s.fabric == "nvlink"}
    # the servers' domains, read only where there are trays (most fabrics: the switches' fields alone)
    node_domain = {n.id: n.nvlink_domain for n in doc.nodes} if trays else {}
    domains = {d for d in node_domain.values() if d}
    shown = ", ".join(sorted(domains)[:4]) + (", ..." if len(domains) > 4 else "")
    for link in doc.links if trays else ():  # no trays (most fabrics): no pass over the links (~60 ms at 16k)
        a, b = split_endpoint(link.a)[0], split_endpoint(link.b)[0]
        for tray, other in ((a, b), (b, a)):
            if tray in trays and other in node_domain:
                cabled.setdefault(tray, []).append(other)
    for i, sw in enumerate(doc.switches):
        where = f"spec.switches[{i}].nvlink_domain"
        if (sw.fabric == "nvlink") != (sw.tier == "nvlink"):  # a tray is no Clos tier; a leaf no tray
            out.append(Problem(f"switch {sw.id} has fabric {sw.fabric} but tier {sw.tier}", f"spec.switches[{i}].tier",
                               element=sw.id, fix="use tier: nvlink" if sw.fabric == "nvlink"
                               else "use tier leaf, spine or core (nvlink is for NVLink switch trays)"))
        if sw.fabric != "nvlink":
            if sw.nvlink_domain is not None:
                out.append(Problem(f"{sw.fabric} {sw.tier} switch {sw.id} names NVLink domain {sw.nvlink_domain!r}; "
                                   "only NVLink switch trays belong to a domain", where, element=sw.id,
                                   fix="remove nvlink_domain, or make it an NVLink switch tray (fabric: nvlink)"))
            continue
        servers = cabled.get(sw.id, [])
        theirs = sorted({node_domain[s] or f"its own ({s})" for s in servers})
        # the domain the tray should name: that of the servers cabled to it (the most common one)
        likely = max(theirs, key=lambda d: sum((node_domain[s] or f"its own ({s})") == d for s in servers),
                     default=None)
        if sw.nvlink_domain is None:
            out.append(Problem(f"NVLink switch tray {sw.id} names no NVLink domain", where, element=sw.id,
                               fix=f"set nvlink_domain: {likely}" if likely and likely in domains
                               else f"set nvlink_domain to the domain of its trays ({shown or 'none yet'})"))
            continue
        if sw.nvlink_domain not in domains:
            out.append(Problem(f"NVLink switch tray {sw.id} names NVLink domain {sw.nvlink_domain!r}, which no "
                               "server is in", where, element=sw.id,
                               fix=f"set nvlink_domain: {likely}" if likely and likely in domains
                               else f"use a domain the servers name ({shown or 'none'}), or remove the tray"))
            continue
        strangers = [s for s in servers if node_domain[s] != sw.nvlink_domain]
        if strangers:
            other = node_domain[strangers[0]] or "its own domain"
            out.append(Problem(f"NVLink switch tray {sw.id} of domain {sw.nvlink_domain!r} is cabled to "
                               f"{strangers[0]} of {other}"
                               + (f" (and {len(strangers) - 1} more)" if len(strangers) > 1 else "")
                               + ": a tray belongs to one domain", where, element=sw.id,
                               fix=f"cable {strangers[0]} to a switch tray of {other}, or move it into "
                                   f"{sw.nvlink_domain!r}"))
    return out
