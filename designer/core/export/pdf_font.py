"""The report's fallback font: characters Helvetica (WinAnsi) cannot show.

A design named "集群-Ω" must print as written, on any machine, with no network: the package
ships WenQuanYi Micro Hei (resources/fonts, Apache-2.0; CJK, kana, Hangul, Greek, Cyrillic,
Latin). reportlab embeds the glyphs a report uses as a subset with a ToUnicode map, so that the
text stays searchable and copyable.
"""
from __future__ import annotations

import functools
import io
import lzma
from pathlib import Path

from ..model.catalog import RESOURCES

FONT_FILE = Path(RESOURCES, "fonts", "wqy-microhei.ttf.xz")
FONT_NAME = "WenQuanYiMicroHei"


class FallbackFont:
    """The shipped font, registered with reportlab under FONT_NAME."""

    def __init__(self, data: bytes):
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.ttfonts import TTFont

        font = TTFont(FONT_NAME, io.BytesIO(data))
        pdfmetrics.registerFont(font)
        self.name = FONT_NAME
        self._glyphs = font.face.charToGlyph

    def has(self, ch: str) -> bool:
        return ord(ch) in self._glyphs

    def width(self, text: str, size: float) -> float:
        from reportlab.pdfbase import pdfmetrics

        return pdfmetrics.stringWidth(text, self.name, size)


@functools.lru_cache(maxsize=1)
def fallback_font() -> FallbackFont | None:
    """The shipped font, read once per process; None when it cannot be read (then '?' is shown)."""
    try:
        return FallbackFont(lzma.decompress(FONT_FILE.read_bytes()))
    except (OSError, lzma.LZMAError, ValueError):
        return None
