"""Every window and dialog of the app, rendered headless, to look at before and after a change.

    .venv/bin/python docs/review_shots.py OUT_FOLDER [--sizes 64,1024,16384]

For each design size it opens the real main window at 1600x1000 and saves the window at fit-all,
150 % and 400 % (centred on the first rack), with link heat on, the logical fabric view, and each
dock on its own. Then it opens every dialog the way a user does, through the window's commands
(Tools > Generate, Parts and Costs, Compare Clusters, File > Compare With, Calibrate from a real
nccl-tests log, Edit > Duplicate Many, Find, Help's three dialogs) and saves each. Modal dialogs are
grabbed from a timer and cancelled, so nothing is applied. The 1,024-GPU design is the A100
example; the 16,384-GPU one is made with `designer generate`. One PNG per picture; the file
names say what each shows, so two runs' folders compare name by name.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from screenshots import _app, _window  # noqa: E402  the guide's pictures open the window the same way

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "resources" / "examples"
NCCL_LOG = ROOT / "tests" / "data" / "nccl-tests" / "h200-2node-all_reduce.txt"
# the dialogs it opens, each saved as dialog-NAME.png
DIALOGS = ("generate", "parts-and-costs", "compare-clusters", "compare-with", "calibrate", "duplicate-many", "find",
           "quick-guide", "shortcuts", "about")
DESIGNS = {64: EXAMPLES / "h100-64gpu-infiniband.yaml", 1024: EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"}


def _settle(ms: int = 200) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def _save(widget, out: Path) -> Path:
    _app().processEvents()
    if not widget.grab().save(str(out), "PNG"):
        raise RuntimeError(f"could not write {out}")
    print(f"wrote {out}", file=sys.stderr)
    return out


def _design(gpus: int, tmp: Path) -> Path:
    """An example, or a generated rail-optimised H100 fat-tree with GPT-3 175B (TP 8, PP 8)."""
    if gpus in DESIGNS:
        return DESIGNS[gpus]
    out = tmp / f"fat-tree-{gpus}.yaml"
    from designer.cli import main as designer

    if designer(["generate", "fat-tree", "-o", str(out), "--nodes", str(gpus // 8), "--gpu", "H100",
                 "--switch-radix", "64"]) != 0:
        raise RuntimeError(f"designer generate failed for {gpus} GPUs")
    from designer.core.io import load_document, save_document
    from designer.core.model.job import Parallelism, Workload

    doc = load_document(out)
    doc.set_job(Workload(preset="gpt3-175b", global_batch_size=gpus // 8),
                Parallelism(tensor_model_parallel_size=8, pipeline_model_parallel_size=8,
                            sequence_parallel=True, use_distributed_optimizer=True))
    save_document(doc, out)
    return out


def _modal(trigger, out: Path, tries: int = 50) -> Path:
    """Run `trigger` (which opens a modal dialog and waits in it), grab the dialog, cancel it."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    saved: list[Path] = []

    def grab(left: int = tries) -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None:
            if left:
                QTimer.singleShot(100, lambda: grab(left - 1))
            return
        dialog.resize(dialog.sizeHint().expandedTo(dialog.size()))
        _app().processEvents()
        saved.append(_save(dialog, out))
        dialog.reject()

    QTimer.singleShot(300, grab)
    trigger()
    if not saved:
        raise RuntimeError(f"{out.name}: no modal dialog opened")
    return saved[0]


def _window_shots(w, gpus: int, out: Path) -> None:
    name = f"{gpus}gpu"
    _save(w, out / f"{name}-window-fit.png")
    first_rack = next(iter(w.qdoc.doc.racks), None)
    focus = w.scene.item_for(first_rack.id) if first_rack is not None else None
    for zoom in (1.5, 4.0):
        w.view.zoom_to(zoom, focus)
        _settle()
        _save(w, out / f"{name}-window-{int(zoom * 100)}pct.png")
    w.fit_view()
    w.act_heat.trigger()  # as a click on View > Link Heat: checks it and colours the cables
    _settle()
    _save(w, out / f"{name}-window-heat.png")
    w.act_heat.trigger()
    logical = next((a for a in w.findChildren(type(w.act_heat)) if "Logical" in a.text().replace("&", "")), None)
    if logical is not None:
        logical.setChecked(True)
        _settle(400)
        _save(w, out / f"{name}-window-logical.png")
        logical.setChecked(False)


def _dock_shots(w, out: Path) -> None:
    from PySide6.QtWidgets import QDockWidget

    for dock in w.findChildren(QDockWidget):
        if not dock.objectName():
            continue
        dock.show()
        dock.raise_()
        _settle(100)
        _save(dock, out / f"dock-{dock.objectName().lower().replace(' ', '-')}.png")


def _dialog_shots(w, out: Path) -> None:
    _modal(lambda: w.act_generate.trigger(), out / "dialog-generate.png")
    _save(w.tools.parts_and_costs(), out / "dialog-parts-and-costs.png")
    w.tools.costs_dialog.close()
    decide = w.tools.compare_clusters()
    if decide is not None:
        _settle(300)
        _save(decide, out / "dialog-compare-clusters.png")
        decide.close()
    compare = w.tools.compare_with(str(EXAMPLES / "h100-roce-2to1-ethernet.yaml"))
    if compare is not None:
        _settle(1500)  # the other file is evaluated off the UI thread
        _save(compare, out / "dialog-compare-with.png")
        compare.close()
    _modal(lambda: w.tools.calibrate_from_logs([str(NCCL_LOG)]), out / "dialog-calibrate.png")
    w.scene.clearSelection()
    rack = next(iter(w.qdoc.doc.racks), None)
    if rack is not None:
        w.scene.item_for(rack.id).setSelected(True)
        _modal(lambda: w.act_duplicate_many.trigger(), out / "dialog-duplicate-many.png")
    _modal(lambda: w.act_find.trigger(), out / "dialog-find.png")
    for key, kind in (("quick_guide", "guide"), ("shortcuts", "shortcuts"), ("about", "about")):
        getattr(w, f"act_{key}").trigger()  # non-modal: one dialog per kind, kept by the window
        _settle(100)
        dialog = w.help_dialogs[kind]
        _save(dialog, out / f"dialog-{key.replace('_', '-')}.png")
        dialog.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path, help="folder for the PNGs (made if missing)")
    p.add_argument("--sizes", default="64,1024,16384", help="design sizes in GPUs (64 and 1024: examples)")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    _app()
    with tempfile.TemporaryDirectory() as tmp:
        for gpus in (int(s) for s in args.sizes.split(",")):
            w = _window(_design(gpus, Path(tmp)))
            _window_shots(w, gpus, args.out)
            if gpus == 64:
                _dock_shots(w, args.out)
                _dialog_shots(w, args.out)
            w.qdoc.undo_stack.clear()
            w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
