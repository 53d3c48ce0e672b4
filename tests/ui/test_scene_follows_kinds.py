"""The canvas mirrors an edit kind by kind: the document says which racks, servers and switches, cables
and layout changed (each in its own signal, containers first), then the whole edit; the canvas's
items follow, and undo brings them back."""
from tests.ui.test_editor import load, small_design, window  # noqa: F401 - window: the fixture


def test_a_pasted_rack_comes_as_racks_then_devices_then_cables_and_is_drawn(window, tmp_path):
    doc = small_design()
    for s in doc.switches:
        s.rack, s.slot = "r0", 20 + doc.switches.index(s) * 2
    load(window, doc, tmp_path)
    qdoc, scene = window.qdoc, window.scene
    heard = []
    for name in ("racksChanged", "devicesChanged", "linksChanged", "layoutChanged", "changed"):
        getattr(qdoc, name).connect(lambda changes, name=name: heard.append((name, {c.collection for c in changes})))
    scene.select_ids(["r0"])
    new_ids = window.edits.paste(window.edits.copy())
    assert heard == [("racksChanged", {"racks"}), ("devicesChanged", {"nodes", "switches"}),
                     ("linksChanged", {"links"}), ("changed", {"racks", "nodes", "switches", "links"})]
    d = qdoc.doc
    assert set(scene.racks) == {r.id for r in d.racks}
    assert set(scene.devices) == {e.id for e in list(d.nodes) + list(d.switches)}
    new_rack = next(i for i in new_ids if d.find("racks", i) is not None)
    assert all(scene.devices[n.id].parentItem() is scene.racks[new_rack] for n in d.nodes if n.rack == new_rack)
    drawn = scene.link_layer.index
    assert all(scene.cables.bundle_key(link) in drawn for link in d.links)
    heard.clear()
    qdoc.undo_stack.undo()
    assert [name for name, _ in heard] == ["racksChanged", "devicesChanged", "linksChanged", "changed"]
    assert set(scene.racks) == {r.id for r in d.racks} and set(scene.devices) == {
        e.id for e in list(d.nodes) + list(d.switches)}


def test_a_change_of_the_job_alone_reaches_no_canvas_handler(window, tmp_path):
    load(window, small_design(), tmp_path)
    heard = []
    for name in ("racksChanged", "devicesChanged", "linksChanged", "layoutChanged"):
        getattr(window.qdoc, name).connect(lambda changes, name=name: heard.append(name))
    doc = window.qdoc.doc
    doc.set_job(doc.spec.workload, doc.spec.parallelism)
    assert heard == []


def test_the_legend_fits_an_opened_designs_cables_before_the_canvas_paints(empty_window):
    from pathlib import Path

    from designer.ui.canvas.legend import MARGIN_PX, ROW_PX

    window = empty_window
    legend = window.view.legend
    example = Path(__file__).resolve().parents[2] / "resources" / "examples" / "h100-64gpu-infiniband.yaml"
    window.open_file(str(example))  # no event processed: the canvas has not painted the design yet
    rows = legend.rows()
    assert any(what == "kind" for what, _text in rows)  # its cables' kinds listed
    assert legend.height() == int(len(rows) * ROW_PX + 2 * MARGIN_PX)  # and room for each of them
    viewport = window.view.viewport().geometry()
    assert legend.y() == viewport.bottom() - legend.height() - MARGIN_PX  # in its place, above the corner
