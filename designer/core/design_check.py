"""The check of a whole design: the document's own consistency and its jobs' plans (model/check.py),
and its calibration against the constants the engine declares (engine/constants.py). It sits above
both layers, so that the model never imports the engine. `designer validate` and the commands that
load a design check here; the window redoes it edit by edit (live_check.DesignChecker)."""
from __future__ import annotations

from .engine.calibration_check import check_calibration
from .model.catalog import Catalog, default_catalog
from .model.check import check_model
from .model.document import Document
from .problems import Problem


def check_document(doc: Document, catalog: Catalog | None = None) -> list[Problem]:
    """Every problem of the design, errors and warnings, in a stable order."""
    catalog = catalog or default_catalog()
    problems = check_model(doc, catalog)
    return problems + calibration_problems(doc, catalog, problems)


def calibration_problems(doc: Document, catalog: Catalog, before: list[Problem]) -> list[Problem]:
    reported = {p.path for p in before}  # a NaN in the calibration is already named above
    return [p for p in check_calibration(doc.spec.calibration, catalog) if p.path not in reported]
