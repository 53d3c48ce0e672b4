"""The main window: a read-only canvas of the design and a status bar with its counts."""
from __future__ import annotations

from pathlib import Path

import threading

from PySide6.QtCore import QObject, QRectF, Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QFont, QKeySequence, QPainter, QPen
from PySide6.QtWidgets import (
    QFileDialog, QGraphicsScene, QGraphicsView, QLabel, QMainWindow, QMessageBox,
)

from ..core.io import load_document
from ..core.model import Document, check_document
from ..core.model.geometry import RACK_LABEL_PX, RACK_WIDTH_PX, UNIT_HEIGHT_PX, rack_height_px, slot_top_px
from ..core.problems import DesignerError

COLORS = {
    "rack": QColor("#f4f5f7"), "rack_edge": QColor("#9aa3af"), "node": QColor("#3b82f6"),
    "leaf": QColor("#10b981"), "spine": QColor("#f59e0b"), "core": QColor("#ef4444"), "text": QColor("#1f2937"),
}


class _Evaluator(QObject):
    """Runs the engine on a worker thread; the signal is delivered on the UI thread."""

    finished = Signal(int, object, object)  # request number, result or None, error text or None

    def __init__(self) -> None:
        super().__init__()
        self.request = 0

    def start(self, doc: Document) -> int:
        self.request += 1
        number = self.request
        snapshot = doc.copy()

        def work():
            from ..core.engine.evaluate import Engine
            from ..core.problems import DesignerError

            try:
                self.finished.emit(number, Engine().evaluate(snapshot), None)
            except DesignerError as exc:
                self.finished.emit(number, None, str(exc))
            except Exception as exc:  # noqa: BLE001 - shown to the user, never a crash
                self.finished.emit(number, None, f"internal error: {type(exc).__name__}: {exc}")

        threading.Thread(target=work, daemon=True).start()
        return number


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.document: Document | None = None
        self.path: str | None = None
        self.result = None
        self.evaluating = False
        self._evaluator = _Evaluator()
        self._evaluator.finished.connect(self._on_evaluated)
        self.result_label = QLabel()
        self.scene = QGraphicsScene(self)
        self.view = QGraphicsView(self.scene)
        self.view.setRenderHint(QPainter.Antialiasing)
        self.view.setDragMode(QGraphicsView.ScrollHandDrag)
        self.view.setBackgroundBrush(QColor("#ffffff"))
        self.setCentralWidget(self.view)
        self.counts_label = QLabel()
        self.problems_label = QLabel()
        self.statusBar().addWidget(self.counts_label, 1)
        self.statusBar().addPermanentWidget(self.result_label)
        self.statusBar().addPermanentWidget(self.problems_label)
        self._build_menus()
        self._update_title()

    def _build_menus(self) -> None:
        menu = self.menuBar().addMenu("&File")
        open_action = QAction("&Open...", self, shortcut=QKeySequence.Open, triggered=self._open_dialog)
        quit_action = QAction("&Quit", self, shortcut=QKeySequence.Quit, triggered=self.close)
        menu.addAction(open_action)
        menu.addSeparator()
        menu.addAction(quit_action)
        view = self.menuBar().addMenu("&View")
        view.addAction(QAction("&Fit", self, shortcut="F", triggered=self.fit_view))

    def _open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open design", "", "Designer files (*.yaml *.yml)")
        if not path:
            return
        try:
            self.open_file(path)
        except DesignerError as exc:  # the open design stays as it was
            QMessageBox.critical(self, "Cannot open file", str(exc))

    def open_file(self, path: str) -> None:
        doc = load_document(path)  # raises before anything is replaced
        self.document, self.path = doc, path
        self._draw()
        self._update_title()
        self.fit_view()
        self.evaluate()

    def evaluate(self) -> None:
        """Evaluate the job off the UI thread; a newer request makes older answers stale."""
        self.result = None
        if self.document is None or self.document.spec.workload is None:
            self.result_label.setText("no job")
            return
        self.evaluating = True
        self.result_label.setText("evaluating...")
        self._evaluator.start(self.document)

    def _on_evaluated(self, number: int, result, error) -> None:
        if number != self._evaluator.request:
            return  # stale
        self.evaluating = False
        self.result = result
        if error:
            self.result_label.setText("job: " + error.splitlines()[0][:120])
        else:
            self.result_label.setText(f"step {result.step_time_s:.2f} s   MFU {result.mfu:.1%}   "
                                      f"{result.model_tflops_per_gpu:.0f} TFLOP/s per GPU"
                                      + ("" if result.fits_in_memory else "   does not fit in memory"))

    def _update_title(self) -> None:
        name = Path(self.path).name if self.path else "untitled"
        self.setWindowTitle(f"{name} - Designer")

    def fit_view(self) -> None:
        rect = self.scene.itemsBoundingRect()
        if not rect.isEmpty():
            self.view.fitInView(rect.adjusted(-40, -40, 40, 40), Qt.KeepAspectRatio)

    def _draw(self) -> None:
        self.scene.clear()
        doc = self.document
        if doc is None:
            return
        font = QFont()
        font.setPointSizeF(7)
        members: dict[str, list] = {}
        for element in list(doc.nodes) + list(doc.switches):
            if element.rack:
                members.setdefault(element.rack, []).append(element)
        edge = QPen(COLORS["rack_edge"], 1)
        for rack in doc.racks:
            h = rack_height_px(rack.units)
            self.scene.addRect(QRectF(rack.x, rack.y, RACK_WIDTH_PX, h), edge, QBrush(COLORS["rack"]))
            label = self.scene.addSimpleText(rack.name or rack.id, font)
            label.setBrush(COLORS["text"])
            label.setPos(rack.x, rack.y - RACK_LABEL_PX)
            for element in members.get(rack.id, []):
                top = slot_top_px(rack.y, rack.units, element.slot or 0, element.height_units)
                color = COLORS["node"] if hasattr(element, "accelerator") else COLORS.get(element.tier, COLORS["leaf"])
                self.scene.addRect(QRectF(rack.x + 4, top + 0.5, RACK_WIDTH_PX - 8,
                                          element.height_units * UNIT_HEIGHT_PX - 1),
                                   QPen(color.darker(130), 0.5), QBrush(color))
        c = doc.counts()
        self.counts_label.setText(f"{c['racks']} racks   {c['nodes']} servers   {c['gpus']} GPUs   "
                                  f"{c['switches']} switches   {c['links']} links")
        problems = check_document(doc)
        errors = sum(p.severity == "error" for p in problems)
        self.problems_label.setText(f"{errors} errors, {len(problems) - errors} warnings" if problems else "no problems")
