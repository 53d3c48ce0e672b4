"""The cable lines' box kept edit by edit (canvas/line_extent.py) is, after any run of lines emptied,
filled again, moved and added, the box a measure of every line drawn gives."""
import numpy as np

from designer.ui.canvas import line_extent
from designer.ui.canvas.line_extent import LineExtent


def _measured(a, b):
    drawn = ~np.isnan(a[:, 0])
    if not drawn.any():
        return None
    x = np.concatenate([a[drawn, 0], b[drawn, 0]])
    y = np.concatenate([a[drawn, 1], b[drawn, 1]])
    return (x.min(), y.min(), x.max(), y.max())


def test_the_box_is_the_measure_of_the_lines_drawn_after_any_edits(monkeypatch):
    monkeypatch.setattr(line_extent, "EDGE_ROWS", 16)  # few rows kept per edge: runs of deletes use them up
    rng = np.random.default_rng(7)
    n = 600
    # lines on a grid, many ending on the same coordinates (ports in a column share their x)
    a = rng.integers(0, 4 * n, (n, 2)).astype(float)
    b = rng.integers(0, 4 * n, (n, 2)).astype(float)
    extent = LineExtent(a, b)
    assert extent.box(a, b) == _measured(a, b)
    for step in range(4000):
        drawn = np.flatnonzero(~np.isnan(a[:, 0]))
        what = rng.random()
        if what < 0.5 and len(drawn):  # a bundle's last cable deleted: its row emptied, its ends NaN
            row = int(rng.choice(drawn))
            extent.gone(row, a, b)
            a[row] = b[row] = np.nan
        elif what < 0.7:  # an emptied row filled again (an undo), maybe elsewhere
            empty = np.flatnonzero(np.isnan(a[:, 0]))
            if len(empty):
                row = int(rng.choice(empty))
                a[row], b[row] = rng.integers(-5, 4 * n + 5, 2), rng.integers(-5, 4 * n + 5, 2)
                extent.drawn(row, a, b)
        elif what < 0.8 and len(drawn):  # a device dragged: its lines move, maybe off an edge
            for row in rng.choice(drawn, min(len(drawn), 3), replace=False).tolist():
                extent.gone(row, a, b)
                a[row] = rng.integers(0, 4 * n, 2)
                extent.drawn(row, a, b)
        elif what < 0.85 and len(drawn):  # the cables furthest left deleted, one after the other
            row = int(drawn[np.argmin(np.fmin(a[drawn, 0], b[drawn, 0]))])
            extent.gone(row, a, b)
            a[row] = b[row] = np.nan
        elif what < 0.9:  # a cable between two devices with none: a row appended
            a = np.concatenate([a, rng.integers(-5, 4 * n + 5, (1, 2)).astype(float)])
            b = np.concatenate([b, rng.integers(-5, 4 * n + 5, (1, 2)).astype(float)])
            extent.drawn(len(a) - 1, a, b)
        assert extent.box(a, b) == _measured(a, b), step


def test_no_line_drawn_is_no_box():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = a + 1
    extent = LineExtent(a, b)
    for row in range(2):
        extent.gone(row, a, b)
        a[row] = b[row] = np.nan
    assert extent.box(a, b) is None
    assert LineExtent(np.zeros((0, 2)), np.zeros((0, 2))).box(np.zeros((0, 2)), np.zeros((0, 2))) is None
