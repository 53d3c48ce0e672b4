"""The plan search of the Advisor, off the UI thread: the fastest plans of the drawn cluster and job.

`SearchWorker` (a LatestWorker) runs `designer.core.analysis.search.search` in-process (`workers=1`:
no process pool inside the desktop app, nor the frozen one). A search takes seconds, so the worker
reports its progress ("costed N plans") and can be cancelled: the search's checkpoint (called while
the space is enumerated and bounded, before each chunk of plans) and progress callbacks raise
Cancelled when the search is no longer wanted (cancelled, superseded by a newer request, or the
window closed), and the search unwinds within a layout's enumeration or one chunk of plans.

The helpers below turn a SearchResult into the text the panel shows (a row's tooltip); the counts
line, as the CLI prints it, is designer.core.analysis.texts.search_counts_text.
"""
from __future__ import annotations

import time

from PySide6.QtCore import Signal

from ..work.latest_worker import Cancelled, LatestWorker, error_text
from .plot_style import CATEGORY_NAMES

PROGRESS_EVERY_S = 0.1  # at most ten progress signals a second


class SearchWorker(LatestWorker):
    """`search` off the UI thread. No Qt parent: it may outlive the window. Only the newest
    request is wanted: a new one, `cancel()` or `stop()` abort the one running at its next
    checkpoint (a few hundredths of a second), also while the space is still being enumerated."""

    kinds = ("search",)
    thread_name = "designer-plan-search"
    progressed = Signal(int, int)  # request, plans costed so far
    searched = Signal(int, int, object, object, float)  # request, revision, SearchResult or None, error or None, s

    def submit(self, request: int, revision: int, snapshot, top: int = 10, opts=None,
               job_name: str | None = None) -> bool:
        """`job_name`: with several jobs, the one whose plans are searched (alone); None: the first."""
        return super().submit("search", request, revision, snapshot, top, opts, job_name)

    def work(self, kind: str, request: int, revision: int, doc, top: int, opts, job_name: str | None = None) -> None:
        from ...core.analysis.search import search

        started = time.perf_counter()
        last = [0.0]

        def progress(done: int, _total: int) -> None:
            self.check(kind, request)
            now = time.perf_counter()
            if now - last[0] >= PROGRESS_EVERY_S:
                last[0] = now
                self.emit(self.progressed, request, done)
                self.check(kind, request)  # the window is gone: stop

        result, error = None, None
        try:
            if doc.spec.jobs:
                from ...core.model.jobs import job_alone

                doc, _name = job_alone(doc, job_name)
            result = search(doc, top=top, workers=1, opts=opts, progress=progress,
                            checkpoint=lambda: self.check(kind, request))
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - shown in the panel, never a crash
            error = error_text(exc)
        self.check(kind, request)  # nobody waits for it; a newer request may be pending
        self.emit(self.searched, request, revision, result, error, time.perf_counter() - started)


# ---- text ---------------------------------------------------------------------------------------

def speedup_of(row: dict, current: dict | None) -> float | None:
    """current step / this plan's step - 1 (+10%: 10% more steps per hour), None without a costed current plan."""
    if not current or "error" in current or not current.get("step_time_s") or not row.get("step_time_s"):
        return None
    return current["step_time_s"] / row["step_time_s"] - 1


def breakdown_lines(breakdown: dict, step_s: float) -> list[str]:
    """ "  compute 3.301 s (99.9%)" for every part of the step that is not zero, largest first."""
    parts = sorted(((k, v) for k, v in breakdown.items() if v > 5e-7), key=lambda kv: -kv[1])
    out = []
    for key, seconds in parts:
        name = CATEGORY_NAMES.get(key, key.replace("_", " "))
        value = f"{seconds:.3f} s" if seconds >= 0.001 else f"{seconds * 1e3:.2f} ms"
        share = ""
        if step_s > 0:
            fraction = seconds / step_s
            share = " (<0.1%)" if fraction < 0.0005 else f" ({min(fraction, 0.999 if seconds < step_s else 1):.1%})"
        out.append(f"  {name} {value}{share}")
    return out


def changed_settings(point, current_point) -> list[str]:
    """The `--set` arguments of `point` that differ from the file's own plan (all of them without one)."""
    mine = point.settings()
    if current_point is None:
        return mine
    theirs = set(current_point.settings())
    return [s for s in mine if s not in theirs]


def row_tip(row: dict, current: dict | None, is_current: bool) -> str:
    point = row["point"]
    lines = [point.label() + ("  (the file's plan)" if is_current else "")]
    gain = speedup_of(row, current)
    vs = ""
    if gain is not None and not is_current:
        vs = f", {abs(gain):.1%} {'faster' if gain >= 0 else 'slower'} than the file's plan " \
             f"({current['step_time_s']:.3f} s)"
    lines.append(f"step {row['step_time_s']:.3f} s{vs}")
    lines.append(f"MFU {row['mfu']:.1%}, {row['tokens_per_s']:,.0f} tokens/s, "
                 f"memory per GPU {row['memory_gib']:.1f} GiB")
    lines.append("where the step goes:")
    lines += breakdown_lines(row.get("breakdown_s", {}), row["step_time_s"])
    if not is_current:
        sets = changed_settings(point, current["point"] if current else None)
        if sets:
            lines.append("CLI: designer evaluate FILE")
            lines += [f"  --set {s}" for s in sets]
        lines.append("Double-click or Apply: one undo step (a job edit)")
    return "\n".join(lines)
