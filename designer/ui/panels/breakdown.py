"""Where one training step goes: a stacked bar of the step, memory per GPU, the change since last time.

`BreakdownPanel.show_result(evaluation)` shows
- headline figures (step time, tokens/s, model TFLOP/s per GPU, MFU, HFU) as labels;
- the step of the critical device as one horizontal stacked bar, one segment per breakdown
  category (CATEGORY_COLORS), seconds and share written on the segments wide enough to hold them;
- memory per GPU as a second stacked bar against the accelerator's HBM (red when it does not fit);
- the difference from the previous result: "+3.1% step time: dp_comm exposed +0.40 s, compute -0.12 s".
`mark_stale(reason)` keeps the last valid result on screen under a banner saying why it is not
current (an invalid edit); `forget(message)` drops it, and the comparison, when another design opens.
`export(path)` writes the plots as PNG/SVG/PDF, or the numbers as CSV.

The panel is made of parts that own their state: `HeadlineFigures` (breakdown_figures.py) and
`BreakdownPlots` (breakdown_bars.py); the colours and legend helpers it shares with the other panels
are in plot_style.py.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QStackedLayout, QVBoxLayout, QWidget

from .breakdown_bars import BreakdownPlots
from .breakdown_figures import HeadlineFigures
from .plot_export import PLOT_FORMATS, export_plot, fmt_float, write_csv
from .plot_style import (
    CATEGORY_NAMES, COMM_CATEGORIES, FASTER, MUTED, SLOWER, STALE_STYLE, delta_text, seconds_text, stale_banner,
    stale_text,
)

COMPACT_WIDTH = 760  # a panel narrower or lower than this (pixels) is laid out compactly
COMPACT_HEIGHT = 420


@dataclass(frozen=True)
class ShownBefore:
    """What the change line needs of the result shown before: its step and categories, not the result
    itself (its per-link arrays are ~30 MB at 131k GPUs, kept for nothing until the next result)."""

    step_time_s: float
    breakdown_s: dict
    job: str | None = None  # with several jobs: whose result it was (a change is only ever of one job)

    @classmethod
    def of(cls, result, job: str | None = None) -> "ShownBefore | None":
        return None if result is None else cls(float(result.step_time_s), dict(result.breakdown_s), job)


def diff_results(previous, current) -> str:
    """"+3.1% step time: dp_comm exposed +0.40 s, compute -0.12 s" (the two largest category changes)."""
    if previous is None:
        return "first evaluation"
    before, after = previous.step_time_s, current.step_time_s
    pct = (after - before) / before * 100.0 if before > 0 else 0.0
    head = f"{pct:+.1f}% step time"
    keys = list(dict.fromkeys([*current.breakdown_s, *previous.breakdown_s]))
    changes = [(current.breakdown_s.get(k, 0.0) - previous.breakdown_s.get(k, 0.0), k) for k in keys]
    threshold = max(1e-6, 1e-5 * max(before, after))  # below this a change is rounding noise
    changes = sorted((c for c in changes if abs(c[0]) >= threshold), key=lambda c: -abs(c[0]))
    if not changes:
        return head + ": no category changed"
    parts = [f"{k}{' exposed' if k in COMM_CATEGORIES else ''} {delta_text(d)}" for d, k in changes[:2]]
    return head + ": " + ", ".join(parts)


def hbm_of(result) -> float | None:
    """The accelerator's HBM in GiB, from the catalog (None when it is not known)."""
    name = (result.plan or {}).get("accelerator")
    if not name:
        return None
    try:
        from ...core.model import default_catalog

        return float(default_catalog().accelerator(name).hbm_gib)
    except Exception:  # a custom accelerator the catalog does not know: no HBM line
        return None


def csv_rows(r, hbm_gib: float | None) -> list[list[str]]:
    """category,seconds,share,gib_per_gpu rows of a result (see `BreakdownPanel.export`)."""
    step = r.step_time_s
    rows = [[k, fmt_float(v), fmt_float(v / step if step > 0 else 0.0), ""] for k, v in r.breakdown_s.items()]
    rows.append(["step_time", fmt_float(step), "1.0", ""])
    mem = r.memory_gib_per_gpu
    total = mem.get("total", 0.0)
    for k, v in mem.items():
        rows.append([f"memory:{k}", "", fmt_float(v / total if total > 0 else 0.0), fmt_float(v)])
    if hbm_gib:
        rows.append(["memory:hbm", "", "", fmt_float(hbm_gib)])
    return rows


class BreakdownPanel(QWidget):
    """The step breakdown of one evaluation and how it changed since the previous one.

    Made of the headline figures (`figures`), the lines under them (change, warnings, what overlaps
    compute) and the two bars (`plots`), on a page that a message ("no result yet") replaces."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.result = None
        self.previous = None
        self.job: str | None = None  # with several jobs: whose result is shown
        self.revision: int | None = None  # the document revision of the result shown (set by the window)
        self.hbm_gib: float | None = None
        self._diff = "first evaluation"
        self._compact = False
        self.figures = HeadlineFigures()
        self.headline = self.figures.labels
        self._build_notes()
        self.plots = BreakdownPlots()
        self._build_pages()

    def _build_notes(self) -> None:
        """The lines under the figures: the change, the engine's warnings, what overlaps compute."""
        self.diff_label = QLabel("first evaluation")
        self.diff_label.setObjectName("diff")
        self.diff_label.setWordWrap(True)
        # What the engine says it approximates or what the plan does badly (a TP group past its
        # NVLink domain): beside the figures it qualifies, amber as a warning, not a failure
        self.warnings_label = QLabel()
        self.warnings_label.setObjectName("warnings")
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setTextFormat(Qt.PlainText)
        self.warnings_label.setStyleSheet(STALE_STYLE)
        self.warnings_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.warnings_label.hide()
        self.hidden_label = QLabel()
        self.hidden_label.setObjectName("hidden_comm")
        self.hidden_label.setStyleSheet(f"color: {MUTED}")
        self.hidden_label.setWordWrap(True)

    def _build_pages(self) -> None:
        """The result page (banner, figures, notes, plots) and the message shown instead of it."""
        content = QWidget()
        column = QVBoxLayout(content)
        column.setContentsMargins(8, 6, 8, 4)
        column.setSpacing(4)
        self.stale_banner = stale_banner()
        column.addWidget(self.stale_banner)
        column.addWidget(self.figures)
        column.addWidget(self.diff_label)
        column.addWidget(self.warnings_label)
        column.addWidget(self.hidden_label)
        column.addWidget(self.plots, 1)
        self.message = QLabel("no result yet")
        self.message.setObjectName("message")
        self.message.setAlignment(Qt.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setStyleSheet(f"color: {MUTED}; font-size: 12pt")
        self._stack = QStackedLayout(self)
        self._stack.addWidget(self.message)
        self._stack.addWidget(content)
        self._stack.setCurrentWidget(self.message)

    # The panel's size never depends on the figures shown: a new result must not re-layout the
    # window around it (a docked panel that grows on every evaluation would resize the canvas).
    def sizeHint(self) -> QSize:
        return QSize(640, 340)

    def minimumSizeHint(self) -> QSize:
        return QSize(280, 240)

    def hasHeightForWidth(self) -> bool:
        return False

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._update_density()

    def _update_density(self) -> None:
        """A small panel (docked) gets one-line headline figures, no plot title, legends without
        values and no overlap line, so the bars keep their room."""
        compact = self.width() < COMPACT_WIDTH or self.height() < COMPACT_HEIGHT
        if compact != self._compact:
            self._compact = compact
            self.hidden_label.setVisible(not compact)
            self.plots.set_compact(compact)
            self.figures.set_compact(compact)
        self.figures.reflow_for(self.width())

    # ---- public -----------------------------------------------------------------------------

    def show_result(self, result, hbm_gib: float | None = None, job: str | None = None,
                    in_turns: bool = False) -> None:
        """Show `result` (an Evaluation; `job`: whose, with several jobs); the difference is taken from
        the result of the same job shown before, never another job's. `in_turns`: a bar of new parts is
        drawn once what came before it is painted (`drawing` until then): the window paints the figures,
        then the step bar, then the memory bar (the first result at 131k GPUs: ~60 ms in one go)."""
        if result is None:
            self.clear("no result")
            return
        before = ShownBefore.of(self.result, self.job)
        self.previous = before if before is not None and before.job == job else None
        self.result, self.job = result, job
        self.stale_banner.hide()
        self.hbm_gib = hbm_gib if hbm_gib is not None else hbm_of(result)
        self._diff = diff_results(self.previous, result)
        self.figures.show_result(result, self.hbm_gib)
        self._show_diff()
        self._show_warnings(result)
        self._show_hidden(result)
        self._stack.setCurrentIndex(1)  # (before the plots: a bar drawn later waits for their paint)
        self.plots.show_result(result, self.hbm_gib, job, in_turns=in_turns)
        self._update_density()
        self.plots.fit_legends()
        self.plots.place_labels()

    def clear(self, message: str = "no result") -> None:
        """Show `message` instead of a result (the last result is kept for the next difference)."""
        self.message.setText(message)
        self.stale_banner.hide()
        self._stack.setCurrentWidget(self.message)

    def mark_stale(self, reason: str, details: str = "") -> bool:
        """Keep the last valid result on screen under a banner with the reason it is not current.

        False (and `reason` shown instead) when there is no result to keep."""
        if self.result is None:
            self.clear(reason)
            return False
        self.stale_banner.setText(stale_text(reason))
        self.stale_banner.setToolTip(details or reason)
        self.stale_banner.show()
        self._stack.setCurrentIndex(1)
        return True

    @property
    def drawing(self) -> bool:
        """A result shown in turns (show_result) is not all drawn yet."""
        return self.plots.drawing

    def when_painted(self, callback) -> None:
        """`callback` once the result shown is all drawn and painted (at the next turn of the event loop
        when it cannot be seen)."""
        self.plots.when_painted(callback)

    def is_stale(self) -> bool:
        return self.result is not None and not self.stale_banner.isHidden()

    def forget(self, message: str = "no result") -> None:
        """Another design: no result, nothing to compare the next one with."""
        self.result = self.previous = self.job = None
        self.plots.forget()
        self._diff = "first evaluation"
        self.clear(message)

    def diff_text(self) -> str:
        return self._diff

    def segments(self) -> dict[str, tuple[float, float]]:
        """Drawn step segments: category -> (start, width) in seconds."""
        return dict(self.plots.step.segments)

    def memory_segments(self) -> dict[str, tuple[float, float]]:
        return dict(self.plots.memory.segments)

    def export(self, path: str | os.PathLike) -> Path:
        """.png / .svg / .pdf: the plots; .csv: category,seconds,share,gib_per_gpu.

        CSV rows: one per breakdown category (seconds and share of the step), "step_time",
        then "memory:<part>" rows (GiB per GPU, share of the total) and "memory:hbm".
        """
        target = Path(path)
        if self.result is None:
            raise ValueError("nothing to export: no result is shown")
        if target.suffix.lower() == ".csv":
            return write_csv(target, ("category", "seconds", "share", "gib_per_gpu"),
                             csv_rows(self.result, self.hbm_gib))
        if target.suffix.lower() not in PLOT_FORMATS:
            raise ValueError(f"cannot export to {target.name!r}: unknown extension {target.suffix or '(none)'!r}; "
                             f"use one of {', '.join(PLOT_FORMATS + ('.csv',))}")
        return export_plot(self.plots, target)

    # ---- the lines under the figures --------------------------------------------------------

    def _show_diff(self) -> None:
        text = self._diff
        of = f" of job {self.job}" if self.job else ""
        if self.previous is None:
            self.diff_label.setText(f"<span style='color:{MUTED}'>change: first evaluation{of}</span>")
            return
        delta = self.result.step_time_s - self.previous.step_time_s
        color = SLOWER if delta > 0 else FASTER if delta < 0 else MUTED
        self.diff_label.setText(f"<span style='color:{MUTED}'>change since the previous evaluation{of} "
                                f"({self.previous.step_time_s:.3f} s):</span> "
                                f"<span style='color:{color}; font-weight:600'>{text}</span>")

    def _show_warnings(self, r) -> None:
        warnings = list(getattr(r, "warnings", None) or [])
        self.warnings_label.setText("\n".join(f"warning: {w}" for w in warnings))
        self.warnings_label.setVisible(bool(warnings))

    def _show_hidden(self, r) -> None:
        parts = [f"{CATEGORY_NAMES.get(k, k)} {seconds_text(v)}" for k, v in r.hidden_comm_s.items() if v > 0]
        self.hidden_label.setText("overlapped with compute (not in the step): " + ", ".join(parts)
                                  if parts else "no communication is overlapped with compute")
        self.diff_label.setToolTip(self.hidden_label.text())
