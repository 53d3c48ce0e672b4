"""Crash recovery: timed atomic snapshots, a sidecar with the original path, discard."""
import json
import os
from datetime import datetime
from pathlib import Path

import pytest

pytest.importorskip("PySide6")


@pytest.fixture
def recovery(tmp_path, monkeypatch):
    folder = tmp_path / "recovery"
    monkeypatch.setenv("DESIGNER_RECOVERY_DIR", str(folder))
    return folder


def test_recovery_dir_from_env(recovery):
    from designer.ui.autosave import recovery_dir

    assert recovery_dir() == recovery and recovery.is_dir()


def test_recovery_dir_default(qapp, monkeypatch, tmp_path):
    from PySide6.QtCore import QStandardPaths

    from designer.ui.autosave import recovery_dir

    monkeypatch.delenv("DESIGNER_RECOVERY_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    expected = QStandardPaths.writableLocation(QStandardPaths.AppLocalDataLocation)
    assert expected
    assert recovery_dir() == Path(expected) / "recovery"
    assert recovery_dir().is_dir()


def test_write_now_writes_the_snapshot(qapp, recovery, small_text):
    from designer.ui.autosave import Autosaver, pending_recoveries

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
    from designer.ui.autosave import Autosaver, pending_recoveries

    saver = Autosaver(lambda: None, interval_ms=0)
    assert saver.write_now() is None
    assert pending_recoveries() == []


def test_untitled_and_odd_names(qapp, tmp_path):
    from designer.ui.autosave import Autosaver, pending_recoveries, safe_name

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
    from designer.ui.autosave import Autosaver, pending_recoveries, remove_recovery

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
    from designer.ui.autosave import pending_recoveries

    (tmp_path / "lost.recovery.yaml").write_text("a: 1\n")
    (tmp_path / "other.yaml").write_text("a: 1\n")
    (rf,) = pending_recoveries(tmp_path)
    assert rf.name == "lost" and rf.original_path is None and rf.saved_at.tzinfo is not None


def test_unchanged_snapshot_not_rewritten(qapp, tmp_path, qtbot):
    from designer.ui.autosave import Autosaver

    saver = Autosaver(lambda: ("doc", "a: 1\n"), interval_ms=0, directory=tmp_path)
    with qtbot.waitSignal(saver.saved, timeout=1000):
        first = saver.write_now()
    with qtbot.assertNotEmitted(saver.saved):
        assert saver.write_now() == first


def test_timer_writes(qtbot, recovery):
    from designer.ui.autosave import Autosaver, pending_recoveries

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
    from designer.ui.autosave import Autosaver

    blocker_file = tmp_path / "not-a-folder"
    blocker_file.write_text("")
    saver = Autosaver(lambda: ("x", "a: 1\n"), interval_ms=50, directory=blocker_file)
    try:
        with qtbot.waitSignal(saver.failed, timeout=2000) as blocker:
            pass
        assert "cannot write the recovery file" in blocker.args[0]
    finally:
        saver.stop()
