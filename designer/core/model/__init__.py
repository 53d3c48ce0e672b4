"""The cluster document model (no Qt): elements, job, catalog, checks (design_check.py adds the calibration)."""
from .catalog import Catalog, default_catalog, load_catalog
from .document import ClusterSpec, Document
from .elements import Link, Metadata, Node, Rack, Switch
from .events import Change
from .job import Parallelism, Workload, resolve_workload
from .plan import ResolvedPlan, check_job

__all__ = [
    "Catalog", "Change", "ClusterSpec", "Document", "Link", "Metadata", "Node", "Parallelism", "Rack",
    "ResolvedPlan", "Switch", "Workload", "check_job", "default_catalog", "load_catalog",
    "resolve_workload",
]
