"""CloseNames answers as did_you_mean does (the same closest name, the same ties, the same None),
over a generated design's server and switch names and words made from them with typos."""
import random

from designer.core.generate.fat_tree import generate_fat_tree
from designer.core.model.close_names import CloseNames
from designer.core.model.link_rules import device_names
from designer.core.problems import did_you_mean


def test_close_names_gives_did_you_means_answer():
    doc = generate_fat_tree(nodes=128, gpu="H100")
    names = device_names([*doc.nodes, *doc.switches]) + ["rack-Ω", "leaf_a", "LEAF-B"]
    index = CloseNames(names)
    rng = random.Random(7)
    words = ["", "x", "node3", "node99999", "sw-renamed", "spine", "leafleaf", "núcleo", "LEAF1", "rack-Ω"]
    for _ in range(150):
        word = list(rng.choice(names))
        for _ in range(rng.randrange(4)):
            place = rng.randrange(len(word) + 1)
            what = rng.randrange(3)
            if what == 0:
                word.insert(place, rng.choice("abcdefgh0123456789-_Ω"))
            elif place < len(word):
                word[place:place + 1] = [] if what == 1 else [rng.choice("xyz987")]
        words.append("".join(word))
    for word in words:
        assert index.guess(word) == did_you_mean(word, names), word
    assert CloseNames([]).guess("leaf0") is None
