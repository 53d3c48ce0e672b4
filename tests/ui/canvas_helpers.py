"""What the canvas draws of the cables, read the same way by every test that compares a window's
canvas after edits with the canvas of a fresh window opening the saved design."""
from __future__ import annotations

import numpy as np


def drawn_cables(scene) -> dict:
    """Per bundle key: its cables, speed, kind, ports and line (a row an edit emptied draws nothing)."""
    layer = scene.link_layer
    return {b.key: (b.link_ids, b.total_gbps, b.kind, b.ports, tuple(np.round(layer.lines.a[r], 3)),
                    tuple(np.round(layer.lines.b[r], 3)))
            for r, b in enumerate(layer.bundles) if b.link_ids}


def cable_heat(scene) -> dict:
    """Per drawn bundle key: its heat bucket, whether it is outlined as a bottleneck, and the heat's
    own words in its tooltip (its busiest cable's share, found by link position)."""
    layer = scene.link_layer
    heat = layer.heat
    return {b.key: (None if heat is None else int(heat[r]), r in layer.marked,
                    layer.heat_tip(r) if layer.heat_tip is not None else None)
            for r, b in enumerate(layer.bundles) if b.link_ids}


def aggregates(scene, rebuild_stale: bool = True) -> list:
    """The rack-to-rack lines of the zoomed-out view: tip, first end, kind (planned first when an edit
    left them to the next zoom out, unless `rebuild_stale` is False)."""
    if rebuild_stale and scene.cables.aggregates_stale:
        scene.cables.rebuild_aggregates()
    layer = scene.link_layer
    return sorted(zip(layer.aggregate_tips, map(tuple, np.round(layer.aggregates.a, 3)),
                      layer.aggregates.kind.tolist()))
