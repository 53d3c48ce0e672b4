"""View > Heat by Busiest Phase: the link heat's second view (canvas/heat.py), checked or not;
remembered. Unchecked, cables are coloured by their share of the step."""
from __future__ import annotations

from PySide6.QtGui import QAction

from . import heat as link_heat

SETTING = "view/heat_by_phase"


def install_heat_view(window) -> QAction:
    action = QAction("Heat by Busiest &Phase", window)
    action.setCheckable(True)
    action.setObjectName("heat_by_phase")
    action.setStatusTip("Link heat: colour a cable by its busiest phase (traffic kind) instead of its share "
                        "of the step")
    action.setToolTip(action.statusTip())
    settings = getattr(window, "settings", None)
    remembered = bool(settings.value(SETTING, False, type=bool)) if settings is not None else False
    action.setChecked(remembered)
    window.scene.set_heat_mode(link_heat.PHASE if remembered else link_heat.STEP)

    def toggled(on: bool) -> None:
        window.scene.set_heat_mode(link_heat.PHASE if on else link_heat.STEP)
        if settings is not None:
            settings.setValue(SETTING, bool(on))

    action.toggled.connect(toggled)
    _after_link_heat(window, action)
    window.act_heat_phase = action
    return action


def _after_link_heat(window, action: QAction) -> None:
    """In the View menu, right after View > Link Heat."""
    heat = getattr(window, "act_heat", None)
    for top in window.menuBar().actions():
        menu = top.menu()
        if menu is not None and top.text().replace("&", "") == "View":
            actions = menu.actions()
            after = actions.index(heat) + 1 if heat in actions else len(actions)
            if after < len(actions):
                menu.insertAction(actions[after], action)
            else:
                menu.addAction(action)
            return
