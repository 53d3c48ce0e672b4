"""The design check the window redoes on every edit: check_document's answer, found again only where
the edit can change it (model/check_incremental.py for the model's part; the calibration's few dozen
keys in full). Apart from design_check.py so that the commands, which check a design once, do not
load the live check's kept structures."""
from __future__ import annotations

from .design_check import calibration_problems
from .model.check_incremental import ModelChecker
from .model.document import Document
from .problems import Problem


class DesignChecker(ModelChecker):
    """check_document redone only where an edit can change it."""

    def check(self, doc: Document) -> list[Problem]:
        problems = super().check(doc)
        return problems + calibration_problems(doc, self.catalog, problems)
