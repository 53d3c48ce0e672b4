"""What a PDF says and where, read back with pypdf (a second reader, not the writer's own):
for tests of the report and the exports that write PDF."""
from __future__ import annotations

import io
from dataclasses import dataclass

from pypdf import PdfReader


@dataclass
class ShownText:
    page: int  # 0-based
    x: float  # the string's baseline origin, PDF points from the page's lower-left corner
    y: float
    size: float
    font: str  # the font's base name: Helvetica, Helvetica-Bold, or the embedded fallback's
    text: str

    @property
    def width(self) -> float:
        from designer.core.export.pdf import text_width

        return text_width(self.text, self.size, self.font if self.font.startswith("Helvetica") else "Helvetica")


def text_items(pdf: bytes) -> list[ShownText]:
    """Every string shown, in drawing order, with its page, position, size and font."""
    items: list[ShownText] = []
    for number, page in enumerate(PdfReader(io.BytesIO(pdf)).pages):
        def visit(text, cm, tm, font, size, number=number):
            if not text.strip():
                return
            x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
            name = str((font or {}).get("/BaseFont", "")).lstrip("/").split("+")[-1]
            items.append(ShownText(number, x, y, size, name, text))
        page.extract_text(visitor_text=visit)
    return items


def text_lines(pdf: bytes, page: int | None = None) -> list[str]:
    """The shown strings grouped into lines: the strings of one page on one baseline, left to
    right, joined by single spaces; top to bottom, page by page."""
    rows: dict[tuple[int, float], list[ShownText]] = {}
    for item in text_items(pdf):
        if page is not None and item.page != page:
            continue
        rows.setdefault((item.page, round(item.y, 1)), []).append(item)
    return [" ".join(it.text for it in sorted(rows[key], key=lambda it: it.x))
            for key in sorted(rows, key=lambda k: (k[0], -k[1]))]


def page_count(pdf: bytes) -> int:
    return len(PdfReader(io.BytesIO(pdf)).pages)
