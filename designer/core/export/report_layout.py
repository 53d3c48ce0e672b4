"""The report's page kit: A4 geometry, colours, text wrapping and number formats, the pictures a
caller hands in (PNG), and Layout, which places headings, paragraphs, tables, panels, bars and
pictures on pages of a PdfDocument. The report (report.py) and its comparison section
(report_compare.py) are written with it."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .pdf import A4_HEIGHT, A4_WIDTH, PdfDocument, clean_text, png_size, text_width

# ---- page geometry (points) ------------------------------------------------------------------
PAGE_W, PAGE_H = A4_WIDTH, A4_HEIGHT
LEFT, RIGHT = 50.0, A4_WIDTH - 50.0
WIDTH = RIGHT - LEFT
TOP = 786.0  # first content line on pages with the running header
BOTTOM = 62.0  # content never goes below this
HEADER_Y = 806.0
FOOTER_Y = 38.0
PICTURE_MAX_H = 360.0  # a picture takes at most about half a page
# Every string lies inside this box (x0, y0, x1, y1): tests check it.
TEXT_BOX = (LEFT, 28.0, RIGHT, PAGE_H - 24.0)

# ---- colours ---------------------------------------------------------------------------------
INK = (0.12, 0.14, 0.17)
MUTED = (0.40, 0.44, 0.50)
ACCENT = (0.09, 0.23, 0.40)
RULE = (0.76, 0.80, 0.85)
HEAD_FILL = (0.90, 0.93, 0.96)
ZEBRA = (0.965, 0.972, 0.98)
WARN = (0.70, 0.25, 0.05)
WARN_FILL = (1.0, 0.95, 0.88)
OK = (0.12, 0.45, 0.20)

CATEGORY_COLORS = {
    "compute": "#2f6db5", "recompute": "#9dc3e6", "tp_comm": "#e8772e", "cp_comm": "#f6c08f",
    "ep_comm": "#8c5fb8", "pp_comm": "#c9b3e0", "dp_comm": "#3a9a48", "bubble": "#d23f3f",
    "imbalance_wait": "#f2a2a2", "optimizer": "#7f7f7f",
}
CATEGORY_MEANING = {
    "compute": "forward and backward kernels of the critical device (GEMMs, attention, elementwise)",
    "recompute": "activation recomputation in backward",
    "tp_comm": "tensor-parallel collectives not hidden behind compute",
    "cp_comm": "context-parallel exchange not hidden behind compute",
    "ep_comm": "expert-parallel all-to-all not hidden behind compute",
    "pp_comm": "waiting for pipeline sends and receives",
    "dp_comm": "gradient reduction and parameter all-gather not hidden",
    "bubble": "pipeline fill and drain (the schedule's ideal bubble)",
    "imbalance_wait": "waiting for slower stages or replicas (stragglers, uneven stages)",
    "optimizer": "optimizer step and gradient-norm reduction",
}
MEMORY_COLORS = {"params": "#4e79a7", "grads": "#f28e2b", "optimizer": "#59a14f", "activations": "#e15759",
                 "temporaries": "#b6aca6"}
MEMORY_MEANING = {
    "params": "model weights held by this GPU",
    "grads": "gradients (fp32 main grads)",
    "optimizer": "optimizer states (Adam moments, fp32 master weights)",
    "activations": "activations kept for backward, with fragmentation",
    "temporaries": "CUDA context, NCCL buffers and GEMM workspaces",
}
KEY_EFFICIENCIES = ("nvlink_efficiency", "infiniband_nic_efficiency", "ethernet_nic_efficiency")


# ---- pictures ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Figure:
    """One picture of the report, as PNG bytes made by the caller (core draws no pictures: no Qt)."""

    key: str  # "canvas", "logical" or "timeline": where the report puts it
    title: str
    png: bytes
    caption: str = ""


@dataclass(frozen=True)
class ReportPictures:
    """The pictures a caller could make, and why any are missing (said in the report)."""

    figures: tuple[Figure, ...] = ()
    missing: str = ""

    def get(self, key: str) -> Figure | None:
        return next((f for f in self.figures if f.key == key), None)


NO_PICTURES = ReportPictures(missing="no pictures were rendered for this report")


# ---- text helpers ----------------------------------------------------------------------------

def _font(bold: bool) -> str:
    return "Helvetica-Bold" if bold else "Helvetica"


def wrap(text: str, width: float, size: float, bold: bool = False) -> list[str]:
    """Lines of `text` no wider than `width` (words broken only when one alone is too wide)."""
    font = _font(bold)
    out: list[str] = []
    for para in str(text).split("\n"):
        words = clean_text(para).split()
        if not words:
            out.append("")
            continue
        line = ""
        for word in words:
            trial = word if not line else line + " " + word
            if text_width(trial, size, font) <= width:
                line = trial
                continue
            if line:
                out.append(line)
            while text_width(word, size, font) > width:  # a word wider than the column
                cut = len(word)
                while cut > 1 and text_width(word[:cut], size, font) > width:
                    cut -= 1
                seps = [i + 1 for i in range(1, cut - 1) if word[i] in "_/-:.,"]
                if seps and seps[-1] >= cut // 3:
                    cut = seps[-1]  # break after a separator rather than mid-name
                out.append(word[:cut])
                word = word[cut:]
            line = word
        out.append(line)
    return out


def fit(text: str, width: float, size: float, bold: bool = False) -> str:
    """`text`, shortened with '...' so that it is no wider than `width`."""
    text = clean_text(text)
    font = _font(bold)
    if text_width(text, size, font) <= width:
        return text
    while text and text_width(text + "...", size, font) > width:
        text = text[:-1]
    return text.rstrip() + "..."


def short_source(text: str, limit: int = 150) -> str:
    """A source note shortened to whole sentences (or words, with '...') within `limit` characters."""
    t = " ".join(str(text).split())
    if len(t) <= limit:
        return t
    ends = [m.end() - 1 for m in re.finditer(r"[a-z0-9)\]'%][.] (?=[A-Z(])", t[:limit + 1])]
    if ends and ends[-1] >= limit // 3:
        return t[:ends[-1]]
    return t[:limit].rsplit(" ", 1)[0].rstrip(",;:(") + "..."


def _int(n) -> str:
    return f"{int(n):,}"


def _g(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10000 else str(v)
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, dict):
        parts = []
        for k, sub in v.items():
            if isinstance(sub, dict):
                parts.append(f"{k}: " + ", ".join(f"{a} {_g(b)}" for a, b in sub.items()))
            else:
                parts.append(f"{k} {_g(sub)}")
        return "; ".join(parts)
    return str(v)


def _pct(x: float) -> str:
    return f"{x:.1%}"


def _s3(x: float) -> str:
    return f"{x:.3f}"


def _ratio(x: float) -> str:
    return f"{x:.3g}:1"


def _bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.0f} B"


# ---- layout ----------------------------------------------------------------------------------

@dataclass
class Column:
    """One column of a report table: its title, width and alignment."""
    title: str
    width: float  # fraction of the table width
    align: str = "left"


class Layout:
    """A cursor that flows text, tables and charts down the pages, adding pages as needed."""

    def __init__(self, pdf: PdfDocument, running_title: str, kind: str = "design review"):
        self.pdf = pdf
        self.running_title = running_title
        self.kind = kind  # what the report is, at the right of every page's header
        self.y = TOP
        self.section = 0

    # -- pages --
    def new_page(self) -> None:
        self.pdf.add_page()
        self.y = TOP
        if len(self.pdf.pages) > 1:
            self.pdf.text(LEFT, HEADER_Y, fit(self.running_title, WIDTH * 0.7, 8), size=8, color=MUTED)
            self.pdf.text(RIGHT, HEADER_Y, self.kind, size=8, color=MUTED, align="right")
            self.pdf.line(LEFT, HEADER_Y - 6, RIGHT, HEADER_Y - 6, width=0.5, color=RULE)

    def room(self) -> float:
        return self.y - BOTTOM

    def ensure(self, height: float) -> None:
        if height > self.room():
            self.new_page()

    def gap(self, h: float) -> None:
        self.y -= h

    # -- text --
    def heading(self, title: str, keep: float = 70.0) -> None:
        self.section += 1
        self.ensure(30 + keep)
        if self.y < TOP:
            self.y -= 8
        base = self.y - 14
        self.pdf.text(LEFT, base, f"{self.section}  {title}", size=13, bold=True, color=ACCENT)
        self.pdf.line(LEFT, base - 6, RIGHT, base - 6, width=0.8, color=ACCENT)
        self.y = base - 16

    def subheading(self, title: str, keep: float = 40.0) -> None:
        self.ensure(18 + keep)
        base = self.y - 10
        self.pdf.text(LEFT, base, title, size=9.5, bold=True, color=INK)
        self.y = base - 7

    def paragraph(self, text: str, size: float = 9.0, color=INK, bold: bool = False, indent: float = 0.0,
                  width: float | None = None, after: float = 4.0) -> None:
        lead = size * 1.38
        w = (width or WIDTH) - indent
        for line in wrap(text, w, size, bold):
            self.ensure(lead)
            self.pdf.text(LEFT + indent, self.y - size, line, size=size, bold=bold, color=color)
            self.y -= lead
        self.y -= after

    def bullets(self, items: list[str], size: float = 9.0, color=INK) -> None:
        lead = size * 1.38
        for item in items:
            lines = wrap(item, WIDTH - 12, size)
            for i, line in enumerate(lines):
                self.ensure(lead)
                if i == 0:
                    self.pdf.rect(LEFT + 2, self.y - size + 2, 3, 3, fill=color)
                self.pdf.text(LEFT + 12, self.y - size, line, size=size, color=color)
                self.y -= lead
            self.y -= 2

    # -- tables --
    def table(self, columns: list[Column], rows: list[list[str]], size: float = 8.0, header: bool = True,
              swatches: list | None = None, bold_rows: set[int] | None = None, x: float = LEFT,
              width: float = WIDTH, zebra: bool = True, label_column: bool = False,
              row_colors: dict[int, tuple] | None = None) -> None:
        """Rows of wrapped cells; a row never splits across pages; the header repeats."""
        pad_x, pad_y = 4.0, 2.6
        lead = size * 1.3
        total = sum(c.width for c in columns)
        widths = [c.width / total * width for c in columns]
        bold_rows = bold_rows or set()
        row_colors = row_colors or {}
        sw = 9.0 if swatches else 0.0

        titles = [wrap(c.title, max(10.0, w - 2 * pad_x), size, True) for c, w in zip(columns, widths)]
        header_h = max(len(t) for t in titles) * lead + 2 * pad_y

        def draw_header():
            self.pdf.rect(x, self.y - header_h, width, header_h, fill=HEAD_FILL)
            cx = x
            for lines, c, w in zip(titles, columns, widths):
                base = self.y - pad_y - size * 0.95
                for line in lines:
                    self._cell(line, cx, w, base, size, True, c.align, ACCENT, pad_x)
                    base -= lead
                cx += w
            self.y -= header_h

        def layout_row(cells, bold):
            lines = []
            for i, (cell, c, w) in enumerate(zip(cells, columns, widths)):
                extra = sw if (i == 0 and swatches) else 0.0
                lines.append(wrap(str(cell), max(10.0, w - 2 * pad_x - extra), size, bold or (label_column and i == 0)))
            return lines, max(len(ls) for ls in lines) * lead + 2 * pad_y

        laid = [layout_row(r, i in bold_rows) for i, r in enumerate(rows)]
        first_h = laid[0][1] if laid else 0
        self.ensure((header_h if header else 0) + first_h)
        if header:
            draw_header()
        def fresh_page():
            self.new_page()
            if header:
                draw_header()

        for i, (lines, h) in enumerate(laid):
            total_lines = max(len(ls) for ls in lines)
            done = 0
            while done < total_lines:
                left = total_lines - done
                fits = int((self.room() - 2 * pad_y) // lead)
                if left > fits:
                    on_fresh = int((TOP - BOTTOM - (header_h if header else 0) - 2 * pad_y) // lead)
                    if left <= on_fresh or fits < 3:  # move the row whole, or the rest of a giant one
                        fresh_page()
                        fits = int((self.room() - 2 * pad_y) // lead)
                n = min(left, max(1, fits))
                part = [ls[done:done + n] for ls in lines]
                self._row(part, n * lead + 2 * pad_y, i, x, width, widths, columns, size, lead, pad_x, pad_y,
                          swatches if done == 0 else None, sw if swatches else 0.0, i in bold_rows,
                          label_column, row_colors.get(i), zebra)
                done += n
                if done < total_lines:
                    fresh_page()
        self.y -= 8

    def _row(self, lines, h, i, x, width, widths, columns, size, lead, pad_x, pad_y, swatches, sw, bold,
             label_column, fill, zebra) -> None:
        if fill is not None:
            self.pdf.rect(x, self.y - h, width, h, fill=fill)
        elif zebra and i % 2 == 1:
            self.pdf.rect(x, self.y - h, width, h, fill=ZEBRA)
        cx = x
        for j, (cell_lines, c, w) in enumerate(zip(lines, columns, widths)):
            base = self.y - pad_y - size * 0.95
            off = sw if j == 0 else 0.0
            if j == 0 and swatches and swatches[i] is not None:
                self.pdf.rect(cx + pad_x, base - 0.5, 6.5, 6.5, fill=swatches[i])
            for line in cell_lines:
                self._cell(line, cx + off, w - off, base, size, bold or (label_column and j == 0), c.align,
                           MUTED if (label_column and j == 0) else INK, pad_x)
                base -= lead
            cx += w
        self.y -= h
        self.pdf.line(x, self.y, x + width, self.y, width=0.3, color=RULE)

    def _cell(self, text, x, w, base, size, bold, align, color, pad_x):
        if not text:
            return
        if align == "right":
            self.pdf.text(x + w - pad_x, base, text, size=size, bold=bold, color=color, align="right")
        elif align == "center":
            self.pdf.text(x + w / 2, base, text, size=size, bold=bold, color=color, align="center")
        else:
            self.pdf.text(x + pad_x, base, text, size=size, bold=bold, color=color)

    def kv_panels(self, panels: list[tuple[str, list[tuple[str, str]]]], size: float = 8.0) -> None:
        """Titled label/value lists side by side (or stacked when they would not fit a page)."""
        gutter = 14.0
        n = len(panels)
        pw = (WIDTH - gutter * (n - 1)) / n
        lead = size * 1.3
        label_w = pw * 0.42

        def measure(rows):
            h = 16.0
            for label, value in rows:
                lines = max(len(wrap(label, label_w - 6, size, True)), len(wrap(value, pw - label_w - 6, size)))
                h += lines * lead + 3.0
            return h

        heights = [measure(rows) for _, rows in panels]
        if max(heights) > TOP - BOTTOM:
            for title, rows in panels:
                self.subheading(title)
                self.table([Column("", 0.42), Column("", 0.58)], [list(r) for r in rows], size=size, header=False,
                           label_column=True)
            return
        self.ensure(max(heights))
        top = self.y
        for k, (title, rows) in enumerate(panels):
            x = LEFT + k * (pw + gutter)
            y = top
            self.pdf.text(x, y - 9, title, size=9.5, bold=True, color=INK)
            y -= 14
            self.pdf.line(x, y, x + pw, y, width=0.5, color=RULE)
            y -= 2
            for label, value in rows:
                llines = wrap(label, label_w - 6, size, True)
                vlines = wrap(value, pw - label_w - 6, size)
                base = y - size - 0.5
                for line in llines:
                    self.pdf.text(x + 2, base, line, size=size, color=MUTED)
                    base -= lead
                base = y - size - 0.5
                for line in vlines:
                    self.pdf.text(x + label_w, base, line, size=size, color=INK)
                    base -= lead
                y -= max(len(llines), len(vlines)) * lead + 3.0
        self.y = top - max(heights) - 8

    # -- pictures --
    def picture(self, figure: Figure, max_height: float = PICTURE_MAX_H) -> None:
        """`figure` as wide as the text (or as tall as `max_height`), its caption under it."""
        px_w, px_h = png_size(figure.png)
        w = WIDTH
        h = w * px_h / px_w
        if h > max_height:
            h = max_height
            w = h * px_w / px_h
        self.subheading(figure.title, keep=h + 20)
        self.ensure(h + 4)
        self.pdf.image(figure.png, LEFT + (WIDTH - w) / 2, self.y - h, w, h)
        self.pdf.rect(LEFT + (WIDTH - w) / 2, self.y - h, w, h, stroke=RULE, line_width=0.5)
        self.y -= h + 4
        if figure.caption:
            self.paragraph(figure.caption, size=7.5, color=MUTED)
        self.gap(6)

    # -- charts --
    def stacked_bar(self, segments: list[tuple[str, float, object]], total: float, height: float = 22.0,
                    capacity: float | None = None, caption: str = "") -> None:
        """A horizontal bar of `segments` (label, value, colour); `capacity` (if larger than the
        total) draws the unused rest as an outlined box, as for memory against HBM."""
        scale_total = max(total, capacity or 0.0) or 1.0
        self.ensure(height + 24)
        top = self.y - 4
        x = LEFT
        y = top - height
        self.pdf.rect(LEFT, y, WIDTH, height, fill=(0.97, 0.97, 0.97), stroke=RULE, line_width=0.5)
        for label, value, color in segments:
            if value <= 0:
                continue
            w = value / scale_total * WIDTH
            self.pdf.rect(x, y, w, height, fill=color)
            share = _pct(value / total) if total else ""
            if w > text_width(share, 7.5, "Helvetica-Bold") + 6:
                self.pdf.text(x + w / 2, y + height / 2 - 2.6, share, size=7.5, bold=True,
                              color=(1, 1, 1) if _dark(color) else INK, align="center")
            x += w
        if capacity and capacity < total:  # over capacity: mark where it ends
            cx = LEFT + capacity / scale_total * WIDTH
            self.pdf.line(cx, y - 3, cx, y + height + 3, width=1.2, color=WARN)
        self.y = y - 4
        if caption:
            self.pdf.text(LEFT, self.y - 8, fit(caption, WIDTH, 7.5), size=7.5, color=MUTED)
            self.y -= 12

    def legend(self, items: list[tuple[str, object]], size: float = 8.0) -> None:
        """Swatch + label items flowed left to right over as many lines as needed."""
        lead = size * 1.6
        x = LEFT
        self.ensure(lead + 4)
        base = self.y - size - 2
        for label, color in items:
            w = 10 + text_width(label, size) + 14
            if x + w > RIGHT + 14 and x > LEFT:
                x = LEFT
                self.y -= lead
                self.ensure(lead)
                base = self.y - size - 2
            self.pdf.rect(x, base - 0.5, 7, 7, fill=color, stroke=RULE, line_width=0.4)
            self.pdf.text(x + 10, base, fit(label, RIGHT - x - 10, size), size=size, color=INK)
            x += w
        self.y -= lead + 6


def _dark(color) -> bool:
    if isinstance(color, str):
        c = color.lstrip("#")
        r, g, b = (int(c[i:i + 2], 16) / 255 for i in (0, 2, 4))
    else:
        r, g, b = color
    return 0.299 * r + 0.587 * g + 0.114 * b < 0.6
