"""The Advisor dock: attribution, ranked what-if changes applied as one undo step, the scaling curve,
all computed off the UI thread and dropped when the design changed meanwhile."""
import copy

import pytest


from tests.conftest import EXAMPLES  # noqa: E402

LONG = 60_000  # ms: the machine is shared; an analysis of the 64-GPU example takes ~0.1 s


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from designer.ui.window.main_window import MainWindow

    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    # never block on the unsaved-changes prompt when the window closes
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Discard))
    w.resize(1600, 1000)
    w.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    w.show()
    qtbot.waitExposed(w)
    assert w.settle()
    yield w
    w.close()


def raise_advisor(window, qtbot):
    qtbot.waitUntil(lambda: window.advisor_dock.toggleViewAction().isChecked(), timeout=5000)  # tabbed after show
    window.advisor_dock.raise_()
    qtbot.waitUntil(lambda: window.advisor_panel.shown, timeout=5000)
    return window.advisor_panel


def analysed(panel, qtbot, start: bool = True):
    if start:
        panel.analyse()
    advice, scale = panel.advice_state, panel.scale_state
    qtbot.waitUntil(lambda: not panel.running and advice.result is not None and not panel.stale
                    and scale.result is not None and scale.revision == panel.revision, timeout=LONG)
    return panel


def speedup_cell(panel, advice) -> float:
    from designer.ui.panels.advisor_changes import COL_SPEEDUP

    return float(panel.changes.table.item(panel.changes.row_of(advice), COL_SPEEDUP).text().rstrip("%"))


def test_dock_is_in_the_view_menu_behind_the_timeline_and_idle(window, qtbot):
    from PySide6.QtWidgets import QTabBar

    view = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "View")
    assert "Advisor" in [a.text() for a in view.actions()]
    qtbot.waitUntil(lambda: window.advisor_dock.toggleViewAction().isChecked(), timeout=5000)
    assert window.timeline_panel.visibleRegion() and not window.advisor_panel.shown
    assert window.tabifiedDockWidgets(window.timeline_dock) == [window.advisor_dock]
    # one tab bar per tab group, none left over the other docks
    bars = [b for b in window.findChildren(QTabBar) if b.isVisible() and b.parent() is window]
    assert sorted(tuple(b.tabText(i) for i in range(b.count())) for b in bars) == [
        ("Parts", "Job", "Jobs"), ("Timeline", "Advisor")]
    assert window.advisor_panel.advice_state.result is None and not window.advisor_panel.running  # hidden: no analysis


def test_analysis_fills_the_ranked_table(window, qtbot):
    from PySide6.QtGui import QColor

    from designer.ui.panels.advisor_changes import COL_NOTE, COL_STEP, COL_TITLE
    from designer.ui.panels.results_table import NOFIT_BG
    from designer.ui.panels.plot_style import MUTED

    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    report = panel.advice_state.result
    why = report["attribution"]
    assert why["critical_resource"] and why["critical_resource"] in panel.changes.header_label.text()
    assert "Critical resource" in panel.changes.header_label.text()
    # the summary names the largest cause with its share of the step, as the engine found it
    top = max(why["causes"], key=lambda c: c["share"])
    assert f"{top['share'] * 100:.0f}%" in panel.changes.header_label.text()
    assert panel.changes.cause_bar.causes and f"{top['share'] * 100:.1f}%" in panel.changes.causes_label.text()

    rows = panel.changes.advice()
    assert len(rows) == len(report["ranked"]) + len(report["not_applicable"]) > 10
    same = [a for a in rows if a.fits_in_memory and a.category != "scale" and not a.error]
    assert len(same) >= 10
    shown = [speedup_cell(panel, a) for a in same]
    assert shown == sorted(shown, reverse=True) and shown[0] > 0
    changes = panel.changes
    assert [changes.table.item(changes.row_of(a), COL_TITLE).text() for a in same] == [a.title for a in same]
    for a in same[:3]:
        assert changes.table.item(changes.row_of(a), COL_STEP).text() == f"{a.step_time_s:.3f}"
        assert speedup_cell(panel, a) == round(a.speedup * 100, 1)
    # every applicable row has its Apply button, enabled
    for a in rows:
        holder = panel.changes.table.cellWidget(panel.changes.row_of(a), 0)
        assert (holder is not None and holder.isEnabled()) == (not a.error)

    nofit = [a for a in rows if not a.fits_in_memory and not a.error]
    assert nofit
    for a in nofit:
        row = panel.changes.row_of(a)
        assert panel.changes.table.item(row, COL_TITLE).background().color() == QColor(NOFIT_BG)
        assert panel.changes.table.item(row, COL_NOTE).text() == f"needs {a.memory_gib:.1f} GiB/GPU"
        assert "does not fit" in panel.changes.table.item(row, COL_TITLE).toolTip()
    faint = [a for a in rows if "not the bottleneck" in a.note]
    assert faint
    for a in faint:
        item = panel.changes.table.item(panel.changes.row_of(a), COL_TITLE)
        assert item.font().italic() and item.foreground().color() == QColor(MUTED)
        assert "not the bottleneck" in item.toolTip()
    na = [a for a in rows if a.error]
    assert na and all(panel.changes.row_of(a) > panel.changes.row_of(rows[-len(na) - 1]) for a in na)  # listed last
    for a in na:
        assert panel.changes.table.item(panel.changes.row_of(a), COL_NOTE).text()
        assert a.error in panel.changes.table.item(panel.changes.row_of(a), COL_TITLE).toolTip()
    assert "changes costed" in panel.controls.status_label.text()


def test_apply_job_change_is_one_undo_step(window, qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QToolButton

    from designer.core.io import dumps_document

    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    doc = window.qdoc.doc
    before_text = dumps_document(doc)
    before_par = copy.deepcopy(doc.spec.parallelism)
    advice = panel.changes.find("recompute-")
    assert advice is not None and advice.job_only
    stack = window.qdoc.undo_stack
    count = stack.count()
    button = panel.changes.table.findChild(QToolButton, f"apply:{advice.id}")
    qtbot.mouseClick(button, Qt.LeftButton)
    assert stack.count() == count + 1 and stack.undoText() == f"Advisor: {advice.title}"
    assert doc.spec.parallelism == advice.document.spec.parallelism != before_par
    assert doc.spec.workload == advice.document.spec.workload
    assert dumps_document(doc) != before_text
    # what is shown is stale now: its buttons are off and a second apply is refused
    assert panel.stale and panel.changes.banner.isVisibleTo(panel) and advice.title in panel.changes.banner.text()
    assert not panel.changes.table.cellWidget(panel.changes.row_of(advice), 0).isEnabled()
    assert not panel.apply(advice) and stack.count() == count + 1
    # the window re-evaluates the changed design: the step the advice predicted
    assert window.settle()
    assert window.result.step_time_s == pytest.approx(advice.step_time_s, rel=1e-6)
    # auto: the panel analysed the new design by itself
    analysed(panel, qtbot, start=False)
    assert panel.advice_state.result["current"]["step_time_s"] == pytest.approx(advice.step_time_s, rel=1e-6)

    stack.undo()
    assert dumps_document(doc) == before_text and doc.spec.parallelism == before_par
    assert panel.stale


def test_apply_hardware_change_replaces_the_document(window, qtbot):
    from designer.core.io import dumps_document

    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    doc = window.qdoc.doc
    before_text = dumps_document(doc)
    nics = {n.id: n.nic_gbps for n in doc.nodes}
    advice = panel.changes.find("nic-2x")
    assert advice is not None and not advice.job_only
    # a double-click on the row applies it
    row = panel.changes.row_of(advice)
    panel.changes.table.scrollToItem(panel.changes.table.item(row, 1))
    rect = panel.changes.table.visualItemRect(panel.changes.table.item(row, 1))
    from PySide6.QtCore import Qt

    assert rect.isValid() and panel.changes.table.viewport().rect().contains(rect.center())
    qtbot.mouseClick(panel.changes.table.viewport(), Qt.LeftButton, pos=rect.center())  # QTest: a press first
    qtbot.mouseDClick(panel.changes.table.viewport(), Qt.LeftButton, pos=rect.center())
    assert window.qdoc.undo_stack.undoText() == f"Advisor: {advice.title}"
    assert {n.id: n.nic_gbps for n in doc.nodes} == {i: 2 * g for i, g in nics.items()}
    assert doc == advice.document
    assert panel.stale
    window.qdoc.undo_stack.undo()
    assert dumps_document(doc) == before_text
    assert {n.id: n.nic_gbps for n in doc.nodes} == nics
    assert window.settle()


def test_scaling_plot_and_verdict(window, qtbot):
    import pyqtgraph as pg

    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    good = [r for r in panel.scale_state.result["rows"] if "error" not in r]
    assert len(good) >= 4
    items = panel.controls.scaling_view.plot.getPlotItem().items
    scatter = [i for i in items if isinstance(i, pg.ScatterPlotItem)]
    assert scatter and len(scatter[0].points()) == len(good)
    curves = [i for i in items if isinstance(i, pg.PlotDataItem)]
    assert len(curves) >= 2  # tokens/s and the linear ideal
    verdict = panel.controls.scaling_view.verdict_label
    assert verdict.text().strip()
    assert verdict.text().lower().startswith(panel.scale_state.result["verdict"][:20].lower())
    assert "strong" in panel.scale_state.result["mode"]

    with qtbot.waitSignal(panel.scalingShown, timeout=LONG):
        panel.controls.mode_combo.setCurrentText("weak")  # a new curve, without a new advice
    assert panel.scale_state.result["mode"] == "weak" and "weak" in panel.controls.scaling_view.verdict_label.text()


def test_result_for_an_older_design_is_dropped(window, qtbot):
    from designer.ui.document import commands

    panel = raise_advisor(window, qtbot)
    panel.worker.slowdown_s = 0.6
    shown = []
    panel.analysed.connect(lambda: shown.append(panel.advice_state.revision))
    panel.analyse()
    qtbot.waitUntil(lambda: panel.worker.running == "advise", timeout=LONG)
    link = window.qdoc.doc.links[0]
    window.qdoc.push(commands.SetFields(window.qdoc, {link.id: {"bandwidth_gbps": link.bandwidth_gbps / 2}}))
    panel.worker.slowdown_s = 0.0
    analysed(panel, qtbot, start=False)  # auto: analysed again after the edit
    assert shown == [panel.revision]  # the result for the older design never showed


def test_errors_show_in_the_panel(window, qtbot):
    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    window.qdoc.new()  # no job: nothing to advise on
    qtbot.waitUntil(lambda: panel.advice_state.error is not None and not panel.running, timeout=LONG)
    assert panel.changes.message.isVisibleTo(panel)  # the message in place of the changes
    assert "Cannot analyse" in panel.changes.message.text() and "no workload" in panel.changes.message.text()
    assert "no workload" in panel.controls.scaling_view.verdict_label.text()
    assert panel.changes.advice() == [] and panel.advice_state.result is None


def test_close_while_analysing(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings

    from designer.ui.window.main_window import MainWindow

    monkeypatch.setenv("DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    window = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    window.show()
    qtbot.waitExposed(window)
    panel = raise_advisor(window, qtbot)
    panel.worker.slowdown_s = 0.5
    panel.analyse()
    qtbot.waitUntil(lambda: panel.worker.running == "advise", timeout=LONG)
    window.close()
    assert panel.worker.stopped
    panel.worker.thread.join(timeout=60)
    assert not panel.worker.thread.is_alive()
    qtbot.wait(50)  # any late signal would be delivered now
    assert panel.advice_state.result is None
    panel.analyse()  # after close: ignored, no new thread
    assert not panel.worker.thread.is_alive()


@pytest.mark.slow
def test_stale_while_hidden_or_manual(window, qtbot):
    from PySide6.QtCore import Qt

    from designer.ui.document import commands
    from designer.ui.panels.advisor import AUTO_DELAY_MS

    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    link = window.qdoc.doc.links[0]

    def edit(gbps):
        window.qdoc.push(commands.SetFields(window.qdoc, {link.id: {"bandwidth_gbps": gbps}}))

    window.timeline_dock.raise_()  # the Advisor behind its tab: edits only mark it stale
    qtbot.waitUntil(lambda: not panel.shown, timeout=5000)
    edit(200.0)
    qtbot.wait(AUTO_DELAY_MS + 300)
    assert panel.stale and not panel.running
    window.advisor_dock.raise_()  # shown again: analysed again by itself
    analysed(panel, qtbot, start=False)

    panel.controls.auto_check.setChecked(False)  # manual: stale until Analyse
    edit(100.0)
    qtbot.wait(AUTO_DELAY_MS + 300)
    assert panel.stale and not panel.running and "Press Analyse" in panel.changes.banner.text()
    qtbot.mouseClick(panel.controls.analyse_button, Qt.LeftButton)
    analysed(panel, qtbot, start=False)
    assert not panel.changes.banner.isVisibleTo(panel)


# ---- the plan search ----------------------------------------------------------------------------

def small_space():
    from designer.core.analysis.space import SpaceOptions

    return SpaceOptions(tp=[1, 2], pp=[1, 2], micro_batch=[1, 2])  # ~0.6 s instead of ~5 s


def plain(text: str) -> str:
    return text.replace("\u00a0", " ").replace("\u2011", "-")  # a plan cell's unbreakable spaces and hyphens


def searched(panel, qtbot, start: bool = True):
    search = panel.plan_search
    if start:
        search.start()
    qtbot.waitUntil(lambda: not search.state.busy and search.result is not None and not search.stale(panel.revision),
                    timeout=LONG)
    return panel


@pytest.mark.slow
def test_search_fills_the_best_plans(window, qtbot):
    from PySide6.QtCore import Qt

    from designer.ui.panels.best_plans import PCOL_MEMORY, PCOL_MFU, PCOL_PLAN, PCOL_SPEEDUP, PCOL_STEP

    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    assert panel.plan_search.result is None and not panel.plan_search.state.busy  # never automatic
    panel.plan_search.options = small_space()
    progress = []
    panel.plan_search.worker.progressed.connect(lambda _r, n: progress.append(n))
    with qtbot.waitSignal(panel.searched, timeout=LONG):
        qtbot.mouseClick(panel.plan_search.button, Qt.LeftButton)
        assert panel.plan_search.state.busy and panel.plan_search.button.text() == "Stop search"
        assert panel.tabs.currentWidget() is panel.plan_search.page
    result = panel.plan_search.result
    assert result.counts.total > 0 and result.evaluated > 0 and result.current is not None
    assert progress == sorted(progress) and progress  # "costed N plans" as it went
    assert panel.plan_search.button.text() == "Search plans" and not panel.controls.busy.isVisible()
    assert f"{result.evaluated:,} plans costed" in panel.controls.status_label.text()

    rows = panel.plan_search.rows()
    assert 1 <= len(rows) <= 10 and [r["point"] for r in rows] == [r["point"] for r in result.top]
    steps = [r["step_time_s"] for r in rows]
    assert steps == sorted(steps)
    current = result.current
    assert steps[0] <= current["step_time_s"] * (1 + 1e-9)  # the best is at least as fast as the file's plan
    table = panel.plan_search.page.table
    for i, r in enumerate(rows):
        assert plain(table.item(i, PCOL_PLAN).text()).startswith(r["point"].label())
        assert table.item(i, PCOL_STEP).text() == f"{r['step_time_s']:.3f}"
        assert table.item(i, PCOL_SPEEDUP).text() == f"{(current['step_time_s'] / r['step_time_s'] - 1) * 100:+.1f}%"
        assert table.item(i, PCOL_MFU).text() == f"{r['mfu'] * 100:.1f}%"
        assert table.item(i, PCOL_MEMORY).text() == f"{r['memory_gib']:.1f}"
        tip = table.item(i, PCOL_PLAN).toolTip()
        assert "compute" in tip and f"{r['step_time_s']:.3f} s" in tip  # the breakdown
        if r["point"] != current["point"]:
            assert table.cellWidget(i, 0).isEnabled()
    # the file's own plan is listed below, to compare with
    assert table.rowCount() == len(rows) + 1
    assert plain(table.item(len(rows), PCOL_PLAN).text()).startswith(current["point"].label())
    # the verdict and how the space was cut down
    assert result.verdict[:30].lower() in panel.plan_search.page.verdict.text().lower()
    c = result.counts
    counts = panel.plan_search.page.counts.text()
    for part in (f"{c.total:,} plans", f"{c.invalid:,} impossible", f"{c.no_memory:,} out of memory",
                 f"{c.dominated:,} dominated", f"{result.evaluated:,} costed",
                 f"{result.cut_by_bound:,} cut by the lower bound"):
        assert part in counts
    assert panel.tabs.tabText(1) == f"Best plans ({len(rows)})"


@pytest.mark.slow
def test_apply_best_plan_is_one_undo_step(window, qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QToolButton

    from designer.core.io import dumps_document

    panel = raise_advisor(window, qtbot)
    panel.plan_search.options = small_space()
    searched(panel, qtbot)
    doc = window.qdoc.doc
    before_text = dumps_document(doc)
    before_par = copy.deepcopy(doc.spec.parallelism)
    best = panel.plan_search.rows()[0]
    point = best["point"]
    assert point != panel.plan_search.result.current["point"]  # the example's plan is not the fastest
    stack = window.qdoc.undo_stack
    count = stack.count()
    qtbot.mouseClick(panel.plan_search.page.table.findChild(QToolButton, "apply-plan:0"), Qt.LeftButton)
    assert stack.count() == count + 1 and stack.undoText() == f"Search: {point.label()}"
    assert doc.spec.parallelism == point.parallelism(before_par) != before_par
    assert doc.spec.workload.micro_batch_size == point.micro_batch
    # stale now: the buttons are off, a second apply is refused, and no search starts by itself
    assert panel.plan_search.stale(panel.revision) and panel.plan_search.page.banner.isVisibleTo(panel)
    assert point.label() in panel.plan_search.page.banner.text()
    assert not panel.plan_search.page.table.cellWidget(0, 0).isEnabled()
    assert not panel.plan_search.apply_plan(best) and stack.count() == count + 1
    assert window.settle()
    assert window.result.step_time_s == pytest.approx(best["step_time_s"], rel=1e-3)
    assert not panel.plan_search.state.busy

    stack.undo()
    assert dumps_document(doc) == before_text and doc.spec.parallelism == before_par
    assert panel.plan_search.stale(panel.revision)


@pytest.mark.slow
def test_edit_during_a_search_drops_it(window, qtbot):
    from designer.ui.document import commands

    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    shown = []
    panel.searched.connect(lambda: shown.append(panel.plan_search.state.revision))
    panel.plan_search.start()  # the whole space: seconds, time enough to edit meanwhile
    qtbot.waitUntil(lambda: panel.plan_search.worker.running is not None, timeout=LONG)
    link = window.qdoc.doc.links[0]
    window.qdoc.push(commands.SetFields(window.qdoc, {link.id: {"bandwidth_gbps": link.bandwidth_gbps / 2}}))
    assert not panel.plan_search.state.busy and panel.plan_search.button.text() == "Search plans"
    assert "the design changed" in panel.plan_search.page.message.text()
    qtbot.waitUntil(lambda: panel.plan_search.worker.running is None, timeout=10_000)  # stopped, not run to its end
    qtbot.wait(100)  # a late result would be delivered now
    assert shown == [] and panel.plan_search.result is None
    # the analysis went on by itself (Auto), the search did not
    analysed(panel, qtbot, start=False)
    assert not panel.plan_search.state.busy and panel.plan_search.result is None

    panel.plan_search.options = small_space()
    searched(panel, qtbot)
    assert shown == [panel.revision] and panel.plan_search.state.revision == panel.revision


@pytest.mark.slow
def test_a_stale_result_is_dropped_and_a_newer_search_wins(window, qtbot):
    panel = raise_advisor(window, qtbot)
    panel.plan_search.options = small_space()
    searched(panel, qtbot)
    request = panel.plan_search.state.request
    old = panel.plan_search.result
    # a result for an older revision, arriving late, is not shown
    from designer.ui.document import commands

    link = window.qdoc.doc.links[0]
    window.qdoc.push(commands.SetFields(window.qdoc, {link.id: {"bandwidth_gbps": link.bandwidth_gbps / 2}}))  # an edit
    panel.plan_search.state.busy = True
    panel.plan_search.on_searched(request, panel.revision - 1, old, None, 0.1)
    search = panel.plan_search
    assert not search.state.busy and search.state.revision == panel.revision - 1 and search.stale(panel.revision)
    assert not panel.plan_search.apply_plan(panel.plan_search.rows()[0])
    # a second search supersedes a running one: only the newest shows
    panel.plan_search.options = None
    panel.plan_search.start()
    panel.plan_search.options = small_space()
    panel.plan_search.start()
    searched(panel, qtbot, start=False)
    assert panel.plan_search.result.counts.total == old.counts.total  # the small space's, not the whole one


def test_stop_search(window, qtbot):
    """Stop ends the running search at once, also while its space is still being enumerated
    (seconds on a loaded machine before the first plan is costed)."""
    from PySide6.QtCore import Qt

    panel = raise_advisor(window, qtbot)
    panel.plan_search.start()
    qtbot.waitUntil(lambda: panel.plan_search.worker.running is not None, timeout=LONG)
    qtbot.mouseClick(panel.plan_search.button, Qt.LeftButton)  # "Stop search"
    assert not panel.plan_search.state.busy and "stopped" in panel.plan_search.page.message.text()
    qtbot.waitUntil(lambda: panel.plan_search.worker.running is None, timeout=10_000)
    assert panel.plan_search.worker.outcome["search"] == "cancelled" and panel.plan_search.result is None


@pytest.mark.slow
def test_close_while_searching(qtbot, tmp_path, monkeypatch):
    import time

    from PySide6.QtCore import QSettings

    from designer.ui.window.main_window import MainWindow

    monkeypatch.setenv("DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    window = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    window.show()
    qtbot.waitExposed(window)
    panel = raise_advisor(window, qtbot)
    panel.plan_search.start()  # the whole space: ~5 s
    qtbot.waitUntil(lambda: panel.plan_search.worker.running is not None, timeout=LONG)
    qtbot.wait(300)  # costing plans
    started = time.monotonic()
    window.close()
    assert panel.plan_search.worker.stopped and not panel.plan_search.state.busy
    thread = panel.plan_search.worker.thread
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert time.monotonic() - started < 5  # it stopped, it did not run to its end
    qtbot.wait(50)  # any late signal would be delivered now
    assert panel.plan_search.result is None
    panel.plan_search.start()  # after close: ignored
    assert not panel.plan_search.state.busy and not thread.is_alive()


def test_search_errors_show_in_the_page(window, qtbot):
    panel = raise_advisor(window, qtbot)
    window.qdoc.new()  # no job: no plans to search
    with qtbot.waitSignal(panel.plan_search.worker.searched, timeout=LONG):
        panel.plan_search.start()
    qtbot.waitUntil(lambda: not panel.plan_search.state.busy, timeout=LONG)
    page = panel.plan_search.page
    assert panel.plan_search.state.error and page.stack.currentWidget() is page.message
    assert "Cannot search plans" in page.message.text() and "no workload" in page.message.text()
    assert panel.plan_search.rows() == [] and panel.plan_search.result is None
