"""The user guide's screenshots, rendered headless from the real app (offscreen Qt).

`render_all(out_dir)` opens the examples in a main window, drives it as a user would
(select a cable, open the generator, run the Advisor, turn on the link heat) and saves one
PNG per shot. `python docs/make_docs.py --images` calls it; tests/test_docs.py checks that
every picture the docs show is produced without error.
"""
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "resources" / "examples"
SIZE = (1600, 1000)

# file name -> what it shows (the guide's captions say the same)
SHOTS = {
    "app.png": "the main window on the 64-GPU H100 example, evaluated",
    "first-run.png": "the first run: the example opened, with the three things to try",
    "generator.png": "Tools > Generate Fat-Tree",
    "generated-roce.png": "a generated 512-GPU RoCE fabric with 2:1 leaves, link heat on",
    "inspector-link.png": "a cable selected: the Inspector edits its bandwidth",
    "job.png": "the Job panel: workload and plan",
    "breakdown.png": "the Breakdown panel",
    "timeline.png": "the Timeline (Gantt) of one step of the RoCE example, four pipeline stages",
    "advisor.png": "the Advisor: what limits the step, ranked changes, scaling",
    "search.png": "the Advisor's Best plans: the plan search's fastest plans that fit",
}


def _app():
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication(["designer-docs"])


def _window(path: Path | None):
    from PySide6.QtCore import QSettings

    from designer.ui.window.main_window import MainWindow

    settings = QSettings(str(Path(os.environ.get("TMPDIR", "/tmp")) / "designer-docs.ini"), QSettings.IniFormat)
    settings.clear()
    w = MainWindow(settings=settings)
    w.resize(*SIZE)
    if path is not None:
        w.open_file(str(path))
    w.show()
    _app().processEvents()
    w.fit_view()
    w.settle()
    return w


def _save(widget, out: Path) -> Path:
    _app().processEvents()
    if not widget.grab().save(str(out), "PNG"):
        raise RuntimeError(f"could not write {out}")
    return out


def _raise(dock) -> None:
    dock.show()
    dock.raise_()
    _app().processEvents()


def render_all(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    app = _app()
    written: list[Path] = []
    example = EXAMPLES / "h100-64gpu-infiniband.yaml"

    w = _window(example)
    written.append(_save(w, out_dir / "app.png"))
    _raise(w.job_dock)
    written.append(_save(w.job_dock, out_dir / "job.png"))
    _raise(w.breakdown_dock)
    written.append(_save(w.breakdown_dock, out_dir / "breakdown.png"))
    link = w.qdoc.doc.links[0]
    w.jump_to(link.id)
    app.processEvents()
    written.append(_save(w, out_dir / "inspector-link.png"))
    written.append(_advisor(w, out_dir / "advisor.png"))
    written.append(_search(w, out_dir / "search.png"))
    w.qdoc.undo_stack.clear()
    w.close()

    from designer.ui.dialogs.generator_dialog import GeneratorDialog

    dialog = GeneratorDialog()
    dialog.show()
    app.processEvents()
    written.append(_save(dialog, out_dir / "generator.png"))
    dialog.close()

    w = _window(EXAMPLES / "h100-roce-2to1-ethernet.yaml")
    w.act_heat.trigger()  # as a click on View > Link Heat: checks it and colours the cables
    app.processEvents()
    written.append(_save(w, out_dir / "generated-roce.png"))
    _raise(w.timeline_dock)  # four pipeline stages: bubbles and waits to read
    written.append(_save(w.timeline_dock, out_dir / "timeline.png"))
    w.close()

    written.append(_first_run(out_dir / "first-run.png"))
    return written


def _advisor(w, out: Path) -> Path:
    from PySide6.QtCore import Qt

    _raise(w.advisor_dock)
    w.resizeDocks([w.breakdown_dock], [480], Qt.Vertical)  # as a user drags the divider up to read the table
    panel = w.advisor_panel
    panel.analyse()
    if not panel.wait_done(120.0):
        raise RuntimeError("the Advisor did not finish")
    _app().processEvents()
    return _save(w, out)


def _search(w, out: Path) -> Path:
    panel = w.advisor_panel
    panel.plan_search.start()
    if not panel.plan_search.wait(300.0):
        raise RuntimeError("the plan search did not finish")
    panel.tabs.setCurrentIndex(1)
    _app().processEvents()
    return _save(w, out)


def _first_run(out: Path) -> Path:
    from designer.ui.app import main

    code = main(["--screenshot", str(out), "--size", f"{SIZE[0]}x{SIZE[1]}"])
    if code != 0:
        raise RuntimeError(f"designer-gui --screenshot exited {code}")
    return out
