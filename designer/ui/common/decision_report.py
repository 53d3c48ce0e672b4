"""The decision report from the app (Tools > Compare Clusters for a Model..., Report (PDF)...): the
Advisor's best changes of each design's plan and each design's canvas and logical view, drawn
offscreen by the same code as File > Export Report, then designer.core.export.report_decide."""
from __future__ import annotations

from ...core.analysis.decide import add_top_changes
from ...core.export.report_decide import write_decision_report
from .report_pictures import render_report_pictures


def write_decision_pdf(decision, path: str) -> int:
    """Write `decision` with its pictures and the Advisor's changes to `path`; the page count."""
    if any(a.changes is None for a in decision.answers if not a.error):
        add_top_changes(decision)
    pictures = {a.name: render_report_pictures(a.document, a.evaluation, a.name)
                for a in decision.answers if not a.error and a.document is not None}
    return write_decision_report(decision, path, pictures=pictures)
