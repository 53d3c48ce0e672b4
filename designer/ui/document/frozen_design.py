"""A big design's objects kept out of the cyclic collector's walks.

Read with the collector paused (gc_pause.py), a 131k-GPU design's ~1 million objects all sit in the
youngest generation; the first collection after would walk them all (0.6 s, holding the GIL, the window
frozen), and each later full collection again. The design's elements are plain acyclic objects, freed
by their reference counts when the design goes, so they need no collector: gc.freeze moves everything
alive now into the permanent generation, which collections skip (the collector's cost is then that of
the objects made afterwards). Done once the design is read (before the collector resumes: the
first collection after would be the 0.6 s one), again once it replaces the shown one, and after each
slice of its canvas's staged build (a full collection over the ~70k canvas items made so far held
the window 0.1-0.2 s, a few times per build at 131k GPUs).

Only QtDocument (qt_document.py), the one place that replaces the shown design, calls this module.

The price: frozen objects are never collected, and a replaced design is not free of cycles (its canvas
items, its listeners): so whenever the shown design is replaced (open, new, a generated or recovered
one, undo of those), `release` puts everything back under the collector and collects once, at that
user action, before anything is frozen again. Without it each big design opened after another kept
the first one in memory for good. The first big design opened after a small one pays no collection:
the small one, frozen with the big one while that was read, keeps its few cycles (if any) for good.
"""
from __future__ import annotations

import gc


_frozen = False


def keep_out_of_collections(shown: bool = True) -> None:
    """Freeze what is alive. `shown`: the design now shown is among it (so replacing it must release);
    False for the freeze of a design still being read (the one shown then is released, if it was frozen,
    when the new one replaces it: a design frozen before it was shown pays no collection)."""
    global _frozen
    gc.freeze()
    _frozen = _frozen or shown


def release() -> None:
    """The shown design is being replaced: unfreeze, and collect the old one's cycles now (one pass
    over what is alive: about a second at 131k GPUs, paid only when a frozen design is replaced)."""
    global _frozen
    if _frozen:
        _frozen = False
        gc.unfreeze()
        gc.collect()
