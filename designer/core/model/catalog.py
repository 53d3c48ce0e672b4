"""The parts catalog: accelerators, NICs, switches and model presets, each figure sourced.

Read from resources/catalog/*.yaml (shipped with the package). Every entry carries a
`sources` mapping from its figures to where they come from; `designer catalog` prints them.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..by_name import NEW, FieldsByName, Frozen
from ..problems import DesignerError, Problem, close_matches
from .catalog_checks import TENSOR_FORMATS, check_entry, check_unique
from .catalog_entries import EntryText, NamedEntries, entry_texts

def _resources() -> str:
    """resources/: beside the package in a checkout or editable install, else where a wheel
    put its data files (share/designer/resources), or $DESIGNER_RESOURCES. A path as text (os.path):
    what reads the catalog at every start imports no pathlib (~5 ms of each command)."""
    import sys

    checkout = os.path.realpath(__file__)
    for _ in range(4):  # designer/core/model/catalog.py -> the checkout's root
        checkout = os.path.dirname(checkout)
    beside = os.path.join(checkout, "resources")
    candidates = [os.environ.get("DESIGNER_RESOURCES"), beside,
                  os.path.join(sys.prefix, "share", "designer", "resources")]
    for c in candidates:
        if c and os.path.isdir(os.path.join(c, "catalog")):
            return os.path.normpath(c)
    return beside


RESOURCES = _resources()
CATALOG_DIR = os.path.join(RESOURCES, "catalog")


# The entries are equal only to themselves (eq=False: no generated __eq__ and __hash__ to compile at
# every start): a catalog holds one object per entry, and what compares parts compares their names.
# init=False: its __init__ takes the fields by name (core/by_name.py), not a generated one of 17 parameters;
# frozen through core/by_name.Frozen, not generated __setattr__ and __delattr__ (so for the entries below).
@dataclass(eq=False, repr=False, init=False)
class Accelerator(Frozen):
    """A GPU model of the catalog: its peak rates, memory and scale-up link, with sources."""
    name: str
    vendor: str
    aliases: tuple[str, ...]
    peak_tflops: dict[str, float]  # dense, per precision: bf16, fp16, fp8 (+ fp6, fp4 where the tensor cores have them)
    best_gemm_tflops: float  # measured best-shape BF16 GEMM
    hbm_gib: float
    hbm_tbps: float  # terabytes per second
    scale_up: str  # nvswitch | nvlink | pcie | infinity-fabric
    scale_up_gbps: float  # per GPU, per direction
    max_per_node: int
    tdp_w: float
    sources: dict[str, str] = field(default_factory=dict)
    calibration: dict[str, float | bool] = field(default_factory=dict)  # engine constants for this kind
    # Formats the tensor cores run natively (catalog_checks.TENSOR_FORMATS); empty = not stated.
    tensor_formats: tuple[str, ...] = ()
    # Measured best-shape GEMM per precision (always has bf16 = best_gemm_tflops).
    measured_gemm_tflops: dict[str, float] = field(default_factory=dict)
    scale_up_generation: str = ""  # e.g. "NVLink 5", "Infinity Fabric 4"
    max_scale_up_domain: int = 0  # most GPUs one scale-up domain holds (72 for NVL72); 0 = max_per_node

    def peak_for(self, precision: str) -> float:
        """Dense peak for a precision or a tensor format (mxfp8 runs at the fp8 rate, nvfp4 at fp4)."""
        return self.peak_tflops[TENSOR_FORMATS.get(precision, precision)]

    def supports(self, tensor_format: str) -> bool:
        """Whether the tensor cores run this format natively (e.g. mxfp8 on Blackwell, not on H100)."""
        return tensor_format in self.tensor_formats

    def gemm_efficiency(self, precision: str) -> float | None:
        """Measured best-shape GEMM / dense peak for a precision, or None where none is published."""
        element = TENSOR_FORMATS.get(precision, precision)
        measured = self.measured_gemm_tflops.get(element)
        return measured / self.peak_tflops[element] if measured and self.peak_tflops.get(element) else None

    @property
    def scale_up_domain_max(self) -> int:
        return self.max_scale_up_domain or self.max_per_node

    def __init__(self, **values):
        _ACCELERATOR_INIT.set(self, values)


_ACCELERATOR_INIT = FieldsByName(Accelerator)  # its __init__


# init=False: its __init__ is written, not generated at start (as SwitchModel's).
@dataclass(eq=False, repr=False, init=False)
class Nic(Frozen):
    """A network card model of the catalog: line rate, achievable bandwidth and transport, with sources."""
    name: str
    kind: str  # infiniband | ethernet
    gbps: float
    aliases: tuple[str, ...]
    sources: dict[str, str] = field(default_factory=dict)
    achievable_gbytes_per_s: float | None = None  # measured (or estimated) per NIC per direction, GB/s
    default: bool = True  # the NIC the generator picks for its (kind, gbps); false for e.g. AWS EFA
    # how its traffic crosses the fabric (NIC_TRANSPORTS): the engine's up-link sharing, NIC efficiency
    # and per-message latency follow it
    transport: str = "infiniband"

    def __init__(self, name: str, kind: str, gbps: float, aliases: tuple[str, ...], sources: dict[str, str] = NEW,
                 achievable_gbytes_per_s: float | None = None, default: bool = True,
                 transport: str = "infiniband") -> None:
        vars(self).update(name=name, kind=kind, gbps=gbps, aliases=aliases, sources={} if sources is NEW else sources,
                          achievable_gbytes_per_s=achievable_gbytes_per_s, default=default, transport=transport)


# infiniband: adaptive routing in the switches; roce: RoCEv2 hashed onto one path per flow (ECMP);
# spectrum-x: RoCE with per-packet adaptive routing and reordering in the SuperNIC; srd: AWS EFA's
# Scalable Reliable Datagram, sprayed over many paths, delivered out of order; spray: per-packet
# multipathing with reordering in the NIC (AMD Pollara, Ultra Ethernet)
NIC_TRANSPORTS = ("infiniband", "roce", "spectrum-x", "srd", "spray")


@dataclass(eq=False, repr=False, init=False)
class SwitchModel(Frozen):
    """A switch model of the catalog (Ethernet, InfiniBand or NVLink tray): radix, port rate, latency."""
    name: str
    kind: str  # infiniband | ethernet | nvlink (a scale-up switch tray; not used by the fat-tree generator)
    radix: int
    port_gbps: float
    latency_us: float
    sharp: bool  # in-network reduction: InfiniBand SHARP, or NVLink SHARP (NVLS) for kind nvlink
    aliases: tuple[str, ...]
    sources: dict[str, str] = field(default_factory=dict)
    switch_chips: int | None = None  # switch ASICs in the unit (an NVLink switch tray has 2)
    links_per_gpu: int | None = None  # nvlink: NVLink links per GPU, spread one per switch chip
    max_domain_gpus: int | None = None  # nvlink: GPUs of the largest domain these trays build
    # ethernet: adaptive (per-packet adaptive routing for NICs that reorder: Spectrum-4 with Spectrum-X
    # SuperNICs) or ecmp (one hashed path per flow); InfiniBand switches route adaptively
    routing: str = "ecmp"
    default: bool = True  # false: taken only when named (generate --switch-model), never by fabric and speed

    def __init__(self, name: str, kind: str, radix: int, port_gbps: float, latency_us: float, sharp: bool,
                 aliases: tuple[str, ...], sources: dict[str, str] = NEW, switch_chips: int | None = None,
                 links_per_gpu: int | None = None, max_domain_gpus: int | None = None, routing: str = "ecmp",
                 default: bool = True) -> None:
        vars(self).update(name=name, kind=kind, radix=radix, port_gbps=port_gbps, latency_us=latency_us, sharp=sharp,
                          aliases=aliases, sources={} if sources is NEW else sources, switch_chips=switch_chips,
                          links_per_gpu=links_per_gpu, max_domain_gpus=max_domain_gpus, routing=routing,
                          default=default)

    def trays_for(self, domain_gpus: int) -> int:
        """Units needed for a non-blocking NVLink domain of `domain_gpus` GPUs (kind nvlink)."""
        if not self.links_per_gpu:
            raise ValueError(f"{self.name} is not an NVLink switch")
        return -(-domain_gpus * self.links_per_gpu // self.radix)



# init=False: its __init__ takes the fields by name (core/by_name.py), not a generated one of 5 parameters.
@dataclass(eq=False, repr=False, init=False)
class ModelPreset(Frozen):
    """A built-in model (Llama, GPT, ...): the workload values a design's `preset` key fills in."""
    name: str
    description: str
    values: dict[str, Any]  # workload keys of docs/contract.md section 3
    aliases: tuple[str, ...] = ()
    sources: dict[str, str] = field(default_factory=dict)

    def __init__(self, **values):
        _MODEL_PRESET_INIT.set(self, values)


_MODEL_PRESET_INIT = FieldsByName(ModelPreset)  # its __init__


@dataclass(eq=False, repr=False, init=False)  # its __init__ written: dataclass would compile one at start
class Catalog:
    """The parts and models a design can name, looked up by name or alias (each kind a dict, or a
    catalog_entries.NamedEntries that reads an entry when it is first asked for)."""
    accelerators: Mapping[str, Accelerator]
    nics: Mapping[str, Nic]
    switches: Mapping[str, SwitchModel]
    models: Mapping[str, ModelPreset]
    _aliases: dict[str, dict[str, str]] = field(default_factory=dict)
    _presets: Mapping[str, ModelPreset] | None = field(default=None, init=False, repr=False)  # presets()

    def __init__(self, accelerators: Mapping[str, Accelerator], nics: Mapping[str, Nic],
                 switches: Mapping[str, SwitchModel], models: Mapping[str, ModelPreset],
                 _aliases: dict[str, dict[str, str]] = NEW) -> None:
        self.accelerators, self.nics, self.switches, self.models = accelerators, nics, switches, models
        self._aliases = {} if _aliases is NEW else _aliases
        self._presets = None
        self.__post_init__()

    def __post_init__(self) -> None:
        for kind in ("accelerators", "nics", "switches", "models"):
            table: dict[str, str] = {}
            entries = getattr(self, kind)
            aliases_of = getattr(entries, "aliases_of", None)  # a NamedEntries knows them unread
            for name in entries:
                table[name.lower()] = name
                for alias in aliases_of(name) if aliases_of else getattr(entries[name], "aliases", ()):
                    table[alias.lower()] = name
            self._aliases[kind] = table

    def resolve(self, kind: str, name: str) -> str | None:
        """The canonical name for a name or alias (case-insensitive), or None."""
        return self._aliases[kind].get(str(name).lower())

    def names(self, kind: str) -> list[str]:
        return sorted(getattr(self, kind))

    def suggest(self, kind: str, name: str) -> str:
        canonical = []
        for guess in close_matches(str(name), list(self._aliases[kind]), n=6):
            if self._aliases[kind][guess] not in canonical:
                canonical.append(self._aliases[kind][guess])
        if canonical:
            return "did you mean " + " or ".join(canonical[:2]) + "?"
        return "known: " + ", ".join(self.names(kind))

    def _get(self, kind: str, name: str):
        canonical = self.resolve(kind, name)
        if canonical is None:
            raise KeyError(name)
        return getattr(self, kind)[canonical]

    def accelerator(self, name: str) -> Accelerator:
        return self._get("accelerators", name)

    def nic(self, name: str) -> Nic:
        return self._get("nics", name)

    def switch(self, name: str) -> SwitchModel:
        return self._get("switches", name)

    def model(self, name: str) -> ModelPreset:
        return self._get("models", name)

    def nic_for(self, kind: str, gbps: float) -> Nic | None:
        """The NIC the generator uses for this fabric and speed (a `default` one; EFA is not)."""
        matches = [n for n in self.nics.values() if n.kind == kind and n.gbps == gbps]
        defaults = [n for n in matches if n.default]
        return (defaults or matches or [None])[0]

    def switch_for(self, kind: str, port_gbps: float) -> SwitchModel | None:
        """The catalog switch of this fabric whose native port speed is `port_gbps` (a default one)."""
        matches = [s for s in self.switches.values() if s.kind == kind and s.port_gbps == port_gbps and s.default]
        return matches[0] if matches else None

    def presets(self) -> Mapping[str, ModelPreset]:
        """Presets keyed by every name and alias (lower-case) and by their names, for workload
        resolution; a preset is read when it is looked up. Made once, as the aliases are (every plan
        resolves its workload with it), and shared: read it, do not edit it."""
        if self._presets is None:
            self._presets = _Presets(self._aliases["models"], self.models)
        return self._presets


class _Presets(Mapping):
    """The catalog's presets under each of their keys, each looked up in the catalog when asked for."""

    def __init__(self, names: dict[str, str], models: Mapping[str, ModelPreset]):
        self._names = {**names, **{name: name for name in models}}  # key -> preset name
        self._models = models

    def __getitem__(self, key: str) -> ModelPreset:
        return self._models[self._names[key]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _read(path: str | os.PathLike) -> dict:
    with open(path, encoding="utf-8") as fh:
        try:
            data = _data(yaml.compose(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise DesignerError([Problem(f"not valid YAML: {getattr(exc, 'problem', None) or exc}", file=str(path),
                                         line=mark.line + 1 if mark else None,
                                         column=mark.column + 1 if mark else None,
                                         fix="quote a value that contains ': ' or use a >- block")]) from None
    if not isinstance(data, dict):
        raise DesignerError([Problem("catalog file is not a mapping", file=str(path))])
    return data


_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"


class _NotATree(Exception):
    """The composed file is more than a tree of mappings, lists and scalars."""


def _data(root: yaml.Node | None) -> object:
    """What the safe loader makes of a composed file. A catalog file is a tree of mappings, lists and
    scalars, built here in one pass: the safe loader's general construction (a generator per mapping and
    list, made for data that refers to itself) took 40 % of reading the catalog, which every command
    does. Anything else (a node shared through an alias, a merge key, a tag such as !!set, a key that
    is not a scalar) is built by the safe loader itself."""
    constructor = yaml.constructor.SafeConstructor()
    seen: set[int] = set()  # the nodes built: one met again is an alias's

    def build(node):
        if id(node) in seen:
            raise _NotATree
        seen.add(id(node))
        tag = node.tag
        if isinstance(node, yaml.ScalarNode):
            return node.value if tag == _STR else constructor.construct_object(node)
        if tag == _MAP:
            if any(not isinstance(key, yaml.ScalarNode) or key.tag == _TAG + "merge" for key, _ in node.value):
                raise _NotATree
            return {build(key): build(value) for key, value in node.value}
        if tag == _SEQ:
            return [build(item) for item in node.value]
        raise _NotATree

    if root is None:
        return None
    try:
        return build(root)
    except _NotATree:
        return yaml.constructor.SafeConstructor().construct_document(root)


def _entries(path: str | os.PathLike, key: str) -> list[dict]:
    """The entries of one catalog file, checked (catalog_checks); DesignerError lists every problem."""
    if not os.path.exists(path):
        return []
    items = _read(path).get(key) or []
    if not isinstance(items, list):
        raise DesignerError([Problem(f"{key} is not a list of entries", path=key, file=str(path))])
    problems = [p for i, item in enumerate(items) for p in check_entry(key, i, item, str(path))]
    problems += check_unique(key, items, str(path))
    if problems:
        raise DesignerError(problems)
    return items


def _accelerator(e: dict) -> Accelerator:
    return Accelerator(
        name=e["name"],
        vendor=e.get("vendor", ""),
        aliases=tuple(e.get("aliases", ())),
        peak_tflops={k: float(v) for k, v in e["peak_tflops"].items()},
        best_gemm_tflops=float(e["best_gemm_tflops"]),
        hbm_gib=float(e["hbm_gib"]),
        hbm_tbps=float(e["hbm_tbps"]),
        scale_up=e["scale_up"],
        scale_up_gbps=float(e["scale_up_gbps"]),
        max_per_node=int(e.get("max_per_node", 8)),
        tdp_w=float(e.get("tdp_w", 0)),
        sources=dict(e.get("sources", {})),
        calibration={k: (v if isinstance(v, bool) else float(v)) for k, v in (e.get("calibration") or {}).items()},
        tensor_formats=tuple(e.get("tensor_formats", ())),
        measured_gemm_tflops={"bf16": float(e["best_gemm_tflops"]),
                              **{k: float(v) for k, v in (e.get("measured_gemm_tflops") or {}).items()}},
        scale_up_generation=str(e.get("scale_up_generation", "")),
        max_scale_up_domain=int(e.get("max_scale_up_domain", 0)),
    )


def _transport(e: dict) -> str:
    """A NIC's transport (checked by catalog_checks); by default its kind's: InfiniBand, or RoCE on Ethernet."""
    return e.get("transport") or ("infiniband" if e["kind"] == "infiniband" else "roce")


def _nic(e: dict) -> Nic:
    achievable = e.get("achievable_gBps")
    return Nic(name=e["name"], kind=e["kind"], gbps=float(e["gbps"]), aliases=tuple(e.get("aliases", ())),
               sources=dict(e.get("sources", {})), default=bool(e.get("default", True)),
               achievable_gbytes_per_s=float(achievable) if achievable is not None else None,
               transport=_transport(e))


def _switch(e: dict) -> SwitchModel:
    optional = {k: int(e[k]) for k in ("switch_chips", "links_per_gpu", "max_domain_gpus") if k in e}
    return SwitchModel(name=e["name"], kind=e["kind"], radix=int(e["radix"]), port_gbps=float(e["port_gbps"]),
                       latency_us=float(e["latency_us"]), sharp=bool(e.get("sharp", False)),
                       aliases=tuple(e.get("aliases", ())), sources=dict(e.get("sources", {})), **optional,
                       routing=e.get("routing") or ("adaptive" if e["kind"] == "infiniband" else "ecmp"),
                       default=bool(e.get("default", True)))


def _model(e: dict) -> ModelPreset:
    return ModelPreset(name=e["name"], description=e.get("description", ""), values=dict(e["values"]),
                       aliases=tuple(e.get("aliases", ())), sources=dict(e.get("sources", {})))


def load_catalog(directory: str | os.PathLike = CATALOG_DIR, when_named: bool = False) -> Catalog:
    """The catalog in `directory`, every file read and checked whole; `when_named`: each entry of the
    accelerators, switches and models read and checked when first asked for (catalog_entries.py),
    their names, aliases and the files' YAML checked at once (the NICs are read whole: one default
    NIC per kind and speed is a rule over all of them)."""
    def table(stem: str, build: Callable[[dict], Any]) -> Mapping:
        path = os.path.join(directory, f"{stem}.yaml")
        found = _named_entries(path, stem, build) if when_named else None
        return found if found is not None else {e["name"]: build(e) for e in _entries(path, stem)}

    nics = _entries(os.path.join(directory, "nics.yaml"), "nics")
    return Catalog(table("accelerators", _accelerator), {e["name"]: _nic(e) for e in nics},
                   table("switches", _switch), table("models", _model))


def _named_entries(path: str, key: str, build: Callable[[dict], Any]) -> NamedEntries | None:
    """The file's entries to be read when named, or None for a file to read whole: one not in the
    layout catalog_entries.py reads, or not valid YAML (read whole, it says where)."""
    loader = getattr(yaml, "CSafeLoader", None)  # libyaml: the whole file's syntax checked in C, no objects made
    if loader is None or not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    entries = entry_texts(text, key)
    if entries is None:
        return None
    try:
        loader(text).raw_parse()
    except yaml.YAMLError:
        return None
    problems = check_unique(key, [{"name": e.name, "aliases": list(e.aliases)} for e in entries], str(path))
    if problems:
        raise DesignerError(problems)
    return NamedEntries(entries, lambda entry: _entry_alone(path, key, entry), lambda: _entries(path, key), build)


def _entry_alone(path: str, key: str, entry: EntryText) -> dict | None:
    """The entry's mapping, its text read alone and checked; None when the text does not read alone as
    the file's item of that name and aliases (the caller reads the whole file)."""
    try:
        items = _data(yaml.compose(entry.text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError:
        return None
    item = items[0] if isinstance(items, list) and len(items) == 1 else None
    if not isinstance(item, dict) or item.get("name") != entry.name or \
            tuple(item.get("aliases") or ()) != entry.aliases:
        return None
    problems = check_entry(key, entry.index, item, str(path))
    if problems:
        raise DesignerError(problems)
    return item


@functools.lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The shipped catalog, read once per process, each entry when first asked for."""
    return load_catalog(when_named=True)
