"""The words of an analysis that both the CLI and the desktop app print, written once.

`designer search` and the Advisor's "Best plans" page say how the plan space was cut down in the
same sentence; `designer search`, the Advisor's tooltips and the plan rows say how to apply a plan
with the same `--set` arguments. A second copy of such a text drifts (the Advisor's once lost the
candidates, the CLI's never showed the failed plans), so both import these functions.
"""
from __future__ import annotations


def search_counts_text(result, with_runner: bool = True) -> str:
    """How the space was cut down: "483,840 plans; 185,184 impossible, 75,104 out of memory,
    204,261 dominated, 19,291 candidates; 2,856 costed, 16,436 cut by the lower bound; 4.5 s on
    4 processes". `with_runner=False` leaves out " on ..." (the app searches in its own process,
    which the tooltip says)."""
    c = result.counts
    text = (f"{c.total:,} plans; {c.invalid:,} impossible, {c.no_memory:,} out of memory, {c.dominated:,} dominated, "
            f"{c.candidates:,} candidates; {result.evaluated:,} costed, {result.cut_by_bound:,} cut by the lower bound")
    if getattr(result, "failed", 0):  # plans the engine could not cost: rare, never hidden
        text += f", {result.failed:,} failed"
    text += f"; {result.elapsed_s:.1f} s"
    if with_runner and getattr(result, "runner", ""):
        text += f" on {result.runner}"
    return text


def set_arguments(settings: list[str]) -> str:
    """The `--set` arguments that apply a plan or a change: "--set parallelism.tp=4 --set ..."."""
    return " ".join(f"--set {s}" for s in settings)


def evaluate_command(settings: list[str]) -> str:
    """The command line that evaluates the design with these settings, as a tooltip quotes it."""
    return "designer evaluate FILE" + (" " + set_arguments(settings) if settings else "")
