"""The canvas's level of detail: what is legible at a zoom shows, the rest hides (hidden items cost
nothing): single cables or rack-to-rack aggregates, names, ports, the box layer far out (the scene's
`detail` part)."""
from __future__ import annotations

from collections import defaultdict

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
        self._items = None  # (labels, their minimum zoom, shown, ports, ...) for _apply_items
        self._staged = None  # _source's lists, gathered by a staged build as it makes the items (use_staged)
        self._devices: dict | None = None  # device id -> (name, threshold, group, ports, threshold) (_source)

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
        lod = self._items
        if lod is None:
            source, self._staged = self._staged or self._source(), None
            rack_labels, rack_mins, device_labels, device_mins, groups, ports, ports_min = source[:7]
            bands = [band for band in scene.domain_bands if band.label_fits]
            # Alike items show their names together: every rack, every server of one height, every
            # 1U switch... from the zoom where the smallest of them reads (not node0-node9 before node10).
            group_min: dict = defaultdict(float)
            for group, minimum in zip(groups, device_mins):
                if minimum > group_min[group]:
                    group_min[group] = minimum
            racks_min = max(rack_mins, default=0.0)
            labels = rack_labels + device_labels + [band.label for band in bands]
            label_min = ([racks_min] * len(rack_labels) + [group_min[g] for g in groups]
                         + [band.label_min_scale for band in bands])
            if len(source) > 7:  # a staged build's: names as made, every port hidden (DeviceItem makes them so)
                label_shown = np.array(source[7][0] + source[7][1] + [band.label.isVisible() for band in bands], bool)
                ports_shown = np.zeros(len(ports), bool)
            else:
                label_shown = np.array([l.isVisible() for l in labels], bool)
                ports_shown = np.array([p.isVisible() for p in ports], bool)
            names = slice(len(rack_labels), len(rack_labels) + len(device_labels))  # the devices' own
            lod = self._items = (labels, np.array(label_min, float), label_shown,
                                 ports, np.array(ports_min, float), ports_shown, names)
        labels, label_min, label_shown, ports, ports_min, ports_shown, names = lod
        for items, minimum, shown in ((labels, label_min, label_shown), (ports, ports_min, ports_shown)):
            wanted = minimum <= scale
            for i in np.flatnonzero(wanted != shown).tolist():
                items[i].setVisible(bool(wanted[i]))
            shown[:] = wanted
        self.names_shown = bool(label_shown.any())
        self.ports_shown = bool(ports_shown.any())
        # the layer draws the devices' names and ports: hidden when none shows (its paint walks the racks in view)
        scene.detail_layer.setVisible(self.ports_shown or bool(label_shown[names].any()))

    def _source(self) -> tuple:
        """(rack names, their zoom thresholds, device names, theirs, each device's group, ports, theirs)."""
        racks = self._scene.racks.values()
        if self._devices is None:
            self._devices = {device_id: _facts(item) for device_id, item in self._scene.devices.items()}
        facts = list(zip(*self._devices.values())) or [()] * 5
        return ([item.label for item in racks], [item.label_min_scale for item in racks], *map(list, facts))

    def use_staged(self, lists) -> None:
        """What _source would gather, gathered by a staged build as it makes the items (None: forget it):
        (rack names, thresholds, device names, thresholds, groups, ports, thresholds,
        (racks' names shown, devices' names shown))."""
        self._staged = lists

    def forget(self, devices: bool = False) -> None:
        """Items came or went: the thresholds are gathered again at the next apply (`devices`: every
        device's read again from its item too)."""
        self._items = None
        if devices:
            self._devices = None

    def changed(self, device_ids=None) -> None:
        """Items came, went or changed their names: thresholds again at the next zoom (and now). Given
        `device_ids`, only those devices' names and ports are read again from their items (reading every
        item's cost a server's delete ~0.1 s at 131k GPUs)."""
        self._items = None
        known, devices = self._devices, self._scene.devices
        if device_ids is None:
            self._devices = None
        elif known is not None:
            for device_id in device_ids:
                item = devices.get(device_id)
                if item is None:
                    known.pop(device_id, None)
                else:
                    known[device_id] = _facts(item)
        if self._scene.views():
            self.apply_items(self.scale)
        self._staged = None  # used by now, or stale


def _facts(item) -> tuple:
    """(name, its zoom threshold, group of alike items, ports, their threshold) of a device's item."""
    return item.label, item.label_min_scale, (item.kind, round(item.rect().height(), 2)), item.ports, item.ports_min_scale
