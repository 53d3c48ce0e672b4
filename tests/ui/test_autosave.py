"""Crash recovery: timed atomic snapshots, a sidecar with the original path, discard."""
import json
import os
from datetime import datetime
from pathlib import Path

import pytest



@pytest.fixture
def recovery(tmp_path, monkeypatch):
    folder = tmp_path / "recovery"
    monkeypatch.setenv("DESIGNER_RECOVERY_DIR", str(folder))
    return folder


def test_recovery_dir_from_env(recovery):
    from designer.ui.document.autosave import recovery_dir

    assert recovery_dir() == recovery and recovery.is_dir()


def test_recovery_dir_default(qapp, monkeypatch, tmp_path):
    from PySide6.QtCore import QStandardPaths

    from designer.ui.document.autosave import recovery_dir

    monkeypatch.delenv("DESIGNER_RECOVERY_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    expected = QStandardPaths.writableLocation(QStandardPaths.AppLocalDataLocation)
    assert expected
    assert recovery_dir() == Path(expected) / "recovery"
    assert recovery_dir().is_dir()


def test_write_now_writes_the_snapshot(qapp, recovery, small_text):
    from designer.ui.document.autosave import Autosaver, pending_recoveries

    original = str(recovery.parent / "designs" / "small.yaml")
    saver = Autosaver(lambda: (original, small_text), interval_ms=0)
    path = saver.write_now()
    assert path is not None
    assert os.path.dirname(path) == str(recovery)
    assert os.path.basename(path) == "small.recovery.yaml"
    with open(path, encoding="utf-8") as fh:
        assert fh.read() == small_text
    meta = json.loads((recovery / "small.recovery.json").read_text())
    assert meta["original_path"] == original and meta["pid"] == os.getpid()
    assert datetime.fromisoformat(meta["saved_at"]).tzinfo is not None

    (rf,) = pending_recoveries()
    assert str(rf.path) == path
    assert rf.original_path == original
    assert rf.name == "small.yaml"
    assert isinstance(rf.saved_at, datetime) and abs((datetime.now().astimezone() - rf.saved_at).total_seconds()) < 60
    assert rf.text() == small_text

    saver.discard()
    assert pending_recoveries() == []
    assert list(recovery.iterdir()) == []


def test_none_snapshot_writes_nothing(qapp, recovery):
    from designer.ui.document.autosave import Autosaver, pending_recoveries

    saver = Autosaver(lambda: None, interval_ms=0)
    assert saver.write_now() is None
    assert pending_recoveries() == []


def test_untitled_and_odd_names(qapp, tmp_path):
    from designer.ui.document.autosave import Autosaver, pending_recoveries, safe_name

    assert safe_name("untitled") == "untitled"
    assert safe_name("../../etc/passwd") == "passwd"
    assert safe_name("my pod: v2") == "my_pod_v2"
    assert safe_name("...") == "untitled"
    saver = Autosaver(lambda: ("my pod: v2", "x: 1\n"), interval_ms=0, directory=tmp_path)
    path = saver.write_now()
    assert path == str(tmp_path / "my_pod_v2.recovery.yaml")
    (rf,) = pending_recoveries(tmp_path)
    assert rf.original_path is None and rf.name == "my pod: v2"


def test_rename_replaces_the_old_file_and_remove_recovery(qapp, tmp_path):
    from designer.ui.document.autosave import Autosaver, pending_recoveries, remove_recovery

    state = {"name": "untitled", "text": "a: 1\n"}
    saver = Autosaver(lambda: (state["name"], state["text"]), interval_ms=0, directory=tmp_path)
    saver.write_now()
    state["name"] = str(tmp_path / "saved-as.yaml")
    saver.write_now()
    (rf,) = pending_recoveries(tmp_path)
    assert rf.path.name == "saved-as.recovery.yaml"
    remove_recovery(rf)
    assert list(tmp_path.iterdir()) == []


def test_sidecar_missing_still_listed(tmp_path):
    from designer.ui.document.autosave import pending_recoveries

    (tmp_path / "lost.recovery.yaml").write_text("a: 1\n")
    (tmp_path / "other.yaml").write_text("a: 1\n")
    (rf,) = pending_recoveries(tmp_path)
    assert rf.name == "lost" and rf.original_path is None and rf.saved_at.tzinfo is not None


def test_unchanged_snapshot_not_rewritten(qapp, tmp_path, qtbot):
    from designer.ui.document.autosave import Autosaver

    saver = Autosaver(lambda: ("doc", "a: 1\n"), interval_ms=0, directory=tmp_path)
    with qtbot.waitSignal(saver.saved, timeout=1000):
        first = saver.write_now()
    with qtbot.assertNotEmitted(saver.saved):
        assert saver.write_now() == first


def test_timer_writes(qtbot, recovery):
    from designer.ui.document.autosave import Autosaver, pending_recoveries

    saver = Autosaver(lambda: ("timed", "b: 2\n"), interval_ms=50)
    try:
        with qtbot.waitSignal(saver.saved, timeout=2000) as blocker:
            pass
        assert blocker.args == [str(recovery / "timed.recovery.yaml")]
        assert [rf.name for rf in pending_recoveries()] == ["timed"]
    finally:
        saver.stop()
        saver.discard()
    assert pending_recoveries() == []


def test_timer_reports_write_errors(qtbot, tmp_path):
    from designer.ui.document.autosave import Autosaver

    blocker_file = tmp_path / "not-a-folder"
    blocker_file.write_text("")
    saver = Autosaver(lambda: ("x", "a: 1\n"), interval_ms=50, directory=blocker_file)
    try:
        with qtbot.waitSignal(saver.failed, timeout=2000) as blocker:
            pass
        assert "cannot write the recovery file" in blocker.args[0]
    finally:
        saver.stop()


# ---- the window's work is never lost or stranded ----

@pytest.fixture
def app_window(qtbot, tmp_path, recovery, monkeypatch):
    """A window as the app starts it (autosave on), on a saved design; message boxes recorded."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from designer.ui.app import _start_autosave
    from designer.ui.window.main_window import MainWindow

    boxes = []

    def box(parent, title, text, *args, **kwargs):
        boxes.append((title, text))
        return QMessageBox.Ok

    monkeypatch.setattr(QMessageBox, "critical", staticmethod(box))
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(box))
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Yes))

    def make(path=None):
        window = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
        qtbot.addWidget(window)
        window.boxes = boxes
        window.resize(1000, 700)
        window.show()
        qtbot.waitExposed(window)
        _start_autosave(window)
        if path is not None:
            window.open_file(str(path))
        window.settle()
        return window

    return make


@pytest.fixture
def design(tmp_path, small_text):
    path = tmp_path / "pod.yaml"
    path.write_text(small_text)
    return path


@pytest.mark.slow
def test_an_infinite_bandwidth_is_named_on_save_autosaved_and_recovered(qtbot, app_window, design, recovery):
    import math

    from designer.ui.document import commands
    from designer.ui.app import offer_recovery
    from designer.ui.document.autosave import pending_recoveries

    window = app_window(design)
    before = design.read_bytes()
    window.qdoc.push(commands.SetFields(window.qdoc, {"l2": {"bandwidth_gbps": math.inf}}, "Set bandwidth"))
    with qtbot.captureExceptions() as exceptions:
        window.act_save.trigger()
    assert not exceptions
    ((title, text),) = window.boxes
    assert title == "Cannot save" and "l2.bandwidth_gbps is inf" in text and "Inspector" in text
    assert design.read_bytes() == before and window.qdoc.dirty

    # The minute's autosave still writes the work (no exception in the timer's slot).
    window.autosaver.timer.setInterval(20)
    with qtbot.captureExceptions() as exceptions:
        with qtbot.waitSignal(window.autosaver.saved, timeout=3000):
            window.autosaver.start()
    window.autosaver.stop()
    assert not exceptions
    (rf,) = pending_recoveries()
    assert "bandwidth_gbps: .inf" in rf.text()

    # The process dies; the next start offers the work back, the bad value included and named.
    window.boxes.clear()
    fresh = app_window()
    assert offer_recovery(fresh)
    assert math.isinf(fresh.qdoc.doc.find("links", "l2").bandwidth_gbps)
    assert fresh.qdoc.path == str(design.resolve()) or fresh.qdoc.path == str(design)
    assert fresh.settle()
    assert any(p.element == "l2" and "bandwidth_gbps" in p.path for p in fresh.problems)
    assert window.boxes and "l2.bandwidth_gbps is inf" in window.boxes[-1][1]
    fresh.qdoc.undo_stack.setClean()
    window.qdoc.undo_stack.setClean()


@pytest.mark.slow
def test_the_recovery_file_outlives_a_second_crash_until_saved(qtbot, app_window, design, recovery):
    from designer.ui.document import commands
    from designer.ui.app import offer_recovery
    from designer.ui.document.autosave import pending_recoveries

    window = app_window(design)
    window.qdoc.push(commands.SetFields(window.qdoc, {"n0": {"accelerator_count": 6}}, "Edit"))
    window.autosaver.write_now()
    # crash; the next start recovers the work ...
    second = app_window()
    assert offer_recovery(second)
    assert second.qdoc.doc.find("nodes", "n0").accelerator_count == 6
    # ... and crashes again within the minute, before any autosave: the work is still there.
    assert len(pending_recoveries()) == 1
    third = app_window()
    assert offer_recovery(third)
    assert third.qdoc.doc.find("nodes", "n0").accelerator_count == 6
    # A newer autosave supersedes the file; saving the design removes it.
    third.qdoc.push(commands.SetFields(third.qdoc, {"n1": {"accelerator_count": 4}}, "Edit"))
    third.autosaver.write_now()
    (rf,) = pending_recoveries()
    assert "n1" in rf.text() and '"accelerator_count": 4' in rf.text()
    assert third.files.save() and pending_recoveries() == []
    for w in (window, second):
        w.qdoc.undo_stack.setClean()


@pytest.mark.parametrize("depth", [5, 6])
def test_a_layout_alias_bomb_is_refused_or_autosaves_quickly(qtbot, app_window, tmp_path, small_text, depth):
    """A file as Designer saves it, with a small alias bomb under spec.layout (10**depth leaves)."""
    import time

    from designer.core.io import dumps_document, loads_document
    from designer.ui.document import commands

    lines = ["  layout:", "    a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"]
    lines += [f"    a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, depth)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(dumps_document(loads_document(small_text, "small.yaml")) + "\n".join(lines) + "\n")
    window = app_window()
    from designer.core.problems import DesignerError

    try:
        window.open_file(str(bomb))
    except DesignerError as exc:  # refused at load: say where
        assert "bomb.yaml:" in str(exc)
        return
    window.qdoc.push(commands.SetFields(window.qdoc, {"n0": {"accelerator_count": 6}}, "Edit"))
    started = time.perf_counter()
    path = window.autosaver.write_now()
    took_s = time.perf_counter() - started
    assert path is not None and took_s < 1.0, f"autosave took {took_s:.1f} s"
    assert os.path.getsize(path) < 100_000
    window.qdoc.undo_stack.setClean()
