"""Jobs and parts down on the canvas: each server framed in its job's colour, each element marked
down greyed and hatched under a red cross, and a small legend naming the jobs' colours.

Kept apart from the scene's own drawing: the marks on servers and switches are child items of
their boxes (they follow a drag, and Qt paints them), the marks on cables are one item over the
cable layer that draws only the cables that are down. None of them takes a click.
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QWidget

from . import style
from .parts_down import DOWN_COLLECTIONS, parts_down

# Distinct from the device fills (blue servers, green/amber/red switches) and from each other.
JOB_COLORS = [QColor(c) for c in ("#d946ef", "#f97316", "#14b8a6", "#eab308", "#6366f1", "#84cc16", "#ec4899",
                                  "#0ea5e9", "#a16207", "#64748b")]
DOWN_FILL = QColor(156, 163, 175, 215)  # grey over the box: its own colour shows faintly through
DOWN_HATCH = QColor("#4b5563")
DOWN_CROSS = QColor("#dc2626")
BAND_PX = 3.5  # the job's band along the left edge of a server


def job_color(index: int) -> QColor:
    return JOB_COLORS[index % len(JOB_COLORS)]


class JobBand(QGraphicsRectItem):
    """A server's job: a band along its left edge and a frame, both in the job's colour."""

    def __init__(self, parent, color: QColor, job: str):
        super().__init__(parent)
        self.job = job
        self.color = color
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setZValue(-1)  # over the box, under its name (a child is always drawn above its parent)
        self.band = QGraphicsRectItem(self)
        self.band.setAcceptedMouseButtons(Qt.NoButton)
        self.band.setPen(Qt.NoPen)
        self.band.setBrush(color)
        self.fit()

    def fit(self) -> None:
        r = self.parentItem().rect()
        pen = QPen(self.color, 1.2)
        pen.setJoinStyle(Qt.MiterJoin)
        self.setPen(pen)
        self.setBrush(Qt.NoBrush)
        self.setRect(r.adjusted(0.6, 0.6, -0.6, -0.6))
        self.band.setRect(QRectF(r.left(), r.top(), BAND_PX, r.height()))


class DownMark(QGraphicsItem):
    """A server or switch that is down: greyed, hatched, crossed out in red."""

    def __init__(self, parent):
        super().__init__(parent)
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setZValue(-0.5)  # over the box and its job's band, under its name (which stays readable)

    def boundingRect(self) -> QRectF:
        return self.parentItem().rect().adjusted(-1, -1, 1, 1)

    def paint(self, painter, option, widget=None) -> None:
        r = self.parentItem().rect()
        painter.setPen(Qt.NoPen)
        painter.setBrush(DOWN_FILL)
        painter.drawRect(r)
        painter.setBrush(QBrush(DOWN_HATCH, Qt.BDiagPattern))
        painter.drawRect(r)
        cross = QPen(DOWN_CROSS, 1.6)
        cross.setCapStyle(Qt.RoundCap)
        painter.setPen(cross)
        side = min(r.width(), r.height()) * 0.8
        c = r.center()
        painter.drawLine(QPointF(c.x() - side / 2, c.y() - side / 2), QPointF(c.x() + side / 2, c.y() + side / 2))
        painter.drawLine(QPointF(c.x() - side / 2, c.y() + side / 2), QPointF(c.x() + side / 2, c.y() - side / 2))


class DownLinks(QGraphicsItem):
    """The cable bundles with a cable down: drawn grey and dashed over the cable, a red cross at the
    middle (all its cables down) or a small one (some of them)."""

    def __init__(self, scene):
        super().__init__()
        self.scene_ = scene
        self.rows: dict[int, bool] = {}  # bundle row -> all of its cables are down
        self._bounds = QRectF()
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setZValue(3)

    def set_rows(self, rows: dict[int, bool]) -> None:
        self.prepareGeometryChange()
        self.rows = rows
        layer = self.scene_.link_layer
        bounds = QRectF()
        for row in rows:
            if row < len(layer.lines.a):
                (ax, ay), (bx, by) = layer.lines.a[row], layer.lines.b[row]
                bounds = bounds.united(QRectF(QPointF(min(ax, bx), min(ay, by)), QPointF(max(ax, bx), max(ay, by))))
        self._bounds = bounds.adjusted(-8, -8, 8, 8) if rows else QRectF()
        self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        return QPainterPath()  # never under the mouse: clicks and tooltips reach the cables

    def paint(self, painter, option, widget=None) -> None:
        layer = self.scene_.link_layer
        if not layer.show_individual:
            return
        painter.setRenderHint(QPainter.Antialiasing, True)
        grey = QPen(DOWN_HATCH, 2.0, Qt.DashLine)
        grey.setCosmetic(True)
        cross = QPen(DOWN_CROSS, 2.0)
        cross.setCosmetic(True)
        scale = max(painter.worldTransform().m11(), 1e-6)
        for row, whole in self.rows.items():
            if row >= len(layer.lines.a):
                continue
            a, b = QPointF(*layer.lines.a[row]), QPointF(*layer.lines.b[row])
            if whole:
                painter.setPen(grey)
                painter.drawLine(a, b)
            half = (6.0 if whole else 4.0) / scale  # screen pixels at any zoom
            m = (a + b) / 2
            painter.setPen(cross)
            painter.drawLine(QPointF(m.x() - half, m.y() - half), QPointF(m.x() + half, m.y() + half))
            painter.drawLine(QPointF(m.x() - half, m.y() + half), QPointF(m.x() + half, m.y() - half))


class JobLegend(QWidget):
    """The jobs' colours (and the down mark), in the view's top-left corner, while there are jobs
    to tell apart or parts down."""

    MARGIN_PX, ROW_PX, SWATCH_PX = 8, 15, 18

    def __init__(self, view):
        super().__init__(view)
        self.view = view
        self.entries: list[tuple[str, QColor]] = []
        self.down = 0
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        font = QFont()
        font.setPixelSize(11)
        self.setFont(font)
        self.hide()

    def rows(self) -> list[str]:
        out = (["Jobs"] + [name for name, _c in self.entries]) if self.entries else []
        if self.down:
            out.append(f"down ({self.down})")
        return out

    def set_entries(self, entries: list[tuple[str, QColor]], down: int) -> None:
        self.entries, self.down = entries, down
        rows = self.rows()
        self.setVisible(bool(rows))
        if rows:
            metrics = QFontMetricsF(self.font())
            width = max(metrics.horizontalAdvance(t) for t in rows)
            self.resize(int(self.SWATCH_PX + 14 + width + 2 * self.MARGIN_PX),
                        len(rows) * self.ROW_PX + 2 * self.MARGIN_PX)
            self.place()
        self.update()

    def place(self) -> None:
        viewport = self.view.viewport().geometry()
        self.move(viewport.left() + self.MARGIN_PX, viewport.top() + self.MARGIN_PX)

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.Antialiasing, True)
        painter.setPen(QPen(style.RACK_EDGE, 1))
        painter.setBrush(QColor(255, 255, 255, 235))
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
        y = self.MARGIN_PX
        left, text_x = self.MARGIN_PX, self.MARGIN_PX + self.SWATCH_PX + 8
        colors = dict(self.entries)
        for text in self.rows():
            mid = y + self.ROW_PX / 2
            if text == "Jobs":
                font = QFont(self.font())
                font.setBold(True)
                painter.setFont(font)
                painter.setPen(style.TEXT)
                painter.drawText(QRectF(left, y, self.width(), self.ROW_PX), Qt.AlignVCenter, text)
                painter.setFont(self.font())
                y += self.ROW_PX
                continue
            box = QRectF(left + 2, mid - 5, self.SWATCH_PX - 4, 10)
            if text in colors:
                painter.setPen(QPen(colors[text], 1.5))
                painter.setBrush(style.NODE_FILL["nvswitch"])
                painter.drawRect(box)
                painter.fillRect(QRectF(box.left(), box.top(), 3, box.height()), colors[text])
            else:  # the down mark
                painter.setPen(Qt.NoPen)
                painter.setBrush(DOWN_FILL)
                painter.drawRect(box)
                painter.setPen(QPen(DOWN_CROSS, 1.5))
                painter.drawLine(box.topLeft(), box.bottomRight())
                painter.drawLine(box.bottomLeft(), box.topRight())
            painter.setPen(style.TEXT)
            painter.drawText(QRectF(text_x, y, self.width() - text_x, self.ROW_PX), Qt.AlignVCenter, text)
            y += self.ROW_PX


class CanvasJobMarks:
    """Keeps the marks in step with the document (states) and the last evaluation (whose servers
    each job got). `scene`, `view`: the window's canvas."""

    def __init__(self, scene, view):
        self.scene = scene
        self.view = view
        self.jobs: list[tuple[str, list[str]]] = []  # (job name, its servers), in the order of spec.jobs
        self._job_of: dict[str, tuple[str, QColor]] = {}  # server id -> (its job, the job's colour)
        self.bands: dict[str, JobBand] = {}
        self.down_marks: dict[str, DownMark] = {}
        # one more each time a frame or a mark down comes, goes or is refitted: the far-out box layer
        # redraws its marks when it changed (comparing 16k frames per edit at 131k GPUs cost ~1 ms)
        self.generation = 0
        self.links = None
        # the ids of what is down, per collection: counted from the whole design after an open or a
        # build, then kept from each edit's changes (a cable deleted at 131k GPUs does not walk 600k cables)
        self.down: dict[str, set[str]] = {name: set() for name in DOWN_COLLECTIONS}
        self.legend = JobLegend(view)
        scene.aboutToRebuild.connect(self._forget_items)
        scene.qdoc.changed.connect(self._on_changed)
        scene.qdoc.replaced.connect(self._on_replaced)
        scene.built.connect(self._draw)  # a staged build's boxes came after the replace
        self.refresh()

    def set_jobs(self, jobs: list[tuple[str, list[str]]]) -> None:
        """The servers of each job (from the last evaluation); one job alone is not coloured."""
        jobs = jobs if len(jobs) > 1 else []
        if jobs == self.jobs:
            return  # the same placement (most edits): nothing to redo (46 ms at 16k GPUs)
        self._set_jobs(jobs)
        self._draw()  # the same parts down

    def _set_jobs(self, jobs: list[tuple[str, list[str]]]) -> None:
        self.jobs = jobs
        self._job_of = {}
        for i, (name, nodes) in enumerate(jobs):
            for node_id in nodes:
                self._job_of.setdefault(node_id, (name, job_color(i)))

    def set_result(self, result) -> None:
        if result is None:
            return  # an edit in progress or errors: keep the last placement on screen
        jobs = getattr(result, "jobs", None) or []
        self.set_jobs([(j.name, list(getattr(j, "node_ids", []) or [])) for j in jobs])

    def _on_changed(self, changes) -> None:
        """Only edits that can change a mark: a state, elements or cables coming or going, a new id
        or size (a 16k-GPU design is not walked on every drag)."""
        marking = [c for c in changes
                   if c.field in ("state", "id", "a", "b", "height_units") or c.action in ("added", "removed")]
        if not marking:
            return
        self._follow_down(marking)
        if all(c.collection == "links" for c in marking):  # a cable deleted or undone: no frame moves
            self._draw(touched=set())
        elif all(c.collection in ("nodes", "switches", "links") for c in marking):
            touched = set()
            for c in marking:
                touched.update((c.id, c.old, c.new) if c.field == "id" else (c.id,))
            self._draw(touched)
        else:
            self._draw()

    def _follow_down(self, changes) -> None:
        """What is down after `changes`: an element added or set down joins it; one that was down and
        went (removed, set up, renamed) has its collection counted again, as another element may
        share its id (a broken file)."""
        recount = set()
        for c in changes:
            if c.collection not in self.down:
                continue
            if c.action == "added" and c.new.state == "down":
                self.down[c.collection].add(c.id)
            elif c.action == "removed" and c.old.state == "down":
                recount.add(c.collection)
            elif c.action == "changed" and c.field == "state":
                if c.new == "down":
                    self.down[c.collection].add(c.id)
                if c.old == "down":
                    recount.add(c.collection)
            elif c.action == "changed" and c.field == "id" and (c.old in self.down[c.collection]
                                                                  or c.new in self.down[c.collection]):
                recount.add(c.collection)
        for name in recount:
            self.down[name] = parts_down(self.scene.doc, (name,))[name]

    def _on_replaced(self) -> None:
        self._set_jobs([])
        if self.scene.build.running:  # drawn once its boxes are all made (scene.built)
            # a big design's, from its plan (found off the UI thread while its file was read: a pass over
            # 300k cables at 131k GPUs is ~20 ms); later edits keep it (_follow_down)
            self.down = dict(self.scene.build.planned_down)  # (its own: edits update it)
        else:
            self.refresh()

    def _forget_items(self) -> None:
        """The scene is about to delete every item: the marks go with their boxes; the cable overlay
        is taken out first, to be put back after."""
        self.bands.clear()
        self.down_marks.clear()
        self.generation += 1
        if self.links is not None and self.links.scene() is self.scene:
            self.scene.removeItem(self.links)

    def refresh(self) -> None:
        """Everything again from the whole design (an open, a build)."""
        self.down = parts_down(self.scene.doc)
        self._draw()

    def _draw(self, touched: set | None = None) -> None:
        """The marks after an edit of the servers and switches `touched` (ids; their frames alone are
        looked at: a cable deleted at 131k GPUs with two jobs refitted 32k frames, ~350 ms), or of
        everything (None: an open, a build, another placement)."""
        changed = self._draw_frames(touched)
        changed |= self._draw_down_devices()
        self._draw_down_links()
        if changed:
            self.generation += 1
        if getattr(self.scene, "box_layer", None) is not None:  # drawn by it when zoomed far out
            self.scene.box_layer.set_marks(self.bands, self.down_marks, self.generation)
        self.legend.set_entries([(name, job_color(i)) for i, (name, _n) in enumerate(self.jobs)],
                                self._down_count())

    def _draw_frames(self, touched: set | None) -> bool:
        """Each server's frame in its job's colour; whether one came, went or was refitted."""
        devices, bands, job_of = self.scene.devices, self.bands, self._job_of
        changed = False
        for node_id in (list(bands.keys() | job_of.keys()) if touched is None else touched):
            band, wanted, item = bands.get(node_id), job_of.get(node_id), devices.get(node_id)
            if band is not None and (wanted is None or item is not band.parentItem()
                                     or band.job != wanted[0] or band.color != wanted[1]):
                self._drop(bands.pop(node_id))
                band, changed = None, True
            if wanted is None or item is None:
                continue
            if band is None:
                bands[node_id] = JobBand(item, wanted[1], wanted[0])
                changed = True
            elif touched is not None:  # its box may have a new size
                band.fit()
                changed = True
        return changed

    def _draw_down_devices(self) -> bool:
        """Servers and switches down; whether a mark came or went."""
        devices = self.scene.devices
        changed = False
        down = self.down["nodes"] | self.down["switches"]
        for element_id in list(self.down_marks):
            mark = self.down_marks[element_id]
            if element_id not in down or devices.get(element_id) is not mark.parentItem():
                self._drop(self.down_marks.pop(element_id))
                changed = True
        for element_id in down:
            item = devices.get(element_id)
            if item is not None and element_id not in self.down_marks:
                self.down_marks[element_id] = DownMark(item)
                changed = True
            elif item is not None:
                self.down_marks[element_id].update()
        return changed

    def _draw_down_links(self) -> None:
        down_links = self.down["links"]
        rows = self.scene.link_layer.bundles.rows_holding(down_links) if down_links else {}
        if self.links is None:
            self.links = DownLinks(self.scene)
        if self.links.scene() is not self.scene:
            self.scene.addItem(self.links)
        self.links.set_rows(rows)

    def _down_count(self) -> int:
        return len(self.down["nodes"] | self.down["switches"]) + len(self.down["links"])

    def _drop(self, item) -> None:
        scene = item.scene()
        if scene is not None:
            scene.removeItem(item)
        item.setParentItem(None)
