"""The link heat on the canvas: each bundle coloured by how busy its busiest cable was in the last
evaluation, the critical path outlined, the load in the tooltips (the scene's `heat` part)."""
from __future__ import annotations

import numpy as np

from . import heat as link_heat


class SceneHeat:
    """scene.heat: which heat is shown (its view, its result, its value per link) and each bundle's link
    positions it is worked out over."""

    def __init__(self, scene):
        self._scene = scene
        self.mode = link_heat.STEP  # what the heat measures (canvas/heat.py): share of the step, or busiest phase
        self.result = None  # the result the heat shows
        self.values: np.ndarray | None = None  # per link (doc.links order): the heat shown, 0..1
        self._rows_key = None  # what the bundle rows below were made for (_rows)
        self._rows_cache = None

    def set_mode(self, mode: str) -> None:
        """Colour by share of the step ("step") or by busiest phase ("phase"); the legend says which."""
        if mode not in link_heat.MODES:
            raise ValueError(f"unknown heat view {mode!r}: use one of {', '.join(link_heat.MODES)}")
        if mode == self.mode:
            return
        self.mode = mode
        self.show(self.result)
        for view in self._scene.views():
            legend = getattr(view, "legend", None)
            if legend is not None:
                legend.relayout()

    def show(self, result) -> None:
        """Colour every bundle by how busy its busiest cable was in the last evaluation (in the
        heat view chosen: share of the step, or of its busiest phase), outline the cables on the
        critical path, and add the load by traffic kind to the tooltips. None clears it."""
        scene = self._scene
        layer = scene.link_layer
        mode = self.mode
        util = link_heat.values(result, mode) if result is not None else None
        jobs = link_heat.by_job(result) if util is not None else {}
        self.result, self.values = (result, util) if util is not None else (None, None)
        if util is None:
            if layer.heat is not None or layer.marked:  # (none shown already: the cables' picture stays,
                layer.update()                           # not painted again whole: ~30 ms at 131k GPUs)
            layer.heat, layer.marked, layer.heat_tip = None, set(), None
            scene.heatChanged.emit()
            return
        rows_links, flat, starts, filled = self._rows(len(util))
        heat = np.zeros(len(rows_links))
        if len(flat):  # the busiest cable of each bundle, in one numpy pass
            heat[filled] = np.maximum.reduceat(np.asarray(util, float)[flat], starts)
        layer.heat = np.clip(np.round(heat * 10), 0, 10).astype(np.int64)
        critical = link_heat.outlined(result, mode, len(util))
        if critical is not None:
            # every bundle holding a link on the critical path: a whole class, not one of 64 alike
            # (131k links at 131k GPUs: found per bundle in one numpy pass, as the heat)
            marked = np.zeros(len(rows_links), dtype=bool)
            if len(flat):
                marked[filled] = np.logical_or.reduceat(critical[flat], starts)
            layer.marked = set(np.flatnonzero(marked).tolist())
        else:
            hot = {l for b in result.bottlenecks[:3] for l in b.get("links", [])}
            hot_links = [scene.doc.find("links", link) for link in hot]
            hot_keys = {scene.cables.bundle_key(link) for link in hot_links if link is not None}
            layer.marked = {layer.index[k] for k in hot_keys if k in layer.index}
        doc = scene.doc

        def tip(row: int) -> str:  # the busiest cable's load, worded for its class (core/analysis/link_load.py)
            if not rows_links[row]:
                return ""
            busiest = max(rows_links[row], key=lambda i: float(util[i]))
            text = link_heat.describe(result, mode, busiest) + "\n" + scene.link_loads.bundle_text(result, doc, rows_links[row])
            if jobs:  # who uses the bundle's busiest cable
                shares = [(name, float(u[busiest])) for name, u in jobs.items() if float(u[busiest]) > 0]
                if shares:
                    text += "\nby job: " + ", ".join(f"{name} {share:.0%} of its step" for name, share in
                                                   sorted(shares, key=lambda kv: -kv[1]))
            return text

        layer.heat_tip = tip
        layer.update()
        scene.heatChanged.emit()

    def _rows(self, n_util: int):
        """Each bundle's link positions (kept while the cables and their order stay: a speed edit
        reuses them), flattened for numpy: (rows, flat positions, row starts, rows with links)."""
        scene = self._scene
        doc = scene.doc
        key = (doc.lineage, scene.cables.version, len(doc.links), n_util)
        if self._rows_key != key:
            known = scene.cables.positions
            if known is not None and known[:2] == key[1:3]:  # as the last rebuild found them
                members, starts = known[2], known[3]
            else:
                position = {l.id: i for i, l in enumerate(doc.links)}
                bundles = scene.link_layer.bundles
                rows = [[position[i] for i in bundles.link_ids(r) if i in position] for r in range(len(bundles))]
                members = np.array([p for r in rows for p in r], dtype=np.int64)
                starts = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
            if len(members) and members.max() >= n_util:  # links the result does not cover
                kept = np.concatenate([[0], np.cumsum(members < n_util)])[starts]
                members = members[members < n_util]
                starts = kept.astype(np.int64)
            lengths = np.diff(starts)
            filled = np.flatnonzero(lengths)
            self._rows_cache = (_BundleRows(members, starts), members, starts[:-1][filled], filled)
            self._rows_key = key
        return self._rows_cache


class _BundleRows:
    """Bundle r's link positions as a list, made when asked (a tooltip), not for all 295k bundles."""

    def __init__(self, members: np.ndarray, starts: np.ndarray):
        self.members, self.starts = members, starts

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, row: int) -> list:
        return self.members[self.starts[row]:self.starts[row + 1]].tolist()
