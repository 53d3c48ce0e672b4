"""The Overview shows the link heat as the canvas does: View > Link Heat recolours its rack-to-rack
lines by their busiest cable, and turning it off gives back the cable kinds' colours."""
import colorsys

import numpy as np

from designer.ui.canvas import style
from tests.conftest import EXAMPLES
from tests.ui.test_editor import window  # noqa: F401  (the fixture)


def painted(widget) -> np.ndarray:
    """The widget's pixels as a user sees them (its grab), RGB."""
    image = widget.grab().toImage()
    image = image.convertToFormat(image.Format.Format_RGB888)
    width, height = image.width(), image.height()
    data = np.frombuffer(image.constBits(), np.uint8, image.bytesPerLine() * height)
    return data.reshape(height, image.bytesPerLine())[:, :width * 3].reshape(height, width, 3).astype(int)


def hue(rgb) -> float:
    return colorsys.rgb_to_hsv(*(np.asarray(rgb, float) / 255.0))[0]


def open_dp_bound(window, tmp_path) -> None:
    """The 64-GPU example on 25 Gb/s rails, Link Heat off: its server-to-leaf cables are busy."""
    path = tmp_path / "dp-bound.yaml"
    path.write_text((EXAMPLES / "h100-64gpu-infiniband.yaml").read_text()
                    .replace('"bandwidth_gbps": 400', '"bandwidth_gbps": 25'))
    window.open_file(str(path))
    if window.act_heat.isChecked():
        window.act_heat.trigger()
    assert window.settle() and window.result is not None


def toggle_heat(window) -> None:
    """View > Link Heat, the canvas painted at once (as on a screen), then the window settled."""
    window.act_heat.trigger()
    window.view.viewport().repaint()
    assert window.settle()


def heat_on_recolours_the_overview(window) -> None:
    """View > Link Heat on: the Overview's lines take the heat colour of their busiest cable (as
    on the canvas); off: the cable kinds' colours again; on again: the heat again."""
    toggle_heat(window)  # on
    layer = window.scene.link_layer
    hottest = int(layer.heat.max())
    assert hottest >= 3  # the rails are busy: yellow to amber on the canvas, not the idle green
    heated = painted(window.minimap)
    toggle_heat(window)  # off
    assert layer.heat is None
    plain = painted(window.minimap)
    changed = np.abs(heated - plain).max(axis=2) > 24
    assert changed.sum() > 30, "the Overview's lines kept one colour with Link Heat on and off"
    # the changed pixels are the lines: in the heat colour of their busiest cable (as on the canvas),
    # and in another colour (their kind's) without the heat
    line = heated[changed].mean(axis=0)
    assert abs(hue(line) - style.heat_color(hottest / 10.0).hueF()) < 0.06
    assert abs(hue(plain[changed].mean(axis=0)) - hue(line)) > 0.1
    toggle_heat(window)  # on again
    assert (np.abs(painted(window.minimap) - heated).max(axis=2)[changed] > 24).sum() < 5


def test_link_heat_recolours_the_overview_as_the_canvas(window, tmp_path):
    open_dp_bound(window, tmp_path)
    heat_on_recolours_the_overview(window)


def test_link_heat_recolours_the_overview_of_a_big_design_zoomed_far_out(window, tmp_path, monkeypatch):
    """A big design zoomed far out: the canvas keeps its cables as a cached picture (box_layer.py,
    scene_detail.py); the Overview still draws the heat, not a copy of an older picture."""
    import designer.ui.canvas.scene as scene_module
    import designer.ui.canvas.scene_plan as plan_module

    monkeypatch.setattr(scene_module, "STAGED_ITEMS", 10)  # built as a big design is
    monkeypatch.setattr(plan_module, "STAGED_ITEMS", 10)
    open_dp_bound(window, tmp_path)
    window.view.zoom_to(0.1)
    window.resize(1300, 860)  # the Overview drawn anew, far out (its size changed)
    assert window.settle() and window.scene.detail.far
    heat_on_recolours_the_overview(window)
