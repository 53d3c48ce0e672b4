"""The embedded fallback font of the PDF writer: characters Helvetica (WinAnsi) cannot show.

A design named "集群-Ω" must print as written, on any machine, with no network: the package
ships WenQuanYi Micro Hei (resources/fonts, Apache-2.0; CJK, kana, Hangul, Greek, Cyrillic,
Latin) and a report embeds only the glyphs it uses, as a Type 0 font (CIDFontType2, Identity-H,
glyph ids as CIDs) with a ToUnicode map, so that text stays searchable and copyable.
fontTools reads and subsets the font.
"""
from __future__ import annotations

import functools
import hashlib
import io
import lzma
import re

from ..model.catalog import RESOURCES

FONT_FILE = RESOURCES / "fonts" / "wqy-microhei.ttf.xz"
FONT_NAME = "WenQuanYiMicroHei"


class FallbackFont:
    """A TrueType font's character map, advance widths and subsets, in PDF units (1/1000 em)."""

    def __init__(self, data: bytes):
        from fontTools.ttLib import TTFont

        self._data = data
        self._font = TTFont(io.BytesIO(data), lazy=True)
        self.cmap: dict[int, str] = self._font.getBestCmap()
        self._gids = {name: i for i, name in enumerate(self._font.getGlyphOrder())}
        self._hmtx = self._font["hmtx"]
        head, hhea, os2 = self._font["head"], self._font["hhea"], self._font["OS/2"]
        self._scale = 1000.0 / head.unitsPerEm
        self.bbox = [round(v * self._scale) for v in (head.xMin, head.yMin, head.xMax, head.yMax)]
        self.ascent = round(hhea.ascent * self._scale)
        self.descent = round(hhea.descent * self._scale)
        self.cap_height = round((getattr(os2, "sCapHeight", 0) or hhea.ascent * 0.7) * self._scale)

    def has(self, ch: str) -> bool:
        return ord(ch) in self.cmap

    def gid(self, ch: str) -> int:
        return self._gids[self.cmap[ord(ch)]]

    def width(self, ch: str) -> float:
        """Advance width of `ch` in 1/1000 em (the '?' glyph's for a character it lacks)."""
        name = self.cmap.get(ord(ch)) or self.cmap[ord("?")]
        return self._hmtx[name][0] * self._scale

    def subset(self, text: str) -> bytes:
        """The font holding only the glyphs of `text`, with every glyph id kept (CID = GID)."""
        from fontTools import subset
        from fontTools.ttLib import TTFont

        options = subset.Options()
        options.retain_gids = True  # the content streams already hold the original glyph ids
        options.hinting = False
        options.notdef_outline = True
        options.name_IDs = [0, 1, 2, 3, 4, 5, 6]  # copyright, names, version: the notice stays with it
        options.layout_features = []
        options.drop_tables += ["GSUB", "GPOS", "GDEF", "vhea", "vmtx", "post", "kern"]
        font = TTFont(io.BytesIO(self._data))
        sub = subset.Subsetter(options)
        sub.populate(unicodes={ord(c) for c in text if self.has(c)} | {ord("?")})
        sub.subset(font)
        out = io.BytesIO()
        font.save(out)
        return out.getvalue()


@functools.lru_cache(maxsize=1)
def fallback_font() -> FallbackFont | None:
    """The shipped font, read once per process; None when it cannot be read (then '?' as before)."""
    try:
        data = lzma.decompress(FONT_FILE.read_bytes())
        return FallbackFont(data)
    except (OSError, lzma.LZMAError, ImportError, KeyError, ValueError):
        return None


def subset_tag(gids) -> str:
    """The six capital letters a subset font's name starts with (PDF 32000-1, 9.6.4)."""
    digest = hashlib.sha1(",".join(map(str, sorted(gids))).encode()).digest()
    return "".join(chr(ord("A") + b % 26) for b in digest[:6])


def to_unicode_cmap(glyphs: dict[int, str]) -> bytes:
    """A ToUnicode CMap: each glyph id (a 2-byte code) to the character it shows."""
    lines = ["/CIDInit /ProcSet findresource begin", "12 dict begin", "begincmap",
             "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
             "/CMapName /Adobe-Identity-UCS def", "/CMapType 2 def",
             "1 begincodespacerange", "<0000> <FFFF>", "endcodespacerange"]
    items = sorted(glyphs.items())
    for start in range(0, len(items), 100):  # at most 100 entries a block
        block = items[start:start + 100]
        lines.append(f"{len(block)} beginbfchar")
        for gid, ch in block:
            lines.append(f"<{gid:04X}> <{ch.encode('utf-16-be').hex().upper()}>")
        lines.append("endbfchar")
    lines += ["endcmap", "CMapName currentdict /CMap defineresource pop", "end", "end"]
    return ("\n".join(lines) + "\n").encode("ascii")


def parse_to_unicode(cmap: bytes) -> dict[int, str]:
    """Glyph id -> text, from a ToUnicode CMap's bfchar and bfrange entries (for reading back)."""
    out: dict[int, str] = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", cmap, re.S):
        for code, text in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            out[int(code, 16)] = bytes.fromhex(text.decode()).decode("utf-16-be")
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", cmap, re.S):
        for lo, hi, text in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            first = int(text, 16)
            for k, code in enumerate(range(int(lo, 16), int(hi, 16) + 1)):
                out[code] = chr(first + k)
    return out
