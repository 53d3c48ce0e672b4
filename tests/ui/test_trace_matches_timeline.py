"""The trace's waits say what the desktop timeline says of them: whom each waited for (the
text on hover) and the bar it waited on (what a click outlines)."""
import pytest


from tests.conftest import EXAMPLES  # noqa: E402


@pytest.fixture(scope="module")
def evaluated():
    from designer.core.engine.evaluate import Engine
    from designer.core.io import load_document
    from designer.core.io.overrides import apply_overrides

    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    apply_overrides(doc, ["parallelism.pipeline_model_parallel_size=4"])
    engine = Engine()
    result = engine.evaluate(doc)
    result.events
    return result, engine.built_fabric


def test_each_wait_in_the_trace_matches_the_timeline(qtbot, evaluated):
    from designer.core.export.trace import trace_events
    from designer.ui.panels import TimelinePanel

    result, fabric = evaluated
    timeline = TimelinePanel()
    qtbot.addWidget(timeline)
    timeline.resize(1400, 500)
    timeline.show()
    timeline.show_result(result)
    trace = trace_events(result, fabric.gpu_node, fabric.node_ids, fabric.gpu_local)["traceEvents"]
    slices = [e for e in trace if e["ph"] == "X"]  # one per result event, in order
    assert len(slices) == len(result.events)
    flows = {(e["ph"], e["id"]): e for e in trace if e["ph"] in "sf"}
    by_place: dict = {}
    for index, s in enumerate(slices):
        by_place.setdefault((s["pid"], s["tid"]), []).append((s["ts"], s["ts"] + s["dur"], index))

    def slice_of(flow):
        return next(i for a, b, i in by_place[(flow["pid"], flow["tid"])] if a <= flow["ts"] <= b)

    waits = [i for i, e in enumerate(result.events) if e.waited_for is not None]
    assert len(waits) > 10
    arrows = {slice_of(flows[("f", fid)]): slice_of(flows[("s", fid)]) for ph, fid in flows if ph == "f"}
    for i in waits:
        timeline.select_event(i)
        args = slices[i]["args"]
        assert f"waited for {args['waited_for_name']} (click to show)" in timeline.event_text(i)
        assert arrows.get(i) == timeline.related_event()
