"""The places of servers and switches before and after an edit, matched by id (device_edits.place_map)."""
import random

from designer.core.model.device_edits import place_map


def test_each_old_place_maps_to_the_new_place_of_its_id_after_adds_removes_renames_and_swaps():
    rng = random.Random(7)
    tried = 0
    while tried < 2000:
        n = rng.choice([0, 1, 2, 5, 9, 600, 1500])  # (long lists: compared a block at a time)
        old = [f"n{i}" for i in range(n)]
        new = list(old)
        for _ in range(rng.randrange(5)):
            what = rng.randrange(4)
            if what == 0:
                new.insert(rng.randrange(len(new) + 1), f"n{rng.randrange(n + 3)}")
            elif what == 1 and new:
                new.pop(rng.randrange(len(new)))
            elif what == 2 and new:
                new[rng.randrange(len(new))] = f"n{rng.randrange(n + 3)}"
            elif len(new) > 1:
                i, j = rng.sample(range(len(new)), 2)
                new[i], new[j] = new[j], new[i]
        if len(set(new)) != len(new):
            continue  # (ids are unique wherever the live check matches places)
        tried += 1
        where = {element_id: i for i, element_id in enumerate(new)}
        assert place_map(old, new).tolist() == [where.get(element_id, -1) for element_id in old] + [-1], (old, new)
