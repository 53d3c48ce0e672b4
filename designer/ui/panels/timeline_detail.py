"""The Timeline's words: the line under the chart that says what is under the mouse (a bar's details,
event_text, or how to use the chart, HINT) and the title over it."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from .timeline_items import fmt_bytes, kind_name

HINT = ("wheel or right-drag: zoom time · left-drag: pan · hover a bar for details · "
        "click a wait to see whom it waited for · one row per stage: double-click a stage to "
        "open its lanes")


class DetailLine(QLabel):
    """One line of fixed height under the plot: a text too long for it ends in "…" and its
    tooltip holds the whole text (hovering never changes the panel's layout)."""

    def __init__(self, text: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self._full = ""
        self.setTextFormat(Qt.PlainText)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.setFixedHeight(self.fontMetrics().height() + 6)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._full = str(text)
        self._elide()

    def full_text(self) -> str:
        return self._full

    def is_elided(self) -> bool:
        return super().text() != self._full

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        margins = self.contentsMargins()
        room = max(0, self.width() - margins.left() - margins.right() - 14)  # the style sheet's padding
        shown = self.fontMetrics().elidedText(self._full, Qt.ElideRight, room) if self._full else ""
        super().setText(shown)
        self.setToolTip(self._full if shown != self._full else "")


def device_name(result, device: int) -> str:
    """"stage 3 gpu24", or "gpu24" for a device without a stage."""
    info = (result.devices or {}).get(device, {}) if result is not None else {}
    return f"stage {info['stage']} gpu{device}" if "stage" in info else f"gpu{device}"


def title_text(result, layout, bars: int) -> str:
    """The line over the chart: the step time, the devices shown (`layout`: a RowLayout), the bars."""
    devices = len({d for d, _ in layout.rows})
    scope = (f"{devices} devices (one replica of {len({i.get('replica', 0) for i in result.devices.values()})} "
             f"distinct; one row group per pipeline stage)" if layout.collapsed else
             f"{devices} representative device{'' if devices == 1 else 's'}")
    return (f"Step timeline · {result.step_time_s:.3f} s · {scope} · {bars:,} events · "
            f"critical device: {device_name(result, result.critical_device)}")


def event_text(result, index: int) -> str:
    """What one event of `result` is, on a few lines."""
    e = result.events[index]
    lines = [f"{e.label} — {kind_name(e.kind)} ({e.kind})",
             f"start {e.start_s:.6f} s · duration {(e.end_s - e.start_s) * 1e3:.3f} ms"]
    if e.micro_batch >= 0:
        lines.append(f"micro-batch {e.micro_batch} · chunk {e.chunk}")
    if e.bytes:
        lines.append(f"bytes {fmt_bytes(e.bytes)} ({e.bytes:,.0f})")
    where = [f"group {e.group}" if e.group else "", f"resource {e.resource}" if e.resource else ""]
    if any(where):
        lines.append(" · ".join(w for w in where if w))
    if e.waited_for is not None:
        lines.append(f"waited for {device_name(result, e.waited_for)} (click to show)")
    lines.append(f"on {device_name(result, e.device)}, {e.stream} lane")
    return "\n".join(lines)
