"""The canvas's level of detail: what is legible at a zoom shows, the rest hides (hidden items cost
nothing): single cables or rack-to-rack aggregates, names, ports, the box layer far out (the scene's
`detail` part)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsItem

from . import style
from .box_layer import LOD_BOXES


class SceneDetail:
    """scene.detail: the zoom the scene was last shown at and what shows at it."""

    def __init__(self, scene):
        self._scene = scene
        self.scale = 1.0  # the view's zoom, for the level of detail of items added later
        self.single_cables = True  # each bundle drawn (False: the rack-to-rack aggregates)
        self.names_shown = True  # some name shows
        self.ports_shown = False  # some device's ports show
        self.far = False  # zoomed far out on a big design: its racks are transparent, the box layer draws them
        self.racks_in_front = False  # racks filled in front of bundled cables (_racks_in_front)
        self._items: list | None = None  # [rack names, devices' names and ports, band names] (apply_items)
        self._staged = None  # _gather's lists, gathered by a staged build as it makes the items (use_staged)

    def apply(self, scale: float | None, visible_fraction: float = 1.0, visible=None) -> None:
        """Show what is legible at this zoom; hide the rest (hidden items cost nothing).

        Individual cables are drawn only when few enough of them are in view (the bundles drawn
        times the share of the layout on screen): a 16k-GPU fabric shows
        rack-to-rack aggregates until one zooms into a pod. Each name shows from the zoom where
        its letters are MIN_TEXT_PX tall, each device's ports from where a port is MIN_PORT_PX
        wide; a name sits below its device's ports, so the two never overlap."""
        scene = self._scene
        cables = scene.cables
        if scale is not None:
            self.scale = scale
        in_view = scene.link_layer.drawn_count() * min(1.0, visible_fraction)  # (not the rows an edit emptied)
        links = True if scale is None else (scale >= style.LOD_LINKS and in_view <= style.MAX_DRAWN_BUNDLES
                                            and self.cable_spacing_px(scale, visible) >= style.MIN_CABLE_SPACING_PX)
        if links != self.single_cables or (not links and cables.aggregates_stale):
            self.single_cables = links
            if not links and cables.aggregates_stale:
                cables.rebuild_aggregates()
            scene.link_layer.show_individual = links
            scene.link_layer.update()
        self._racks_in_front(not links)
        self._apply_box_lod()
        self.apply_items(self.scale)

    def cable_spacing_px(self, scale: float, visible=None) -> float:
        """The mean distance between cables on screen at this zoom: an area over the length of the cables
        in it; `visible` (a scene rect: the view's) or the whole layout. A 16k-GPU fat-tree's layout: 0.68 px
        at 100 %, its cables a wall of colour; 64 GPUs: 3.2 px. A cable longer than the view's mean chord
        (pi x area / perimeter, Cauchy-Crofton) counts as that chord: a long cable crosses it once."""
        layer = self._scene.link_layer
        lines = layer.lines
        rect = visible if visible is not None else self._scene.layout_rect()
        area = rect.width() * rect.height()
        if visible is None:
            length = lines.total_length()
        else:
            rows = layer.visible_rows(rect, lines)
            d = lines.b[rows] - lines.a[rows]
            chord = np.pi * area / max(2 * (rect.width() + rect.height()), 1e-9)
            length = float(np.minimum(np.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2), chord).sum())
        return scale * area / length if length else float("inf")

    def _racks_in_front(self, front: bool) -> None:
        """Cables bundled rack to rack: the racks filled, in front of them (a bundle shows in the aisles,
        not as a wall over the servers); single cables: the racks see-through, each cable reaching its port."""
        if front == self.racks_in_front:
            return
        self.racks_in_front = front
        brush = style.brush(style.RACK_FILL) if front else Qt.NoBrush
        for item in self._scene.racks.values():
            item.setBrush(brush)

    def _apply_box_lod(self) -> None:
        """Zoomed far out, a big design's racks (their servers and switches with them) turn transparent and
        the box layer draws them: Qt skips a transparent item and its children when painting (60-100 ms a
        repaint saved at 131k GPUs). Qt's hit tests skip them too, so a click, a rubber band, a tooltip,
        a drop or the link tool find them through the layer's boxes (box_layer.items_at, items_in)."""
        scene = self._scene
        far = scene.box_layer is not None and self.scale < LOD_BOXES
        if far == self.far:
            return
        self.far = far
        opacity = 0.0 if far else 1.0
        for item in scene.racks.values():
            item.setOpacity(opacity)
        for item in scene.devices.values():
            if item.parentItem() is None:
                item.setOpacity(opacity)
        scene.box_layer.setVisible(far)
        # the rack-to-rack lines too, while far out (24k of them at 131k GPUs): redrawn when they change
        scene.link_layer.setCacheMode(QGraphicsItem.DeviceCoordinateCache if far else QGraphicsItem.NoCache)

    def apply_items(self, scale: float, made: bool = False) -> None:
        """Names and ports on or off by each item's own threshold; only the ones that change are touched
        (a 16k-GPU canvas has thousands)."""
        scene = self._scene
        if scene.build.running and not made:
            return  # each item got its names' and ports' visibility as it was made; all of them at the end
        if self._items is None:
            self._items = self._gather()
        racks, devices, bands = self._items
        if bands is None:
            bands = self._items[2] = _band_names(scene.domain_bands)
        racks.apply(scale)
        devices.apply(scale)
        bands.apply(scale)
        device_names = bool(devices.names.shown.any())
        self.names_shown = device_names or bool(racks.shown.any()) or bool(bands.shown.any())
        self.ports_shown = bool(devices.ports.shown.any())
        # the layer draws the devices' names and ports: hidden when none shows (its paint walks the racks in view)
        scene.detail_layer.setVisible(self.ports_shown or device_names)

    def _gather(self) -> list:
        """[rack names, devices' names and ports, domain bands' names]: from a staged build's lists, or read
        from the items (each one's visibility too)."""
        scene, staged, self._staged = self._scene, self._staged, None
        racks = scene.racks.values()
        if staged is not None and len(staged[2]) == len(scene.devices):  # names as made, every port hidden
            # (DeviceItem makes them so)
            rack_labels, rack_mins, labels, mins, groups, ports, ports_min, (rack_shown, shown) = staged
            devices = _DeviceNames(list(scene.devices), labels, mins, groups, ports, ports_min,
                                   np.array(shown, bool), np.zeros(len(ports), bool))
        else:
            rack_labels, rack_mins = [item.label for item in racks], [item.label_min_scale for item in racks]
            rack_shown = [label.isVisible() for label in rack_labels]
            items = scene.devices
            facts = list(zip(*map(_facts, items.values()))) or [()] * 5
            labels, ports = facts[0], facts[3]
            devices = _DeviceNames(list(items), *facts, np.array([l.isVisible() for l in labels], bool),
                                   np.array([p.isVisible() for p in ports], bool))
        # Alike items show their names together: every rack from the zoom where the smallest of them reads
        racks_min = max(rack_mins, default=0.0)
        return [_Shown(list(rack_labels), np.full(len(rack_labels), racks_min), np.array(rack_shown, bool)),
                devices, None]

    def use_staged(self, lists) -> None:
        """What _gather would read from the items, gathered by a staged build as it makes them (None:
        forget it): (rack names, thresholds, device names, thresholds, groups, ports, thresholds,
        (racks' names shown, devices' names shown)), the devices in the scene's order."""
        self._staged = lists

    def forget(self) -> None:
        """Items came or went: every threshold gathered again at the next apply."""
        self._items = None

    def bands_changed(self) -> None:
        """The NVLink domain bands were made again: their names gathered again at the next apply."""
        if self._items is not None:
            self._items[2] = None

    def changed(self, device_ids=None) -> None:
        """Items came, went or changed their names: thresholds again at the next zoom (and now). Given
        `device_ids`, only those devices' rows are read again from their items (reading every item's
        cost a server's delete ~0.1 s at 131k GPUs)."""
        if device_ids is None:
            self._items = None
        elif self._items is not None:
            self._items[1].update(device_ids, self._scene.devices)
        if self._scene.views():
            self.apply_items(self.scale)
        self._staged = None  # used by now, or stale


class _Shown:
    """Items shown from a zoom of their own: the items, that zoom, whether each shows now."""

    def __init__(self, items: list, minimum: np.ndarray, shown: np.ndarray):
        self.items, self.minimum, self.shown = items, np.asarray(minimum, float), shown

    def apply(self, scale: float) -> None:
        wanted = self.minimum <= scale
        items = self.items
        for i in np.flatnonzero(wanted != self.shown).tolist():
            items[i].setVisible(bool(wanted[i]))
        self.shown = wanted


class _DeviceNames:
    """Every device's name and ports, a row each: the name shows from the zoom of its group (alike devices
    show their names together: every server of one height, every 1U switch..., from the zoom where the
    smallest of them reads: not node0-node9 before node10), the ports from their own. An edit of a few
    devices moves their rows alone: a removed row takes the last row's place, an added one is appended."""

    def __init__(self, ids: list, labels, own_min, groups, ports, ports_min, label_shown, ports_shown):
        self.ids = ids
        self.row = {device_id: i for i, device_id in enumerate(ids)}
        self._code: dict = {}  # group -> its number in `group`
        self.group = np.array([self._code.setdefault(g, len(self._code)) for g in groups], np.int64)
        self.own_min = np.array(own_min, float)
        self.names = _Shown(list(labels), np.zeros(len(ids)), label_shown)
        self.ports = _Shown(list(ports), np.array(ports_min, float), ports_shown)
        self._group_min(range(len(self._code)))

    def _group_min(self, codes) -> None:
        """The names' threshold of these groups: the largest of their members' own."""
        group, own, minimum = self.group, self.own_min, self.names.minimum
        for code in codes:
            members = group == code
            if members.any():
                minimum[members] = own[members].max()

    def apply(self, scale: float) -> None:
        self.names.apply(scale)
        self.ports.apply(scale)

    def update(self, device_ids, items: dict) -> None:
        """The rows of these devices read again from their items (none for a device gone)."""
        touched = set()
        for device_id in device_ids:
            row = self.row.get(device_id)
            if row is not None:
                touched.add(int(self.group[row]))
                self._remove(row)
        added = [(device_id, _facts(items[device_id])) for device_id in device_ids if device_id in items]
        if added:
            for device_id, (label, _own, group, ports, _ports_min) in added:
                touched.add(self._code.setdefault(group, len(self._code)))
                self.row[device_id] = len(self.ids)
                self.ids.append(device_id)
                self.names.items.append(label)
                self.ports.items.append(ports)
            new = [f for _, f in added]
            self.group = np.concatenate([self.group, [self._code[f[2]] for f in new]])
            self.own_min = np.concatenate([self.own_min, [f[1] for f in new]])
            self.names.minimum = np.concatenate([self.names.minimum, np.zeros(len(new))])
            self.names.shown = np.concatenate([self.names.shown, np.array([f[0].isVisible() for f in new], bool)])
            self.ports.minimum = np.concatenate([self.ports.minimum, [f[4] for f in new]])
            self.ports.shown = np.concatenate([self.ports.shown, np.array([f[3].isVisible() for f in new], bool)])
        self._group_min(touched)

    def _remove(self, row: int) -> None:
        """The last row takes this row's place."""
        last = len(self.ids) - 1
        moved = self.ids[last]
        del self.row[self.ids[row]]
        if row != last:
            self.row[moved] = row
        for values in (self.ids, self.names.items, self.ports.items):
            values[row] = values[last]
            values.pop()
        for owner, name in ((self, "group"), (self, "own_min"), (self.names, "minimum"), (self.names, "shown"),
                            (self.ports, "minimum"), (self.ports, "shown")):
            values = getattr(owner, name)
            values[row] = values[last]
            setattr(owner, name, values[:last])


def _band_names(bands) -> _Shown:
    """The names of the NVLink domain bands whose name fits."""
    fitting = [band for band in bands if band.label_fits]
    return _Shown([band.label for band in fitting], np.array([band.label_min_scale for band in fitting], float),
                  np.array([band.label.isVisible() for band in fitting], bool))


def _facts(item) -> tuple:
    """(name, its zoom threshold, group of alike items, ports, their threshold) of a device's item."""
    return item.label, item.label_min_scale, (item.kind, round(item.rect().height(), 2)), item.ports, item.ports_min_scale
