"""The network after an edit of the live check (check_incremental.Reshape): its islands (servers no
route joins) and the servers the jobs cannot reach, found again when the network's shape may have
changed, or followed through servers added and removed with their cables (island_edits.py,
network_reach.ServerReach.servers_moved)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .check import CheckParts, network_islands, network_problems
from .design_tallies import DesignTallies
from .document import Document
from .element_positions import ElementPositions
from .island_edits import SwitchReach
from .island_edits import islands_followed as followed_islands
from .link_edits import SERVER, SWITCH


@dataclass(eq=False, repr=False)
class NetworkFollow:
    """What the edits did to the network: the links' ends and network column before them, each
    server's place before -> after (`server_map`, None: no server moved), each link's place before
    (`link_origin`, None: the same), whether the islands can follow (`followable`: no switch added,
    removed or of another tier or fabric, no server of another role, no cable's ends, kind or count
    changed), and the servers at each cable removed and the ids of the cables added."""
    doc: Document
    parts: CheckParts
    positions: ElementPositions
    ends_before: tuple
    network_before: np.ndarray
    server_map: np.ndarray | None
    link_origin: np.ndarray | None
    followable: bool
    cables_removed: list[set[int]]
    cables_added: list[str]

    def same_ends(self, fields: tuple[str, ...]) -> bool:
        """Whether the links are as many as before the edits and their ends' `fields` are as they were."""
        return all(np.array_equal(getattr(before, f), getattr(now, f))
                   for before, now in zip(self.ends_before, self.parts.ends) for f in fields)

    def redo(self, moved: bool) -> None:
        """The network's problems again; its islands found again only when its shape may have changed
        (`moved`: a link added, removed or of another kind, a device added or removed or of another role,
        GPU count, tier or fabric; or a cable's end now at another device: a device renamed with its
        cables keeps them)."""
        doc, parts = self.doc, self.parts
        if moved or not self.same_ends(("kind", "index")):
            if len(parts.islands) == 1 and not self.cables_removed and self.off_nic_cables_only:
                # one island, and cables added that are no server's NIC cable: every route role among the
                # switches (an up-link, a pod, a pod's core cables) only grows with cables (network_reach.
                # switch_links), so the servers stay joined. The switches' components changed: made anew
                parts.switch_reach = None
                parts.network = network_problems(doc, parts.islands)
                return
            islands = self.islands_followed()
            if islands is None:
                parts.islands, parts.switch_reach = network_islands(doc, parts.ends, parts.columns), None
            else:
                parts.islands = islands
        parts.network = network_problems(doc, parts.islands)

    def follow_reach(self, before: DesignTallies) -> None:
        """The servers the jobs cannot reach (network_reach.ServerReach) followed through servers added and
        removed with their cables into the new tallies, when they had it (else they find it when asked)."""
        reach = before.reach
        if reach is None or not self.servers_cables_only:
            return
        parts, server_map = self.parts, self.server_map
        origin = np.full(len(self.doc.nodes), -1, np.int64)
        kept = np.flatnonzero(server_map[:-1] >= 0)
        origin[server_map[kept]] = kept
        followed = reach.servers_moved(self.doc, origin, self.link_places_now(), parts.ends, parts.columns)
        if followed is not None:
            parts.tallies.reach = followed

    def follow_reach_through_cables(self) -> bool:
        """The servers the jobs cannot reach followed, in the kept tallies, through cables added or
        removed that are no server's NIC cable now (between switches, say): the servers' NICs keep their
        cables, moved to their places (ServerReach.servers_moved, which refuses a NIC cable removed).
        False when they are to be found again (the tallies then read the new ends when asked)."""
        tallies = self.parts.tallies
        reach = tallies.reach
        if reach is None or self.server_map is not None or not self.off_nic_cables_only:
            return False
        followed = reach.servers_moved(self.doc, np.arange(len(self.doc.nodes)), self.link_places_now(),
                                       self.parts.ends, self.parts.columns)
        if followed is None:
            return False
        tallies.reach = followed
        return True

    def link_places_now(self) -> np.ndarray:
        """Each link's place now by its place before the edits (-1: removed)."""
        n_links = len(self.ends_before[0].kind)
        if self.link_origin is None:
            return np.arange(n_links)
        link_place = np.full(n_links, -1, np.int64)
        now = np.flatnonzero(self.link_origin >= 0)
        link_place[self.link_origin[now]] = now
        return link_place

    @cached_property
    def off_nic_cables_only(self) -> bool:
        """Whether the network changed only by cables added and removed (no device, no field, no cable's
        ends, kind or count), none added being a server's cable to a switch."""
        if not self.followable or self.server_map is not None:
            return False
        a, b = self.parts.ends
        for link_id in self.cables_added:
            for position in self.positions.link_places(link_id):
                if {int(a.kind[position]), int(b.kind[position])} == {SERVER, SWITCH}:
                    return False
        return True

    @cached_property
    def servers_cables_only(self) -> bool:
        """Whether the network changed only by servers added and removed with their cables (no switch
        added, removed or of another tier or fabric, no server of another role, no cable's ends, kind or
        count changed, every cable added or removed at a server added or removed)."""
        server_map, parts = self.server_map, self.parts
        if not self.followable or server_map is None:
            return False
        gone = set(np.flatnonzero(server_map[:-1] < 0).tolist())
        if not all(servers & gone for servers in self.cables_removed):
            return False  # a cable removed that no server removed took with it
        taken = np.zeros(len(self.doc.nodes), dtype=bool)
        taken[server_map[server_map >= 0]] = True
        new = set(np.flatnonzero(~taken).tolist())
        for link_id in self.cables_added:
            found = self.positions.link_places(link_id)
            if len(found) > 1:
                return False
            servers = {int(side.index[found[0]]) for side in parts.ends if side.kind[found[0]] == SERVER} \
                if found else new  # (taken away again)
            if not servers & new:
                return False  # a cable added at a server that was there
        return True

    def islands_followed(self) -> list | None:
        """The islands followed through servers added and removed with their cables (island_edits.py),
        or None when only finding them again will do."""
        server_map, parts = self.server_map, self.parts
        if not self.doc.switches or sum(len(island.servers) for island in parts.islands) < 2 \
                or not self.servers_cables_only:
            return None  # (islands of fewer than two servers are found without the network)
        if parts.switch_reach is None:  # (the islands were found again since the last full check)
            parts.switch_reach = SwitchReach.of(self.doc, self.ends_before, self.network_before, parts.islands,
                                                len(server_map) - 1)
        return followed_islands(self.doc, parts.islands, parts.switch_reach, server_map, self.ends_before,
                                self.network_before, parts.ends, parts.columns.network)
