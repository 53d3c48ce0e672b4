"""The Advisor's right column: Analyse and Auto, the scaling mode and Scale, the busy bar and the
status line, and the scaling curve (scaling_plot.py) with its verdict."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QHBoxLayout, QLabel, QProgressBar, QPushButton, QSizePolicy, QVBoxLayout, QWidget,
)

from ..common.action_guard import guarded
from .plot_style import MUTED
from .scaling_plot import ScalingPlot


class ControlColumn(QWidget):
    """The buttons, the status line and the scaling curve; `analyse` and `scale` are called by the
    buttons (errors reported through `guard_owner`, action_guard.py)."""

    def __init__(self, guard_owner, analyse, scale, auto_delay_ms: int):
        super().__init__()
        self.analyse_button = QPushButton("Analyse")
        self.analyse_button.setObjectName("analyse")
        self.analyse_button.setToolTip("Attribute the step, cost every candidate change and the scaling curve "
                                       "(off the UI thread)")
        self.analyse_button.clicked.connect(guarded(guard_owner, "Analyse", analyse))
        self.auto_check = QCheckBox("Auto")
        self.auto_check.setChecked(True)
        self.auto_check.setToolTip(f"Analyse again {auto_delay_ms / 1000:.1f} s after each edit while this panel "
                                   "is shown")
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # indeterminate
        self.busy.setTextVisible(False)
        self.busy.setFixedSize(56, 8)
        self.busy.hide()
        self.status_label = QLabel("")
        self.status_label.setObjectName("status")
        self.status_label.setTextFormat(Qt.PlainText)
        self.status_label.setStyleSheet(f"color: {MUTED}")
        self.status_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        # the scaling curve (scaling_plot.py) under its mode and button
        self.mode_combo = QComboBox()
        self.mode_combo.addItems(["strong", "weak"])
        self.mode_combo.setToolTip("strong: the global batch stays, DP grows\n"
                                   "weak: the batch per replica stays, the global batch grows with DP")
        self.mode_combo.currentTextChanged.connect(lambda _m: scale())
        self.scale_button = QPushButton("Scale")
        self.scale_button.setObjectName("scale")
        self.scale_button.setToolTip("Evaluate the design from 1/8 to 8x its GPU count (more servers: the same "
                                     "fabric design generated larger)")
        self.scale_button.clicked.connect(guarded(guard_owner, "Scaling", scale))
        self.scaling_view = ScalingPlot()
        self._lay_out()

    def _lay_out(self) -> None:
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(6)
        buttons.addWidget(self.analyse_button)
        buttons.addWidget(self.auto_check)
        buttons.addStretch(1)
        buttons.addWidget(self.mode_combo)
        buttons.addWidget(self.scale_button)
        status = QHBoxLayout()
        status.setContentsMargins(0, 0, 0, 0)
        status.setSpacing(6)
        status.addWidget(self.busy)
        status.addWidget(self.status_label, 1)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 0, 0, 0)
        column.setSpacing(3)
        column.addLayout(buttons)
        column.addLayout(status)
        column.addWidget(self.scaling_view, 1)
