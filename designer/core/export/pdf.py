"""The report's page writer: A4 pages of text, lines, rectangles and pictures, drawn by reportlab.

Text uses Helvetica and Helvetica-Bold (two of the standard 14 fonts, WinAnsiEncoding), which
every PDF reader has. Characters outside WinAnsi (cp1252) are transliterated where an ASCII
spelling exists; a string that still holds others (a design named "集群-Ω") is drawn whole in
the shipped fallback font (pdf_font.py: CJK, Hangul, Greek, Cyrillic), which reportlab embeds as
a subset; only a character that font lacks too becomes "?". Bold in the fallback font is its
outline stroked as well as filled.

A page keeps what is drawn on it until the file is made, so that a page's header or footer can be
drawn after the pages that follow it (the footers say "page i of n"). Coordinates are PDF points
with the origin at the bottom-left corner of the page.
"""
from __future__ import annotations

import datetime as _dt
import io
import os
from dataclasses import dataclass, field

from ..fs.atomic import atomic_write_bytes
from .pdf_font import fallback_font

A4_WIDTH = 595.0
A4_HEIGHT = 842.0

_TRANSLITERATE = {
    "\u2264": "<=", "\u2265": ">=", "\u2260": "!=", "\u2248": "~", "\u2192": "->", "\u2190": "<-",
    "\u2194": "<->", "\u21d2": "=>", "\u2212": "-", "\u2010": "-", "\u2011": "-", "\u2012": "-",
    "\u2015": "-", "\u2032": "'", "\u2033": '"', "\u2044": "/", "\u2215": "/", "\u221e": "inf",
    "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u2007": " ", "\u200b": "", "\ufeff": "",
    "\t": " ", "\n": " ", "\r": " ",
}
_UNDEFINED_WINANSI = {0x81, 0x8D, 0x8F, 0x90, 0x9D}


def encode_text(text: str) -> bytes:
    """`text` as WinAnsi bytes; what WinAnsi cannot show is transliterated or becomes '?'."""
    out = bytearray()
    for ch in str(text):
        sub = _TRANSLITERATE.get(ch)
        if sub is not None:
            out += sub.encode("ascii")
            continue
        try:
            b = ch.encode("cp1252")
        except UnicodeEncodeError:
            out += b"?"
            continue
        code = b[0]
        if code < 32 or code == 127 or code in _UNDEFINED_WINANSI:
            out += b"?"
        else:
            out += b
    return bytes(out)


def _transliterated(text: str) -> str:
    return "".join(_TRANSLITERATE.get(ch, ch) for ch in str(text))


def _in_winansi(ch: str) -> bool:
    try:
        code = ch.encode("cp1252")[0]
    except UnicodeEncodeError:
        return False
    return not (code < 32 or code == 127 or code in _UNDEFINED_WINANSI)


def needs_fallback(text: str) -> bool:
    """True when `text` is drawn in the embedded fallback font: it holds a character that
    WinAnsi lacks (after transliteration) and the fallback font has."""
    font = fallback_font() if any(not _in_winansi(ch) for ch in _transliterated(text)) else None
    return font is not None and any(not _in_winansi(ch) and font.has(ch) for ch in _transliterated(text))


def _fallback_shown(text: str) -> str:
    font = fallback_font()
    return "".join(ch if font.has(ch) and ch >= " " else "?" for ch in _transliterated(text))


def clean_text(text: str) -> str:
    """What `text` will read as once drawn (after encoding)."""
    if needs_fallback(text):
        return _fallback_shown(text)
    return encode_text(text).decode("cp1252")


def text_width(text: str, size: float, font: str = "Helvetica") -> float:
    """Width in points of `text` drawn in `font` at `size` (exact for the standard metrics and
    for the fallback font's)."""
    if needs_fallback(text):
        return fallback_font().width(_fallback_shown(text), size)
    from reportlab.pdfbase.pdfmetrics import stringWidth

    return stringWidth(encode_text(text).decode("cp1252"), font, size)


def _check_color(color) -> tuple[float, float, float]:
    """Colours are (r, g, b) floats in 0..1, or '#rrggbb'."""
    if isinstance(color, str):
        c = color.lstrip("#")
        if len(c) != 6:
            raise ValueError(f"expected #rrggbb, got {color!r}")
        return tuple(int(c[i:i + 2], 16) / 255.0 for i in (0, 2, 4))  # type: ignore[return-value]
    r, g, b = (float(x) for x in color)
    for x in (r, g, b):
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"colour components are 0..1, got {color!r}")
    return (r, g, b)


@dataclass
class TextRun:
    """A string as drawn: its baseline origin, size and width, for layout checks."""

    x: float
    y: float
    size: float
    font: str
    text: str
    width: float

    @property
    def right(self) -> float:
        return self.x + self.width

    @property
    def top(self) -> float:
        return self.y + self.size * 0.718  # Helvetica cap height

    @property
    def bottom(self) -> float:
        return self.y - self.size * 0.207  # descender


@dataclass
class Picture:
    """A PNG placed with its lower-left corner at (x, y), scaled to w x h points."""

    png: bytes
    x: float
    y: float
    w: float
    h: float


@dataclass
class Page:
    """One PDF page: its size and what is drawn on it, in order."""
    width: float = A4_WIDTH
    height: float = A4_HEIGHT
    ops: list[tuple] = field(default_factory=list)  # ("text" | "line" | "rect" | "image", ...) in drawing order
    texts: list[TextRun] = field(default_factory=list)
    pictures: list[Picture] = field(default_factory=list)


def _pdf_date(when: _dt.datetime) -> str:
    if when.tzinfo is None:
        when = when.astimezone()
    offset = when.utcoffset() or _dt.timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    tz = "Z" if minutes == 0 else f"{sign}{minutes // 60:02d}'{minutes % 60:02d}'"
    return "D:" + when.strftime("%Y%m%d%H%M%S") + tz


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height in pixels of a PNG (from its header); ValueError if it is not one."""
    if len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError("not a PNG picture")
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


class PdfDocument:
    """Pages of A4 portrait; draw on any page until `to_bytes()`."""

    def __init__(self, title: str = "", producer: str | None = None, author: str = "", subject: str = "",
                 creation_date: _dt.datetime | None = None, compress: bool = True,
                 width: float = A4_WIDTH, height: float = A4_HEIGHT):
        if producer is None:
            from ... import __version__

            producer = f"designer {__version__}"
        self.title = title
        self.producer = producer
        self.author = author
        self.subject = subject
        self.creation_date = creation_date or _dt.datetime.now().astimezone()
        self.compress = compress
        self.width = width
        self.height = height
        self.pages: list[Page] = []
        self.page: Page | None = None

    # ---- pages ------------------------------------------------------------------------------
    def add_page(self) -> Page:
        self.page = Page(self.width, self.height)
        self.pages.append(self.page)
        return self.page

    def _target(self, page: Page | None) -> Page:
        target = page or self.page
        if target is None:
            target = self.add_page()
        return target

    # ---- drawing ----------------------------------------------------------------------------
    def text(self, x: float, y: float, text: str, size: float = 10.0, bold: bool = False,
             color=(0, 0, 0), align: str = "left", page: Page | None = None) -> TextRun:
        """Draw `text` with its baseline at y; `align` left (x is the start), right or center."""
        p = self._target(page)
        font = "Helvetica-Bold" if bold else "Helvetica"
        shown = clean_text(text)
        width = text_width(shown, size, font)
        if align == "right":
            x -= width
        elif align == "center":
            x -= width / 2
        elif align != "left":
            raise ValueError(f"align is left, right or center, got {align!r}")
        face = fallback_font().name if needs_fallback(shown) else font
        p.ops.append(("text", x, y, shown, face, size, _check_color(color), bold and face != font))
        run = TextRun(x, y, size, font, shown, width)
        p.texts.append(run)
        return run

    def line(self, x1: float, y1: float, x2: float, y2: float, width: float = 0.5, color=(0, 0, 0),
             dash: tuple[float, float] | None = None, page: Page | None = None) -> None:
        self._target(page).ops.append(("line", x1, y1, x2, y2, width, _check_color(color), dash))

    def rect(self, x: float, y: float, w: float, h: float, fill=None, stroke=None, line_width: float = 0.5,
             page: Page | None = None) -> None:
        """A rectangle with its lower-left corner at (x, y); filled, stroked or both."""
        if fill is None and stroke is None:
            stroke = (0, 0, 0)
        self._target(page).ops.append(("rect", x, y, w, h, None if fill is None else _check_color(fill),
                                       None if stroke is None else _check_color(stroke), line_width))

    def image(self, png: bytes, x: float, y: float, w: float, h: float, page: Page | None = None) -> Picture:
        """A PNG picture with its lower-left corner at (x, y), scaled to w x h points."""
        png_size(png)  # refuse anything but a PNG now, not when the file is made
        picture = Picture(png, x, y, w, h)
        p = self._target(page)
        p.ops.append(("image", picture))
        p.pictures.append(picture)
        return picture

    # ---- output -----------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        from reportlab.pdfgen.canvas import Canvas

        if not self.pages:
            self.add_page()
        out = io.BytesIO()
        date = _pdf_date(self.creation_date)
        canvas = Canvas(out, pagesize=(self.pages[0].width, self.pages[0].height), pageCompression=self.compress,
                        pdfVersion=(1, 4))
        canvas.setTitle(self.title)
        canvas.setAuthor(self.author)
        canvas.setSubject(self.subject)
        canvas.setProducer(self.producer)
        canvas.setCreator(self.producer)
        canvas.setDateFormatter(lambda *_: date)
        for page in self.pages:
            canvas.setPageSize((page.width, page.height))
            for op in page.ops:
                _DRAW[op[0]](canvas, *op[1:])
            canvas.showPage()
        canvas.save()
        return out.getvalue()

    def save(self, path: str | os.PathLike) -> int:
        """Write the file atomically; returns its size in bytes."""
        data = self.to_bytes()
        atomic_write_bytes(path, data)
        return len(data)


def _draw_text(canvas, x, y, shown, face, size, rgb, outline) -> None:
    canvas.saveState()
    text = canvas.beginText(x, y)
    text.setFont(face, size)
    text.setFillColorRGB(*rgb)
    if outline:  # bold in the one-weight fallback font: the outline stroked as well as filled
        text.setTextRenderMode(2)
        text.setStrokeColorRGB(*rgb)
        canvas.setLineWidth(size * 0.035)
    text.textOut(shown)
    canvas.drawText(text)
    canvas.restoreState()


def _draw_line(canvas, x1, y1, x2, y2, width, rgb, dash) -> None:
    canvas.saveState()
    canvas.setLineWidth(width)
    canvas.setStrokeColorRGB(*rgb)
    if dash:
        canvas.setDash(dash[0], dash[1])
    canvas.line(x1, y1, x2, y2)
    canvas.restoreState()


def _draw_rect(canvas, x, y, w, h, fill, stroke, line_width) -> None:
    canvas.saveState()
    if fill is not None:
        canvas.setFillColorRGB(*fill)
    if stroke is not None:
        canvas.setStrokeColorRGB(*stroke)
        canvas.setLineWidth(line_width)
    canvas.rect(x, y, w, h, stroke=int(stroke is not None), fill=int(fill is not None))
    canvas.restoreState()


def _draw_image(canvas, picture: Picture) -> None:
    from reportlab.lib.utils import ImageReader

    canvas.drawImage(ImageReader(io.BytesIO(picture.png)), picture.x, picture.y, picture.w, picture.h)


_DRAW = {"text": _draw_text, "line": _draw_line, "rect": _draw_rect, "image": _draw_image}
