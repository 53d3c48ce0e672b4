"""Column work done in parts gives what the same work done at once gives, across part boundaries."""
from itertools import repeat

import numpy as np
import pytest

from designer.core.parts import PART_ITEMS, array_in_parts, list_in_parts, texts_array, tolist_in_parts

SIZES = [0, 1, PART_ITEMS - 1, PART_ITEMS, PART_ITEMS + 1, 2 * PART_ITEMS + 7]


@pytest.mark.parametrize("n", SIZES)
def test_mapped_columns_match_whole(n):
    texts = [f"dev{i % 977}:p{i}" for i in range(n)]
    known = {f"dev{i}:p{i}": i for i in range(500)}
    whole = np.fromiter(map(known.get, texts, repeat(-1)), np.int64, n)
    assert array_in_parts(known.get, texts, np.int64, repeat(-1)).tolist() == whole.tolist()
    assert array_in_parts(None, list(range(n)), float).tolist() == [float(i) for i in range(n)]
    assert list_in_parts(len, texts) == list(map(len, texts))
    assert tolist_in_parts(np.arange(n)) == list(range(n))


@pytest.mark.parametrize("n", SIZES[1:])
def test_text_array_has_the_width_of_the_longest(n):
    texts = [f"d{i}" for i in range(n)]
    texts[-1] = "a-much-longer-device-name"
    made = texts_array(texts)
    assert made.dtype == np.array(texts).dtype and made.tolist() == texts


def test_text_array_of_mixed_kinds_is_made_at_once():
    values = ["a"] * (PART_ITEMS + 1) + [7]
    assert texts_array(values).tolist() == np.array(values).tolist()


def test_a_late_part_converts_as_at_once():
    values = [1.0] * (PART_ITEMS + 5) + [None]
    at_once = np.fromiter(values, float, len(values))
    assert np.array_equal(array_in_parts(None, values, float), at_once, equal_nan=True)
    with pytest.raises(ValueError):
        array_in_parts(None, values + ["not a number"], float)

