"""Cable labels ("4x400G") on the canvas: placed beside their cables where they fit, on screen at a
fixed size, never on another label, a server or a switch, the same text again only well away."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QTransform
from PySide6.QtWidgets import QGraphicsSimpleTextItem

from . import style
from .bundle_table import Bundle

LABEL_SPACING_PX = 24.0  # free screen space left and right of a cable label (one above and below)
PLACES = (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8)  # where along the cable's shown stretch a label is tried


def _inside(ax: float, ay: float, bx: float, by: float, rect: QRectF) -> tuple[float, float] | None:
    """The stretch (t0, t1) of the segment a->b inside `rect` (Liang-Barsky), None when it is outside."""
    t0, t1 = 0.0, 1.0
    dx, dy = bx - ax, by - ay
    for p, q in ((-dx, ax - rect.left()), (dx, rect.right() - ax), (-dy, ay - rect.top()), (dy, rect.bottom() - ay)):
        if p == 0:
            if q < 0:
                return None
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return None
    return t0, t1


def label_text(bundle: Bundle) -> str:
    """"4x400G" for four 400 Gb/s cables, "400G" for one."""
    rate = bundle.rate.replace(" Gb/s", "G")
    return f"{bundle.cables}x{rate}" if bundle.cables > 1 else rate


def label_font() -> QFont:
    font = QFont()
    font.setPixelSize(round(style.LINK_LABEL_PX))
    return font


def keep_out_rects(scene, rect: QRectF) -> list[QRectF]:
    """Scene rectangles of the servers and switches (names and ports) and of the names shown in `rect`
    (racks', NVLink domains'): no cable label on them."""
    if scene is None:
        return []
    return [item.mapRectToScene(item.rect()) if item.data(1) in ("node", "switch") else item.sceneBoundingRect()
            for item in scene.items(rect)
            if item.data(1) in ("node", "switch") or (isinstance(item, QGraphicsSimpleTextItem) and item.isVisible())]


def place_labels(world: QTransform, font: QFont, bundles: list[Bundle], ax, ay, bx, by, exposed: QRectF,
                 keep_out: list[QRectF]) -> list[tuple[QRectF, str]]:
    """(screen box, text) of each cable's label that fits: at the middle of the cable's shown stretch
    or a little either side; a cable with no room for its label goes without."""
    metrics = QFontMetricsF(font)
    keep_out = [world.mapRect(r) for r in keep_out]
    placed: list[QRectF] = []
    same_text: dict[str, list[QRectF]] = {}
    texts = []
    for j, bundle in enumerate(bundles):
        text = label_text(bundle)
        width, height = metrics.horizontalAdvance(text) + 2, metrics.height()
        shown = _inside(ax[j], ay[j], bx[j], by[j], exposed)  # the part of the cable in view
        if shown is None:
            continue
        t0, t1 = shown
        for f in PLACES:
            t = t0 + (t1 - t0) * f
            at = world.map(QPointF(ax[j] + (bx[j] - ax[j]) * t, ay[j] + (by[j] - ay[j]) * t))
            box = QRectF(at.x() + 2, at.y() - height / 2, width, height)
            same = same_text.get(text, ())
            if not any(box.intersects(o) for o in placed) and not any(box.intersects(o) for o in keep_out) \
                    and not any(box.intersects(o) for o in same):
                # room around it: a label every few cables reads, one on each does not; the same
                # text again only well away (forty "400G" in a fan say no more than a few)
                placed.append(box.adjusted(-LABEL_SPACING_PX, -height, LABEL_SPACING_PX, height))
                same_text.setdefault(text, []).append(box.adjusted(-5 * LABEL_SPACING_PX, -5 * height,
                                                                   5 * LABEL_SPACING_PX, 5 * height))
                texts.append((box, text))
                break
    return texts


def draw_labels(painter, texts: list[tuple[QRectF, str]], font: QFont) -> list[QRectF]:
    """Draw the placed labels on a backing, at a fixed size on screen; returns their scene rects."""
    if not texts:
        return []
    world = painter.worldTransform()
    painter.setWorldTransform(QTransform())  # letters at a fixed size on screen
    painter.setPen(Qt.NoPen)
    painter.setBrush(style.BACKGROUND)  # a backing, so the crossing cables do not cut the letters
    painter.drawRects([box for box, _t in texts])
    painter.setFont(font)
    painter.setPen(style.MUTED)
    for box, text in texts:
        painter.drawText(box, Qt.AlignCenter, text)
    painter.setWorldTransform(world)
    return [world.inverted()[0].mapRect(box) for box, _t in texts]
