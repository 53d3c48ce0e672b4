"""Tools > Parts and Costs...: the design's prices, power and failure rates, editable, with the cost
and goodput they give, updated with every evaluation.

Each figure shows where it comes from in its tooltip (the shipped catalog's source, or "the design's
spec.prices"). An edit is one undo step on the document (document/commands.SetOverrides): a price
or power goes to `spec.prices.SECTION.PART`, the energy price and PUE to `spec.prices.usd_per_kwh`
and `.pue`, a failure rate or checkpoint figure to `calibration.reliability`; the window evaluates
again and this dialog shows the new cost and goodput. A value that is no number, or outside the
figure's range, is refused with the check's message and the table goes back to the document's value.
"""
from __future__ import annotations

import copy
import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout,
)

from ..work.latest_worker import LatestWorker

PRICE_COLUMNS = ("Part", "In the design", "Price ($)", "Power (W)")
RATE_COLUMNS = ("Figure", "Value", "Unit")
KEY_ROLE = Qt.UserRole + 1  # the path an editable cell writes: ("prices", section, part, field) or ...


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", "").replace("$", "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _shown(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:g}"


class CostsDialog(QDialog):
    """Non-modal; follows `window` (its document, its results and the job the panels show)."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.qdoc = window.qdoc
        self.setWindowTitle("Parts and Costs")
        self.cost = None  # the CostEstimate shown
        self.goodput = None  # the Goodput shown (None: no job result)
        self.error = None  # why the cost cannot be estimated
        layout = QVBoxLayout(self)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.RichText)
        layout.addWidget(self.summary)
        self.tabs = QTabWidget()
        self.prices = self._table(PRICE_COLUMNS)
        self.rates = self._table(RATE_COLUMNS)
        self.tabs.addTab(self.prices, "Prices and power")
        self.tabs.addTab(self.rates, "Failure rates and checkpoints")
        layout.addWidget(self.tabs, 1)
        note = QLabel("Double-click a figure to change it: one undo step (Edit > Undo). "
                      "Its tooltip says where it comes from.")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.prices.itemChanged.connect(self._edited)
        self.rates.itemChanged.connect(self._edited)
        self._request = self._answered = 0  # the newest figures asked for, and the newest shown
        self.worker = CostWorker()  # not a Qt child: its thread may outlive the dialog
        self.worker.figured.connect(self._figured)
        window.resultChanged.connect(lambda _r: self.refresh())  # every edit ends in one (None too)
        self.resize(760, 560)

    @staticmethod
    def _table(columns) -> QTableWidget:
        table = QTableWidget(0, len(columns))
        table.setHorizontalHeaderLabels(columns)
        table.verticalHeader().hide()
        table.setSelectionBehavior(QAbstractItemView.SelectItems)
        table.setEditTriggers(QAbstractItemView.DoubleClicked | QAbstractItemView.EditKeyPressed
                              | QAbstractItemView.AnyKeyPressed)
        table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        return table

    # ---- the figures ----
    def refresh(self) -> None:
        """The rates from the document now; cost and goodput of the design and the shown job's result
        off the UI thread (0.5 s for 16,384 GPUs), the prices table and the summary when they come."""
        if not self.isVisible():
            return
        self._fill_rates()
        self._request += 1
        self.worker.submit("cost", self._request, self.qdoc.doc.snapshot(), self.window.results.shown_result(),
                           self.window.results.shown_job_name())

    def _figured(self, request: int, cost, goodput, error) -> None:
        if request != self._request:
            return  # a newer edit's figures are on their way
        self._answered = request
        self.cost, self.goodput, self.error = cost, goodput, error
        self._fill_prices()
        self._summarise()

    @property
    def busy(self) -> bool:
        return self._answered != self._request

    def settle(self, timeout_s: float = 60.0) -> bool:
        """Process events until the newest figures are shown (tests, scripts)."""
        import time

        from PySide6.QtWidgets import QApplication

        deadline = time.monotonic() + timeout_s
        while self.busy and time.monotonic() < deadline:
            QApplication.processEvents()
            time.sleep(0.005)
        return not self.busy

    def shutdown(self) -> None:
        self.worker.stop()

    def _summarise(self) -> None:
        c, g = self.cost, self.goodput
        if c is None:
            self.summary.setText(f"<b>No cost:</b> {self.error or 'no design'}")
            return
        job = self.window.results.shown_job_name()
        text = (f"<b>Cluster</b>: capex ${c.capex_usd:,.0f} (fabric {c.fabric_share:.0%}), "
                f"{c.power_kw:,.0f} kW IT x PUE {c.pue:g}; ${c.usd_per_hour:,.0f} per hour over "
                f"{c.amortisation_years:g} years at ${c.usd_per_kwh:g}/kWh")
        if c.usd_per_million_tokens is not None:
            text += (f"<br><b>{'Job ' + job if job else 'The job'}</b>: ${c.usd_per_million_tokens:,.3f} per million "
                     f"tokens ({c.job_share:.0%} of the cluster)")
        if g is not None:
            text += (f"; goodput <b>{g.goodput:.1%}</b> ({g.interruptions_per_day:.2f} interruptions a day, "
                     f"a checkpoint every {g.interval_s / 60:.0f} min)")
        self.summary.setText(text)

    def _fill_prices(self) -> None:
        from ...core.model.prices import price_book, shipped_prices
        from ...core.problems import DesignerError

        doc = self.qdoc.doc
        try:
            book = price_book(doc.spec.prices)
        except DesignerError:
            book = shipped_prices()
        used: dict[str, int] = {}
        for line in (self.cost.bom if self.cost else []):
            if line.priced_as:
                used[line.priced_as] = used.get(line.priced_as, 0) + line.count
        rows = []
        for key, count in used.items():
            section, part = key.split(".", 1)
            price = book.get(section, part)
            if price is not None:
                rows.append((price, count))
        table = self.prices
        table.blockSignals(True)
        table.setRowCount(len(rows) + 2)
        for r, (price, count) in enumerate(rows):
            source = price.source + (f" ({price.date})" if price.date else "")
            self._row(table, r, [f"{price.section}: {price.part}", f"{count:,}",
                                 _shown(price.price_usd), "" if price.power_w is None else _shown(price.power_w)],
                      {2: ("prices", price.section, price.part, "price_usd"),
                       3: ("prices", price.section, price.part, "power_w")},
                      f"spec.prices.{price.section}.{price.part}: {source}")
        c = self.cost
        energy = c.usd_per_kwh if c else None
        pue = c.pue if c else None
        energy_source = ("the design's spec.prices.usd_per_kwh" if doc.spec.prices.get("usd_per_kwh") is not None
                         else "default: a US industrial rate (designer cost --usd-per-kwh)")
        self._row(table, len(rows), ["energy price ($ per kWh)", "", "" if energy is None else f"{energy:g}", ""],
                  {2: ("prices", "usd_per_kwh")}, f"spec.prices.usd_per_kwh: {energy_source}")
        self._row(table, len(rows) + 1, ["PUE (facility power / IT power)", "", "" if pue is None else f"{pue:g}", ""],
                  {2: ("prices", "pue")}, f"spec.prices.pue: {c.pue_source if c else ''}")
        table.blockSignals(False)

    def _fill_rates(self) -> None:
        from ...core.model.reliability import RELIABILITY_FIELDS, reliability_constants

        calibration = self.qdoc.doc.spec.calibration or {}
        overrides = calibration.get("reliability") or {}
        constants = reliability_constants(calibration)
        table = self.rates
        table.blockSignals(True)
        table.setRowCount(len(RELIABILITY_FIELDS))
        for r, (name, f) in enumerate(RELIABILITY_FIELDS.items()):
            value = getattr(constants, name)
            where = (f"calibration.reliability.{name}: the design's value (default {f.default:g})"
                     if name in overrides else f"calibration.reliability.{name}: default")
            self._row(table, r, [name, f"{value:g}", f.metadata["unit"]], {1: ("calibration", "reliability", name)},
                      f"{where}\n{f.metadata['doc']}")
        table.blockSignals(False)

    @staticmethod
    def _row(table, row: int, texts: list[str], editable: dict, tip: str) -> None:
        for col, text in enumerate(texts):
            item = QTableWidgetItem(text)
            item.setToolTip(tip)
            if col in editable:
                item.setData(KEY_ROLE, editable[col])
                item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            else:
                item.setFlags(item.flags() & ~Qt.ItemIsEditable)
            table.setItem(row, col, item)

    # ---- an edit ----
    def _edited(self, item: QTableWidgetItem) -> None:
        key = item.data(KEY_ROLE)
        if not key:
            return
        value = _number(item.text())
        if value is None:
            self._refuse(f"{item.text()!r} is not a number")
            return
        if not self.set_figure(key, value):
            return

    def set_figure(self, key: tuple, value: float) -> bool:
        """Write one figure into the document as one undo step (checked first); False when refused."""
        from ...core.engine.calibration_check import check_calibration
        from ...core.model.prices import check_prices
        from ..document.commands import SetOverrides

        doc = self.qdoc.doc
        if key[0] == "prices":
            new = copy.deepcopy(doc.spec.prices)
            if len(key) == 2:
                new[key[1]] = value
            else:
                _, section, part, field = key
                new.setdefault(section, {}).setdefault(part, {})[field] = value
            problems = check_prices(new)
            what = "spec.prices." + ".".join(key[1:])
        else:
            from ...core.model.reliability import RELIABILITY_FIELDS

            _, group, name = key
            new = copy.deepcopy(doc.spec.calibration or {})
            whole = isinstance(RELIABILITY_FIELDS[name].default, int)  # hot_spares: a count
            new.setdefault(group, {})[name] = int(value) if whole and value == int(value) else value
            problems = check_calibration(new)
            what = f"calibration.{group}.{name}"
        if problems:
            self._refuse("; ".join(p.format() for p in problems[:3]))
            return False
        self.qdoc.push(SetOverrides(self.qdoc, key[0], new, f"Set {what} to {value:g}"))
        self.window.tell(f"{what} = {value:g}")
        return True

    def _refuse(self, why: str) -> None:
        self.window.tell(f"not changed: {why}")
        self.refresh()  # the table goes back to the document's value


class CostWorker(LatestWorker):
    """The cost and goodput of a snapshot, off the UI thread: `figured(request, cost, goodput, error)`."""

    kinds = ("cost",)
    thread_name = "designer-costs"
    figured = Signal(int, object, object, object)

    def work(self, kind: str, request: int, doc, result, job_name) -> None:
        from ...core.analysis.cost import estimate_cost
        from ...core.problems import DesignerError

        try:
            cost, error = estimate_cost(doc, result), None
        except DesignerError as exc:
            cost, error = None, str(exc)
        self.check(kind, request)
        goodput = job_goodput_of(doc, result, job_name)
        self.check(kind, request)
        self.emit(self.figured, request, cost, goodput, error)


def job_goodput_of(doc, result, job_name: str | None):
    """The goodput of the job `result` is of (None: no result, or a job the model cannot size)."""
    if result is None:
        return None
    from ...core.analysis.goodput import job_goodput
    from ...core.problems import DesignerError

    if doc.spec.jobs:
        from ...core.model.jobs import job_alone

        doc, _name = job_alone(doc, job_name)
    try:
        return job_goodput(doc, result)
    except (DesignerError, KeyError, ValueError):
        return None
