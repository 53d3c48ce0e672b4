"""YAML files of designs: schema, loading with located errors, atomic saving."""
from .files import (
    atomic_write_text,
    dumps_document,
    load_document,
    load_scenario,
    loads_document,
    save_document,
    save_scenario,
)
from .schema import API_VERSION

__all__ = [
    "API_VERSION",
    "atomic_write_text",
    "dumps_document",
    "load_document",
    "load_scenario",
    "loads_document",
    "save_document",
    "save_scenario",
]
