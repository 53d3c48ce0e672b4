"""The checks of the parts catalog's YAML files: known keys and kinds, sane numbers, one source per figure.

Kept apart from catalog.py, which builds the typed entries, so that each module has one job.
Each check takes one raw entry (a mapping read from resources/catalog/*.yaml) and returns the
problems found, each naming the file, the entry and the key, and saying how to fix it.
"""
from __future__ import annotations

import math
from typing import Any

from ..problems import Problem

# Element types a tensor-core peak is given for (dense TFLOP/s): peak_tflops keys.
PRECISIONS = ("bf16", "fp16", "fp8", "fp6", "fp4")

# Low-precision formats a tensor core may support (accelerator `tensor_formats`), each with the
# element type whose peak it runs at. MX formats (OCP Microscaling: 32-element blocks, E8M0
# scale) and NVFP4 (16-element blocks, E4M3 scale) run at the rate of their element type; the
# block scaling is done by the tensor core, which is why a part without it cannot run them.
TENSOR_FORMATS = {
    "bf16": "bf16", "fp16": "fp16",
    "fp8": "fp8", "mxfp8": "fp8",
    "fp6": "fp6", "mxfp6": "fp6",
    "fp4": "fp4", "mxfp4": "fp4", "nvfp4": "fp4",
}

SCALE_UP_KINDS = ("nvswitch", "nvlink", "pcie", "infinity-fabric")
NIC_KINDS = ("infiniband", "ethernet")
# nvlink: a scale-up switch (NVLink switch tray); the fat-tree generator uses only the others.
SWITCH_KINDS = ("infiniband", "ethernet", "nvlink")

# The figures of each kind of entry; every one present needs a `sources` key of the same name.
ACCELERATOR_FIGURES = ("peak_tflops", "best_gemm_tflops", "measured_gemm_tflops", "tensor_formats", "hbm_gib",
                       "hbm_tbps", "scale_up_gbps", "max_scale_up_domain", "max_per_node", "tdp_w")
NIC_FIGURES = ("gbps", "achievable_gBps")
SWITCH_FIGURES = ("radix", "port_gbps", "latency_us", "sharp", "switch_chips", "links_per_gpu", "max_domain_gpus")

_REQUIRED = {
    "accelerators": ("peak_tflops", "best_gemm_tflops", "hbm_gib", "hbm_tbps", "scale_up", "scale_up_gbps"),
    "nics": ("kind", "gbps"),
    "switches": ("kind", "radix", "port_gbps", "latency_us"),
    "models": ("values",),
}


class _Entry:
    """Collects the problems of one entry, each located at `<table>[i] (<name>).<key>`."""

    def __init__(self, table: str, index: int, entry: dict, file: str):
        self.table, self.index, self.entry, self.file = table, index, entry, file
        self.problems: list[Problem] = []

    def add(self, key: str, message: str, fix: str) -> None:
        path = f"{self.table}[{self.index}]" + (f".{key}" if key else "")
        self.problems.append(Problem(f"{self.entry.get('name', '?')}: {message}", path=path, fix=fix, file=self.file))

    def number(self, key: str, value: Any, *, integer: bool = False, minimum: float = 0.0) -> bool:
        ok = (isinstance(value, int) if integer else isinstance(value, (int, float))) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value <= minimum:
            kind = "a whole number" if integer else "a number"
            self.add(key, f"{value!r} is not {kind} above {minimum:g}", f"give {key} as {kind} above {minimum:g}")
            return False
        return True


def check_entry(table: str, index: int, entry: Any, file: str) -> list[Problem]:
    """The problems of one entry of `table` (accelerators, nics, switches or models)."""
    if not isinstance(entry, dict) or "name" not in entry:
        return [Problem(f"an entry of {table} has no name", path=f"{table}[{index}]", file=file,
                        fix="start each entry with `- name: ...`")]
    e = _Entry(table, index, entry, file)
    missing = [k for k in _REQUIRED[table] if k not in entry]
    for key in missing:
        e.add(key, f"{key} is missing", f"add {key} (see the header comment of {table}.yaml)")
    if missing:
        return e.problems
    if not isinstance(entry.get("aliases", []), list):
        e.add("aliases", "aliases is not a list", "write aliases: [name, ...]")
    {"accelerators": _accelerator, "nics": _nic, "switches": _switch, "models": _model}[table](e)
    return e.problems


def _sources(e: _Entry, figures: tuple[str, ...]) -> None:
    sources = e.entry.get("sources") or {}
    if not isinstance(sources, dict):
        e.add("sources", "sources is not a mapping", "give one `figure: where it comes from` per figure")
        return
    for key in figures:
        if key in e.entry and not str(sources.get(key) or "").strip():
            e.add(f"sources.{key}", f"{key} has no source", f"add sources.{key}: where the figure comes from")


def _accelerator(e: _Entry) -> None:
    a = e.entry
    peaks = a["peak_tflops"]
    if not isinstance(peaks, dict) or not peaks:
        e.add("peak_tflops", "peak_tflops is not a mapping of precisions", "e.g. peak_tflops: {bf16: 989.4, fp8: 1978.9}")
        peaks = {}
    for precision, value in peaks.items():
        if precision not in PRECISIONS:
            e.add(f"peak_tflops.{precision}", f"unknown precision {precision!r}", f"use one of {', '.join(PRECISIONS)}")
        else:
            e.number(f"peak_tflops.{precision}", value)
    if "bf16" not in peaks:
        e.add("peak_tflops", "peak_tflops has no bf16 entry", "add the dense BF16 tensor peak")
    if e.number("best_gemm_tflops", a["best_gemm_tflops"]) and isinstance(peaks.get("bf16"), (int, float)):
        if a["best_gemm_tflops"] > peaks["bf16"]:
            e.add("best_gemm_tflops", "a measured GEMM above the dense bf16 peak", "check both figures (sparse peak?)")
    measured = a.get("measured_gemm_tflops") or {}
    if not isinstance(measured, dict):
        e.add("measured_gemm_tflops", "measured_gemm_tflops is not a mapping", "e.g. measured_gemm_tflops: {fp8: 1402.6}")
        measured = {}
    for precision, value in measured.items():
        key = f"measured_gemm_tflops.{precision}"
        if precision not in PRECISIONS:
            e.add(key, f"unknown precision {precision!r}", f"use one of {', '.join(PRECISIONS)}")
        elif precision not in peaks:
            e.add(key, f"a {precision} measurement without a {precision} peak", f"add peak_tflops.{precision}")
        elif e.number(key, value) and isinstance(peaks[precision], (int, float)) and value > peaks[precision]:
            e.add(key, f"a measured GEMM above the dense {precision} peak", "check both figures (sparse peak?)")
    if "bf16" in measured and measured["bf16"] != a["best_gemm_tflops"]:
        e.add("measured_gemm_tflops.bf16", "differs from best_gemm_tflops", "keep the BF16 figure in best_gemm_tflops only")
    formats = a.get("tensor_formats", [])
    if not isinstance(formats, list):
        e.add("tensor_formats", "tensor_formats is not a list", "e.g. tensor_formats: [bf16, fp16, fp8]")
        formats = []
    for fmt in formats:
        if fmt not in TENSOR_FORMATS:
            e.add("tensor_formats", f"unknown tensor format {fmt!r}", f"use some of {', '.join(TENSOR_FORMATS)}")
        elif TENSOR_FORMATS[fmt] not in peaks:
            e.add("tensor_formats", f"{fmt} runs at the {TENSOR_FORMATS[fmt]} rate, which has no peak",
                  f"add peak_tflops.{TENSOR_FORMATS[fmt]}")
    for key in ("hbm_gib", "hbm_tbps", "scale_up_gbps"):
        e.number(key, a[key])
    for key in ("max_per_node", "max_scale_up_domain"):
        if key in a:
            e.number(key, a[key], integer=True)
    if "tdp_w" in a:
        e.number("tdp_w", a["tdp_w"])
    if "sustained_clock_from" in a:  # the sustained clock now comes from the die's power model
        e.add("sustained_clock_from", "sustained_clock_from is no longer read: the sustained clock follows from "
              "the die's power model and the part's tdp_w",
              "give calibration.gemm_power_w_per_pflops3 of the same die (as the other part's entry) instead")
    if a["scale_up"] not in SCALE_UP_KINDS:
        e.add("scale_up", f"unknown scale-up fabric {a['scale_up']!r}", f"use one of {', '.join(SCALE_UP_KINDS)}")
    domain, per_node = a.get("max_scale_up_domain"), a.get("max_per_node", 8)
    if isinstance(domain, int) and isinstance(per_node, int) and per_node > 0 and domain % per_node:
        e.add("max_scale_up_domain", f"{domain} GPUs is not a whole number of {per_node}-GPU servers",
              "give a multiple of max_per_node")
    _sources(e, ACCELERATOR_FIGURES)


def _nic(e: _Entry) -> None:
    n = e.entry
    if n["kind"] not in NIC_KINDS:
        e.add("kind", f"unknown NIC kind {n['kind']!r}", f"use one of {', '.join(NIC_KINDS)}")
    if e.number("gbps", n["gbps"]) and "achievable_gBps" in n and e.number("achievable_gBps", n["achievable_gBps"]):
        if n["achievable_gBps"] > n["gbps"] / 8:
            e.add("achievable_gBps", "above the line rate (gbps / 8)", "give gigaBYTES per second per direction")
    if not isinstance(n.get("default", True), bool):
        e.add("default", "default is not true or false", "write default: false for a NIC the generator never picks")
    transports = ("infiniband", "roce", "spectrum-x", "srd", "spray")  # catalog.NIC_TRANSPORTS
    if "transport" in n and n["transport"] not in transports:
        e.add("transport", f"unknown transport {n['transport']!r}", f"use one of {', '.join(transports)}")
    _sources(e, NIC_FIGURES)


def _switch(e: _Entry) -> None:
    s = e.entry
    if "routing" in s and s["routing"] not in ("ecmp", "static", "adaptive", "scheduled"):  # elements.SWITCH_ROUTINGS
        e.add("routing", f"unknown routing {s['routing']!r}", "use ecmp, static, adaptive or scheduled")
    if not isinstance(s.get("default", True), bool):
        e.add("default", "default is not true or false", "write default: false for a switch the generator never picks")
    if s["kind"] not in SWITCH_KINDS:
        e.add("kind", f"unknown switch kind {s['kind']!r}", f"use one of {', '.join(SWITCH_KINDS)}")
    e.number("radix", s["radix"], integer=True)
    e.number("port_gbps", s["port_gbps"])
    e.number("latency_us", s["latency_us"])
    for key in ("switch_chips", "links_per_gpu", "max_domain_gpus"):
        if key in s:
            e.number(key, s[key], integer=True)
    if s["kind"] == "nvlink" and "links_per_gpu" not in s:
        e.add("links_per_gpu", "an NVLink switch needs links_per_gpu", "add the NVLink links each GPU has")
    _sources(e, SWITCH_FIGURES)


def _model(e: _Entry) -> None:
    if not isinstance(e.entry["values"], dict):
        e.add("values", "values is not a mapping", "give the workload keys of docs/contract.md section 3")
    if not e.entry.get("sources"):
        e.add("sources", "a preset without sources", "say where its figures come from")


def check_unique(table: str, entries: list[dict], file: str) -> list[Problem]:
    """Names and aliases unique within a table, case-insensitively; one default NIC per (kind, gbps)."""
    out, seen, defaults = [], {}, {}
    for i, entry in enumerate(entries):
        for name in [entry.get("name")] + list(entry.get("aliases") or []):
            key = str(name).lower()
            if key in seen and seen[key] != entry.get("name"):
                out.append(Problem(f"{name!r} names both {seen[key]} and {entry.get('name')}", path=f"{table}[{i}]",
                                   file=file, fix="rename one or drop the alias"))
            seen.setdefault(key, entry.get("name"))
        if table == "nics" and entry.get("default", True):
            pair = (entry.get("kind"), entry.get("gbps"))
            if pair in defaults:
                out.append(Problem(f"{entry.get('name')} and {defaults[pair]} are both the default {pair[0]} NIC at "
                                   f"{pair[1]} Gb/s", path=f"{table}[{i}].default", file=file,
                                   fix="set default: false on the one the generator should not pick"))
            defaults.setdefault(pair, entry.get("name"))
    return out
