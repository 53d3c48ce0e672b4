"""Benchmark: opening a very large design in the real window, offscreen, the way a user does (a script).

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_open.py FILE [FILE ...] [--route open|argv]
        [--tracemalloc] [--profile OUT.prof] [--stalls] [--phases]

Each file opens in a process of its own (peak RSS is the open's own) and prints one JSON line:
  open_to_paint_ms   File > Open (the file picked in its dialog; --route argv: `designer-gui FILE`,
                     the window created with the file argument) until the canvas has painted the new design
  items_done_ms      the same start until every rack, server and switch is an item (a big design's
                     boxes fill in after its first paint)
  first_result_ms    the same start until the Breakdown shows a step time (or says why not)
  max_late_ms        the worst lateness of a 10 ms QTimer over all of it (the UI thread's longest stall)
  progress_shown     the open ran under a progress bar with Cancel
  rss_mb_at_paint    resident memory when the design was first painted
  rss_mb_at_items_done  resident memory once every item is made
  peak_rss_mb        the process's peak resident memory (up to the first result, the engine's arrays included)
  details_ms         the same start until the Timeline shows the result's events, the link heat (View > Link
                     Heat, turned on) colours the cables and the Inspector words a selected cable's load
  rss_mb_with_details, peak_rss_mb_with_details  resident memory then, and the peak up to then
  cpu_s              CPU time of the whole process (every thread) from the open to the first result
Targets: open to first paint <= 3 s at 16,384 GPUs and <= 10 s at 131,072; <= 600 MB at 131k;
the event loop never late by more than 100 ms.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

TIMEOUT_S = 300.0


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class StallSampler:
    """--stalls: a thread samples the UI thread's stack every 5 ms; stalls of the 10 ms timer longer than
    110 ms (BENCH_STALL_MS) are reported with the functions seen most inside them (where the UI thread was busy;
    BENCH_STALL_THREADS=1 adds what the window's worker threads ran meanwhile)."""

    def __init__(self):
        import threading

        self.samples: list = []  # (time, stack text)
        self.stalls: list = []  # (start, end)
        self._main = threading.main_thread().ident
        self._stop = False
        self._last = time.perf_counter()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        import traceback

        while not self._stop:
            frames = sys._current_frames()
            frame = frames.get(self._main)
            if frame is not None:
                stack = traceback.extract_stack(frame)[-12:]
                text = " < ".join(f"{Path(f.filename).name}:{f.lineno}:{f.name}" for f in reversed(stack))
                if os.environ.get("BENCH_STALL_THREADS"):  # what the other threads run meanwhile
                    import threading

                    names = {t.ident: t.name for t in threading.enumerate()}
                    for ident, other in frames.items():
                        if ident != self._main and names.get(ident, "").startswith("designer"):
                            top = traceback.extract_stack(other)[-4:]
                            text += f"  || {names[ident]}: " + " < ".join(
                                f"{Path(f.filename).name}:{f.lineno}:{f.name}" for f in reversed(top))
                self.samples.append((time.perf_counter(), text))
            time.sleep(0.005)

    def tick(self) -> None:
        now = time.perf_counter()
        if now - self._last > float(os.environ.get("BENCH_STALL_MS", "110")) / 1000:
            self.stalls.append((self._last, now))
        self._last = now

    def report(self) -> list:
        from collections import Counter

        out = []
        for start, end in self.stalls:
            seen = Counter(text for t, text in self.samples if start <= t <= end)
            out.append({"ms": round((end - start) * 1000), "where": [f"{n} x {text}" for text, n in seen.most_common(3)]})
        return out


SLOW_CALLS: list = []  # --phases: (ms, name) of the UI thread's calls that took over 50 ms


def time_phases() -> None:
    """--phases: wrap the window's steps of an open so that each one over 50 ms is listed (where the
    event loop's longest stalls come from)."""
    import functools
    import threading

    from designer.core.model.document import Document
    from designer.ui.canvas.job_colors import CanvasJobMarks
    from designer.ui.canvas.minimap import Minimap
    from designer.ui.canvas.scene import CanvasScene
    from designer.ui.canvas.scene_build import StagedBuild
    from designer.ui.canvas.scene_heat import SceneHeat
    from designer.ui.canvas.view import CanvasView
    from designer.ui.docks.inspector import Inspector
    from designer.ui.window.main_window import MainWindow
    from designer.ui.docks.palette import Palette
    from designer.ui.panels.timeline import TimelinePanel
    from designer.ui.document.qt_document import QtDocument

    main = threading.main_thread()
    for cls, names in ((QtDocument, ["take"]), (CanvasScene, ["rebuild", "paint", "select_ids"]),
                       (StagedBuild, ["_step", "_finish"]), (SceneHeat, ["show"]),
                       (Document, ["_reindex", "counts", "snapshot"]), (CanvasView, ["fit", "paintEvent"]),
                       (MainWindow, ["_after_edit", "_on_evaluated", "_on_checked", "_show_panels", "_on_replaced",
                                     "_on_timeline", "_on_link_load", "_toggle_heat", "_details_later"]),
                       (Minimap, ["render_overview"]), (Palette, ["use_parts_of"]), (Inspector, ["show_ids", "show_result"]),
                       (CanvasJobMarks, ["refresh"]), (TimelinePanel, ["show_result", "paintEvent"])):
        for name in names:
            original = getattr(cls, name, None)
            if original is None:
                continue

            def wrapped(*args, _original=original, _name=f"{cls.__name__}.{name}", **kwargs):
                if threading.current_thread() is not main:
                    return _original(*args, **kwargs)
                t = time.perf_counter()
                try:
                    return _original(*args, **kwargs)
                finally:
                    ms = (time.perf_counter() - t) * 1000
                    if ms > float(os.environ.get("BENCH_SLOW_MS", "50")) or _name == "QtDocument.take":
                        SLOW_CALLS.append((round(ms), _name, round(time.perf_counter() * 1000)))

            setattr(cls, name, functools.wraps(original)(wrapped))


class PaintWatch:
    """Counts the canvas viewport's paint events (the first paint of the new design is what a user sees)."""

    def __init__(self, viewport):
        from PySide6.QtCore import QEvent, QObject

        class Filter(QObject):
            def eventFilter(inner, obj, event):  # noqa: N805 - Qt's signature
                if event.type() == QEvent.Paint:
                    self.paints += 1
                return False

        self.paints = 0
        self._filter = Filter()
        viewport.installEventFilter(self._filter)


def settle_idle(seconds: float = 1.0) -> None:
    from PySide6.QtWidgets import QApplication

    app, end = QApplication.instance(), time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.005)


def run_one(path: str, route: str, trace: bool, profile: str | None, stalls: bool = False,
            phases: bool = False) -> dict:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QFileDialog

    from bench_live import Lateness, pump_until
    from designer.ui.window.main_window import MainWindow

    if trace:
        import tracemalloc

        tracemalloc.start(8)
    if phases:
        time_phases()
    if os.environ.get("BENCH_OPEN_NO_EVAL"):  # an experiment: the open without the engine's thread
        MainWindow.evaluate = lambda self: None
    from designer.ui.app import set_up_the_process

    set_up_the_process()  # as designer-gui does
    app = QApplication.instance() or QApplication([])
    tmp = tempfile.mkdtemp()
    settings = QSettings(str(Path(tmp) / "s.ini"), QSettings.IniFormat)
    row = {"file": Path(path).name, "route": route, "rss_mb_before": round(rss_mb())}
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    if route == "argv":  # `designer-gui FILE`: the window is made with the file argument, then shown
        import argparse

        from designer.ui.app import after_first_paint, create_window

        args = argparse.Namespace(file=path, screenshot=None, size=(1600, 1000))
        t0, cpu0 = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        window, error = create_window(args, settings, background=True)
        window.show()
        late = Lateness()
        after_first_paint(window, lambda: window.files.open_reporting(path))  # as designer-gui's main does
    else:
        window = MainWindow(settings)
        window.resize(1600, 1000)
        window.show()
        settle_idle()  # the window's own first layout (docks, tabs) is not part of the open
        late = Lateness()
        QFileDialog.getOpenFileName = staticmethod(lambda *a, **k: (str(path), ""))
        t0, cpu0 = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        window.act_open.trigger()
    late_stalls: list = []
    if phases:
        last = [time.perf_counter()]

        def note() -> None:
            now = time.perf_counter()
            late_stalls.append((last[0], now))
            last[0] = now

        late.timer.timeout.connect(note)
    sampler = None
    if stalls:
        sampler = StallSampler()
        late.timer.timeout.connect(sampler.tick)
    watch = PaintWatch(window.view.viewport())
    target = str(Path(path).resolve())

    def opened() -> bool:
        return window.qdoc.path is not None and str(Path(window.qdoc.path).resolve()) == target

    pump_until(opened)
    painted_before = watch.paints
    pump_until(lambda: watch.paints > painted_before)
    row["open_to_paint_ms"] = round((time.perf_counter() - t0) * 1000)
    row["rss_mb_at_paint"] = round(rss_mb())
    pump_until(lambda: not window.scene.build.running)
    row["items_done_ms"] = round((time.perf_counter() - t0) * 1000)
    row["rss_mb_at_items_done"] = round(rss_mb())
    progress = window.progress
    row["progress_shown"] = bool(progress is not None and progress.seen)
    row["gpus"] = window.qdoc.doc.num_gpus()

    def answered() -> bool:  # the worker's first answer for the opened design is on screen
        return not (window.scene.build.running or window.results.check_timer.isActive() or window.evaluating)

    pump_until(answered)
    row["first_result_ms"] = round((time.perf_counter() - t0) * 1000)
    row["cpu_s"] = round(time.process_time() - cpu0, 2)
    row["result"] = (f"step {window.result.step_time_s:.2f} s" if window.result is not None
                     else window.result_label.text())
    if profiler:
        profiler.disable()
        profiler.dump_stats(profile)
    row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    # what a user looks at next: the Timeline (open in the default layout), the heat, one cable's load
    # (a user's clicks come a moment apart: each waits for the window to have painted the last, else the
    # benchmark's own back-to-back calls would count as one stall of the window)
    pump_until(lambda: not window.results._timeline_pending)
    settle_idle(0.3)
    if not window.act_heat.isChecked():
        window.act_heat.trigger()
    settle_idle(0.3)
    link = window.qdoc.doc.links[len(window.qdoc.doc.links) // 2]
    window.scene.select_ids([link.id])
    pump_until(lambda: window.inspector.shows_one_link())
    pump_until(lambda: not window.results._link_load_pending and window.results._heat_of is window.result)
    settle_idle()
    row["details_ms"] = round((time.perf_counter() - t0) * 1000)
    row["rss_mb_with_details"] = round(rss_mb())
    row["peak_rss_mb_with_details"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    row["max_late_ms"] = round(late.worst_s * 1000)
    # counted once the lateness is read: scene.items() makes a wrapper per item (~1 s at 131k GPUs,
    # a stall of the benchmark's own that the window never has)
    row["scene_items"] = len(window.scene.items())
    if phases:
        base = round(t0 * 1000)
        row["slow_calls"] = [(ms, name, at - ms - base) for ms, name, at in SLOW_CALLS]  # ms, what, started at
        row["stalls_at"] = [(round((a - t0) * 1000), round((b - a) * 1000)) for a, b in late_stalls
                            if b - a > 0.1]
    if sampler is not None:
        sampler._stop = True
        row["stalls"] = sampler.report()
    row["load"] = round(os.getloadavg()[0], 2)
    if trace:
        import tracemalloc

        snap = tracemalloc.take_snapshot()
        stats = snap.statistics("lineno")[:15]
        row["traced_mb"] = round(sum(s.size for s in snap.statistics("filename")) / 2**20)
        row["traced_peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 2**20)
        row["top"] = [f"{s.size / 2**20:.1f} MB {s.count} {s.traceback[0].filename.split('/designer/')[-1]}:"
                      f"{s.traceback[0].lineno}" for s in stats]
    window.qdoc.undo_stack.setClean()
    window.close()
    return row


def main(argv: list[str]) -> int:
    route, trace, profile, stalls, phases = "open", False, None, False, "--phases" in argv
    if phases:
        argv.remove("--phases")
    if "--stalls" in argv:
        argv.remove("--stalls")
        stalls = True
    if "--route" in argv:
        i = argv.index("--route")
        route = argv[i + 1]
        del argv[i:i + 2]
    if "--tracemalloc" in argv:
        argv.remove("--tracemalloc")
        trace = True
    if "--profile" in argv:
        i = argv.index("--profile")
        profile = argv[i + 1]
        del argv[i:i + 2]
    if argv and argv[0] == "--one":
        print(json.dumps(run_one(argv[1], route, trace, profile, stalls, phases)), flush=True)
        return 0
    missing = [path for path in argv if not Path(path).is_file()]  # --help among them
    if not argv or route not in ("open", "argv") or missing:
        print(__doc__, file=sys.stderr)
        if missing:
            print(f"no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    for path in argv:
        extra = (["--tracemalloc"] if trace else []) + (["--profile", profile] if profile else []) \
            + (["--stalls"] if stalls else []) + (["--phases"] if phases else [])
        out = subprocess.run([sys.executable, __file__, "--one", path, "--route", route, *extra],
                             capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT_S * 2)
        line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
        if out.returncode or not line.startswith("{"):
            line = json.dumps({"file": path, "error": (out.stderr.strip().splitlines() or ["failed"])[-1]})
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
