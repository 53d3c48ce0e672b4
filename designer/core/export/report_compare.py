"""The report's comparison section (`designer report A --compare B`): both designs' figures in two
columns with the differences, and both step-time breakdowns as one plot of two bars on one scale."""
from __future__ import annotations

from .pdf import text_width
from .report_layout import (
    CATEGORY_COLORS, INK, LEFT, MUTED, OK, RULE, WARN, WIDTH, Column, Layout, _dark, _pct, _s3, fit,
)

BAR_H = 20.0  # points, one bar per design
BAR_GAP = 8.0
NAME_W = 96.0  # the bars' labels on the left
TOTAL_W = 54.0  # the step time on the right


def comparison_section(lay: Layout, c) -> None:
    """Section "Compared with B": the table of figures, the breakdown plot and the breakdown table."""
    lay.heading(f"Compared with {c.b.label}", keep=220)
    lay.paragraph(f"A: {c.a.label} ({c.a.name}, {c.a.num_gpus:,} GPUs).  B: {c.b.label} ({c.b.name}, "
                  f"{c.b.num_gpus:,} GPUs).  Differences are B - A, and as a share of A.", size=8.5, color=MUTED)
    lay.paragraph(c.summary() + ".", size=9.5, bold=True,
                  color=INK if c.identical else _summary_color(c))
    columns = [Column("figure", 0.25), Column(f"A: {c.a.label}", 0.22, "right"),
               Column(f"B: {c.b.label}", 0.22, "right"), Column("B - A", 0.12, "right"),
               Column("%", 0.09, "right"), Column("B is", 0.1)]
    rows, _ = c.shown(c.rows)
    lay.table(columns, [_cells(r) for r in rows], size=8)
    for note in c.notes:
        lay.paragraph(note, size=7.5, color=MUTED)

    parts, zero = c.shown(c.breakdown)
    # the plot, its legend and the table together on one page (they are read together)
    lay.subheading("Step-time breakdown, side by side (critical path, one scale)",
                   keep=2 * BAR_H + BAR_GAP + 60 + (len(parts) + 2) * 13.5)
    _paired_bars(lay, c)
    lay.legend([(r.label, CATEGORY_COLORS.get(r.label, "#999999")) for r in parts])
    rows = [_cells(r) for r in parts]
    step = c.row("step_time_s")
    rows.append(["step time", step.text_a, step.text_b, step.text_delta, step.text_pct, step.verdict])
    lay.table([Column("category", 0.25), Column("A s", 0.22, "right"), Column("B s", 0.22, "right"),
               Column("B - A", 0.12, "right"), Column("%", 0.09, "right"), Column("B is", 0.1)], rows,
              swatches=[CATEGORY_COLORS.get(r.label, "#999999") for r in parts] + [None],
              bold_rows={len(rows) - 1}, size=8)
    if zero:
        lay.paragraph("Zero in both: " + ", ".join(r.label for r in zero) + ".", size=7.5, color=MUTED)


def _cells(r) -> list[str]:
    return [r.label, r.text_a, r.text_b, r.text_delta, r.text_pct, r.verdict]


def _summary_color(c):
    verdict = c.row("step_time_s").verdict
    return OK if verdict == "better" else WARN if verdict == "worse" else INK


def _paired_bars(lay: Layout, c) -> None:
    """Two horizontal stacked bars, A above B, drawn to the same seconds-per-point scale."""
    longest = max(c.a.step_time_s, c.b.step_time_s) or 1.0
    bar_w = WIDTH - NAME_W - TOTAL_W
    height = 2 * BAR_H + BAR_GAP
    lay.ensure(height + 12)
    top = lay.y - 4
    for i, side in enumerate((c.a, c.b)):
        y = top - BAR_H - i * (BAR_H + BAR_GAP)
        label = f"{'AB'[i]}: {side.label}"
        lay.pdf.text(LEFT, y + BAR_H / 2 - 3, fit(label, NAME_W - 6, 8, True), size=8, bold=True, color=INK)
        x = LEFT + NAME_W
        lay.pdf.rect(x, y, bar_w, BAR_H, fill=(0.97, 0.97, 0.97), stroke=RULE, line_width=0.4)
        step = side.step_time_s or 1.0
        for key, value in side.breakdown_s.items():
            if value <= 0:
                continue
            w = value / longest * bar_w
            color = CATEGORY_COLORS.get(key, "#999999")
            lay.pdf.rect(x, y, w, BAR_H, fill=color)
            share = _pct(value / step)
            if w > text_width(share, 7, "Helvetica-Bold") + 6:
                lay.pdf.text(x + w / 2, y + BAR_H / 2 - 2.5, share, size=7, bold=True,
                             color=(1, 1, 1) if _dark(color) else INK, align="center")
            x += w
        lay.pdf.text(LEFT + WIDTH, y + BAR_H / 2 - 3, f"{_s3(side.step_time_s)} s", size=8, bold=True,
                     color=INK, align="right")
    lay.y = top - height - 4
    lay.pdf.text(LEFT + NAME_W, lay.y - 8, fit(f"Bar length = seconds per step; the full width is "
                                                f"{_s3(longest)} s. Shares are of each design's own step.",
                                                WIDTH - NAME_W, 7.5), size=7.5, color=MUTED)
    lay.y -= 14
