"""`designer-gui`: the desktop app.

Until the editor lands this is a viewer: it opens a design, draws its racks, servers and
switches, and shows the counts and problems in the status bar.
`designer-gui FILE --screenshot OUT.png [--size WxH]` renders the window and exits.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.problems import DesignerError

from ..core.model.catalog import RESOURCES

DEFAULT_EXAMPLE = RESOURCES / "examples" / "h100-64gpu-infiniband.yaml"


def _parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = text.lower().split("x")
        size = int(w), int(h)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1600x1000, got {text!r}") from None
    if min(size) < 100 or max(size) > 10000:
        raise argparse.ArgumentTypeError(f"size {text} out of range (100..10000 pixels)")
    return size


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="designer-gui", description="Designer: the desktop app")
    p.add_argument("file", nargs="?", help="a cluster YAML file (default: the built-in example)")
    p.add_argument("--screenshot", metavar="OUT.png", help="open, lay out, save the window as PNG, exit")
    p.add_argument("--size", type=_parse_size, default=(1600, 1000), metavar="WxH", help="window size")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from .main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Designer")
    app.setOrganizationName("Designer")
    window = MainWindow()
    window.resize(*args.size)
    path = args.file or (str(DEFAULT_EXAMPLE) if DEFAULT_EXAMPLE.exists() else None)
    error = None
    if path:
        try:
            window.open_file(path)
        except DesignerError as exc:
            error = exc
    if args.screenshot:
        if error is not None:
            print(str(error), file=sys.stderr)
            return error.exit_code
        window.show()
        app.processEvents()
        window.fit_view()
        import time

        deadline = time.monotonic() + 120
        while window.evaluating and time.monotonic() < deadline:  # wait for the engine's answer
            app.processEvents()
            time.sleep(0.01)
        app.processEvents()
        ok = window.grab().save(args.screenshot, "PNG")
        window.close()
        if not ok:
            print(f"designer-gui: could not write {args.screenshot}", file=sys.stderr)
            return 1
        print(f"wrote {args.screenshot}", file=sys.stderr)
        return 0
    window.show()
    if error is not None:
        QTimer.singleShot(0, lambda: QMessageBox.critical(window, "Cannot open file", str(error)))
    QTimer.singleShot(0, window.fit_view)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
