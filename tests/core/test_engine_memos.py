"""The engine's memos between plans (a search's speed) never change an answer.

Layer phases are kept per Hardware and reused by a later plan only when every collective they
asked for is answered as before; engine constants are kept per calibration as written (1 and 1.0
and True are different calibrations). A memo that reused an answer after the groups changed would
show here as a difference from a fresh engine.
"""
from __future__ import annotations

from designer.core.engine.constants import engine_constants
from designer.core.engine.evaluate import Engine
from designer.core.io import load_document
from designer.core.io.overrides import apply_overrides
from tests.conftest import EXAMPLES
from tests.core.test_engine_link_edit import differences

EXAMPLE = EXAMPLES / "h100-64gpu-infiniband.yaml"
CP_ACROSS_SERVERS = ["parallelism.tensor_model_parallel_size=8", "parallelism.context_parallel_size=2",
                     "parallelism.pipeline_model_parallel_size=1"]


def _fresh(doc):
    return Engine().evaluate(doc)


def test_a_plan_that_differs_only_in_dp_settings_reuses_phases_and_answers_as_a_fresh_engine():
    doc = load_document(EXAMPLE)
    apply_overrides(doc, CP_ACROSS_SERVERS)
    engine = Engine()
    engine.evaluate(doc)
    apply_overrides(doc, ["parallelism.overlap_grad_reduce=false"])  # the layer phases do not read it
    again = engine.evaluate(doc)
    assert differences(again, _fresh(doc)) == []


def test_a_changed_group_answer_costs_the_layers_again():
    doc = load_document(EXAMPLE)
    apply_overrides(doc, CP_ACROSS_SERVERS)
    engine = Engine()
    before = engine.evaluate(doc)
    # every server's NIC cables at a quarter: the CP groups (one rank per server) answer slower
    servers = {n.id for n in doc.nodes}
    for link in [l for l in doc.links if l.a.split(":")[0] in servers or l.b.split(":")[0] in servers]:
        doc.update(link.id, bandwidth_gbps=link.bandwidth_gbps / 4)
    after = engine.evaluate(doc)
    fresh = _fresh(doc)
    assert differences(after, fresh) == []
    assert after.step_time_s > before.step_time_s  # the memo did not hand back the old phases


def test_engine_constants_are_kept_per_calibration_as_written():
    a = engine_constants({"infiniband_nic_efficiency": 1})
    b = engine_constants({"infiniband_nic_efficiency": 1.0})
    assert a is not b  # == would call them the same key
    assert engine_constants({"infiniband_nic_efficiency": 1}) is a
    assert engine_constants(None) is not a
