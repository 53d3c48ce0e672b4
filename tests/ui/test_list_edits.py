"""The canvas's account of a list's removes and inserts (list_edits.py) says, after any sequence of
them, what the list itself says: the item each remove takes, where each old item now is, and where
each inserted one is."""
import random

import numpy as np

from designer.ui.canvas.list_edits import Inserted, ListEdits


def test_removes_and_inserts_match_a_plain_list():
    """200 random sequences (one test: each is microseconds, a test of its own costs more)."""
    for seed in range(200):
        try:
            _check_one_sequence(seed)
        except AssertionError as exc:
            raise AssertionError(f"seed {seed}: {exc}") from exc


def _check_one_sequence(seed: int) -> None:
    rng = random.Random(seed)
    length = rng.randint(0, 12)
    plain, edits = list(range(length)), ListEdits(length)
    for _ in range(rng.randint(0, 10)):
        if plain and rng.random() < 0.5:
            position = rng.randrange(len(plain))
            item, taken = plain.pop(position), edits.remove(position)
            assert taken is item if isinstance(item, Inserted) else taken == item
        else:
            position, item = rng.randint(0, len(plain)), Inserted(seed)
            plain.insert(position, item)
            assert edits.insert(position, item)
    assert edits.remove(len(plain)) is None and not edits.insert(len(plain) + 1, Inserted(seed))
    old = np.array([x for x in plain if not isinstance(x, Inserted)], np.int64)
    now = np.array([i for i, x in enumerate(plain) if not isinstance(x, Inserted)], np.int64)
    assert np.array_equal(edits.moved(old[::-1])[::-1], now)  # (in any order)
    assert edits.inserted() == [(i, x) for i, x in enumerate(plain) if isinstance(x, Inserted)]
