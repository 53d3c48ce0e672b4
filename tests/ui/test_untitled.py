"""Saving never writes over the bundled examples or over the design a generated fabric replaced.

Examples open as untitled copies ("<name> (example)"), a generated fabric is a new untitled
document, and Save of an untitled document asks where, starting in the user's documents folder.
Driven through the window's actions with the file dialogs answered by the test.
"""
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES


EXAMPLE = EXAMPLES / "h100-64gpu-infiniband.yaml"


@pytest.fixture(autouse=True)
def examples_restored():
    """Should a regression write over the examples, put them back (and the test fails anyway)."""
    saved = {p: p.read_bytes() for p in EXAMPLES.glob("*.yaml")}
    yield saved
    for p, data in saved.items():
        if p.read_bytes() != data:
            p.write_bytes(data)
    for p in EXAMPLES.glob("*.yaml"):
        if p not in saved:
            p.unlink()


@pytest.fixture
def dialogs(monkeypatch, tmp_path):
    """The Save/Open dialogs and message boxes answer at once and record how they were asked."""
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    asked = {"save": [], "open": [], "boxes": [], "answer": str(tmp_path / "mine.yaml"), "open_answer": ""}

    def save_name(parent=None, caption="", directory="", *args, **kwargs):
        asked["save"].append(directory)
        return asked["answer"], ""

    def open_name(parent=None, caption="", *args, **kwargs):
        asked["open"].append(caption)
        return asked["open_answer"], ""

    def box(parent, title, text, *args, **kwargs):
        asked["boxes"].append((title, text))
        return QMessageBox.Ok

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_name))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(open_name))
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(box))
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(box))
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Discard))
    return asked


def documents_folder() -> Path:
    from PySide6.QtCore import QStandardPaths

    return Path(QStandardPaths.writableLocation(QStandardPaths.DocumentsLocation))


def start(qtbot, tmp_path, argv):
    """The app as `designer-gui ARGV` builds it (no event loop of its own)."""
    from PySide6.QtCore import QSettings

    from designer.ui.app import build_parser, create_window

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    window, error = create_window(build_parser().parse_args(argv), settings)
    assert error is None
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.settle()
    return window


def edit(window) -> None:
    """An ordinary edit: select the first rack, Edit > Duplicate."""
    window.scene.select_ids([window.qdoc.doc.racks[0].id])
    window.act_duplicate.trigger()
    assert window.qdoc.dirty


def test_bare_start_then_save_asks_in_documents_and_leaves_the_example(qtbot, tmp_path, dialogs):
    original = EXAMPLE.read_bytes()
    window = start(qtbot, tmp_path, [])
    assert window.windowTitle().startswith("h100-64gpu-infiniband (example)")
    edit(window)
    window.act_save.trigger()

    assert EXAMPLE.read_bytes() == original
    assert dialogs["save"] == [str(documents_folder() / "h100-64gpu-infiniband.yaml")]
    mine = Path(dialogs["answer"])
    assert mine.is_file() and window.qdoc.path == str(mine) and not window.qdoc.dirty
    assert window.windowTitle().startswith("mine.yaml")
    window.close()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["command line", "File > Open", "Open Recent"])
def test_an_example_opens_as_a_copy_however_it_is_opened(qtbot, tmp_path, dialogs, how):
    example = EXAMPLES / "h100-roce-2to1-ethernet.yaml"
    original = example.read_bytes()
    if how == "command line":
        window = start(qtbot, tmp_path, [str(example)])
    else:
        design = tmp_path / "design.yaml"
        shutil.copy(EXAMPLE, design)
        window = start(qtbot, tmp_path, [str(design)])
        if how == "File > Open":
            dialogs["open_answer"] = str(example)
            window.act_open.trigger()
            assert dialogs["open"]
        else:
            window.files.add_recent(str(example))
            (entry,) = [a for a in window.files.recent_menu.actions() if a.toolTip() == str(example.resolve())]
            entry.trigger()
        assert window.settle()
    assert "h100-roce-2to1-ethernet (example)" in window.windowTitle()
    assert window.qdoc.path is None and window.qdoc.doc.counts()["nodes"] > 0
    edit(window)
    dialogs["answer"] = ""  # the user cancels the dialog: nothing written anywhere
    window.act_save.trigger()
    assert dialogs["save"] == [str(documents_folder() / "h100-roce-2to1-ethernet.yaml")]
    assert example.read_bytes() == original and window.qdoc.dirty
    window.close()


@pytest.mark.slow
def test_generate_then_save_asks_and_keeps_the_replaced_design(qtbot, tmp_path, dialogs, monkeypatch):
    from PySide6.QtWidgets import QDialog

    from designer.ui.dialogs.generator_dialog import GeneratorDialog

    design = tmp_path / "pod.yaml"
    shutil.copy(EXAMPLE, design)
    before = design.read_bytes()
    window = start(qtbot, tmp_path, [str(design)])
    assert window.qdoc.path == str(design)

    def accept(dialog):  # the Generate dialog, accepted with its defaults
        dialog.setResult(QDialog.Accepted)
        return QDialog.Accepted

    monkeypatch.setattr(GeneratorDialog, "exec", accept)
    window.act_generate.trigger()
    assert window.settle()
    generated = window.qdoc.doc.metadata.name
    assert window.qdoc.path is None and window.windowTitle().startswith(f"{generated} (untitled)")

    window.act_save.trigger()
    assert design.read_bytes() == before
    assert dialogs["save"] == [str(documents_folder() / f"{generated}.yaml")]
    assert Path(dialogs["answer"]).is_file() and window.qdoc.path == dialogs["answer"]

    # Undo goes back to the design before, with its own file again.
    window.act_undo.trigger()
    assert window.qdoc.path == str(design) and window.windowTitle().startswith("pod.yaml")
    assert window.qdoc.doc.num_gpus() == 64
    window.act_redo.trigger()
    assert window.qdoc.path == dialogs["answer"]
    window.close()


def test_save_into_the_installed_resources_is_refused(qtbot, tmp_path, dialogs):
    window = start(qtbot, tmp_path, [])
    target = EXAMPLES / "mine.yaml"
    dialogs["answer"] = str(target)
    window.act_save_as.trigger()
    assert not target.exists()
    ((title, text),) = dialogs["boxes"]
    assert title == "Cannot save" and "installed files" in text and "Save As" in text
    window.close()


def test_without_a_documents_folder_save_asks_in_the_home_folder(qtbot, tmp_path, dialogs, monkeypatch):
    """A machine with no ~/Documents: the dialog starts at home, never in the working directory."""
    from PySide6.QtCore import QStandardPaths

    real = QStandardPaths.writableLocation
    monkeypatch.setattr(QStandardPaths, "writableLocation", lambda kind: str(tmp_path / "no-such-folder")
                        if kind == QStandardPaths.DocumentsLocation else real(kind))
    window = start(qtbot, tmp_path, [])
    edit(window)
    window.act_save.trigger()
    assert dialogs["save"] == [str(Path.home() / "h100-64gpu-infiniband.yaml")]
    window.close()
