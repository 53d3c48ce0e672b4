"""A small PDF 1.4 writer: A4 pages of text, lines and rectangles.

Text uses two of the standard 14 fonts (Helvetica and Helvetica-Bold, WinAnsiEncoding), which
every PDF reader has. Characters outside WinAnsi (cp1252) are transliterated where an ASCII
spelling exists; a string that still holds others (a design named "集群-Ω") is drawn whole in
the shipped fallback font (pdf_font.py: CJK, Hangul, Greek, Cyrillic), embedded as a subset
with a ToUnicode map; only a character that font lacks too becomes "?". Bold in the fallback
font is its outline stroked as well as filled.
Coordinates are PDF points with the origin at the bottom-left corner of the page.

`text_items` / `text_lines` read the shown strings back out of a file this module wrote (they
parse its own content streams, compressed or not), so that tests can check what a report says
and where it says it.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import zlib
from dataclasses import dataclass, field

from ..fs.atomic import atomic_write_bytes
from .pdf_font import FONT_NAME, fallback_font, parse_to_unicode, subset_tag, to_unicode_cmap

A4_WIDTH = 595.0
A4_HEIGHT = 842.0

FONTS = {"Helvetica": "F1", "Helvetica-Bold": "F2"}
FALLBACK_RESOURCE = "F3"
_FONT_BY_RESOURCE = {v: k for k, v in FONTS.items()}

# Advance widths (1/1000 em) of the standard Helvetica faces by WinAnsi code, from Adobe's AFM
# metrics: codes 32..126, then 128..255 (127 and the five codes WinAnsi leaves undefined are
# never drawn: the encoder replaces them).
_HELV_ASCII = (
    "278 278 355 556 556 889 667 191 333 333 389 584 278 333 278 278 556 556 556 556 556 556 556 556 556 556 "
    "278 278 584 584 584 556 1015 667 667 722 722 667 611 778 722 278 500 667 556 833 722 778 667 778 722 667 "
    "611 722 667 944 667 667 611 278 278 278 469 556 333 556 556 500 556 556 278 556 556 222 222 500 222 833 "
    "556 556 556 556 333 500 278 556 500 722 500 500 500 334 260 334 584")
_HELV_HIGH = (
    "556 350 222 556 333 1000 556 556 333 1000 667 333 1000 350 611 350 350 222 222 333 333 350 556 1000 333 "
    "1000 500 333 944 350 500 667 278 333 556 556 556 556 260 556 333 737 370 556 584 333 737 333 400 584 333 "
    "333 333 556 537 278 333 333 365 556 834 834 834 611 667 667 667 667 667 667 1000 722 667 667 667 667 278 "
    "278 278 278 722 722 778 778 778 778 778 584 778 722 722 722 722 667 667 611 556 556 556 556 556 556 889 "
    "500 556 556 556 556 278 278 278 278 556 556 556 556 556 556 556 584 611 556 556 556 556 500 556 500")
_BOLD_ASCII = (
    "278 333 474 556 556 889 722 238 333 333 389 584 278 333 278 278 556 556 556 556 556 556 556 556 556 556 "
    "333 333 584 584 584 611 975 722 722 722 722 667 611 778 722 278 556 722 611 833 722 778 667 778 722 667 "
    "611 722 667 944 667 667 611 333 278 333 584 556 333 556 611 556 611 556 333 611 611 278 278 556 278 889 "
    "611 611 611 611 389 556 333 611 556 778 556 556 500 389 280 389 584")
_BOLD_HIGH = (
    "556 350 278 556 500 1000 556 556 333 1000 667 333 1000 350 611 350 350 278 278 500 500 350 556 1000 333 "
    "1000 556 333 944 350 500 667 278 333 556 556 556 556 280 556 333 737 370 556 584 333 737 333 400 584 333 "
    "333 333 611 556 278 333 333 365 556 834 834 834 611 722 722 722 722 722 722 1000 722 667 667 667 667 278 "
    "278 278 278 722 722 778 778 778 778 778 584 778 722 722 722 722 667 667 611 556 556 556 556 556 556 889 "
    "556 556 556 556 556 278 278 278 278 611 611 611 611 611 611 611 584 611 611 611 611 611 556 611 556")


def _table(ascii_part: str, high_part: str) -> list[int]:
    widths = [556] * 256
    for i, w in enumerate(ascii_part.split()):
        widths[32 + i] = int(w)
    for i, w in enumerate(high_part.split()):
        widths[128 + i] = int(w)
    return widths


WIDTHS = {"Helvetica": _table(_HELV_ASCII, _HELV_HIGH), "Helvetica-Bold": _table(_BOLD_ASCII, _BOLD_HIGH)}

# ASCII spellings for common characters WinAnsi lacks.
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
        fb = fallback_font()
        return sum(fb.width(ch) for ch in _fallback_shown(text)) * size / 1000.0
    widths = WIDTHS[font]
    return sum(widths[b] for b in encode_text(text)) * size / 1000.0


def _escape(data: bytes) -> str:
    """A PDF literal string body: ( ) \\ escaped, non-printable bytes as octal."""
    out = []
    for b in data:
        if b in (0x28, 0x29, 0x5C):
            out.append("\\" + chr(b))
        elif 32 <= b < 127:
            out.append(chr(b))
        else:
            out.append(f"\\{b:03o}")
    return "".join(out)


def _num(v: float) -> str:
    text = f"{v:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _rgb(color) -> str:
    r, g, b = color
    return f"{_num(r)} {_num(g)} {_num(b)}"


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
class Page:
    width: float = A4_WIDTH
    height: float = A4_HEIGHT
    ops: list[str] = field(default_factory=list)
    texts: list[TextRun] = field(default_factory=list)

    def content(self) -> bytes:
        return ("\n".join(self.ops) + "\n").encode("ascii")


def _pdf_date(when: _dt.datetime) -> str:
    if when.tzinfo is None:
        when = when.astimezone()
    offset = when.utcoffset() or _dt.timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    tz = "Z" if minutes == 0 else f"{sign}{minutes // 60:02d}'{minutes % 60:02d}'"
    return "D:" + when.strftime("%Y%m%d%H%M%S") + tz


def _info_string(text: str) -> str:
    """A PDF text string: literal when ASCII, else UTF-16BE with a byte-order mark (hex)."""
    try:
        data = text.encode("ascii")
    except UnicodeEncodeError:
        return "<FEFF" + text.encode("utf-16-be").hex().upper() + ">"
    return "(" + _escape(data) + ")"


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
        self._fallback_glyphs: dict[int, str] = {}  # glyph id -> character, of the fallback font

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
        rgb = _rgb(_check_color(color))
        if needs_fallback(shown):
            fb = fallback_font()
            gids = [fb.gid(ch) for ch in shown]
            self._fallback_glyphs.update(zip(gids, shown))
            # bold: the outline stroked as well as filled (the font has one weight); q/Q keep the
            # render mode, stroke colour and width from leaking into the text drawn after it
            mode = f"2 Tr {_num(size * 0.035)} w {rgb} RG" if bold else "0 Tr"
            p.ops.append(f"q BT /{FALLBACK_RESOURCE} {_num(size)} Tf {rgb} rg {mode} "
                         f"1 0 0 1 {_num(x)} {_num(y)} Tm <{''.join(f'{g:04X}' for g in gids)}> Tj ET Q")
        else:
            data = encode_text(shown)
            p.ops.append(f"BT /{FONTS[font]} {_num(size)} Tf {rgb} rg "
                         f"1 0 0 1 {_num(x)} {_num(y)} Tm ({_escape(data)}) Tj ET")
        run = TextRun(x, y, size, font, shown, width)
        p.texts.append(run)
        return run

    def line(self, x1: float, y1: float, x2: float, y2: float, width: float = 0.5, color=(0, 0, 0),
             dash: tuple[float, float] | None = None, page: Page | None = None) -> None:
        p = self._target(page)
        d = f"[{_num(dash[0])} {_num(dash[1])}] 0 d " if dash else ""
        p.ops.append(f"q {d}{_num(width)} w {_rgb(_check_color(color))} RG "
                     f"{_num(x1)} {_num(y1)} m {_num(x2)} {_num(y2)} l S Q")

    def rect(self, x: float, y: float, w: float, h: float, fill=None, stroke=None, line_width: float = 0.5,
             page: Page | None = None) -> None:
        """A rectangle with its lower-left corner at (x, y); filled, stroked or both."""
        p = self._target(page)
        if fill is None and stroke is None:
            stroke = (0, 0, 0)
        parts = ["q"]
        if fill is not None:
            parts.append(f"{_rgb(_check_color(fill))} rg")
        if stroke is not None:
            parts.append(f"{_num(line_width)} w {_rgb(_check_color(stroke))} RG")
        op = "B" if fill is not None and stroke is not None else ("f" if fill is not None else "S")
        parts.append(f"{_num(x)} {_num(y)} {_num(w)} {_num(h)} re {op} Q")
        p.ops.append(" ".join(parts))

    # ---- output -----------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        if not self.pages:
            self.add_page()
        n_pages = len(self.pages)
        # objects: 1 catalog, 2 pages, 3-4 fonts, 5 info, then page + content per page
        objects: list[bytes] = []
        kids = " ".join(f"{6 + 2 * i} 0 R" for i in range(n_pages))
        objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
        objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode("ascii"))
        for font in FONTS:
            objects.append(f"<< /Type /Font /Subtype /Type1 /BaseFont /{font} /Encoding /WinAnsiEncoding >>"
                           .encode("ascii"))
        info = [f"/Title {_info_string(self.title)}", f"/Producer {_info_string(self.producer)}",
                f"/Creator {_info_string(self.producer)}", f"/CreationDate ({_pdf_date(self.creation_date)})"]
        if self.author:
            info.append(f"/Author {_info_string(self.author)}")
        if self.subject:
            info.append(f"/Subject {_info_string(self.subject)}")
        objects.append(("<< " + " ".join(info) + " >>").encode("ascii"))
        fonts = " ".join(f"/{res} {3 + i} 0 R" for i, res in enumerate(FONTS.values()))
        fallback_at = 6 + 2 * n_pages  # the fallback font's objects follow the pages
        if self._fallback_glyphs:
            fonts += f" /{FALLBACK_RESOURCE} {fallback_at} 0 R"
        for i, page in enumerate(self.pages):
            content_ref = 7 + 2 * i
            objects.append(
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {_num(page.width)} {_num(page.height)}] "
                f"/Resources << /Font << {fonts} >> /ProcSet [/PDF /Text] >> /Contents {content_ref} 0 R >>"
                .encode("ascii"))
            data = page.content()
            if self.compress:
                data = zlib.compress(data, 9)
                head = f"<< /Length {len(data)} /Filter /FlateDecode >>"
            else:
                head = f"<< /Length {len(data)} >>"
            objects.append(head.encode("ascii") + b"\nstream\n" + data + b"\nendstream")
        if self._fallback_glyphs:
            objects += self._fallback_objects(fallback_at)

        out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for number, body in enumerate(objects, start=1):
            offsets.append(len(out))
            out += f"{number} 0 obj\n".encode("ascii") + body + b"\nendobj\n"
        xref_at = len(out)
        size = len(objects) + 1
        out += f"xref\n0 {size}\n".encode("ascii")
        out += b"0000000000 65535 f \n"
        for off in offsets:
            out += f"{off:010d} 00000 n \n".encode("ascii")
        doc_id = hashlib.md5(bytes(out)).hexdigest()
        out += (f"trailer\n<< /Size {size} /Root 1 0 R /Info 5 0 R /ID [<{doc_id}> <{doc_id}>] >>\n"
                f"startxref\n{xref_at}\n%%EOF\n").encode("ascii")
        return bytes(out)

    def _stream(self, data: bytes, extra: str = "") -> bytes:
        if self.compress:
            data = zlib.compress(data, 9)
            extra += " /Filter /FlateDecode"
        return f"<< /Length {len(data)}{extra} >>".encode("ascii") + b"\nstream\n" + data + b"\nendstream"

    def _fallback_objects(self, first: int) -> list[bytes]:
        """Type 0 font, its CIDFontType2, descriptor, subset font file and ToUnicode map."""
        fb = fallback_font()
        glyphs = self._fallback_glyphs
        name = f"{subset_tag(glyphs)}+{FONT_NAME}"
        widths = " ".join(f"{gid} [{_num(fb.width(ch))}]" for gid, ch in sorted(glyphs.items()))
        font_file = fb.subset("".join(glyphs.values()))
        bbox = " ".join(str(v) for v in fb.bbox)
        return [
            (f"<< /Type /Font /Subtype /Type0 /BaseFont /{name} /Encoding /Identity-H "
             f"/DescendantFonts [{first + 1} 0 R] /ToUnicode {first + 4} 0 R >>").encode("ascii"),
            (f"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /{name} "
             f"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> "
             f"/FontDescriptor {first + 2} 0 R /DW 1000 /W [{widths}] /CIDToGIDMap /Identity >>").encode("ascii"),
            (f"<< /Type /FontDescriptor /FontName /{name} /Flags 4 /FontBBox [{bbox}] /ItalicAngle 0 "
             f"/Ascent {fb.ascent} /Descent {fb.descent} /CapHeight {fb.cap_height} /StemV 80 "
             f"/FontFile2 {first + 3} 0 R >>").encode("ascii"),
            self._stream(font_file, f" /Length1 {len(font_file)}"),
            self._stream(to_unicode_cmap(glyphs)),
        ]

    def save(self, path: str | os.PathLike) -> int:
        """Write the file atomically; returns its size in bytes."""
        data = self.to_bytes()
        atomic_write_bytes(path, data)
        return len(data)


# ---- reading back (for tests) ----------------------------------------------------------------

@dataclass
class ShownText:
    page: int  # 0-based
    x: float
    y: float
    size: float
    font: str
    text: str

    @property
    def width(self) -> float:
        return text_width(self.text, self.size, self.font)


_TOKEN_RE = re.compile(rb"\s*(?:(\()|(/[^\s/\[\]()<>]+)|([-+]?(?:\d+\.?\d*|\.\d+))|([A-Za-z'\"*]+)|(\[|\])"
                       rb"|<([0-9A-Fa-f\s]*)>)")


def _read_literal(data: bytes, i: int) -> tuple[bytes, int]:
    """The literal string starting after the '(' at data[i-1]; returns (bytes, index after ')')."""
    out = bytearray()
    depth = 1
    while i < len(data):
        c = data[i]
        if c == 0x5C:  # backslash
            n = data[i + 1]
            if 0x30 <= n <= 0x37:
                j = i + 1
                digits = b""
                while j < len(data) and len(digits) < 3 and 0x30 <= data[j] <= 0x37:
                    digits += data[j:j + 1]
                    j += 1
                out.append(int(digits, 8) & 0xFF)
                i = j
                continue
            out += {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("b"): b"\b", ord("f"): b"\f"}.get(
                n, bytes([n]))
            i += 2
            continue
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return bytes(out), i + 1
        out.append(c)
        i += 1
    raise ValueError("unterminated string in content stream")


def xref_offsets(pdf: bytes) -> dict[int, int]:
    """Object number -> byte offset, from the file's cross-reference table."""
    at = int(pdf[pdf.rindex(b"startxref") + len(b"startxref"):].split()[0])
    if pdf[at:at + 4] != b"xref":
        raise ValueError("startxref does not point at an xref table")
    lines = pdf[at:].split(b"\n")
    first, count = (int(v) for v in lines[1].split())
    out = {}
    for k in range(count):
        fields = lines[2 + k].split()
        if fields[2] == b"n":
            out[first + k] = int(fields[0])
    return out


def _object(pdf: bytes, offsets: dict[int, int], number: int) -> bytes:
    at = offsets[number]
    head = f"{number} 0 obj\n".encode("ascii")
    if pdf[at:at + len(head)] != head:
        raise ValueError(f"xref offset of object {number} does not point at it")
    body_at = at + len(head)
    stream_at = pdf.find(b"\nstream\n", body_at)
    end = pdf.find(b"\nendobj", body_at)
    if 0 <= stream_at < end:  # the stream may contain anything: trust /Length
        length = int(re.search(rb"/Length (\d+)", pdf[body_at:stream_at]).group(1))
        return pdf[body_at:stream_at + len(b"\nstream\n") + length]
    return pdf[body_at:end]


def _page_streams(pdf: bytes) -> list[bytes]:
    """The decoded content stream of each page, in page order."""
    offsets = xref_offsets(pdf)
    root = int(re.search(rb"/Root (\d+) 0 R", pdf[pdf.rindex(b"trailer"):]).group(1))
    pages_ref = int(re.search(rb"/Pages (\d+) 0 R", _object(pdf, offsets, root)).group(1))
    pages_obj = _object(pdf, offsets, pages_ref)
    kids = [int(k) for k in re.findall(rb"(\d+) 0 R", pages_obj[pages_obj.find(b"/Kids"):pages_obj.find(b"]")])]
    streams = []
    for kid in kids:
        ref = int(re.search(rb"/Contents (\d+) 0 R", _object(pdf, offsets, kid)).group(1))
        body = _object(pdf, offsets, ref)
        start = body.find(b"stream\n") + len(b"stream\n")
        data = body[start:]
        if b"/FlateDecode" in body[:start]:
            data = zlib.decompress(data)
        streams.append(data)
    return streams


def _fallback_map(pdf: bytes) -> dict[int, str]:
    """The fallback font's glyph id -> character, from its ToUnicode map ({} when not embedded)."""
    m = re.search(rb"/Subtype /Type0 .*?/ToUnicode (\d+) 0 R", pdf)
    if not m:
        return {}
    body = _object(pdf, xref_offsets(pdf), int(m.group(1)))
    start = body.find(b"stream\n") + len(b"stream\n")
    data = body[start:]
    if b"/FlateDecode" in body[:start]:
        data = zlib.decompress(data)
    return parse_to_unicode(data)


def text_items(pdf: bytes) -> list[ShownText]:
    """Every string shown by a PDF this module wrote, with its page, position, size and font
    (the face asked for: a fallback-font string reads as Helvetica, or Helvetica-Bold when stroked)."""
    items = []
    glyphs = _fallback_map(pdf)
    for page_no, data in enumerate(_page_streams(pdf)):
        stack: list = []
        font, size, x, y, mode = "Helvetica", 10.0, 0.0, 0.0, 0
        i = 0
        while i < len(data):
            m = _TOKEN_RE.match(data, i)
            if not m:
                i += 1
                continue
            i = m.end()
            if m.group(1):
                s, i = _read_literal(data, i)
                stack.append(s.decode("cp1252", errors="replace"))
            elif m.group(2):
                stack.append(m.group(2).decode("ascii"))
            elif m.group(3):
                stack.append(float(m.group(3)))
            elif m.group(6) is not None:  # <hex>: two bytes a glyph of the fallback font
                codes = bytes.fromhex(m.group(6).decode("ascii"))
                stack.append("".join(glyphs.get(int.from_bytes(codes[k:k + 2], "big"), "\ufffd")
                                     for k in range(0, len(codes) - 1, 2)))
            elif m.group(4):
                op = m.group(4).decode("ascii")
                if op == "BT":
                    mode = 0
                elif op == "Tr":
                    mode = int(stack[-1])
                elif op == "Tf":
                    font, size = _FONT_BY_RESOURCE.get(stack[-2][1:], stack[-2][1:]), stack[-1]
                elif op == "Tm":
                    x, y = stack[-2], stack[-1]
                elif op == "Tj":
                    face = font if font in WIDTHS else ("Helvetica-Bold" if mode == 2 else "Helvetica")
                    items.append(ShownText(page_no, x, y, size, face, stack[-1]))
                stack.clear()
    return items


def text_lines(pdf: bytes, page: int | None = None) -> list[str]:
    """The shown strings grouped into lines: the strings of one page on one baseline, left to
    right, joined by single spaces; top to bottom, page by page."""
    rows: dict[tuple[int, float], list[ShownText]] = {}
    for item in text_items(pdf):
        if page is not None and item.page != page:
            continue
        rows.setdefault((item.page, round(item.y, 1)), []).append(item)
    out = []
    for key in sorted(rows, key=lambda k: (k[0], -k[1])):
        out.append(" ".join(it.text for it in sorted(rows[key], key=lambda it: it.x)))
    return out


def page_count(pdf: bytes) -> int:
    m = re.search(rb"/Type /Pages /Kids \[[^\]]*\] /Count (\d+)", pdf)
    return int(m.group(1)) if m else 0
