"""Every command of every menu does what it says when the user picks it.

The walk triggers each menu action (submenus and Open Recent included) through QAction.trigger(),
the way a click on the menu does, with the file dialogs answering a temporary path and the modal
dialogs intercepted. An export must write its file, a dialog command must open its dialog, and
nothing may raise, show an error box or make Qt warn. A new menu action without an expectation
below fails the test, so that it gets one.
"""
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES


OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints"  # the offscreen plugin's own, on show()


def plain(text: str) -> str:
    text = text.replace("&", "").rstrip(".").rstrip("…").strip()
    return text.split()[0] if text.startswith(("Undo", "Redo")) else text  # "Undo Delete 1 item(s)" -> "Undo"


def walk(menu, where: str):
    """(menu path, action) for every action of the menu and its submenus, in menu order."""
    for act in menu.actions():
        if act.isSeparator():
            continue
        if act.menu() is not None:
            yield from walk(act.menu(), f"{where} > {plain(act.text())}")
        else:
            yield f"{where} > {plain(act.text())}", act


def menu_actions(window):
    return [(path, act) for top in window.menuBar().actions() if top.menu() is not None
            for path, act in walk(top.menu(), plain(top.text()))]


@pytest.mark.slow
def test_every_menu_action_does_what_it_says(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings, QtMsgType, qInstallMessageHandler
    from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QInputDialog, QMessageBox

    from designer.ui.dialogs.generator_dialog import GeneratorDialog
    from designer.ui.window.layout_memory import LAYOUT_KEY
    from designer.ui.window.main_window import MainWindow

    design = tmp_path / "design.yaml"
    shutil.copy(EXAMPLES / "h100-64gpu-infiniband.yaml", design)
    out = tmp_path / "out"
    out.mkdir()

    # ---- the dialogs answer at once, and say that they were asked ----
    asked: list[tuple[str, str]] = []
    boxes: list[tuple[str, str, str]] = []

    def save_name(parent=None, caption="", directory="", *args, **kwargs):
        asked.append(("save", caption))
        return str(out / (Path(directory).name or "unnamed")), ""

    data = Path(__file__).parents[1] / "data"
    import_files = {  # File > Import: a real file of each importer's format
        "Import ibnetdiscover output": data / "ibnetdiscover" / "oracle-sun-dcs36-qdr.topo",
        "Import iblinkinfo output": data / "iblinkinfo" / "edr-sb7700-hpl-2node.txt",
        "Import a Slurm topology.conf": data / "slurm" / "topograph-tree.conf",
        "Import an NCCL topology XML": data / "nccl-topo" / "ibm-cloud-h100-8nic.xml",
        "Import a Megatron-LM launch script": data / "megatron_args" / "train_llama3_8b_h100_fp8.sh",
    }

    def open_name(parent=None, caption="", *args, **kwargs):
        asked.append(("open", caption))
        return str(import_files.get(caption, design)), ""

    def folder(parent=None, caption="", *args, **kwargs):
        asked.append(("folder", caption))
        return str(out)

    def box(kind, answer):
        def show(parent, title, text, *args, **kwargs):
            boxes.append((kind, title, text))
            return answer
        return staticmethod(show)

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_name))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(open_name))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(folder))
    nccl_log = Path(__file__).parents[1] / "data" / "nccl-tests" / "a3mega-h100-2node-all_reduce.txt"
    monkeypatch.setattr(QFileDialog, "getOpenFileNames",  # File > Calibrate from nccl-tests: a real log
                        staticmethod(lambda parent=None, caption="", *a, **k:
                                     asked.append(("open", caption)) or ([str(nccl_log)], "")))
    monkeypatch.setattr(QMessageBox, "critical", box("critical", QMessageBox.Ok))
    monkeypatch.setattr(QMessageBox, "warning", box("warning", QMessageBox.Ok))
    monkeypatch.setattr(QMessageBox, "information", box("information", QMessageBox.Ok))
    monkeypatch.setattr(QMessageBox, "question",  # "Save the changes?": no, drop them (not an error)
                        staticmethod(lambda parent, title, *a, **k: asked.append(("question", title))
                                     or QMessageBox.Discard))
    monkeypatch.setattr(QInputDialog, "getInt",
                        staticmethod(lambda *a, **k: asked.append(("int", a[1])) or (2, True)))
    monkeypatch.setattr(QInputDialog, "getItem",
                        staticmethod(lambda parent, title, label, items, *a, **k:
                                     asked.append(("item", title)) or ("rack0", True)))
    monkeypatch.setattr(QInputDialog, "getText",
                        staticmethod(lambda *a, **k: asked.append(("text", a[1])) or ("x", True)))
    generated: list[dict] = []

    def run_generator(dialog):  # the modal Generate dialog: opened, then accepted with its defaults
        asked.append(("dialog", dialog.windowTitle()))
        generated.append(dialog.options())
        dialog.setResult(QDialog.Accepted)
        return QDialog.Accepted

    monkeypatch.setattr(GeneratorDialog, "exec", run_generator)

    def run_other_modal(dialog):  # any other modal dialog (a QMessageBox built by hand too): never blocks
        asked.append(("modal", type(dialog).__name__))
        return QDialog.Rejected

    monkeypatch.setattr(QDialog, "exec", run_other_modal)

    window = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    qtbot.waitExposed(window)
    window.open_file(str(design))  # also the one entry of Open Recent
    assert window.settle()
    assert window.result is not None

    docks = {dock.toggleViewAction(): dock for dock in window.findChildren(type(window.job_dock))}
    doc = lambda: window.qdoc.doc  # noqa: E731 - the open document changes under New / Open / Generate
    nodes = lambda: doc().counts()["nodes"]  # noqa: E731

    def wrote(suffix):
        def check(before):
            made = [p for p in out.iterdir() if p.suffix == suffix and p.stat().st_size > 0
                    and p not in before["files"]]
            assert made, f"no new {suffix} file in {sorted(p.name for p in out.iterdir())}"
        return check

    def dialog_opened(kind):
        def check(before):
            assert asked and asked[-1][0] == kind, f"expected a {kind} dialog, asked: {asked[-3:]}"
        return check

    def help_dialog(kind):
        def check(_before):
            dialog = window.__dict__.get("help_dialogs", {}).get(kind)
            assert dialog is not None and dialog.isVisible() and dialog.text().strip()
            dialog.close()
        return check

    def same_path(a, b):
        return a and Path(a).resolve() == Path(b).resolve()

    def compared(before):  # File > Compare With...: the design beside the file picked (itself here)
        dialog_opened("open")(before)
        dialog = window.tools.compare_dialog
        qtbot.waitUntil(lambda: dialog.comparison is not None or dialog.error is not None, timeout=60000)
        assert dialog.error is None and dialog.isVisible(), dialog.error
        assert dialog.comparison.identical and "no difference" in dialog.summary.text()
        dialog.close()
        return True

    # What each command visibly does; `before` is what the test noted just before triggering it.
    expectations = {
        "File > New": lambda before: (not window.qdoc.path and nodes() == 0),
        "File > Open": lambda before: (dialog_opened("open")(before), same_path(window.qdoc.path, design))[1],
        "File > Save": lambda before: design.stat().st_mtime_ns != before["mtime"],
        "File > Save As": wrote(".yaml"),
        "File > Export Canvas": wrote(".png"),
        "File > Export Breakdown Plot": wrote(".png"),
        "File > Export Timeline Plot": wrote(".png"),
        "File > Export Trace (Perfetto)": wrote(".json"),
        "File > Report (PDF)": wrote(".pdf"),
        "File > Compare With": compared,
        "File > Calibrate from nccl-tests": lambda before: (  # the fit shown in its dialog (Cancel here)
            asked[-2] == ("open", "Calibrate from nccl-tests logs") and asked[-1] == ("modal", "CalibrationDialog")
            and window.tools.calibration_dialog.constants.rowCount() >= 1),
        # closed for real, not hidden: the close saved the docks' layout for the next run
        "File > Quit": lambda before: not window.isVisible() and window.settings.value(LAYOUT_KEY) is not None,
        "Edit > Undo": lambda before: window.qdoc.undo_stack.index() == before["index"] - 1,
        "Edit > Redo": lambda before: window.qdoc.undo_stack.index() == before["index"] + 1,
        "Edit > Cut": lambda before: nodes() < before["nodes"] and before["selected"] in QApplication.clipboard().text(),
        "Edit > Copy": lambda before: before["selected"] in QApplication.clipboard().text(),
        "Edit > Paste": lambda before: nodes() > before["nodes"],
        "Edit > Duplicate": lambda before: nodes() > before["nodes"],
        "Edit > Duplicate Many": lambda before: (dialog_opened("int")(before), nodes() > before["nodes"])[1],
        "Edit > Delete": lambda before: nodes() < before["nodes"],
        "Edit > Connect to Fabric": lambda before: (window.qdoc.undo_stack.index() == before["index"] + 1
                                                     and "connected" in window.statusBar().currentMessage()),
        "Edit > Mark Down": lambda before: (doc().switches[0].state == "down"
                                            and window.qdoc.undo_stack.index() == before["index"] + 1),
        "Edit > Mark Up": lambda before: doc().switches[0].state == "up",
        "Edit > Select All": lambda before: len(window.scene.selected_ids()) > 1,
        "Edit > Find": lambda before: (dialog_opened("item")(before), window.scene.selected_ids() == ["rack0"])[1],
        "View > Fit": lambda before: window.view.transform() != before["transform"],
        "View > Zoom In": lambda before: window.view.transform().m11() > before["transform"].m11(),
        "View > Zoom Out": lambda before: window.view.transform().m11() < before["transform"].m11(),
        "View > Grid": lambda before: window.act_grid.isChecked() != before["checked"],
        "View > Snap to Grid": lambda before: window.act_snap.isChecked() != before["checked"],
        "View > Link Heat": lambda before: window.act_heat.isChecked() != before["checked"],
        "View > Reset Layout": lambda before: (window.breakdown_dock.isVisible() and window.inspector_dock.isVisible()
                                               and "layout reset" in window.statusBar().currentMessage()),
        "View > Heat by Busiest Phase": lambda before: (window.act_heat_phase.isChecked() != before["checked"]
                                                        and window.scene.heat.mode == ("phase" if not before["checked"]
                                                                                        else "step")),
        "Tools > Generate Fat-Tree": lambda before: (
            dialog_opened("dialog")(before),
            doc().num_gpus() == generated[-1]["nodes"] * generated[-1]["gpus_per_node"])[1],
        "Tools > Parts and Costs": lambda before: (  # the prices of the design's parts and what they cost
            window.tools.costs_dialog.settle() and window.tools.costs_dialog.cost is not None
            and window.tools.costs_dialog.prices.rowCount() > 2 and window.tools.costs_dialog.close()),
        "Tools > Compare Clusters for a Model": lambda before: (  # the dialog on the open design's job
            window.tools.decide_dialog.isVisible() and window.tools.decide_dialog.designs.count() == 1
            and window.tools.decide_dialog.close()),
        "Help > Quick Guide": help_dialog("guide"),
        "Help > Keyboard Shortcuts": help_dialog("shortcuts"),
        "Help > About Designer": help_dialog("about"),
    }

    def expectation(path, act):
        if act in docks:  # View > (each panel): shows or hides its dock
            dock = docks[act]
            return lambda before: dock.isVisibleTo(window) != before["dock_visible"]
        if path.startswith("File > Import > "):  # the file read, its summary shown (Cancel here): nothing changes
            return lambda before: (asked[-2][0] == "open" and asked[-2][1] in import_files
                                   and asked[-1] == ("modal", "ImportSummaryDialog")
                                   and window.imports.last_summary.summary.rows
                                   and window.qdoc.undo_stack.index() == before["index"])
        if path.startswith("File > Open Recent > "):
            return lambda before: same_path(window.qdoc.path, design)
        if path.startswith("File > Open Example > "):  # the example as an untitled copy; then the design again
            name = path.rsplit(" > ", 1)[1]

            def opened_example(before):
                shown = window.qdoc.name == f"{name} (example)" and window.qdoc.path is None
                window.open_file(str(design))
                return shown and window.settle()
            return opened_example
        assert path in expectations, f"menu action {path!r} has no expectation in this test: add one"
        return expectations[path]

    # Walk by menu path: Open Recent is rebuilt (new QActions) whenever a file is opened or saved.
    paths = [path for path, _ in menu_actions(window)]
    assert len(paths) == len(set(paths)), "two menu actions with the same path"
    menu_count = len(paths)
    paths.sort(key=lambda p: p == "File > Quit")  # Quit last: it closes the window (for real)

    triggered = 0

    def trigger_all(exceptions) -> None:
        nonlocal triggered
        for path in paths:
            act = dict(menu_actions(window))[path]
            assert window.settle(), f"still evaluating before {path}"
            if path.startswith(("Edit > Cut", "Edit > Copy", "Edit > Duplicate", "Edit > Delete")):
                window.scene.select_ids(["rack1"] if doc().get("rack1") is not None else ["rack0"])
            if path == "Edit > Undo" and not window.qdoc.undo_stack.canUndo():
                window.scene.select_ids(["rack0"])
                window.act_duplicate.trigger()  # something to undo (not counted)
            if path == "Edit > Redo" and not window.qdoc.undo_stack.canRedo():
                window.act_undo.trigger()  # something to redo (not counted)
            if path == "Edit > Connect to Fabric":  # a server without cables to connect (not counted)
                window.scene.select_ids([doc().nodes[0].id])
                window.act_duplicate.trigger()
            if path in ("Edit > Mark Down", "Edit > Mark Up"):  # a switch; down for Mark Up (not counted)
                window.scene.select_ids([doc().switches[0].id])
                if path == "Edit > Mark Up" and doc().switches[0].state != "down":
                    window.act_mark_down.trigger()
            if path == "File > Save":
                os.utime(design, ns=(0, 0))
            if path == "View > Fit":
                window.view.zoom_by(3.0)  # away from the fitted view, so that Fit shows
            assert act.isEnabled(), f"{path} is disabled when it should work"
            before = {"nodes": nodes(), "index": window.qdoc.undo_stack.index(), "transform": window.view.transform(),
                      "checked": act.isChecked(), "mtime": design.stat().st_mtime_ns, "files": set(out.iterdir()),
                      "selected": ",".join(window.scene.selected_ids()),
                      "dock_visible": docks[act].isVisibleTo(window) if act in docks else None}
            check = expectation(path, act)
            act.trigger()
            triggered += 1
            window.settle()
            assert not boxes, f"{path} showed {boxes}"
            assert not exceptions, f"{path} raised {exceptions[0][1]!r}"
            result = check(before)
            assert result is None or result, f"{path} did not do what it says"

    messages: list[tuple[object, str]] = []

    def record(kind, context, message):  # every Qt message during the walk, passed on to pytest-qt's handler
        messages.append((kind, message))
        if previous is not None:
            previous(kind, context, message)

    previous = qInstallMessageHandler(record)
    try:
        with qtbot.captureExceptions() as exceptions:
            trigger_all(exceptions)
    finally:
        qInstallMessageHandler(previous)

    warnings = [message for kind, message in messages
                if kind in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg)
                and OFFSCREEN_NOISE not in message]
    assert not warnings, warnings
    assert not exceptions
    print(f"triggered {triggered} menu actions ({menu_count} in the menus)")
    assert triggered >= menu_count >= 35


def test_a_failing_command_shows_a_message_box_with_the_reason(qtbot, tmp_path, monkeypatch):
    """An exception inside a menu command becomes a message box naming the command and the reason."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from designer.ui.window.main_window import MainWindow

    design = tmp_path / "design.yaml"
    shutil.copy(EXAMPLES / "h100-64gpu-infiniband.yaml", design)
    boxes = []
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda parent, title, text, *a: boxes.append(
        (parent, title, text)) or QMessageBox.Ok))
    window = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    window.open_file(str(design))
    assert window.settle() and window.result is not None

    import designer.core.export.report as report

    def broken(*args, **kwargs):
        raise RuntimeError("the font cache is unreadable")

    monkeypatch.setattr(report, "build_report", broken)
    monkeypatch.setattr("PySide6.QtWidgets.QFileDialog.getSaveFileName",
                        staticmethod(lambda *a, **k: (str(tmp_path / "r.pdf"), "")))
    with qtbot.captureExceptions() as exceptions:
        window.act_report.trigger()
    assert not exceptions  # not a traceback on stderr ...
    assert boxes == [(window, "Report (PDF) failed", "Report (PDF) failed: the font cache is unreadable")]


def test_file_open_example_lists_the_bundled_examples_and_opens_one_as_a_copy(empty_window):
    from designer.core.io.bundled import bundled_examples

    window = empty_window
    menu = window.files.example_menu
    names = [act.text() for act in menu.actions()]
    assert names == [p.stem for p in bundled_examples()] and "h100-64gpu-infiniband" in names
    next(act for act in menu.actions() if act.text() == "a100-1024gpu-rail-infiniband").trigger()
    assert window.settle() and window.result is not None
    assert window.qdoc.name == "a100-1024gpu-rail-infiniband (example)" and window.qdoc.path is None
    assert window.qdoc.doc.num_gpus() == 1024
