"""The Breakdown panel's headline figures: step time, tokens/s, model TFLOP/s per GPU, MFU, HFU and
memory per GPU, in a grid that takes fewer columns when the panel is narrow (docked)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QWidget

from .plot_style import DOES_NOT_FIT, MUTED, TEXT

CAPTIONS = (("step", "step time"), ("tokens", "tokens/s"), ("tflops", "model TFLOP/s per GPU"),
            ("mfu", "MFU"), ("hfu", "HFU"), ("memory", "memory per GPU"))
COMPACT_CAPTIONS = {"step": "step", "tokens": "tokens/s", "tflops": "TFLOP/s/GPU", "mfu": "MFU", "hfu": "HFU",
                    "memory": "memory"}


class HeadlineFigures(QWidget):
    """One label per figure: caption above a large figure, or (compact) both on one line."""

    def __init__(self):
        super().__init__()
        self.labels: dict[str, QLabel] = {}
        self.columns = 0  # of the grid now
        self.compact = False
        self._values: dict[str, str] = {}  # key -> the figure written
        self._fits = True  # the memory fits in the HBM (else it is written in red)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(28)
        self._grid.setVerticalSpacing(2)
        # its width follows the panel (the grid reflows), so it never forces a docked panel wider
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        for key, caption in CAPTIONS:
            label = QLabel()
            label.setTextFormat(Qt.RichText)
            label.setObjectName(f"headline_{key}")
            label.setProperty("caption", caption)
            self.labels[key] = label
        self._reflow(len(self.labels))

    def show_result(self, r, hbm_gib: float | None) -> None:
        mem = r.memory_gib_per_gpu.get("total", 0.0)
        self._values = {
            "step": f"{r.step_time_s:.3f} s",
            "tokens": f"{r.tokens_per_s:,.0f}",
            "tflops": f"{r.model_tflops_per_gpu:.1f}",
            "mfu": f"{r.mfu:.1%}",
            "hfu": f"{r.hfu:.1%}",
            "memory": f"{mem:.1f}" + (f" / {hbm_gib:.1f} GiB" if hbm_gib else " GiB"),
        }
        self._fits = r.fits_in_memory
        self._render()

    def set_compact(self, compact: bool) -> None:
        self.compact = compact
        self._grid.setHorizontalSpacing(16 if compact else 28)
        self._render()
        self.columns = 0  # the figures' widths changed: the next reflow lays them out anew

    def reflow_for(self, width: int) -> None:
        """As many columns as figures fit in `width` pixels."""
        widest = max(label.sizeHint().width() for label in self.labels.values()) + self._grid.horizontalSpacing()
        self._reflow(max(1, min(len(self.labels), (width - 16) // max(widest, 1))))

    def _reflow(self, columns: int) -> None:
        if columns == self.columns:
            return
        self.columns = columns
        grid = self._grid
        for label in self.labels.values():
            grid.removeWidget(label)
        for c in range(grid.columnCount()):
            grid.setColumnStretch(c, 0)
        for i, label in enumerate(self.labels.values()):
            grid.addWidget(label, i // columns, i % columns, Qt.AlignLeft | Qt.AlignTop)
        grid.setColumnStretch(columns, 1)  # the figures stay packed to the left

    def _render(self) -> None:
        """Caption above a large figure; in a small panel, caption and figure on one line."""
        values = self._values
        if not values:
            return
        for key, label in self.labels.items():
            caption = label.property("caption")
            fits = key != "memory" or self._fits
            color = TEXT if fits else DOES_NOT_FIT
            suffix = "" if fits else " (does not fit)"
            if self.compact:
                label.setText(f"<span style='color:{MUTED}'>{COMPACT_CAPTIONS.get(key, caption)}</span> "
                              f"<span style='color:{color}; font-weight:600'>{values[key]}</span>"
                              f"<span style='color:{DOES_NOT_FIT}'>{suffix}</span>")
            else:
                label.setText(f"<span style='color:{MUTED}; font-size:9pt'>{caption}</span><br>"
                              f"<span style='color:{color}; font-size:15pt; font-weight:600'>{values[key]}</span>"
                              f"<span style='color:{DOES_NOT_FIT}; font-size:9pt'>{suffix}</span>")
            label.setToolTip(f"{caption}: {values[key]}{suffix}")
