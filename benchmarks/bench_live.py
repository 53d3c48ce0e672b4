"""Benchmark: live editing in the real window, driven offscreen the way a user does (a script, not a test).

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_live.py [CASE ...] [--reps N] [--server-only]

Cases: a100-1k (resources/examples/a100-1024gpu-rail-infiniband.yaml), h100-1k-v12 (1,024 H100, GPT-3
175B, TP 8 PP 8, 12 virtual stages, 96 micro-batches), h100-16k and h100-131k (fat-trees made by
`designer generate fat-tree`, GPT-3 175B TP 8 PP 8 v3), and generate-16k (Tools > Generate of a
16,384-GPU fat-tree in the open window). The generated files are cached in $BENCH_LIVE_DIR
(default: the system's temporary folder /bench-live). `--server-only`: after the open, the server's
delete, undo and redo alone.

Each case runs in its own process (so that peak RSS is the case's own) and prints one JSON line:
  open_to_paint_ms   File > Open (the file picked) until the design is painted on the canvas
  first_result_ms    File > Open until the Breakdown shows a step time
  link_edit_ms       a link's bandwidth typed into the Inspector (Return) until the Breakdown shows
                     the new step time, one figure per repetition
  tp_edit_ms         TP typed into the Job panel (Return) until the Breakdown shows the new step time
  delete_undo_ms     Edit > Delete of that link, then Edit > Undo, each until the Breakdown shows the new
                     step time (delete, undo, delete, undo, ...)
  max_late_open_ms   the worst lateness of a 10 ms QTimer from File > Open (in a window shown and at
                     rest) to the first result (the UI thread's longest stall)
  max_busy_open_ms   the most CPU the UI thread used between two of its ticks meanwhile (the part of
                     that stall that is the window's own work)
  max_late_ms        the same during the link and TP edits (generate-16k: during the whole generate)
  max_late_delete_ms the same during the deletes and undos
  server_delete_ms, server_undo_ms, server_redo_ms  a server (with its cables) selected on the canvas,
                     Edit > Delete, Edit > Undo, Edit > Redo (then Undo again), each from the action
                     until the window is at rest (the check and evaluation done, painted), per repetition
  server_action_ms   the same, the action's trigger alone (what the UI thread does before it returns)
  max_late_server_ms the worst lateness of a 10 ms QTimer during the server's deletes, undos and redos
  max_busy_server_ms the most CPU the UI thread used between two of its ticks meanwhile (the part of a
                     stall that is the window's own work, not a wait for a core on a loaded machine)
  peak_rss_mb        the process's peak resident memory
  rss_mb_after_open, rss_mb_after_link_edits, rss_mb_after_tp_edits  resident memory at each rest
  peak_rss_mb_after_open, peak_rss_mb_after_link_edits, peak_rss_mb_after_tp_edits  the peak so far at
                     each rest: the stage whose figure first reaches peak_rss_mb is where the peak happens
Targets: edit <= 100 ms at 1k, <= 250 ms at 16k, <= 2 s at 131k; never late > 100 ms;
open to first paint <= 3 s at 16k, <= 10 s at 131k; <= 600 MB at 131k.
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

A100_EXAMPLE = ROOT / "resources" / "examples" / "a100-1024gpu-rail-infiniband.yaml"
# name -> (servers of `generate fat-tree`, switch radix, gpu, global batch, virtual stages); None: not generated
CASES = {
    "a100-1k": None,
    "h100-1k-v12": (128, 64, "H100", 1536, 12),  # DP 16: 96 micro-batches
    "h100-16k": (2048, 64, "H100", 4096, 3),
    "h100-131k": (16384, 128, "H100", 32768, 3),  # radix 64 holds at most 8,192 servers
    "generate-16k": None,
}
TIMEOUT_S = 300.0


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    """The process's peak resident memory so far (VmHWM), where /proc has it; else getrusage's figure."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def expected_size(path: Path) -> tuple[int, int]:
    """(GPUs, servers) of a design, read in a process of its own: reading it here would leave this
    process's memory (the window's, measured) a hundred MB larger at 131k GPUs."""
    code = ("import sys; from designer.core.io import load_document; d = load_document(sys.argv[1]); "
            "print(d.num_gpus(), len(d.nodes))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    gpus, servers = out.stdout.split()
    return int(gpus), int(servers)


def cases_dir() -> Path:
    folder = Path(os.environ.get("BENCH_LIVE_DIR") or Path(tempfile.gettempdir()) / "bench-live")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def case_file(name: str) -> Path:
    """The design of a case: the example, or a fat-tree generated by the CLI with the job added."""
    if name == "a100-1k":
        return A100_EXAMPLE
    servers, radix, gpu, gbs, virtual = CASES[name]
    path = cases_dir() / f"{name}.yaml"
    if path.exists():
        return path
    raw = path.with_suffix(".fabric.yaml")
    cli = "import sys; from designer.cli import main; sys.exit(main())"  # `designer generate fat-tree`
    subprocess.run([sys.executable, "-c", cli, "generate", "fat-tree", "-o", str(raw), "--nodes", str(servers),
                    "--gpu", gpu, "--switch-radix", str(radix)], check=True, cwd=ROOT)
    from designer.core.io import load_document, save_document
    from designer.core.model.job import Parallelism, Workload

    doc = load_document(raw)
    doc.set_job(Workload(preset="gpt3-175b", global_batch_size=gbs, micro_batch_size=1),
                Parallelism(tensor_model_parallel_size=8, pipeline_model_parallel_size=8,
                            virtual_pipeline_model_parallel_size=virtual, pipeline_schedule="interleaved",
                            sequence_parallel=True, recompute_granularity="selective",
                            use_distributed_optimizer=True, overlap_grad_reduce=True, overlap_param_gather=True))
    save_document(doc, path)
    raw.unlink()
    return path


class Lateness:
    """A 10 ms timer: how late it fires is how long the UI thread was busy elsewhere. `worst_cpu_s`: the
    most CPU the UI thread itself used between two ticks (on a loaded machine a tick is also late while
    the process waits for a core or the engine's thread holds the interpreter)."""

    def __init__(self):
        from PySide6.QtCore import QTimer

        self.worst_s = 0.0
        self.worst_cpu_s = 0.0
        self._last = time.perf_counter()
        self._last_cpu = time.thread_time()
        self.timer = QTimer(interval=10, timeout=self._tick)
        self.timer.start()

    def restart(self) -> None:
        self.worst_s = self.worst_cpu_s = 0.0
        self._last, self._last_cpu = time.perf_counter(), time.thread_time()

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.worst_s = max(self.worst_s, now - self._last - 0.010)
        self.worst_cpu_s = max(self.worst_cpu_s, cpu - self._last_cpu)
        self._last, self._last_cpu = now, cpu


def pump_until(done, timeout_s: float = TIMEOUT_S) -> float:
    """Run the event loop (as `exec` would) until done(); the seconds it took."""
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    t0 = time.perf_counter()
    while not done():
        if time.perf_counter() - t0 > timeout_s:
            raise TimeoutError("the window did not get there in time")
        app.processEvents(QEventLoop.AllEvents, 5)
        time.sleep(0.0005)  # an idle event loop waits: the engine thread gets the GIL meanwhile
    return time.perf_counter() - t0


def shown_new_result(window, old):
    """The Breakdown shows a result other than `old`. `old` is held weakly: a reference of the
    benchmark's own would keep the result before (~35 MB at 131k GPUs) alive in the figures."""
    panel = window.breakdown_panel
    old = weakref.ref(old) if old is not None else (lambda: None)
    return lambda: panel.result is not None and panel.result is not old() and not panel.is_stale()


def settled(window) -> bool:
    """No evaluation running, the timeline and the selected link's load caught up (the next edit
    starts from rest)."""
    return not window.results.busy


def at_rest(window, timeout_s: float = 5.0) -> None:
    """Settled, and what the window had to paint for it painted: the next edit starts from rest (a
    user types the next figure after seeing the last one). Stalls meanwhile still count in max_late_ms."""
    from PySide6.QtWidgets import QApplication

    pump_until(lambda: settled(window))
    app, idle, t0 = QApplication.instance(), 0, time.perf_counter()
    while idle < 3 and time.perf_counter() - t0 < timeout_s:
        started = time.perf_counter()
        app.processEvents()
        idle = idle + 1 if time.perf_counter() - started < 0.002 else 0
        time.sleep(0.002)


def type_into(editor, text: str) -> float:
    """Click into a line edit, replace its text and press Return; returns the time of the Return."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    editor.setFocus()
    editor.selectAll()
    QTest.keyClicks(editor, text)
    t = time.perf_counter()
    QTest.keyClick(editor, Qt.Key_Return)
    return t


def run_case(name: str, reps: int, server_only: bool = False) -> dict:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from designer.ui.window.main_window import MainWindow

    path = None if name == "generate-16k" else case_file(name)
    from designer.ui.app import set_up_the_process

    set_up_the_process()  # as designer-gui does
    app = QApplication.instance() or QApplication([])
    tmp = tempfile.mkdtemp()
    window = MainWindow(QSettings(str(Path(tmp) / "s.ini"), QSettings.IniFormat))
    window.resize(1600, 1000)
    window.show()
    pump_until(lambda: True)
    row = {"case": name}
    if name == "generate-16k":
        return run_generate(window, Lateness(), row)

    late = open_design(window, path, row)
    if server_only:
        late.worst_s = 0.0
        server_edits(window, late, row, reps)
        finish(window, late, row)
        return row

    link, link_ms, tp_ms = value_edits(window, late, row, reps)
    edits_late_s = late.worst_s
    delete_undo(window, late, link, row, reps)
    server_edits(window, late, row, reps)
    late.worst_s = edits_late_s  # max_late_ms: the speed and TP edits, as before
    row["link_edit_ms_median"] = statistics.median(link_ms)
    row["tp_edit_ms_median"] = statistics.median(tp_ms)
    finish(window, late, row)
    return row


def open_design(window, path, row: dict) -> "Lateness":
    """File > Open of `path` in the window at rest, timed to its first paint and its first result; the
    lateness meter that ran meanwhile (it goes on measuring the edits)."""
    gpus, servers = expected_size(path)
    # a user opens a file in a window that is shown: its first paint and its start-up work (the empty
    # design's check) are not the open's
    at_rest(window)
    late = Lateness()  # (after that reading: it blocks this thread, and is not the window's)
    from PySide6.QtWidgets import QFileDialog  # File > Open, the file picked in its dialog

    QFileDialog.getOpenFileName = staticmethod(lambda *a, **k: (str(path), ""))
    t0 = time.perf_counter()
    window.act_open.trigger()
    # (the GPU count, a walk over every server, only once the canvas has its boxes: this check runs
    # on the UI thread between events, and its walk would count in the window's stalls)
    pump_until(lambda: len(window.scene.devices) >= servers and window.qdoc.doc.num_gpus() == gpus)
    window.view.viewport().repaint()
    row["gpus"] = gpus
    row["open_to_paint_ms"] = round((time.perf_counter() - t0) * 1000)
    pump_until(shown_new_result(window, None))
    row["first_result_ms"] = round((time.perf_counter() - t0) * 1000)
    row["step_s"] = window.breakdown_panel.result.step_time_s
    at_rest(window)
    row["max_late_open_ms"] = round(late.worst_s * 1000)
    row["max_busy_open_ms"] = round(late.worst_cpu_s * 1000)
    row["rss_mb_after_open"] = round(rss_mb())
    row["peak_rss_mb_after_open"] = round(peak_rss_mb())

    return late


def value_edits(window, late, row: dict, reps: int):
    """A cable's speed typed into the Inspector, then TP into the Job panel, each until the Breakdown
    shows the new step time; the cable, and the two lists of times."""
    # a switch-to-switch link (else the first link): select it on the canvas, type into the Inspector
    # (found before the edits' clock: this search is the benchmark's, a user clicks the link)
    doc = window.qdoc.doc
    switches = {s.id for s in doc.switches}
    link = next((l for l in doc.links if l.a.split(":")[0] in switches and l.b.split(":")[0] in switches),
                doc.links[0])
    late.worst_s, late._last = 0.0, time.perf_counter()  # from here: the edits alone
    window.scene.select_ids([link.id])
    pump_until(lambda: "bandwidth_gbps" in window.inspector.editors)
    editor = window.inspector.editors["bandwidth_gbps"]
    base = link.bandwidth_gbps
    link_ms = []
    for i in range(reps):
        new_result = shown_new_result(window, window.breakdown_panel.result)
        t = type_into(editor, f"{base / 2 if i % 2 == 0 else base:g}")
        pump_until(new_result)
        link_ms.append(round((time.perf_counter() - t) * 1000))
        at_rest(window)
    row["link_edit_ms"] = link_ms
    row["rss_mb_after_link_edits"] = round(rss_mb())
    row["peak_rss_mb_after_link_edits"] = round(peak_rss_mb())

    tp_editor = window.job_panel.editors["parallelism.tensor_model_parallel_size"]
    tp_ms = []
    for i in range(reps):
        new_result = shown_new_result(window, window.breakdown_panel.result)
        t = type_into(tp_editor, "4" if i % 2 == 0 else "8")
        pump_until(new_result)
        tp_ms.append(round((time.perf_counter() - t) * 1000))
        at_rest(window)
    row["tp_edit_ms"] = tp_ms
    row["rss_mb_after_tp_edits"] = round(rss_mb())
    row["peak_rss_mb_after_tp_edits"] = round(peak_rss_mb())
    return link, link_ms, tp_ms


def delete_undo(window, late, link, row: dict, reps: int) -> None:
    """Edit > Delete of the cable, then Edit > Undo (the design's shape changes), each timed to rest."""
    # Edit > Delete of the selected cable, then Edit > Undo: the design's shape changes (a structural edit)
    late.worst_s, late._last = 0.0, time.perf_counter()
    structural_ms = []
    for i in range(reps):
        for action in ("delete", "undo"):
            window.scene.select_ids([link.id])  # (undo leaves the cable unselected; a user clicks it again)
            new_result = shown_new_result(window, window.breakdown_panel.result)
            t = time.perf_counter()
            window.actions[action].trigger()
            pump_until(new_result)
            structural_ms.append(round((time.perf_counter() - t) * 1000))
            at_rest(window)
    row["delete_undo_ms"] = structural_ms
    row["max_late_delete_ms"] = round(late.worst_s * 1000)

def server_edits(window, late, row, reps: int) -> None:
    """A server in the middle of the design (its cables with it) selected on the canvas, then Edit > Delete,
    Edit > Undo, Edit > Redo and Edit > Undo again, each timed from the action to rest."""
    doc = window.qdoc.doc
    server = doc.nodes[len(doc.nodes) // 2].id
    late.restart()
    times: dict = {"delete": [], "undo": [], "redo": []}
    triggers = []
    for _ in range(reps):
        for action in ("delete", "undo", "redo", "undo"):
            if action == "delete":
                window.scene.select_ids([server])
                pump_until(lambda: window.scene.selected_ids() == [server])
            t = time.perf_counter()
            window.actions[action].trigger()
            triggers.append(round((time.perf_counter() - t) * 1000))
            pump_until(lambda: settled(window))
            at_rest(window)
            times[action].append(round((time.perf_counter() - t) * 1000))
            assert (doc.get(server) is None) == (action in ("delete", "redo")), action
    row["server_delete_ms"] = times["delete"]
    row["server_undo_ms"] = times["undo"]
    row["server_redo_ms"] = times["redo"]
    row["server_action_ms"] = triggers
    row["max_late_server_ms"] = round(late.worst_s * 1000)
    row["max_busy_server_ms"] = round(late.worst_cpu_s * 1000)


def run_generate(window, late, row) -> dict:
    """Tools > Generate with 2,048 servers of 8 H100 (the dialog answered as a user would)."""
    from designer.ui.dialogs.generator_dialog import GeneratorDialog

    def answer(dialog):
        dialog.set_options(nodes=2048, gpu="H100")
        return 1  # QDialog.Accepted

    GeneratorDialog.exec = answer
    t0 = time.perf_counter()
    window.act_generate.trigger()
    pump_until(lambda: window.qdoc.doc.num_gpus() == 16384 and len(window.scene.devices) >= 2048)
    window.view.viewport().repaint()
    row["gpus"] = 16384
    row["generate_to_paint_ms"] = round((time.perf_counter() - t0) * 1000)
    progress = getattr(window, "progress", None)
    row["progress_shown"] = bool(getattr(progress, "seen", False))
    pump_until(lambda: not window.evaluating)
    finish(window, late, row)
    return row


def finish(window, late, row) -> None:
    row["max_late_ms"] = round(late.worst_s * 1000)  # the edits (the open is max_late_open_ms)
    row["peak_rss_mb"] = round(peak_rss_mb())
    row["load"] = os.getloadavg()[0]
    window.qdoc.undo_stack.setClean()
    window.close()


def main(argv: list[str]) -> int:
    reps = 3
    server_only = "--server-only" in argv
    argv = [a for a in argv if a != "--server-only"]
    if "--reps" in argv:
        i = argv.index("--reps")
        reps = int(argv[i + 1])
        del argv[i:i + 2]
    if argv and argv[0] == "--one":  # a single case, in this process
        print(json.dumps(run_case(argv[1], reps, server_only)), flush=True)
        return 0
    names = argv or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}", file=sys.stderr)
        return 2
    for name in names:
        if name != "generate-16k":
            case_file(name)  # generated before the timed process starts
        out = subprocess.run([sys.executable, __file__, "--one", name, "--reps", str(reps)]
                             + (["--server-only"] if server_only else []),
                             capture_output=True, text=True, cwd=ROOT)
        line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
        if out.returncode or not line.startswith("{"):
            line = json.dumps({"case": name, "error": (out.stderr.strip().splitlines() or ["failed"])[-1]})
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
