"""Panels never go blank or contradict one another: an invalid edit keeps the last valid result,
marked stale with the reason; one list of problems everywhere; every message readable whole; the
comparison never spans two files."""
from PySide6.QtCore import QRect, Qt
from PySide6.QtTest import QTest

from tests.conftest import EXAMPLES
from tests.ui.test_editor import window  # noqa: F401  (the fixture)

TP = "parallelism.tensor_model_parallel_size"


def type_like_a_user(window, path, text):
    """Click into the Job panel's field, select what is there, type, press Enter."""
    window.job_dock.show()
    window.job_dock.raise_()
    editor = window.job_panel.editors[path]
    QTest.mouseClick(editor, Qt.LeftButton)
    QTest.keyClick(editor, Qt.Key_A, Qt.ControlModifier)
    QTest.keyClicks(editor, text)
    QTest.keyClick(editor, Qt.Key_Return)


def open_example(window, name="h100-64gpu-infiniband.yaml"):
    window.open_file(str(EXAMPLES / name))
    assert window.settle() and window.result is not None


def test_an_invalid_tp_keeps_the_last_result_marked_stale_with_the_reason(window):
    open_example(window)
    breakdown, timeline = window.breakdown_panel, window.timeline_panel
    step_before = breakdown.headline["step"].text()
    bars_before = timeline.bar_count()
    assert f"{window.result.step_time_s:.3f} s" in step_before and bars_before > 0

    type_like_a_user(window, TP, "3")
    assert window.settle()
    assert window.qdoc.doc.spec.parallelism.tensor_model_parallel_size == 3
    assert window.result is None  # nothing current: exports and the heat map say so
    # the breakdown still shows the old figures, under a banner naming the reason
    assert breakdown.is_stale() and breakdown.headline["step"].text() == step_before
    assert breakdown.headline["step"].isVisibleTo(breakdown)
    banner = breakdown.stale_banner.text()
    assert banner.startswith("showing the last valid result: ") and "does not divide the 64 GPUs" in banner
    assert timeline.is_stale() and timeline.bar_count() == bars_before
    assert "does not divide the 64 GPUs" in timeline.stale_banner.text()

    # a valid value again: the banner goes, and the change is measured from the last valid result
    before = breakdown.result
    type_like_a_user(window, TP, "4")
    assert window.settle() and window.result is not None
    assert not breakdown.is_stale() and not timeline.is_stale()
    assert (breakdown.previous.step_time_s, breakdown.previous.breakdown_s) == (before.step_time_s, before.breakdown_s)
    assert "change since the previous evaluation" in breakdown.diff_label.text()
    assert f"({before.step_time_s:.3f} s)" in breakdown.diff_label.text()


def test_status_bar_popup_and_job_panel_list_the_same_problems(window):
    from designer.core.problems import count_text  # "2 errors, 1 warning": the one summary

    open_example(window)
    type_like_a_user(window, TP, "3")
    assert window.settle()
    problems = window.problems
    assert sum(p.severity == "error" for p in problems) >= 1
    count = count_text(problems)
    first = next(p for p in problems if p.severity == "error")
    # the status bar: the count and the first message (elided), every problem in its tooltip
    assert window.problems_button.text().startswith(count + ": ")
    assert window.problems_button.text() != "no problems"
    assert all(p.format() in window.problems_button.toolTip() for p in problems)
    assert first.message[:20] in window.problems_button.text()
    # its popup: the very same list
    assert window.problems_popup.texts() == [p.format() for p in problems]
    # the Job panel: the same count, and each job problem beside its field
    assert count in window.job_panel.summary.text()
    beside = window.job_panel.field_texts()
    for p in problems:
        field = p.path.replace("spec.", "", 1)
        if field in window.job_panel.editors:
            assert p.message in beside[field]


def test_opening_another_file_does_not_compare_with_the_first(window):
    open_example(window)
    type_like_a_user(window, TP, "4")  # a real change within one design is compared ...
    assert window.settle() and "change since the previous evaluation" in window.breakdown_panel.diff_label.text()
    open_example(window, "h100-roce-2to1-ethernet.yaml")  # ... another file is not
    breakdown = window.breakdown_panel
    assert breakdown.previous is None and breakdown.diff_text() == "first evaluation"
    assert "change since" not in breakdown.diff_label.text()
    assert window.previous_result is None
    # a generated fabric replacing the design (one undoable step) is not compared with the design before
    from designer.core.io import load_document
    from designer.ui.document import commands

    window.qdoc.push(commands.ReplaceDocument(window.qdoc, load_document(EXAMPLES / "h100-64gpu-infiniband.yaml"),
                                              "Generate fat-tree"))
    assert window.settle() and window.result is not None
    assert breakdown.previous is None and "change since" not in breakdown.diff_label.text()
    # and an invalid design opened next shows no stale result of the file before
    window.files.new()
    assert window.settle()
    assert not breakdown.is_stale() and breakdown.result is None


def test_long_problem_messages_are_readable_whole(window):
    open_example(window)
    type_like_a_user(window, TP, "3")
    assert window.settle()
    long_ones = [p for p in window.problems if len(p.format()) > 60]
    assert long_ones
    for p in window.problems:
        full = p.format()
        assert full in window.problems_button.toolTip()  # the status bar: whole in its tooltip
        assert full in window.problems_popup.texts()  # the popup: whole, wrapped
    # the Job panel's labels wrap and hold the whole message and fix
    label = window.job_panel.errors[TP]
    tp_problem = next(p for p in window.problems if p.path.endswith("tensor_model_parallel_size"))
    assert label.wordWrap() and tp_problem.message in label.text() and tp_problem.fix in label.text()
    QTest.qWait(50)  # the scroll area lays the form out
    assert label.isVisible() and label.height() >= label.heightForWidth(label.width()), "squeezed: text cut"
    # the stale banner wraps and keeps the whole reason; the status bar's "not evaluated" has it in its tooltip
    banner = window.breakdown_panel.stale_banner
    assert banner.wordWrap() and window.stale_reason in banner.text()
    assert window.result_label.text() == "not evaluated (the design has errors)"
    assert window.result_label.toolTip() == window.stale_reason
    # the problem list opens inside the window, however long its messages are
    window.problems_button.click()
    popup = window.problems_popup
    assert popup.isVisible() and popup.list.wordWrap()
    assert QRect(0, 0, window.width(), window.height()).contains(popup.geometry())
    QTest.keyClick(popup.list, Qt.Key_Escape)
    assert not popup.isVisible()


def test_a_dropped_server_keeps_the_last_result_and_suggests_num_gpus(window):
    """64 GPUs and batch 256 make DP 32; a ninth server (72 GPUs) makes DP 36, which 256 does not divide."""
    from PySide6.QtCore import QMimeData, QPoint, QPointF
    from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
    from PySide6.QtWidgets import QApplication

    from designer.ui.canvas.view import MIME_PART

    open_example(window)
    step_before = window.breakdown_panel.headline["step"].text()
    mime = QMimeData()
    mime.setData(MIME_PART, b"server?accelerator=H100-SXM5-80GB&count=8&nic_gbps=400&nic_kind=infiniband")
    viewport = window.view.viewport()
    at = QPoint(20, 20)
    for event in (QDragEnterEvent(at, Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier),
                  QDragMoveEvent(at, Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier),
                  QDropEvent(QPointF(at), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)):
        QApplication.sendEvent(viewport, event)  # a server dragged from the Parts palette and dropped
    assert window.qdoc.doc.num_gpus() == 72 and window.settle()
    breakdown = window.breakdown_panel
    assert breakdown.is_stale() and breakdown.headline["step"].text() == step_before
    assert "does not divide by micro_batch_size x DP = 1 x 36" in breakdown.stale_banner.text()
    beside = window.job_panel.field_texts()["workload.global_batch_size"]
    assert "set num_gpus to 64" in beside  # the fix a person wants: keep the job on its 64 GPUs


def test_a_long_status_message_is_whole_in_the_tooltip(window):
    long = ("rack rack0 has no 4U free: use another rack, or make room by moving a server down; " * 3).strip()
    window.tell(long)
    bar = window.statusBar()
    assert bar.currentMessage() == long and bar.toolTip() == long
    bar.clearMessage()
    assert bar.toolTip() == ""


def test_a_long_refusal_is_shown_whole_not_cut_at_100_characters(window):
    """A server whose cables are all deleted: the job no longer fits on the servers it can reach,
    and the check says so (as the engine would) with a reason longer than 100 characters."""
    open_example(window)
    node = window.qdoc.doc.nodes[0].id
    cables = [link.id for link in window.qdoc.doc.links_of(node)]
    window.scene.select_ids(cables)
    window.act_delete.trigger()
    assert window.settle() and window.result is None
    assert any(p.severity == "error" for p in window.problems)  # refused before the engine runs
    reason = window.stale_reason
    assert f"{node}: GPU 0's NIC nic0 is not cabled" in reason and len(reason) > 100
    assert window.breakdown_panel.is_stale() and reason in window.breakdown_panel.stale_banner.text()
    assert reason in window.result_label.toolTip()
    shown = window.result_label.text()
    assert shown.endswith("…") or shown.startswith("not evaluated")  # elided visibly, never cut silently


def test_a_tp_group_past_the_server_is_warned_beside_the_figures(window):
    """TP 16 on 8-GPU servers runs its TP traffic over the NICs (MFU 22 %): the Breakdown says why,
    next to the figures, and the warning goes when TP fits the server again."""
    open_example(window)
    warnings = window.breakdown_panel.warnings_label
    assert warnings.isHidden()
    type_like_a_user(window, TP, "16")
    assert window.settle() and window.result is not None
    assert warnings.isVisibleTo(window.breakdown_panel)
    assert "TP 16 spans two NVLink domains of 8 GPUs: its traffic goes over the NICs (TP 8 keeps each group " \
           "inside one)" in warnings.text()
    type_like_a_user(window, TP, "8")
    assert window.settle() and window.result is not None
    assert warnings.isHidden()


def test_a_rule_on_tp_x_pp_x_cp_is_said_at_the_field_the_user_changed(window):
    open_example(window)
    pp = "parallelism.pipeline_model_parallel_size"
    type_like_a_user(window, pp, "3")
    assert window.settle()
    texts = window.job_panel.field_texts()
    assert "TP x PP x CP = 2 x 3 x 1 = 6 does not divide the 64 GPUs" in texts.get(pp, "")
    assert TP not in texts  # not under TP, which the user did not touch
    # undone, then the same product reached by editing TP: said under TP
    window.act_undo.trigger()  # Edit > Undo
    assert window.settle()
    assert not window.job_panel.field_texts()
    type_like_a_user(window, pp, "1")
    type_like_a_user(window, TP, "3")
    assert window.settle()
    texts = window.job_panel.field_texts()
    assert "does not divide the 64 GPUs" in texts.get(TP, "") and pp not in texts


def test_a_plan_over_the_memory_is_one_of_the_status_bars_problems_never_beside_no_problems(window):
    open_example(window)
    assert window.problems_button.text() == "no problems"
    type_like_a_user(window, "workload.micro_batch_size", "8")
    assert window.settle() and window.result is not None and not window.result.fits_in_memory
    assert "does not fit in memory" in window.result_label.text()
    assert window.problems_button.text().startswith("1 warning: ")
    assert "does not fit in the GPU's memory" in window.problems_button.text()
    assert "no problems" not in window.problems_button.text()
    type_like_a_user(window, "workload.micro_batch_size", "1")
    assert window.settle() and window.result.fits_with_headroom
    assert window.problems_button.text() == "no problems"
