"""A big design's racks, servers and switches drawn by one item when zoomed far out.

At 131,072 GPUs the fit-all view holds ~26k boxes of a pixel or two: painted as items they cost
~60-100 ms a repaint (Qt walks and paints each), enough to freeze the window at every repaint
(a batch of boxes made, the link heat arriving). Below LOD_BOXES the scene makes its racks fully
transparent (Qt then skips them and everything inside them when painting) and this layer draws the
same rectangles with the same colours in a few drawRects calls, from numpy arrays: rack outlines,
NVLink domain bands, the boxes, the jobs' frames, the boxes that are down, what is selected. Qt's hit
tests skip transparent items as well, so the scene finds what is under a click, a rubber band, a
tooltip or a drop through items_at / items_in here. Zoomed in, the items draw themselves again.

It draws from the scene plan while the items are still being made (the whole design shows at the
first paint), then from the items after an edit.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QBrush, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem
from shiboken6 import isValid

from . import style
from .items import ID_ROLE, device_colors

LOD_BOXES = 0.2  # below this zoom a 1U box is under a pixel tall and no name or port shows
BOX_Z = 0.5  # over the cables (-1) and the rack outlines (0), where the racks' own contents go
FEW_SEARCHED = 8  # up to this many devices' rows are searched for without an index of every row (_row_of)


def group_boxes(rects: np.ndarray, keys: list, kept=()) -> list:
    """The boxes by colour key: [(key, their rects (n, 4), the same as QRectF)]; a value type, so a
    file's are made off the UI thread with its plan (21k QRectF at 131k GPUs: ~25 ms). The keys in
    `kept` come in their place as (key, None, None): the caller has their boxes already."""
    rects = np.asarray(rects, float).reshape(-1, 4)
    rows_of: dict = {}
    for i, key in enumerate(keys):
        rows_of.setdefault(key, []).append(i)
    out = []
    for key, rows in rows_of.items():
        if key in kept:
            out.append((key, None, None))
            continue
        chosen = rects[rows]
        out.append((key, chosen, [QRectF(*r) for r in chosen.tolist()]))
    return out


class _Group:
    """Rectangles drawn with one pen and brush; their QRectF made once, picked per paint by numpy."""

    def __init__(self, pen, brush, rects: np.ndarray, qrects: list | None = None):
        self.pen, self.brush = pen, brush
        self.rects = rects.reshape(-1, 4)
        self.qrects = qrects if qrects is not None else [QRectF(*r) for r in self.rects.tolist()]

    def visible(self, exposed: QRectF) -> list:
        r = self.rects
        inside = ((r[:, 0] + r[:, 2] >= exposed.left()) & (r[:, 0] <= exposed.right())
                  & (r[:, 1] + r[:, 3] >= exposed.top()) & (r[:, 1] <= exposed.bottom()))
        if inside.all():
            return self.qrects
        return [self.qrects[i] for i in np.flatnonzero(inside).tolist()]


class BoxLayer(QGraphicsItem):
    def __init__(self, scene):
        super().__init__()
        self._scene = scene
        self.setZValue(BOX_Z)
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setFlag(QGraphicsItem.ItemUsesExtendedStyleOption, True)
        # drawn once per zoom (a pixmap of the view's size, Qt's own cache): a repaint for something else
        # (a progress step, the link heat) blits it, ~60 ms less a repaint at 131k GPUs
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self.setVisible(False)
        self._bounds = QRectF()
        self._ids: list = []
        self._row: dict | None = {}  # device id -> its row (None: made when asked, _rows)
        self._rects = np.zeros((0, 4))  # each device's box in the scene
        self._keys: list = []  # each device's colour key
        self._group_of: dict = {}  # colour key -> its boxes' group
        self._device_groups: list | None = []
        self._band_groups: list | None = []
        self._mark_groups: list | None = []
        self._marks = ({}, {})  # job_colors: device id -> JobBand, device id -> DownMark
        self._marks_generation: int | None = None  # of the frames and boxes down last drawn (set_marks)
        self._has_marks = False  # whether those frames and boxes down were any
        self._stale_devices = False  # every box taken again from the items
        self._stale_ids: set = set()  # the boxes of these devices only (an edit of a few)
        self._places: dict = {}  # device added -> (its collection, its place in it), for its row
        self._box_bounds: QRectF | None = None  # what the boxes cover (None: measured at the next _rebound)
        self._outlined: list = []  # the selection's frames last painted

    # ---- data ----
    def set_boxes(self, ids: list, rects: np.ndarray, keys: list, grouped: list | None = None,
                  index: dict | None = None, painting: bool = False, kept: dict | None = None,
                  box_bounds: QRectF | None = None) -> None:
        """Every device's box (left, top, width, height) and its colour key (items.device_style_key);
        `grouped`: group_boxes of them, `index`: id -> row, when made already (scene_plan.py); `kept`:
        colour key -> the group drawn now, for the keys whose boxes are the same; `box_bounds`: what the
        boxes cover, when known (an edit of a few boxes: repainted where they are, not everywhere)."""
        self._ids, self._rects, self._keys = ids, np.asarray(rects, float).reshape(-1, 4), list(keys)
        self._row = index
        kept = kept or {}
        groups, self._group_of = [], {}
        for key, chosen, qrects in (grouped if grouped is not None else group_boxes(self._rects, keys, kept)):
            group = kept.get(key) if chosen is None else None
            if group is None:
                fill, edge = device_colors(_KeyElement(key), key[0])
                group = _Group(style.edge_pen(edge, 0.8), QBrush(fill), chosen, qrects)
            groups.append(group)
            self._group_of[key] = group
        self._device_groups = groups
        self._mark_groups = None
        self._stale_devices = False
        self._stale_ids = set()
        self._box_bounds = box_bounds
        if box_bounds is not None and self._measure() == self._bounds:
            return  # a few boxes changed inside what it draws: repainted where they are (devices_changed)
        if painting:  # no change of geometry inside a paint: right after it
            QTimer.singleShot(0, lambda: isValid(self) and self._rebound())
        else:
            self._rebound()

    def devices_changed(self, device_ids=None, places: dict | None = None) -> None:
        """Boxes came, went, moved or changed colour: taken again from the items at the next paint (those
        of `device_ids` only, when given: reading every item's box cost each paint after a server's
        delete ~0.2 s at 131k GPUs; `places`: a device added -> (collection, its place in it)). Only
        where they were and are is painted again."""
        if device_ids is None:
            self._stale_devices = True
            self.update()
        else:
            self._stale_ids.update(device_ids)
            self._places.update(places or {})
            self._update_rects(self._device_rects(device_ids))
        self._mark_groups = None

    def _device_rects(self, device_ids) -> list:
        """Where these devices' boxes are drawn now and where they will be (their items')."""
        rects, devices = [], self._scene.devices
        device_ids = list(device_ids)
        if len(device_ids) > FEW_SEARCHED:
            self._rows()
        for device_id in device_ids:
            row = self._row_of(device_id)
            if row is not None and row < len(self._rects):
                rects.append(QRectF(*self._rects[row].tolist()))
            item = devices.get(device_id)
            if item is not None:
                rects.append(item.mapRectToScene(item.rect()))
        return rects

    def _update_rects(self, rects: list) -> None:
        """Repaint these parts of the layer alone (its cached picture redrawn there), a frame's width
        around each; all of it past a few hundred."""
        if len(rects) > 200:
            self.update()
            return
        pad = 4.0 / max(self._scene.detail.scale, 1e-6)  # a cosmetic frame's pixels, in the scene
        for r in rects:
            self.update(r.adjusted(-pad, -pad, pad, pad))

    def bands_changed(self) -> None:
        self._band_groups = None
        self.update()

    def set_marks(self, bands: dict, down: dict, generation: int) -> None:
        """The jobs' frames and the boxes down (job_colors.py), drawn over the boxes. `generation`
        changes whenever a frame or a box down comes, goes or is refitted: with the one drawn, nothing
        is painted again (a cable deleted at 131k GPUs repainted every box: ~15 ms); nor when there were
        none and are none (no job's frames, no box down: the end of a 131k-GPU open repainted its 26k
        boxes, ~60 ms). (The dicts are job_colors' own, changed in place: what they held is kept apart.)"""
        had_marks, self._has_marks = self._has_marks, bool(bands or down)
        self._marks = (bands, down)
        if generation == self._marks_generation:
            return
        self._marks_generation = generation
        self._mark_groups = None
        if had_marks or self._has_marks:
            self.update()

    def _refresh(self, painting: bool = False) -> None:
        scene = self._scene
        if self._stale_devices:
            boxes = scene.cables.device_boxes()
            doc = scene.doc
            keys = []
            for device_id in boxes.ids:
                element, kind = doc.find("nodes", device_id), "node"
                if element is None:
                    element, kind = doc.find("switches", device_id), "switch"
                keys.append(("node", "") if element is None else _key(element, kind))
            self.set_boxes(boxes.ids, np.column_stack([boxes.left, boxes.top, boxes.width, boxes.height]), keys,
                           painting=painting)
        elif self._stale_ids:
            self._refresh_devices(painting)
        if self._band_groups is None:
            by_style: dict = {}
            for band in scene.domain_bands:
                r = band.mapRectToScene(band.path().boundingRect())
                key = (band.pen().color().rgba(), band.pen().widthF(), band.brush().color().rgba())
                entry = by_style.setdefault(key, (band.pen(), band.brush(), []))
                entry[2].append((r.x(), r.y(), r.width(), r.height()))
            self._band_groups = [_Group(pen, brush, np.array(rects, float)) for pen, brush, rects in by_style.values()]
        if self._mark_groups is None:
            self._mark_groups = self._marks_as_groups()

    def _refresh_devices(self, painting: bool) -> None:
        """The boxes of the devices edited: a removed one's row goes, an added one's comes at its place in
        the design (else at the end), one changed is taken again in its row. The colour groups follow: a
        box taken out of its group or put in at its row's place, a group whose boxes changed in place made
        again; the others kept (making every box's QRectF again cost ~70 ms a paint at 131k GPUs)."""
        scene, doc = self._scene, self._scene.doc
        ids, rects, keys = list(self._ids), self._rects.copy(), list(self._keys)
        groups = dict(self._group_of)  # key -> its group, as edited here
        stale = self._stale_ids
        gone = sorted((row for row in (self._row_of(d) for d in stale if d not in scene.devices) if row is not None),
                      reverse=True)
        gone_rects = [tuple(rects[row].tolist()) for row in gone]
        for row in gone:  # the last first: each group's place of the box is counted among the rows before it
            key = keys[row]
            group = groups.get(key)
            if group is not None:
                at = keys[:row].count(key)
                groups[key] = _Group(group.pen, group.brush, np.delete(group.rects, at, axis=0),
                                     group.qrects[:at] + group.qrects[at + 1:])
            del ids[row], keys[row]
        rects = np.delete(rects, gone, axis=0)
        index = None if gone else self._row  # (rows after one gone moved: searched, or made again when asked)
        added = []
        present = [d for d in stale if d in scene.devices]
        if len(present) > 1:
            present = [d for d in scene.devices if d in stale]  # (in the items' order)
        if index is None and len(present) > FEW_SEARCHED:
            index = {d: i for i, d in enumerate(ids)}
        for device_id in present:
            item = scene.devices[device_id]
            r = item.mapRectToScene(item.rect())
            element, kind = doc.find("nodes", device_id), "node"
            if element is None:
                element, kind = doc.find("switches", device_id), "switch"
            box, key = (r.left(), r.top(), r.width(), r.height()), ("node", "") if element is None else _key(element, kind)
            row = index.get(device_id) if index is not None else _row_in(ids, device_id)
            if row is None:
                added.append((device_id, box, key))
            elif (keys[row], tuple(rects[row].tolist())) != (key, box):
                groups.pop(keys[row], None)  # changed in place: its group and the one it joins made again
                groups.pop(key, None)
                rects[row], keys[row] = box, key
        if added:
            index = dict(index) if index is not None else None
            for device_id, box, key in added:
                row = self._place(device_id, ids)
                if row < len(ids):
                    index = None  # the rows after it moved
                elif index is not None:
                    index[device_id] = row
                ids.insert(row, device_id)
                keys.insert(row, key)
                rects = np.insert(rects, row, box, axis=0)
                group = groups.get(key)
                if group is not None:  # among its group's boxes as its row among the rows
                    at = keys[:row].count(key)
                    groups[key] = _Group(group.pen, group.brush, np.insert(group.rects, at, box, axis=0),
                                         group.qrects[:at] + [QRectF(*box)] + group.qrects[at:])
        order = list(groups) + [a[2] for a in added if a[2] not in groups]
        if all(key in groups for key in dict.fromkeys(keys)):  # every group kept, or edited above
            grouped = [(key, None, None) for key in order if len(groups[key].rects)]
            self.set_boxes(ids, rects, keys, grouped=grouped, index=index, painting=painting, kept=groups,
                           box_bounds=self._edited_bounds(gone_rects, [a[1] for a in added]))
        else:
            self.set_boxes(ids, rects, keys, painting=painting, kept=groups)
        self._places = {}

    def _rows(self) -> dict:
        """Device id -> its row, made when asked after rows came or went (a server deleted or put back
        moves every row after it: made at each such edit, 3-10 ms at 131k GPUs, though an edit then looks
        up its own few devices only: _row_of)."""
        if self._row is None:
            self._row = {d: i for i, d in enumerate(self._ids)}
        return self._row

    def _row_of(self, device_id: str) -> int | None:
        """A device's row (None: it has none): from the rows' index when made, else searched."""
        return self._row.get(device_id) if self._row is not None else _row_in(self._ids, device_id)

    def _place(self, device_id: str, ids: list) -> int:
        """The row of a device added: its place in the design (the servers', then the switches', as a fresh
        open has them, so that alike boxes are drawn in the same order) when the rows before it are the
        design's, else the end."""
        place = self._places.get(device_id)
        if place is None:
            return len(ids)
        doc = self._scene.doc
        collection, position = place
        nodes = len(doc.nodes)
        row = position if collection == "nodes" else nodes + position
        if not 0 <= row <= len(ids):
            return len(ids)
        if row:
            before = doc.nodes[row - 1] if row - 1 < nodes else doc.switches[row - 1 - nodes]
            if ids[row - 1] != before.id:
                return len(ids)
        return row

    def _edited_bounds(self, gone: list, added: list) -> QRectF | None:
        """What the boxes cover after these were removed and added: the same grown by the added ones, when
        each removed one lay inside without touching the edge (else None: measured again)."""
        bounds = self._box_bounds
        if bounds is None:
            return None
        for left, top, width, height in gone:
            if not (left > bounds.left() and top > bounds.top() and left + width < bounds.right()
                    and top + height < bounds.bottom()):
                return None
        for box in added:
            bounds = bounds.united(QRectF(*box))
        return bounds

    def _marks_as_groups(self) -> list:
        from .job_colors import BAND_PX, DOWN_FILL, DOWN_HATCH

        bands, down = self._marks
        if not bands and not down:
            return []  # (nothing to look up: the index of every row is not made for nothing)
        frames: dict = {}
        row_of = self._rows()
        for device_id, band in bands.items():
            row = row_of.get(device_id)
            if row is None:
                continue
            entry = frames.setdefault(band.color.rgba(), (band.color, [], []))
            x, y, w, h = self._rects[row].tolist()
            entry[1].append((x + 0.6, y + 0.6, w - 1.2, h - 1.2))
            entry[2].append((x, y, BAND_PX, h))
        groups = []
        for color, frame_rects, band_rects in frames.values():
            pen = QPen(color, 1.2)
            pen.setJoinStyle(Qt.MiterJoin)
            groups.append(_Group(pen, QBrush(Qt.NoBrush), np.array(frame_rects, float)))
            groups.append(_Group(QPen(Qt.NoPen), QBrush(color), np.array(band_rects, float)))
        rows = [row_of[d] for d in down if d in row_of]
        if rows:
            groups.append(_Group(QPen(Qt.NoPen), QBrush(DOWN_FILL), self._rects[rows]))
            groups.append(_Group(QPen(Qt.NoPen), QBrush(DOWN_HATCH, Qt.BDiagPattern), self._rects[rows]))
        return groups

    def marks_drawn(self) -> list:
        """What it paints over the boxes: (pen colour or 0: none, brush colour and style, rectangles) per group,
        sorted (tests compare it with a fresh window's)."""
        self._refresh()
        return sorted((g.pen.color().rgba() if g.pen.style() != Qt.NoPen else 0, g.brush.color().rgba(),
                       int(g.brush.style().value), sorted(map(tuple, np.round(g.rects, 2).tolist())))
                      for g in self._mark_groups)

    def selection_changed(self) -> None:
        if self.isVisible():  # its frames of what is selected: where they were and where they are
            chosen = self._scene.selectedItems()
            self._update_rects(self._outlined + [item.sceneBoundingRect() for item in chosen[:201]])

    def racks_changed(self) -> None:
        self._band_groups = None
        self._rebound()

    def _rebound(self) -> None:
        """What it draws: every box and rack outline (a pen's width around them)."""
        self.prepareGeometryChange()
        self._bounds = self._measure()
        self.update()

    def _measure(self) -> QRectF:
        """Every box and rack outline, a pen's width around them: the boxes' extent kept from an edit's
        (set_boxes), the racks' from the scene's kept edges."""
        bounds = self._box_bounds
        if bounds is None:
            bounds = QRectF()
            r = self._rects
            if len(r):
                left, top = float(r[:, 0].min()), float(r[:, 1].min())
                bounds = QRectF(left, top, float((r[:, 0] + r[:, 2]).max()) - left,
                                float((r[:, 1] + r[:, 3]).max()) - top)
            self._box_bounds = bounds
        rack_bounds = self._scene.rack_rects.bounds()
        if not rack_bounds.isNull():
            bounds = rack_bounds if bounds.isNull() else bounds.united(rack_bounds)
        return bounds.adjusted(-2, -2, 2, 2) if not bounds.isNull() else QRectF()

    # ---- what is under the mouse (Qt's hit tests skip the transparent racks) ----
    def items_at(self, pos) -> list:
        """The server or switch at `pos` and its rack (topmost first), as Qt would find them."""
        return self.items_in(QRectF(pos.x(), pos.y(), 0.0, 0.0))

    def items_in(self, rect: QRectF) -> list:
        """Servers and switches whose box meets `rect`, then the racks that do."""
        self._refresh()
        scene, out = self._scene, []
        r = self._rects
        if len(r):
            hit = np.flatnonzero((r[:, 0] <= rect.right()) & (r[:, 0] + r[:, 2] >= rect.left())
                                 & (r[:, 1] <= rect.bottom()) & (r[:, 1] + r[:, 3] >= rect.top()))
            out = [item for item in (scene.devices.get(self._ids[i]) for i in hit[::-1].tolist()) if item is not None]
        out += [item for item in scene.racks.values() if item.sceneBoundingRect().intersects(rect)
                or item.sceneBoundingRect().contains(rect.topLeft())]
        return out

    # ---- drawing ----
    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        return QPainterPath()  # never under the mouse: clicks, rubber bands and tooltips reach the items

    def paint(self, painter, option, widget=None) -> None:
        self._refresh(painting=True)
        # a box's cosmetic edge reaches a pixel past its rect: one just outside the part painted again
        # still colours that part's edge pixels (a strip left blank otherwise)
        pad = 2.0 / max(painter.worldTransform().m11(), 1e-9)
        exposed = option.exposedRect.adjusted(-pad, -pad, pad, pad)
        scene = self._scene
        painter.setPen(style.edge_pen(style.RACK_EDGE))  # the rack outlines (items.RackItem)
        painter.setBrush(Qt.NoBrush)
        racks = scene.rack_rects.meeting(exposed)
        if racks:
            painter.drawRects(racks)
        for group in (self._band_groups or []) + (self._device_groups or []) + (self._mark_groups or []):
            shown = group.visible(exposed)
            if shown:
                painter.setPen(group.pen)
                painter.setBrush(group.brush)
                painter.drawRects(shown)
        chosen = scene.selectedItems()
        self._outlined = []
        if chosen and len(chosen) <= 5000:  # what Qt outlines on a selected item, as a frame in the selection blue
            pen = QPen(style.SELECTION, 1.5)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.setBrush(Qt.NoBrush)
            self._outlined = [item.sceneBoundingRect() for item in chosen if item.data(ID_ROLE)]
            painter.drawRects(self._outlined)


def _row_in(ids: list, device_id: str) -> int | None:
    """A device's place in `ids` (a search in C: a few devices of an edit, not an index of every row)."""
    try:
        return ids.index(device_id)
    except ValueError:
        return None


def _key(element, kind: str) -> tuple:
    from .items import device_style_key

    return device_style_key(element, kind)


class _KeyElement:
    """The fields device_colors reads, from a style key."""

    def __init__(self, key: tuple):
        if key[0] == "node":
            self.scale_up = key[1]
        else:
            self.tier, self.fabric = key[1], key[2]
