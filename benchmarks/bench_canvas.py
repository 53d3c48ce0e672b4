"""Benchmark: the editor on a generated 16,384-GPU cluster (a script, not a test).

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_canvas.py

Targets: open-to-first-paint under 3 s, a full-view repaint under 50 ms.
"open" covers reading the YAML, building the scene and painting the window once; "repaint"
is a forced repaint of the whole canvas viewport (1600 x 1000 window), best of 5, at the
fit-all zoom, zoomed in 4x and 12x (where single cables are drawn).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from designer.core.generate import generate_fat_tree
    from designer.core.io import save_document
    from designer.ui.window.main_window import MainWindow

    from designer.ui.app import set_up_the_process

    set_up_the_process()  # as designer-gui does
    app = QApplication.instance() or QApplication([])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for nodes, radix in ((128, 64), (2048, 64)):
            path = Path(tmp) / f"fat-tree-{nodes}.yaml"
            save_document(generate_fat_tree(nodes=nodes, gpu="H100", switch_radix=radix), path)
            window = MainWindow(QSettings(str(Path(tmp) / "s.ini"), QSettings.IniFormat))
            window.resize(1600, 1000)
            window.show()
            app.processEvents()
            t0 = time.perf_counter()
            window.open_file(str(path))
            window.view.viewport().repaint()
            opened = time.perf_counter() - t0

            def repaint() -> float:
                best = float("inf")
                for _ in range(5):
                    t = time.perf_counter()
                    window.view.viewport().repaint()
                    best = min(best, time.perf_counter() - t)
                return best

            fit = repaint()
            window.view.zoom_by(4.0)
            zoom4 = repaint()
            window.view.zoom_by(3.0)
            zoom12 = repaint()
            rows.append((nodes * 8, opened, fit, zoom4, zoom12, len(window.scene.cables.bundles)))
            window.qdoc.undo_stack.setClean()
            window.close()
    print(f"{'GPUs':>7} {'bundles':>8} {'open+paint s':>13} {'repaint fit ms':>15} {'4x ms':>7} {'12x ms':>7}")
    for gpus, opened, fit, z4, z12, bundles in rows:
        print(f"{gpus:>7,} {bundles:>8,} {opened:>13.2f} {fit * 1e3:>15.1f} {z4 * 1e3:>7.1f} {z12 * 1e3:>7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
