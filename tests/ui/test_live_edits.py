"""Live at any size: an edit's work is proportional to the edit, yet its result is the
full re-evaluation's; the panels never show a mix of revisions; generate runs under a progress bar
with a working Cancel; the undo history is bounded. Driven as a user does: typing into the
Inspector and the Job panel, Tools > Generate, the progress dialog's Cancel button, Edit > Undo."""
import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QProgressDialog, QPushButton

from designer.core.engine.evaluate import Engine
from designer.core.design_check import check_document
from tests.conftest import EXAMPLES
from tests.ui.canvas_helpers import aggregates, drawn_cables
from tests.ui.test_stale_panels import TP, type_like_a_user

A100 = EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"


def open_example(window, path=A100):
    window.open_file(str(path))
    assert window.settle() and window.result is not None


def type_into_inspector(window, field, text):
    editor = window.inspector.editors[field]
    QTest.mouseClick(editor, Qt.LeftButton)
    QTest.keyClick(editor, Qt.Key_A, Qt.ControlModifier)
    QTest.keyClicks(editor, text)
    QTest.keyClick(editor, Qt.Key_Return)


def spine_link(doc):
    switches = {s.id: s for s in doc.switches}
    return next(l for l in doc.links if l.a.split(":")[0] in switches and l.b.split(":")[0] in switches)


def assert_matches_full_evaluation(window):
    doc = window.qdoc.doc
    assert window.problems == check_document(doc)  # same problems, same order
    fresh = Engine().evaluate(doc.copy())  # a new engine: nothing reused
    assert window.result.step_time_s == pytest.approx(fresh.step_time_s, rel=1e-12)
    assert window.breakdown_panel.result is window.result


@pytest.mark.slow
def test_an_edit_gives_the_full_re_evaluation_without_a_full_check(empty_window):
    window = empty_window
    open_example(window)
    checker = window.worker.checker
    full_before = checker.full_checks
    link = spine_link(window.qdoc.doc)
    window.scene.select_ids([link.id])
    port_gbps = next(s.port_gbps for s in window.qdoc.doc.switches if s.id == link.a.split(":")[0])

    type_into_inspector(window, "bandwidth_gbps", f"{port_gbps / 4:g}")
    assert window.settle()
    assert window.qdoc.doc.find("links", link.id).bandwidth_gbps == port_gbps / 4
    assert_matches_full_evaluation(window)

    # faster than the switch's ports: a warning on that link, found without checking the whole design
    type_into_inspector(window, "bandwidth_gbps", f"{port_gbps * 2:g}")
    assert window.settle()
    assert any(p.element == link.id and "faster than" in p.message for p in window.problems)
    assert_matches_full_evaluation(window)

    type_like_a_user(window, TP, "4")
    assert window.settle()
    assert window.qdoc.doc.spec.parallelism.tensor_model_parallel_size == 4
    assert_matches_full_evaluation(window)
    assert checker.full_checks == full_before  # speed and job edits: only their parts were redone

    window.act_undo.trigger()  # undo of the TP edit: again the full evaluation's result
    assert window.settle()
    assert_matches_full_evaluation(window)


@pytest.mark.slow
def test_a_cable_deleted_undone_and_redone_from_the_edit_menu_is_checked_without_a_full_check(empty_window):
    """Edit > Delete of a selected server cable, then Edit > Undo and Edit > Redo: after each, the
    status bar's problems are the full check's (the server's NIC left free and the job that can no
    longer reach its GPUs are named, then gone, then named again), the step time after the undo is a
    fresh engine's, and the design was not checked whole again."""
    window = empty_window
    open_example(window)
    checker = window.worker.checker
    full_before = checker.full_checks
    doc = window.qdoc.doc
    servers = {n.id for n in doc.nodes}
    cable = next(l for l in doc.links if l.a.split(":")[0] in servers or l.b.split(":")[0] in servers)
    server = next(end.split(":")[0] for end in (cable.a, cable.b) if end.split(":")[0] in servers)
    window.scene.select_ids([cable.id])
    assert window.scene.selected_ids() == [cable.id]

    for action, gone in (("delete", True), ("undo", False), ("redo", True)):
        window.actions[action].trigger()
        assert window.settle()
        doc = window.qdoc.doc
        assert (doc.find("links", cable.id) is None) == gone, action
        assert window.problems == check_document(doc), action  # same problems, same order
        assert any(p.element == server and "not connected" in p.message for p in window.problems) == gone
        assert any("servers it can reach" in p.message for p in window.problems) == gone
        if not gone:
            assert_matches_full_evaluation(window)
    assert checker.full_checks == full_before


def _drawn_cables(scene):
    """What the canvas draws of the cables: each bundle's line, and the rack-to-rack lines as the edit
    left them."""
    return drawn_cables(scene), aggregates(scene, rebuild_stale=False)


def test_cables_deleted_and_undone_from_the_edit_menu_draw_as_a_fresh_canvas(empty_window):
    """Edit > Delete of cables of several bundles at once (each its bundle's only cable), then Edit >
    Undo: the canvas's bundles, their lines and the rack-to-rack lines are those planned anew from the
    design as it then is, each time (the edit plans the bundles once, and the rack-to-rack lines from
    the same boxes)."""
    window = empty_window
    open_example(window)
    doc = window.qdoc.doc
    singles = [b.link_ids[0] for b in window.scene.link_layer.bundles if len(b.link_ids) == 1][:: 97][:4]
    assert len(singles) == 4
    window.scene.select_ids(singles)
    for action in ("delete", "undo"):
        window.actions[action].trigger()
        assert window.settle()
        drawn = _drawn_cables(window.scene)
        window.scene.cables.rebuild()  # a canvas planned from the design as it is now
        window.scene.cables.rebuild_aggregates()
        assert _drawn_cables(window.scene) == drawn, action
        assert (doc.find("links", singles[0]) is None) == (action == "delete")


def test_a_snapshot_never_sees_a_later_edit(empty_window):
    window = empty_window
    open_example(window, EXAMPLES / "h100-64gpu-infiniband.yaml")
    doc = window.qdoc.doc
    link = spine_link(doc)
    snapshot = doc.snapshot()
    before = snapshot.find("links", link.id).bandwidth_gbps
    window.scene.select_ids([link.id])
    type_into_inspector(window, "bandwidth_gbps", f"{before / 2:g}")
    assert doc.find("links", link.id).bandwidth_gbps == before / 2
    assert snapshot.find("links", link.id).bandwidth_gbps == before  # the worker's copy is as it was
    assert window.settle()


def test_a_panel_never_shows_a_mix_of_revisions(empty_window):
    window = empty_window
    open_example(window)
    seen = []

    def on_result(result):
        if result is not None:  # the moment the new step time is on screen
            seen.append((window.breakdown_panel.revision, window.timeline_panel.revision,
                         window.timeline_panel.is_updating()))

    window.resultChanged.connect(on_result)
    link = spine_link(window.qdoc.doc)
    window.scene.select_ids([link.id])
    type_into_inspector(window, "bandwidth_gbps", "100")
    assert window.settle()
    breakdown_rev, timeline_rev, updating = seen[-1]
    assert breakdown_rev == window.qdoc.doc.revision
    # the timeline showed its own older revision and said it was updating, never the new one half-built
    assert timeline_rev != breakdown_rev and updating
    assert window.timeline_panel.revision == window.breakdown_panel.revision == window.qdoc.doc.revision
    assert not window.timeline_panel.is_updating()
    assert window.timeline_panel.result is window.breakdown_panel.result


def _answer_generator(monkeypatch, nodes):
    from designer.ui.dialogs.generator_dialog import GeneratorDialog

    def answer(dialog):
        dialog.set_options(nodes=nodes, gpu="H100")
        return 1

    monkeypatch.setattr(GeneratorDialog, "exec", answer)


def _hold_generate(monkeypatch):
    """The fat-tree builder waits for `release` (a long generate, on a fast machine too)."""
    import designer.core.generate as generate

    release = threading.Event()
    real = generate.generate_fat_tree

    def slow(*args, **kwargs):
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(generate, "generate_fat_tree", slow)
    return release


def test_generate_shows_progress_the_window_answers_and_cancel_leaves_the_design(empty_window, qtbot, monkeypatch):
    window = empty_window
    open_example(window, EXAMPLES / "h100-64gpu-infiniband.yaml")
    gpus, steps = window.qdoc.doc.num_gpus(), window.qdoc.undo_stack.count()
    _answer_generator(monkeypatch, 256)
    release = _hold_generate(monkeypatch)
    window.act_generate.trigger()  # returns at once: the building runs in a thread
    dialog = window.findChild(QProgressDialog, "progress")
    assert dialog is not None and dialog.isVisible()
    ticks = []
    from PySide6.QtCore import QTimer

    timer = QTimer(interval=10, timeout=lambda: ticks.append(1))
    timer.start()
    # the event loop keeps running while the fabric is (held) built: were the build on the window's
    # thread, trigger() would not have returned and no tick could come (a loaded machine may stall
    # the loop for a collector pass, so the ticks are waited for, not counted in a fixed time)
    qtbot.waitUntil(lambda: len(ticks) >= 3, timeout=10_000)
    timer.stop()
    assert not release.is_set()
    cancel = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Cancel")
    QTest.mouseClick(cancel, Qt.LeftButton)
    release.set()
    assert window.progress.wait()
    qtbot.wait(50)  # the dropped result's signal is delivered, and ignored
    assert window.settle()
    assert window.qdoc.doc.num_gpus() == gpus and window.qdoc.undo_stack.count() == steps
    assert "cancelled" in window.statusBar().currentMessage()


def test_generate_and_its_undo_share_the_designs_not_copy_them(empty_window, monkeypatch):
    window = empty_window
    open_example(window, EXAMPLES / "h100-64gpu-infiniband.yaml")
    doc = window.qdoc.doc
    nodes_before = list(doc.nodes)
    _answer_generator(monkeypatch, 32)
    window.act_generate.trigger()
    assert window.progress.seen
    assert window.settle()
    assert doc.num_gpus() == 256
    generated = list(doc.nodes)
    window.act_undo.trigger()
    assert window.settle()
    assert all(a is b for a, b in zip(doc.nodes, nodes_before)) and len(doc.nodes) == len(nodes_before)
    window.act_redo.trigger()
    assert all(a is b for a, b in zip(doc.nodes, generated))


@pytest.mark.slow
def test_the_undo_history_is_bounded(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings

    from designer.ui.document import qt_document
    from designer.ui.window.main_window import MainWindow

    monkeypatch.setattr(qt_document, "UNDO_LIMIT", 5)  # the rule, at a size a test can reach
    window = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    window.show()
    open_example(window, EXAMPLES / "h100-64gpu-infiniband.yaml")
    window.scene.select_ids([window.qdoc.doc.nodes[0].id])
    for _ in range(8):
        window.act_duplicate.trigger()
    assert window.qdoc.undo_stack.count() == 5  # the oldest steps went
    assert window.settle()

    # the memory rule: the whole designs the history keeps (one per generate) stay under the bound
    _answer_generator(monkeypatch, 64)
    window.act_generate.trigger()
    assert window.settle() and window.qdoc.doc.num_gpus() == 512
    one_design = sum(len(getattr(window.qdoc.doc.spec, k)) for k in ("racks", "nodes", "switches", "links"))
    monkeypatch.setattr(qt_document, "UNDO_KEPT_ELEMENTS", one_design * 3 // 2)
    for _ in range(2):
        window.act_generate.trigger()
        assert window.settle()
        assert window.qdoc.kept_elements() <= qt_document.UNDO_KEPT_ELEMENTS
    assert "undo history cleared" in window.statusBar().currentMessage()
    window.act_undo.trigger()  # the last generate's undo still works
    assert window.settle() and window.qdoc.doc.num_gpus() == 512
    window.qdoc.undo_stack.setClean()
    window.close()


@pytest.mark.slow
def test_file_open_reads_in_the_background_and_cancel_keeps_the_design(empty_window, qtbot, monkeypatch):
    import designer.core.io as io
    from PySide6.QtWidgets import QFileDialog

    window = empty_window
    open_example(window, EXAMPLES / "h100-64gpu-infiniband.yaml")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(A100), "")))
    release = threading.Event()
    real = io.load_document

    def slow(*args, **kwargs):
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(io, "load_document", slow)
    window.act_open.trigger()  # returns at once, the file still being read
    dialog = window.findChild(QProgressDialog, "progress")
    assert dialog is not None and dialog.isVisible() and not release.is_set()
    QTest.mouseClick(next(b for b in dialog.findChildren(QPushButton) if b.text() == "Cancel"), Qt.LeftButton)
    release.set()
    assert window.progress.wait()
    qtbot.wait(50)
    assert window.settle() and window.qdoc.doc.num_gpus() == 64  # cancelled: the open design stays

    window.act_open.trigger()  # again, to the end this time
    assert window.settle() and window.qdoc.doc.num_gpus() == 1024 and window.progress.seen


def test_a_tp_edit_in_the_job_panel_changes_tp_only(empty_window):
    """The Job panel used to write the first choice of every unset optional field (fp8_recipe: delayed,
    ...) with any edit: on A100s a TP edit then reported an FP8 error and nothing was evaluated."""
    import dataclasses

    window = empty_window
    open_example(window)
    before = window.qdoc.doc.spec.parallelism
    type_like_a_user(window, TP, "4")
    assert window.settle()
    after = window.qdoc.doc.spec.parallelism
    changed = [f.name for f in dataclasses.fields(before) if getattr(before, f.name) != getattr(after, f.name)]
    assert changed == ["tensor_model_parallel_size"]
    assert window.result is not None and not any(p.severity == "error" for p in window.problems)


@pytest.mark.slow
def test_a_new_speed_typed_for_one_cable_is_that_cables_alone_after_save_and_reopen(empty_window, tmp_path,
                                                                                     monkeypatch):
    """The loader shares one object among equal speeds and kinds (2,048 links, one 200.0): a speed
    typed into the Inspector for one cable changes that cable only, on screen and in the file."""
    import shutil

    from PySide6.QtWidgets import QFileDialog

    window = empty_window
    path = tmp_path / A100.name
    shutil.copy(A100, path)
    open_example(window, path)
    links = window.qdoc.doc.links
    assert links[0].bandwidth_gbps is links[1].bandwidth_gbps  # shared by the loader
    before = {l.id: (l.bandwidth_gbps, l.kind) for l in links}
    link = spine_link(window.qdoc.doc)
    window.scene.select_ids([link.id])
    assert window.settle()
    type_into_inspector(window, "bandwidth_gbps", "123")
    assert window.settle()
    window.act_save.trigger()
    saved = window.qdoc.doc.links[0]
    assert window.qdoc.undo_stack.isClean()  # saved: File > Open asks nothing
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))
    window.act_open.trigger()
    assert window.settle() and window.qdoc.doc.links[0] is not saved  # read anew from the file
    after = {l.id: (l.bandwidth_gbps, l.kind) for l in window.qdoc.doc.links}
    assert after.pop(link.id) == (123.0, before.pop(link.id)[1])
    assert after == before


def test_the_windows_engine_keeps_a_bounded_number_of_plans(empty_window):
    """Trying TP values on a 131k-GPU design grew the window ~85 MB a plan, up to 8 plans: its
    engine keeps the groups of one at that size (core/engine/evaluate.py, WINDOW_GROUP_BUDGET)."""
    from designer.core.engine.evaluate import WINDOW_GROUP_BUDGET

    window = empty_window
    open_example(window)
    engine = window.worker.engine
    assert engine.group_budget == WINDOW_GROUP_BUDGET
    type_like_a_user(window, TP, "4")
    assert window.settle() and window.result.plan["tp"] == 4
    assert window.worker.engine is engine  # the same engine, with its budget, answered the edit


@pytest.mark.slow
def test_the_worker_gives_free_memory_back_after_each_job(empty_window, monkeypatch):
    """After an evaluation (and a timeline's events, a link's load) the worker hands the heap's free pages
    back (malloc_arenas.give_back_free_memory: glibc's malloc_trim; nothing elsewhere): at 131k GPUs a
    job's temporaries left tens of MB counted as the window's."""
    from designer.ui.work import malloc_arenas
    from designer.ui.work import worker

    calls = []
    real = malloc_arenas.give_back_free_memory
    monkeypatch.setattr(worker, "give_back_free_memory", lambda: calls.append(real()) or calls[-1])
    window = empty_window
    open_example(window)
    before = len(calls)
    type_like_a_user(window, TP, "4")
    assert window.settle() and window.result.plan["tp"] == 4
    assert len(calls) > before and all(seconds >= 0.0 for seconds in calls)


@pytest.mark.slow
def test_the_worker_lets_go_of_a_result_once_its_link_load_is_delivered(empty_window, qtbot):
    """The link-load (and timeline) thread keeps nothing of a finished job while it waits for the
    next: a local that outlived its job kept the result and its document snapshot (~40 MB at 131k
    GPUs, and every element edited meanwhile copied for that snapshot)."""
    import gc
    import weakref

    window = empty_window
    open_example(window)
    assert window.settle() and window.result is not None
    result = Engine().evaluate(window.qdoc.doc)  # a result of the worker's thread's own to word
    snapshot = window.qdoc.doc.snapshot()
    kept = weakref.ref(result), weakref.ref(snapshot)
    with qtbot.waitSignal(window.worker.linkLoadReady, timeout=30_000) as delivered:
        window.worker.build_link_load(window.worker.latest, result, snapshot)
    assert delivered.args[1] is result and delivered.args[2] is not None
    del result, snapshot, delivered
    qtbot.waitUntil(lambda: gc.collect() is not None and kept[0]() is None and kept[1]() is None, timeout=5_000)
