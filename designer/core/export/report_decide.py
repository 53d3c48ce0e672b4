"""The decision report (`designer decide ... --report OUT.pdf`): the question, the verdict, each
design at its best plan side by side per run with error ranges, goodput and its failure budget,
and the assumptions with their sources (report.py's page machinery)."""
from __future__ import annotations

import datetime as _dt
import os

from typing import TYPE_CHECKING

from ..units import usd_text
from ..model.reliability import ReliabilityConstants
from .pdf import PdfDocument
from .report import _footers
from .report_layout import INK, MUTED, WARN, Column, Layout, short_source

if TYPE_CHECKING:  # the decision is the caller's (analysis/decide.py): export never runs the search
    from ..analysis.decide import Decision


def write_decision_report(decision: Decision, path: str | os.PathLike, when: _dt.datetime | None = None) -> int:
    """Write the decision as a PDF to `path`; the page count."""
    from ... import __version__

    when = when or _dt.datetime.now().astimezone()
    title = f"Decision: {decision.tokens / 1e12:g}T tokens on {len(decision.answers)} designs"
    pdf = PdfDocument(title=title, producer=f"designer {__version__}", subject="Which design to buy",
                      creation_date=when)
    lay = Layout(pdf, title)
    lay.new_page()
    lay.heading("The question", keep=80)
    names = ", ".join(a.name for a in decision.answers)
    lay.paragraph(f"Which of {names} trains the job for {decision.tokens / 1e12:g}T tokens faster and cheaper? Each "
                  "design at the best plan the plan search finds that fits with the memory headroom; time and "
                  "dollars per run with the engine's 80 % error range and goodput with failures.", size=9)
    lay.paragraph(decision.verdict + ".", size=10, bold=True, color=WARN if decision.within_error else INK)
    ok = [a for a in decision.answers if not a.error]
    lay.heading("Side by side", keep=200)
    columns = [Column("", 0.28)] + [Column(a.name, 0.72 / len(decision.answers), "right") for a in decision.answers]

    def row(label, cell):
        return [label] + [cell(a) if not a.error else "--" for a in decision.answers]

    rows = [
        row("GPUs", lambda a: f"{a.num_gpus:,} {a.accelerator}"),
        row("time to train, days", lambda a: f"{a.run.days:,.1f}"),
        row("  80 % range", lambda a: f"{a.hours_range[0] / 24:,.1f} - {a.hours_range[1] / 24:,.1f}"),
        row("cost per run", lambda a: usd_text(a.run.usd)),
        row("  80 % range", lambda a: f"{usd_text(a.usd_range[0])} - {usd_text(a.usd_range[1])}"),
        row("  lost work", lambda a: usd_text(a.run.usd_lost)),
        row("  hot spares", lambda a: usd_text(a.run.spares_usd)),
        row("goodput", lambda a: f"{a.goodput.goodput:.1%}"),
        row("interruptions per day", lambda a: f"{a.goodput.interruptions_per_day:.1f}"),
        row("checkpoint every, min", lambda a: f"{a.goodput.interval_s / 60:.1f}"),
        row("hot spares", lambda a: f"{a.goodput.hot_spares} x {a.goodput.spare_unit_gpus} GPUs"),
        row("GPU-hours", lambda a: f"{a.run.gpu_hours / 1e6:,.2f} M"),
        row("energy", lambda a: f"{a.run.energy_mwh:,.0f} MWh"),
        row("capex", lambda a: usd_text(a.cost.capex_usd)),
        row("step time", lambda a: f"{a.evaluation.step_time_s:.2f} s"),
        row("  80 % range", lambda a: f"{a.step_range.range_s[0]:.2f} - {a.step_range.range_s[1]:.2f} s"),
        row("  error class", lambda a: f"{a.step_range.error_class} ({a.step_range.runs} runs)"),
        row("MFU", lambda a: f"{a.evaluation.mfu:.1%}"),
        row("memory per GPU", lambda a: f"{a.evaluation.memory_gib_per_gpu['total']:.1f} of "
                                        f"{a.evaluation.memory_limit_gib:.1f} GiB"),
        row("bottleneck", lambda a: a.bottleneck),
    ]
    lay.table(columns, rows, size=7.5)
    lay.heading("Best plans", keep=80)
    for a in decision.answers:
        if a.error:
            lay.paragraph(f"{a.name}: no answer: {a.error}", size=8.5, color=WARN)
            continue
        lay.paragraph(f"{a.name}: {a.plan} (search: {a.plans_costed:,} plans costed in {a.search_s:.0f} s)", size=8.5)
        for note in ([a.step_range.note] if a.step_range.note else []) + a.goodput.notes:
            lay.paragraph(note, size=7.5, color=MUTED, indent=12)
    if ok:
        lay.heading("Failure budget", keep=120)
        for a in ok:
            lay.subheading(f"{a.name}: {a.goodput.interruptions_per_day:.1f} interruptions a day, "
                           f"mean time to interruption {a.goodput.mtti_h:.1f} h")
            lay.table([Column("part", 0.18), Column("in the job", 0.14, "right"), Column("rate", 0.22, "right"),
                       Column("per day", 0.1, "right"), Column("blast radius", 0.36)],
                      [[p.part, f"{p.count:,}", f"{p.rate_per_mh:g} per M {p.unit}s", f"{p.per_day:.2f}", p.blast]
                       for p in a.goodput.parts], size=7.5)
            g = a.goodput
            lay.paragraph(f"Checkpoint {g.checkpoint_tb:.1f} TB, written in {g.checkpoint_write_s:.0f} s, every "
                          f"{g.interval_s / 60:.1f} min (Young/Daly); down {g.down_per_interruption_s / 60:.1f} min "
                          f"per interruption; {g.hot_spares} hot spares ready with probability {g.spare_ready:.1%}.",
                          size=8)
    lay.heading("Assumptions and sources", keep=120)
    lay.paragraph("Memory: plans keep the calibration's memory_headroom (10 % of HBM by default) free for allocator "
                  "fragmentation and spikes. Prices and power: resources/catalog/prices.yaml (designer cost). Error "
                  "ranges: resources/catalog/error_ranges.yaml, the 80 % prediction interval of measured / predicted "
                  "step time on published runs of the same class (docs/decide.md).", size=8)
    import dataclasses

    rc = ReliabilityConstants()
    lay.table([Column("constant", 0.28), Column("default", 0.12, "right"), Column("source", 0.6)],
              [[f.name, f"{getattr(rc, f.name):g}", short_source(f.metadata["doc"], 160)]
               for f in dataclasses.fields(ReliabilityConstants)], size=7)
    _footers(pdf, title, __version__)
    pdf.save(path)
    return len(pdf.pages)
