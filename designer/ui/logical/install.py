"""The logical fabric view in the main window: a dock beside the rack canvas, opened with
View > Logical Fabric View (Ctrl+L), sharing the canvas's selection and its undo commands.

Selection: a click in the view selects the same elements on the rack canvas (the selection the
Inspector shows); a selection made on the canvas is highlighted here. Delete here deletes the
shared selection with the canvas's own command, one undo step. A double click shows the element
on the canvas.
"""
from __future__ import annotations

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDockWidget

from .view import LogicalView

DOCK_TITLE = "Logical Fabric"
SHARE_OF_CENTRE = 0.72  # the dock's width, opened, as a share of the room beside the side panels


def logical_view_dock(window) -> tuple[LogicalView, QDockWidget]:
    """The view and its dock (closed); its toggle action is View > Logical Fabric View (menus.py)."""
    view = LogicalView(window.qdoc)
    dock = QDockWidget(DOCK_TITLE, window)
    dock.setObjectName(DOCK_TITLE)
    dock.setWidget(view)
    dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                     | QDockWidget.DockWidgetClosable)
    # beside the canvas, right of the Parts/Job column; closed until asked for
    window.addDockWidget(Qt.LeftDockWidgetArea, dock, Qt.Horizontal)
    dock.hide()
    action = dock.toggleViewAction()
    action.setText("&Logical Fabric View")
    action.setShortcut(QKeySequence("Ctrl+L"))
    action.setStatusTip("The design as a wiring diagram: tiers, pods, rails, bundles and oversubscription")

    def select(ids: list) -> None:
        window.scene.select_ids(ids)
        view.show_selection(window.scene.selected_ids())  # also when the canvas heard no change

    view.selectIds.connect(select)
    view.deleteRequested.connect(window.edits.delete_selection)

    def show_on_canvas(element_id: str) -> None:
        item = window.scene.item_for(element_id)
        if item is not None:
            window.view.center_on_item(item)

    view.showRequested.connect(show_on_canvas)
    scene = window.scene

    def follow_canvas() -> None:
        if shiboken6.isValid(scene) and shiboken6.isValid(view):  # not while the window is torn down
            view.show_selection(scene.selected_ids())

    scene.selectionChanged.connect(follow_canvas)

    def follow_heat() -> None:  # the canvas's link heat, in the same view (share of the step or phase)
        if shiboken6.isValid(scene) and shiboken6.isValid(view):
            view.show_heat(scene.heat.values, scene.heat.mode, scene.heat.result)

    scene.heatChanged.connect(follow_heat)
    follow_heat()
    action.triggered.connect(lambda shown: shown and _size_once(window, dock))
    return view, dock


def _size_once(window, dock) -> None:
    """The first time it opens (docked), the view takes most of the room beside the side panels."""
    if getattr(dock, "_sized", False) or dock.isFloating():
        return
    dock._sized = True
    room = window.centralWidget().width()  # measured before the dock takes its share
    window.resizeDocks([dock], [int(room * SHARE_OF_CENTRE)], Qt.Horizontal)
