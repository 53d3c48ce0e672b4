"""`designer-gui`: the desktop app.

`designer-gui [FILE]` opens a design (without one, the built-in example and a first-run hint).
`designer-gui [FILE] --screenshot OUT.png [--size WxH] [--zoom F] [--center ID] [--heat] [--canvas-only]`
renders the window (or only its canvas) and exits; --zoom is the canvas scale (4 = 400 %, default: fit all).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.problems import DesignerError

from ..core.model.catalog import RESOURCES

DEFAULT_EXAMPLE = Path(RESOURCES, "examples", "h100-64gpu-infiniband.yaml")
UI_SWITCH_INTERVAL_S = 0.0005  # sys.setswitchinterval for a process with a window (Python's default: 5 ms)


def set_up_the_process() -> None:
    """The settings that hold for the whole process, made once here at start-up, before the window
    starts its threads (they change every thread, so no window, worker or panel sets them).

    - One malloc arena (glibc): the window reads a file, plans its canvas and evaluates in threads;
      with a heap per thread, what one thread frees stays unused by the others, and opening a
      131,072-GPU design peaked ~65 MB higher (873 against 808 MB). Python holds its lock while it
      allocates, so the threads hardly contend for one arena.
    - A 0.5 ms switch interval: Python runs one thread at a time, and a thread that wants the
      interpreter waits up to the interval before the running one lets go. The window's thread asks
      at every Python handler and every Python-drawn item of a repaint: during a 16,384-GPU open at
      5 ms the window stalled 220-230 ms, at 0.5 ms 140-150 ms (benchmarks/bench_live.py). The price
      is more switches between the working threads. A shorter interval already set is kept.
    """
    from .work.malloc_arenas import use_one_arena

    use_one_arena()
    if sys.getswitchinterval() > UI_SWITCH_INTERVAL_S:
        sys.setswitchinterval(UI_SWITCH_INTERVAL_S)


def _parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = text.lower().split("x")
        size = int(w), int(h)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1600x1000, got {text!r}") from None
    if min(size) < 100 or max(size) > 10000:
        raise argparse.ArgumentTypeError(f"size {text} out of range (100..10000 pixels)")
    return size


def _parse_zoom(text: str) -> float:
    try:
        zoom = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number such as 4, got {text!r}") from None
    if not 0.005 <= zoom <= 12:
        raise argparse.ArgumentTypeError(f"zoom {text} out of range (0.005..12, the canvas's own limits)")
    return zoom


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="designer-gui", description="Designer: the desktop app")
    p.add_argument("file", nargs="?", help="a cluster YAML file (default: the built-in example)")
    p.add_argument("--screenshot", metavar="OUT.png", help="open, lay out, save the window as PNG, exit")
    p.add_argument("--size", type=_parse_size, default=(1600, 1000), metavar="WxH", help="window size")
    p.add_argument("--zoom", type=_parse_zoom, default=None, metavar="F",
                   help="screenshot: canvas scale F (4 = 400 %%, at most 12), centred on the layout or --center; "
                        "default: fit all")
    p.add_argument("--center", metavar="ID", help="screenshot: centre the canvas on this rack, server or switch")
    p.add_argument("--heat", action="store_true", help="screenshot: link heat on (View > Link Heat)")
    p.add_argument("--canvas-only", action="store_true", help="screenshot: only the canvas, the panels closed")
    p.add_argument("--logical", action="store_true",
                   help="screenshot: the logical fabric view open beside the canvas (View > Logical Fabric View); "
                        "with --canvas-only, that view alone")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    set_up_the_process()
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QApplication, QDockWidget, QMessageBox

    from .common.app_icon import app_icon

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Designer")
    app.setOrganizationName("Designer")
    app.setWindowIcon(app_icon())
    window, error = create_window(args, background=not args.screenshot)
    if args.screenshot:
        if error is not None:
            print(str(error), file=sys.stderr)
            return error.exit_code
        window.show()
        app.processEvents()
        window.fit_view()
        window.act_heat.setChecked(args.heat)  # a picture does not depend on this user's remembered choice
        window.view.set_heat(args.heat)
        window.settle()  # the problems check and the engine's answer
        window.fit_view()  # again: the docks took their places meanwhile (the canvas is smaller now)
        if args.canvas_only:  # after settling: the Advisor's dock joins its tab group once the window shows
            for dock in window.findChildren(QDockWidget):
                dock.hide()
            app.processEvents()
            window.fit_view()
        if getattr(args, "logical", False):
            if not window.logical_dock.isVisible():
                window.act_logical.trigger()  # opens the dock beside the canvas
            app.processEvents()
            if args.canvas_only:  # the view alone: most of the window
                window.resizeDocks([window.logical_dock], [int(window.width() * 0.85)], Qt.Horizontal)
                app.processEvents()
            window.fit_view()
            window.logical_view.fit()
        if args.zoom is not None or args.center:
            focus = window.scene.item_for(args.center) if args.center else None
            if args.center and focus is None:
                print(f"designer-gui: --center {args.center}: no rack, server, switch or link with that id "
                      "in the design", file=sys.stderr)
                window.close()
                return 2
            window.view.zoom_to(args.zoom, focus)
            app.processEvents()
        only = window.logical_view if getattr(args, "logical", False) else window.view  # --canvas-only: that view
        ok = (only if args.canvas_only else window).grab().save(args.screenshot, "PNG")
        window.close()
        if not ok:
            print(f"designer-gui: could not write {args.screenshot}", file=sys.stderr)
            return 1
        print(f"wrote {args.screenshot}", file=sys.stderr)
        return 0
    from .window.screen_fit import fit_shown

    _start_autosave(window)
    window.show()
    if error is not None:
        QTimer.singleShot(0, lambda: QMessageBox.critical(window, "Cannot open file", str(error)))
    QTimer.singleShot(0, window.fit_view)

    def start() -> None:
        fit_shown(window)  # the window manager's frame known now: the whole window on screen
        if args.file and not args.screenshot:  # read off the UI thread, the window shown and answering meanwhile
            window.files.open_reporting(args.file)
        _when_idle(window, lambda: offer_recovery(window))  # after the file's open

    after_first_paint(window, start)
    return app.exec()


def after_first_paint(window, then, at_most_ms: int = 1000) -> None:
    """`then()` once the window has painted itself (or after `at_most_ms`). A file read in a thread
    while the window made its first layout and paint made each of the paint's Qt calls wait for
    Python's GIL: the window's first show took 0.6 s at 131k GPUs, against ~0.1 s alone."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    done = []

    def go() -> None:
        if not done:
            done.append(True)
            window.view.viewport().removeEventFilter(watch)
            QTimer.singleShot(0, then)  # once this paint is over

    class _Watch(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
            if event.type() == QEvent.Paint:
                go()
            return False

    watch = _Watch(window)
    window.view.viewport().installEventFilter(watch)
    QTimer.singleShot(at_most_ms, go)


def _when_idle(window, then) -> None:
    """`then()` once the window's background task (the command line's file being read) has ended."""
    from PySide6.QtCore import QTimer

    if window.progress is not None and window.progress.active:
        QTimer.singleShot(100, lambda: _when_idle(window, then))
    else:
        then()


def create_window(args, settings=None, background: bool = False):
    """The main window for these arguments and the error opening its file (or None).

    `background`: the file named on the command line is left to the caller, who opens it under a
    progress bar once the window shows (a 131k-GPU file takes seconds to read); the example still
    opens here.

    Without a file it opens the built-in example and shows the first-run hint above the canvas
    (in --screenshot mode too, even when the hint was dismissed before: the picture is a first run).
    """
    from .window.main_window import MainWindow
    from .window.screen_fit import resize_within_screen

    window = MainWindow(settings, remember_layout=not args.screenshot)  # a screenshot: a first run's layout
    if args.screenshot:
        window.resize(*args.size)  # the picture's size, whatever the screen
    else:
        resize_within_screen(window, *args.size)  # the status bar on screen (screen_fit.py)
    path = args.file or (str(DEFAULT_EXAMPLE) if DEFAULT_EXAMPLE.exists() else None)
    error = None
    if path and not (background and args.file):
        try:
            window.open_file(path)
        except DesignerError as exc:
            error = exc
    if not args.file and path and error is None:
        window.show_welcome(force=bool(args.screenshot))
    return window, error


def _start_autosave(window) -> None:
    """Every minute, unsaved changes go to a recovery file (removed on save and clean exit)."""
    from .document.autosave import Autosaver

    def snapshot():
        if not window.qdoc.dirty:
            return None
        return (window.qdoc.path or window.qdoc.name, window.qdoc.text())

    window.use_autosaver(Autosaver(snapshot, parent=window))


def offer_recovery(window) -> bool:
    """After a crash: offer the newest recovery file. Declined, the files go; recovered, the file stays
    until the design is saved or a newer autosave replaces it (a second crash loses nothing)."""
    import os

    from PySide6.QtWidgets import QMessageBox

    from ..core.fs.pids import pid_alive
    from .document.autosave import pending_recoveries, remove_recovery

    def alive(pid):
        return bool(pid) and pid != os.getpid() and pid_alive(pid)

    pending = [rf for rf in pending_recoveries() if not alive(rf.pid)]  # not another running window's
    if not pending:
        return False
    newest = pending[0]
    answer = QMessageBox.question(
        window, "Recover unsaved work?",
        f"Designer did not close cleanly. Unsaved changes to {newest.name} from "
        f"{newest.saved_at:%Y-%m-%d %H:%M} were kept. Recover them?",
        QMessageBox.Yes | QMessageBox.No, QMessageBox.Yes)
    if answer != QMessageBox.Yes:
        for rf in pending:
            remove_recovery(rf)
        return False
    return recover(window, newest)


def recover(window, rf) -> bool:
    """Bring a recovery file's design into the window (one undo step). The file is kept: the
    window's autosaver adopts it and removes it once the design is saved or autosaved anew.

    A design that held a NaN or an infinity comes back with it (the loader alone would refuse
    the file); the checks list each such value by element, and Save refuses until it is fixed."""
    from PySide6.QtWidgets import QMessageBox

    from ..core.io.bundled import example_title, is_bundled
    from ..core.io.lenient import loads_document_keeping_non_finite
    from ..core.model.non_finite import non_finite_problems
    from .document.commands import ReplaceDocument

    # Read off the UI thread under a progress bar with Cancel (a 131k-GPU design takes seconds)
    got: dict = {}
    job = window.run_in_background(
        "Recover", f"Reading the unsaved changes to {rf.name}...",
        lambda: loads_document_keeping_non_finite(rf.path.read_text(encoding="utf-8"), str(rf.path)),
        lambda doc: got.setdefault("doc", doc), lambda exc: got.setdefault("error", exc))
    if job is None:
        return False
    job.wait_in_event_loop()
    exc = got.get("error")
    if exc is not None:
        reason = exc if isinstance(exc, (DesignerError, OSError, UnicodeDecodeError)) else \
            f"internal error: {type(exc).__name__}: {exc}"
        QMessageBox.warning(window, "Cannot recover", f"The recovery file {rf.path} cannot be read:\n{reason}\n\n"
                            "It is kept: open it with File > Open once fixed, or delete it.")
        return False
    if "doc" not in got:
        window.tell("recovery cancelled: the recovery file is kept")
        return False
    doc = got["doc"]
    if rf.original_path and not is_bundled(rf.original_path):
        identity = (rf.original_path, None)
    elif rf.original_path:  # an example opened in place by an older version: a copy now
        identity = (None, example_title(rf.original_path))
    else:
        identity = (None, rf.name)
    window.qdoc.push(ReplaceDocument(window.qdoc, doc, "Recover unsaved changes", identity=identity))
    if getattr(window, "autosaver", None) is not None:
        window.autosaver.adopt(rf)
    window.fit_view()
    window.tell(f"recovered unsaved changes to {rf.name}")
    bad = non_finite_problems(doc)
    if bad:
        QMessageBox.warning(window, "Recovered with values to fix",
                            "The recovered design holds values that are not finite numbers; fix them before "
                            "saving:\n" + "\n".join(p.format() for p in bad[:10]))
    return True


if __name__ == "__main__":
    sys.exit(main())
