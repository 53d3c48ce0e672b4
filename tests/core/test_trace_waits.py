"""`designer trace`: a wait says whom it waited for, as the desktop timeline does.

The timeline shows "waited for stage 1 gpu16" on a wait and, on a click, the bar it waited on;
the trace carries the same in the wait slice's args and as a flow arrow from that bar.
"""
import json
import re

import pytest

from tests.conftest import EXAMPLES, run_cli

CLUSTER = EXAMPLES / "h100-64gpu-infiniband.yaml"
PIPELINE = ["--set", "parallelism.pipeline_model_parallel_size=4"]


@pytest.fixture(scope="module")
def trace_and_events(tmp_path_factory):
    out = tmp_path_factory.mktemp("trace") / "trace.json"
    code, _, err = run_cli("trace", CLUSTER, *PIPELINE, "-o", out)
    assert code == 0, err
    code, events, err = run_cli("evaluate", CLUSTER, *PIPELINE, "--events", "--json")
    assert code == 0, err
    return json.loads(out.read_text())["traceEvents"], json.loads(events)["events"]


def test_every_wait_carries_whom_it_waited_for(trace_and_events):
    trace, events = trace_and_events
    expected = {(e["device"], e["label"], round(e["start_s"] * 1e6, 3)): e["waited_for"]
                for e in events if "waited_for" in e}
    assert len(expected) > 10  # a 4-stage pipeline waits
    got = {}
    for e in trace:
        if e["ph"] == "X" and "waited_for" in e["args"]:
            got[(e["args"]["device"], e["name"], round(e["ts"], 3))] = e["args"]["waited_for"]
            assert re.fullmatch(r"stage \d+ gpu%d" % e["args"]["waited_for"], e["args"]["waited_for_name"])
            assert re.fullmatch(r"node\d+ gpu\d", e["args"]["waited_for_at"])
    assert got == expected


def test_an_arrow_runs_from_the_bar_waited_on_to_the_wait(trace_and_events):
    trace, _ = trace_and_events
    slices: dict = {}
    for e in trace:
        if e["ph"] == "X":
            slices.setdefault((e["pid"], e["tid"]), []).append(e)
    gpu_names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace if e.get("name") == "thread_name"}
    process_names = {e["pid"]: e["args"]["name"] for e in trace if e.get("name") == "process_name"}

    def enclosing(flow):
        return next(s for s in slices[(flow["pid"], flow["tid"])] if s["ts"] <= flow["ts"] <= s["ts"] + s["dur"])

    # the "waited for" arrows (the pipeline's send -> receive arrows are cat "pp")
    starts = {e["id"]: e for e in trace if e["ph"] == "s" and e["cat"] == "wait"}
    finishes = [e for e in trace if e["ph"] == "f" and e["cat"] == "wait"]
    assert finishes and len(finishes) == len(starts)
    for f in finishes:
        s = starts[f["id"]]
        wait, source = enclosing(f), enclosing(s)
        assert wait["cat"] == "wait" and f["bp"] == "e"
        assert source["cat"] != "wait"
        # the arrow starts on the GPU the wait names, at work that had ended by the wait's end
        node, gpu = wait["args"]["waited_for_at"].split()
        assert process_names[s["pid"]] == node and gpu_names[(s["pid"], s["tid"])].startswith(gpu + " ")
        assert source["ts"] + source["dur"] <= wait["ts"] + wait["dur"] + 1e-3
