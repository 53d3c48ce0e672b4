"""Saving is the round trip's other half: whatever valid design Designer saves, it loads again
equal, bit for bit in every number. Property-based, with hypothesis."""
import dataclasses
import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.core.engine.constants import EngineConstants
from designer.core.io import files
from designer.core.model import elements as E
from designer.core.model.elements import Metadata

NAMES = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12)
# finite floats of every size: subnormals (5e-324), tiny (1e-300), huge (1.7e308), and -0.0
ANY_FINITE = st.floats(allow_nan=False, allow_infinity=False)


def in_range(meta) -> st.SearchStrategy[float]:
    """Any finite float the field's declared range allows, edges and subnormals included."""
    lo = meta.get("minimum")
    xlo = meta.get("exclusive_minimum")
    return st.floats(min_value=lo if lo is not None else xlo, max_value=meta.get("maximum"),
                     exclude_min=lo is None and xlo is not None, allow_nan=False, allow_infinity=False)


def field_values(cls, **fixed) -> st.SearchStrategy[dict]:
    """Random values for the float fields of an element class (others at their defaults)."""
    floats = [f for f in dataclasses.fields(cls) if f.type == "float" and f.name not in fixed]
    required = {f.name: in_range(f.metadata) for f in floats if f.default is dataclasses.MISSING}
    optional = {f.name: in_range(f.metadata) for f in floats if f.default is not dataclasses.MISSING}
    return st.fixed_dictionaries(required, optional=optional).map(lambda d: {**d, **fixed})


CALIBRATION = st.fixed_dictionaries({}, optional={
    f.name: in_range(f.metadata) for f in dataclasses.fields(EngineConstants) if f.type == "float"})
LAYOUT_VALUES = st.recursive(ANY_FINITE | st.integers(-2**63, 2**63) | NAMES | st.booleans(),
                             lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
                             max_leaves=8)


@st.composite
def designs(draw):
    doc = files.empty_document(draw(NAMES))
    doc.metadata = Metadata(name=draw(NAMES), description=draw(st.text(max_size=30)))
    ids = iter(draw(st.lists(NAMES, min_size=40, max_size=40, unique=True)))
    racks = [E.Rack(id=next(ids), name=draw(NAMES), **draw(field_values(E.Rack)))
             for _ in range(draw(st.integers(0, 3)))]
    nodes = [E.Node(id=next(ids), accelerator="H100", **draw(field_values(E.Node)),
                    gpu_slowdown=draw(st.lists(in_range(E.Node.__dataclass_fields__["gpu_slowdown"].metadata),
                                               max_size=3)))
             for _ in range(draw(st.integers(0, 4)))]
    switches = [E.Switch(id=next(ids), fabric="infiniband", tier=draw(st.sampled_from(E.SWITCH_TIERS)),
                         **draw(field_values(E.Switch))) for _ in range(draw(st.integers(0, 3)))]
    devices = [n.id for n in nodes] + [s.id for s in switches]
    links = []
    if devices:
        for _ in range(draw(st.integers(0, 6))):
            links.append(E.Link(id=next(ids), a=draw(st.sampled_from(devices)), b=draw(st.sampled_from(devices)),
                                kind=draw(st.sampled_from(E.LINK_KINDS)), **draw(field_values(E.Link))))
    doc.spec.racks, doc.spec.nodes, doc.spec.switches, doc.spec.links = racks, nodes, switches, links
    doc.spec.calibration = draw(CALIBRATION)
    doc.spec.layout = draw(st.dictionaries(NAMES, LAYOUT_VALUES, max_size=4))
    return doc


def exact(value):
    """Comparable form in which two numbers are equal only when their bits are (-0.0 != 0.0);
    a whole float saved as an int (5.0 -> 5) is the same number."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float) or (isinstance(value, int) and abs(value) < 2**53):
        return ("number", struct.pack("<d", float(value)))
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, dict):
        return {k: exact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [exact(v) for v in value]
    raise TypeError(type(value))


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(designs())
def test_saved_designs_reload_bit_for_bit(tmp_path_factory, doc):
    path = tmp_path_factory.mktemp("roundtrip") / "design.yaml"
    files.save_document(doc, path)
    again = files.load_document(path)  # a DesignerError here is a file Designer wrote but cannot read
    assert exact(files.as_plain(again.spec)) == exact(files.as_plain(doc.spec))
    assert again.metadata == doc.metadata
    assert files.dumps_document(again) == files.dumps_document(doc)  # and it saves the same text


def test_the_reported_values_reload_exactly(tmp_path):
    """The two cases the issue names: 1e-05 with no switches or links yet (read back as text),
    and values below 1e-17 in calibration and layout (saved as 0.0)."""
    doc = files.empty_document("tiny")
    doc.spec.racks = [E.Rack(id="r0", x=0.00001)]
    doc.spec.calibration = {"cable_latency_us": 5e-324, "memory_fragmentation": 1e-18}
    doc.spec.layout = {"zoom": 1e-20, "far": 1.7e308, "list": [1e-05, -0.0, 1e16]}
    path = tmp_path / "tiny.yaml"
    files.save_document(doc, path)
    text = path.read_text()
    assert "1.0e-05" in text and "5.0e-324" in text and "1.0e-20" in text and "1.7e+308" in text
    again = files.load_document(path)
    assert again.spec.racks[0].x == 0.00001
    assert again.spec.calibration == {"cable_latency_us": 5e-324, "memory_fragmentation": 1e-18}
    assert again.spec.layout["zoom"] == 1e-20 and again.spec.layout["far"] == 1.7e308
    assert math.copysign(1.0, again.spec.layout["list"][1]) < 0


@pytest.mark.parametrize("text", ["\x85", "a\x85b\nc", "\u2028", "\u2029 x", "x\x1cy"])
def test_yaml_line_break_characters_in_names_and_descriptions_reload(tmp_path, small_doc, text):
    """Found by the property test on a fresh clone: PyYAML folded a description of '\\x85' into ' '."""
    small_doc.metadata.description = text
    small_doc.metadata.name = "n" + text
    path = tmp_path / "design.yaml"
    files.save_document(small_doc, path)
    again = files.load_document(path)
    assert again.metadata.description == text and again.metadata.name == "n" + text
