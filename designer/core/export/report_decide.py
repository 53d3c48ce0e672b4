"""The decision report (`designer decide ... --report OUT.pdf`): the question, the verdict, each
design at its best plan side by side per run with error ranges, goodput and its failure budget;
then each design on its own (its picture and logical fabric view, the best plan's Megatron-LM
arguments, the Advisor's best changes) and the assumptions with their sources (prices, failure
rates, memory headroom, the slowest-GPU spread), on report.py's page machinery. The pictures come
from the caller as PNG (core draws none: designer.ui.common.report_pictures renders them)."""
from __future__ import annotations

import datetime as _dt
import os

from typing import TYPE_CHECKING

from ..units import usd_text
from ..model.reliability import ReliabilityConstants
from .pdf import PdfDocument
from .report import _footers
from .report_layout import INK, MUTED, WARN, Column, Layout, ReportPictures, short_source

if TYPE_CHECKING:  # the decision is the caller's (analysis/decide.py): export never runs the search
    from ..analysis.decide import Decision


NO_DESIGN_PICTURES = "no pictures were rendered for this report"


def write_decision_report(decision: Decision, path: str | os.PathLike, when: _dt.datetime | None = None,
                          pictures: dict[str, ReportPictures] | None = None) -> int:
    """Write the decision as a PDF to `path`; the page count. `pictures`: per design name, its
    canvas and logical-view pictures as the caller rendered them (a design without them gets a
    line that says why)."""
    from ... import __version__

    when = when or _dt.datetime.now().astimezone()
    title = f"Decision: {decision.tokens / 1e12:g}T tokens on {len(decision.answers)} designs"
    pdf = PdfDocument(title=title, producer=f"designer {__version__}", subject="Which design to buy",
                      creation_date=when)
    lay = Layout(pdf, title, kind="decision")
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
    for a in decision.answers:
        _design_section(lay, a, (pictures or {}).get(a.name))
    _assumptions(lay, ok)
    _footers(pdf, title, __version__)
    pdf.save(path)
    return len(pdf.pages)


# ---- each design on its own -------------------------------------------------------------------

def _design_section(lay: Layout, a, pictures: ReportPictures | None) -> None:
    """One design: its pictures, its best plan as Megatron-LM arguments, the Advisor's best changes."""
    lay.heading(f"Design: {a.name}", keep=160)
    if a.error:
        lay.paragraph(f"No answer: {a.error}", size=8.5, color=WARN)
        return
    pictures = pictures or ReportPictures(missing=NO_DESIGN_PICTURES)
    for key in ("canvas", "logical"):
        figure = pictures.get(key)
        if figure is not None:
            lay.picture(figure)
    absent = [name for key, name in (("canvas", "racks and cables"), ("logical", "logical fabric view"))
              if pictures.get(key) is None]
    if absent:
        lay.paragraph(f"Picture of the {' and the '.join(absent)} not included: {pictures.missing or 'not rendered'}.",
                      size=8, color=MUTED)
    lay.subheading(f"Best plan as Megatron-LM arguments ({a.plan})")
    flags = _megatron_flags(a)
    if flags:
        lay.paragraph(flags, size=7.5)
    lay.subheading("What would change the decision: the Advisor's best changes")
    if a.changes:
        lay.table([Column("change", 0.5), Column("step", 0.14, "right"), Column("tokens/$", 0.14, "right"),
                   Column("set", 0.22)],
                  [[c.title, f"{c.speedup:+.1%}",
                    f"{c.tokens_per_usd_change:+.1%}" if c.tokens_per_usd_change is not None else "-",
                    " ".join(c.set) or c.description[:60]] for c in a.changes], size=7.5)
    elif a.changes is None:
        lay.paragraph("The Advisor was not run for this report.", size=8, color=MUTED)
    else:
        lay.paragraph("No change the Advisor tries makes this plan more than 1 % faster while keeping the memory "
                      "headroom: the plan is at its best on this design.", size=8, color=MUTED)


def _megatron_flags(a) -> str:
    """The best plan's arguments (designer export megatron's logic), or why there are none."""
    from ..model.catalog import default_catalog
    from ..problems import DesignerError
    from .megatron_args import megatron_line

    doc = a.document
    try:
        line = megatron_line(doc.spec.workload, doc.spec.parallelism, default_catalog().presets())
    except DesignerError as exc:
        return "No Megatron-LM line: " + "; ".join(p.message for p in exc.problems)
    return line.one_line()


def _assumptions(lay: Layout, answers: list) -> None:
    """Prices, failure rates, memory headroom and the slowest-GPU spread, each with its source."""
    import dataclasses

    from ..engine.constants import EngineConstants

    lay.heading("Assumptions and sources", keep=120)
    limits = ", ".join(f"{a.name}: {_headroom(a):.0%}, plans held to {a.evaluation.memory_limit_gib:.1f} GiB"
                       for a in answers)
    lay.paragraph("Memory: plans keep the calibration's memory_headroom of HBM free for allocator fragmentation "
                  f"and spikes ({limits}). Error ranges: "
                  "resources/catalog/error_ranges.yaml, the 80 % prediction interval of measured / predicted step "
                  "time on published runs of the same class (docs/decide.md).", size=8)
    lay.subheading("Prices and power")
    for a in answers:
        c = a.cost
        lay.paragraph(f"{a.name}: capex {usd_text(c.capex_usd)} over {c.amortisation_years:g} years, energy at "
                      f"{c.usd_per_kwh:g} $/kWh, PUE {c.pue:g} ({short_source(c.pue_source, 80)}).", size=8)
        lines = sorted(c.bom, key=lambda line: -line.subtotal_usd)[:5]
        lay.table([Column("part", 0.24), Column("count", 0.1, "right"), Column("unit price", 0.14, "right"),
                   Column("source", 0.52)],
                  [[line.part, f"{line.count:,}", usd_text(line.unit_price_usd),
                    ("estimate: " if line.estimate else "") + short_source(line.source, 140)] for line in lines],
                  size=7)
    lay.subheading("Failure rates and restart")
    from ..model.reliability import reliability_constants

    in_force = {a.name: reliability_constants(a.document.spec.calibration) for a in answers}

    def value(name: str) -> str:  # one value when the designs agree, else one per design
        values = {design: getattr(rc, name) for design, rc in in_force.items()}
        if len(set(values.values())) <= 1:
            return f"{next(iter(values.values()), getattr(ReliabilityConstants(), name)):g}"
        return ", ".join(f"{design}: {v:g}" for design, v in values.items())

    lay.table([Column("constant", 0.28), Column("in force", 0.14, "right"), Column("source", 0.58)],
              [[f.name, value(f.name), short_source(f.metadata["doc"], 160)]
               for f in dataclasses.fields(ReliabilityConstants)], size=7)
    lay.subheading("Engine constants behind the slowest-GPU wait and the memory limit")
    lay.table([Column("constant", 0.28), Column("in force", 0.14, "right"), Column("source", 0.58)],
              [[name, _in_force(answers, name), short_source(EngineConstants.__dataclass_fields__[name].metadata["doc"],
                                                             600)]
               for name in ("rank_speed_cv", "rank_speed_screened_share", "memory_headroom")], size=7)


def _in_force(answers: list, name: str) -> str:
    """An engine constant as each design's calibration sets it: one value, or one per design."""
    from ..engine.constants import EngineConstants

    values = {a.name: getattr(a.evaluation.constants.get("engine") or EngineConstants(), name) for a in answers}
    if len(set(values.values())) <= 1:
        return f"{next(iter(values.values()), getattr(EngineConstants(), name)):g}"
    return ", ".join(f"{design}: {value:g}" for design, value in values.items())


def _headroom(a) -> float:
    """The share of HBM the design's plans keep free (its calibration's memory_headroom)."""
    from ..engine.constants import EngineConstants

    k = a.evaluation.constants.get("engine") or EngineConstants()
    return k.memory_headroom
