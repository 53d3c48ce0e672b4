"""The mouse on the Timeline: hovering a bar says what it is (on the line under the chart and in a
tooltip), a click selects it (a wait: also whom it waited for), and with one row per stage a double
click opens the stage under it into its lanes or closes it again."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPointF, Qt

HOVER_PIXELS = 4.0  # how near (in pixels) the cursor must be to a bar that it misses


class TimelineMouse(QObject):
    """Listens to the panel's plot and asks the panel (a TimelinePanel) to select or open."""

    def __init__(self, panel):
        super().__init__(panel)
        self.panel = panel
        panel.graphics.viewport().installEventFilter(self)
        scene = panel.graphics.scene()
        scene.sigMouseMoved.connect(self.moved)
        scene.sigMouseClicked.connect(self.clicked)

    def view_point(self, scene_pos) -> QPointF | None:
        vb = self.panel.vb
        if self.panel.result is None or not vb.sceneBoundingRect().contains(scene_pos):
            return None
        return vb.mapSceneToView(scene_pos)

    def bar_at(self, scene_pos) -> int | None:
        """The event under (or within HOVER_PIXELS of) a point of the plot's scene."""
        point = self.view_point(scene_pos)
        row = self.panel.row_at(point.y()) if point is not None else None
        if row is None:
            return None
        return self.panel.event_at(point.x(), row, HOVER_PIXELS * self.panel.vb.viewPixelSize()[0])

    def moved(self, scene_pos) -> None:
        self.panel.describe(self.bar_at(scene_pos))

    def clicked(self, ev) -> None:
        if ev.button() != Qt.LeftButton or self.view_point(ev.scenePos()) is None:
            return
        index = self.bar_at(ev.scenePos())
        self.panel.select_event(index)
        if index is not None:
            self.panel.describe(index)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        panel = self.panel
        if event.type() == QEvent.MouseButtonDblClick and event.button() == Qt.LeftButton and panel.lanes_merged:
            # one row per stage: a double click opens the stage under it into its lanes (or closes it)
            point = self.view_point(panel.graphics.mapToScene(event.position().toPoint()))
            row = panel.row_at(point.y()) if point is not None else None
            if row is not None and panel.toggle_stage(panel.rows[row][0]):
                return True
        return super().eventFilter(watched, event)
