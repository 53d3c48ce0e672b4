"""The Overview of a big design keeps its picture and redraws only where an edit changed a
rack-to-rack line: after Edit > Delete and Edit > Undo of cables, with and without link heat, it
shows what a picture drawn from nothing shows."""
import numpy as np
import pytest

import designer.ui.canvas.minimap as minimap_module
from tests.ui.test_editor import window  # noqa: F401  (the fixture)
from tests.ui.test_live_edits import A100, open_example


# An antialiased line drawn inside a clip lands a level or two of 255 off the same line drawn whole:
# no eye sees it; a line kept that should have gone, or its colour, is tens of levels off
SMOOTHING_LEVELS = 4


def pixels(image) -> np.ndarray:
    data = np.frombuffer(image.constBits(), np.uint8, image.bytesPerLine() * image.height())
    return data.reshape(image.height(), image.bytesPerLine()).copy()


def kept_and_fresh(window):
    """The Overview's picture after the edit's redraw, and the picture drawn from nothing: the one it
    draws after the user resizes it and sizes it back (a new size is a new picture)."""
    minimap = window.minimap
    minimap.render_overview()  # (the debounced redraw, at once)
    kept = pixels(minimap.image)
    size = minimap.size()
    for width in (size.width() + 7, size.width()):
        minimap.resize(width, size.height())
        minimap.render_overview()
    assert minimap.size() == size
    return kept, pixels(minimap.image)


def switch_cables(window, between_racks: int):
    """Cables between switches of two different racks: `between_racks` of one such pair of racks."""
    doc = window.qdoc.doc
    rack_of = {s.id: s.rack for s in doc.switches}
    pairs = {}
    for link in doc.links:
        a, b = link.a.split(":")[0], link.b.split(":")[0]
        if a in rack_of and b in rack_of and rack_of[a] != rack_of[b]:
            pairs.setdefault(frozenset((rack_of[a], rack_of[b])), []).append(link.id)
    return next(ids for ids in pairs.values() if len(ids) >= between_racks)[:between_racks]


def delete_and_undo(window, ids):
    window.scene.select_ids(ids)
    window.actions["delete"].trigger()
    assert window.settle()
    yield "delete"
    window.actions["undo"].trigger()
    assert window.settle()
    yield "undo"


@pytest.mark.parametrize("heat", [True, False])
@pytest.mark.parametrize("cables", [1, "all of two racks"])
def test_the_overview_after_a_delete_and_undo_is_the_picture_drawn_afresh(window, monkeypatch, heat, cables):
    monkeypatch.setattr(minimap_module, "OUTLINE_ITEMS", 100)  # drawn as a 131k-GPU design is
    open_example(window, A100)
    if window.act_heat.isChecked() != heat:
        window.act_heat.trigger()
        assert window.settle()
    minimap = window.minimap
    minimap.render_overview()
    if cables == 1:
        ids = switch_cables(window, 2)[:1]  # one cable of a bundle of several: its line changes
    else:
        rack_of = {s.id: s.rack for s in window.qdoc.doc.switches}
        first = switch_cables(window, 1)[0]
        link = window.qdoc.doc.link_by_id(first) if hasattr(window.qdoc.doc, "link_by_id") else next(
            l for l in window.qdoc.doc.links if l.id == first)
        racks = {rack_of[link.a.split(":")[0]], rack_of[link.b.split(":")[0]]}
        ids = [l.id for l in window.qdoc.doc.links  # every cable between the two racks: their line goes
               if {rack_of.get(l.a.split(":")[0]), rack_of.get(l.b.split(":")[0])} == racks]
    before = pixels(minimap.image)
    for step in delete_and_undo(window, ids):
        kept, fresh = kept_and_fresh(window)
        off = np.abs(kept.astype(int) - fresh.astype(int))
        assert off.max() <= SMOOTHING_LEVELS, f"the Overview after {step} differs from its picture drawn afresh"
        if step == "delete" and cables != 1:  # (one cable of several: its line may look the same)
            assert (fresh != before).any(), "the delete changed nothing on the Overview: the test tests nothing"
