"""Systems: the servers an accelerator is sold in and the fabric its vendor cables them to
(resources/catalog/systems.yaml), as options of the fat-tree generator.

`designer generate fat-tree --system gb200-nvl72` builds GB200 NVL72 racks; `--gpu GB200` alone
builds the same, since the accelerator's own system fills every option the user leaves out (a GB200
compute tray holds 4 GPUs in a 72-GPU NVLink domain, not an HGX board's 8). The Generate dialog
offers the same choices.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..model.catalog import CATALOG_DIR, Catalog, default_catalog

# The options a system sets (generate_fat_tree's keyword arguments)
SYSTEM_OPTIONS = ("gpu", "gpus_per_node", "nics_per_node", "nic_gbps", "fabric", "switch_radix",
                  "nvlink_domain_gpus", "rail_optimized", "nic_model")


@dataclass(frozen=True)
class System:
    """A built-in system (dgx-h100, gb200-nvl72, ...): the values it gives the fat-tree generator, with sources."""
    name: str
    description: str
    values: dict
    default_for: tuple[str, ...] = ()
    sources: dict = field(default_factory=dict)


def load_systems(path: Path = Path(CATALOG_DIR, "systems.yaml")) -> dict[str, System]:
    with open(path, encoding="utf-8") as fh:
        entries = yaml.safe_load(fh)["systems"]
    systems = {}
    for e in entries:
        unknown = set(e["values"]) - set(SYSTEM_OPTIONS)
        if unknown:
            raise ValueError(f"{path}: system {e['name']}: unknown options {sorted(unknown)}")
        systems[e["name"]] = System(e["name"], e.get("description", ""), dict(e["values"]),
                                    tuple(e.get("default_for", ())), dict(e.get("sources", {})))
    return systems


@functools.lru_cache(maxsize=1)
def default_systems() -> dict[str, System]:
    return load_systems()


def system_of(gpu: str, catalog: Catalog | None = None) -> System | None:
    """The system an accelerator is sold in (by its catalog name or an alias), or None."""
    catalog = catalog or default_catalog()
    name = catalog.resolve("accelerators", str(gpu))
    return next((s for s in default_systems().values() if name in s.default_for), None)


def options_for(given: dict, system: str | None = None, catalog: Catalog | None = None) -> dict:
    """The generator's options: those given (None: not given), then the named system's, then the
    system of the given accelerator. Raises KeyError naming an unknown system."""
    given = {k: v for k, v in given.items() if v is not None}
    values = dict(given)
    systems = [default_systems()[system]] if system is not None else []
    if "gpu" in {**(systems[0].values if systems else {}), **given}:
        own = system_of({**(systems[0].values if systems else {}), **given}["gpu"], catalog)
        systems += [own] if own is not None else []
    for chosen in systems:
        for key, value in chosen.values.items():
            if key == "nic_model" and (values.get("fabric", chosen.values["fabric"]) != chosen.values["fabric"]
                                       or values.get("nic_gbps", chosen.values["nic_gbps"]) != chosen.values["nic_gbps"]):
                continue  # the system's NIC, but not of the fabric or speed asked for
            values.setdefault(key, value)
    return values
