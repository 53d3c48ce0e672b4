"""Machine output with an indent: the same text as json.dumps(value, indent=2), errors included."""
import enum
import json

import pytest

from designer.cli.json_text import dumps_indented
from tests.conftest import EXAMPLES, run_cli


class _Level(enum.IntEnum):
    HIGH = 3


class _Ratio(float):
    pass


_SHARED = {"rows": [[1, 2], {"x": [3]}]}

ODD_VALUES = [
    {}, [], (), "text", 7, None, 1.5, float("nan"),
    {"a": {}, "b": [], "c": ()}, [[], {}, [[[[]]]]], [1, [2, [3, {}]]],
    {"a": [1, 2.5, "x", None, True, False], "b": {"c": {"d": {"e": [1, {"f": []}]}}}},
    {"é": "ünï", "\u2028": "\U0001f600", 'q"\\': "\n\t\x00", "[, ]": "{: }"},
    [float("nan"), float("inf"), -float("inf"), -0.0, 1e300, 1e-7, 10**30, -5, 0],
    {1: "a", 2.5: [1], True: {"x": 1}, None: [], False: 2, float("nan"): 1, -float("inf"): {"y": [2]}},
    (1, (2, 3), [4], {"t": (5, 6)}),
    {_Level.HIGH: _Level.HIGH, "f": _Ratio(2.0), "l": [_Level.HIGH, _Ratio(1.5)], "n": {"x": [_Level.HIGH]}},
    {"mixed": [1, {"a": 1}, 2, 3, [4], "five"], "scalars": 1, "then": {"k": 1}, "after": "x"},
    {"once": _SHARED, "twice": [_SHARED, _SHARED]},  # the same container in two places is no cycle
]


@pytest.mark.parametrize("value", ODD_VALUES, ids=range(len(ODD_VALUES)))
def test_same_text_as_json_dumps(value):
    assert dumps_indented(value) == json.dumps(value, indent=2)


@pytest.mark.parametrize("value", [{(1,): 1}, {"a": {(1,): [1]}}, [object()], {"a": {"b": object()}}, [[set()]],
                                   {"a": [1, {1j: 2}]}])
def test_same_error_as_json_dumps(value):
    with pytest.raises(TypeError) as expected:
        json.dumps(value, indent=2)
    with pytest.raises(TypeError) as got:
        dumps_indented(value)
    assert str(got.value) == str(expected.value)


def test_a_cycle_is_refused_as_json_dumps_refuses_it():
    looped = {"a": [1]}
    looped["b"] = [looped]
    with pytest.raises(ValueError, match="Circular reference detected"):
        dumps_indented(looped)


def test_evaluate_json_is_indented_as_json_dumps_writes_it():
    code, out, _ = run_cli("evaluate", EXAMPLES / "a100-1024gpu-rail-infiniband.yaml", "--json")
    assert code == 0
    assert out == json.dumps(json.loads(out), indent=2) + "\n"
