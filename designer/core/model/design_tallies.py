"""What the jobs' check (plan.check_plan) reads of the whole cluster, kept so that an edit updates it.

The jobs' check runs on every check, also after an edit of one link; at 131k GPUs reading every
server for the GPU counts and finding the servers a job cannot reach (network_reach.unusable_servers:
every link's ends, every NIC) took ~65 ms an edit. `DesignTallies` reads the design once; the live
checker (check_incremental.py) tells it of each element an edit changed (`server_edited`,
`link_edited`, `switch_edited`), and it redoes only what that edit can change: one server's GPUs up;
the unusable servers only after an edit of what they follow from (a state), from the cables and
NICs read before (network_reach.ServerReach) and that one state; after cables added, removed or
re-pointed, from the ends and columns the live check keeps (`links_reshaped`), the servers' figures
kept; a server's GPU count or accelerator by its delta (`server_resized`); racks and devices renamed
by the ids they name (`racks_changed`, `devices_renamed`). Every other edit that can change these
figures (a server's role or NIC count, a server or switch added or removed) gets new tallies.
"""
from __future__ import annotations

from collections import Counter

from .document import Document
from .link_columns import LinkColumns
from .network_reach import ServerReach


def gpus_down(node) -> int:
    """The server's GPUs marked down; 0 for a value that is not a count (an edit through the API: the
    jobs' check reads every server's count, the checks of the fields name what is wrong)."""
    down = node.gpus_down
    return down if isinstance(down, int) else 0


def gpus_up(node) -> int:
    """GPUs a job can run on in this server: a compute server's, unless it or they are marked down."""
    if node.role != "compute" or node.state == "down":
        return 0
    return max(0, node.accelerator_count - gpus_down(node))


class DesignTallies:
    """The cluster's figures the jobs' check reads, per design (position-wise for the servers). The
    GPUs up and the unusable servers are found the first time a check asks (most designs have one job
    that fits in one server's GPUs or none marked down), then kept up to date."""

    __slots__ = ("num_gpus", "one_server", "accelerators", "node_ids", "rack_ids", "_up", "_gpus_up",
                 "_overdrawn", "_ends", "_columns", "_reach", "_unusable", "_gpus", "_parts", "_gpu_counts",
                 "_part_counts")

    def __init__(self, doc: Document, ends=None, columns: LinkColumns | None = None):
        """`ends`: the links' ends as `doc.link_ends.sides(doc)` gives them, and `columns` their kinds,
        counts and states, when the caller has them (the tallies are of one shape of the design: an edit
        of a link's ends, kind or count makes new ones)."""
        nodes = doc.nodes
        self._gpus = [n.accelerator_count for n in nodes]  # per server, by position (a resize's delta)
        self._parts = [n.accelerator for n in nodes]
        self.num_gpus = sum(n.accelerator_count for n in nodes if n.role == "compute")  # Document.num_gpus
        self._gpu_counts = Counter(self._gpus)  # servers per GPU count: the largest after a resize
        self._part_counts = Counter(self._parts)  # servers per accelerator: the names after a resize
        self.one_server = max(self._gpu_counts, default=0)  # the largest server's GPUs
        self.accelerators = frozenset(self._part_counts)
        self.node_ids = frozenset(n.id for n in nodes)
        self.rack_ids = frozenset(r.id for r in doc.racks)
        self._up: list[int] | None = None  # gpus_up per server, by position
        self._gpus_up = 0
        self._overdrawn: dict[int, None] | None = None  # servers with more GPUs down than they have
        self._ends = ends
        self._columns = columns
        self._reach: ServerReach | None = None  # the design's cables and NICs, read once, states kept
        self._unusable: dict[str, str] | None = None  # its answer, until a state changes

    def up_per_node(self, doc: Document) -> list[int]:
        """gpus_up of each server, by position."""
        if self._up is None:
            self._up = [gpus_up(n) for n in doc.nodes]
            self._gpus_up = sum(self._up)
        return self._up

    def gpus_up(self, doc: Document) -> int:
        """GPUs jobs can run on: those of compute servers up, less their GPUs marked down."""
        self.up_per_node(doc)
        return self._gpus_up

    def overdrawn(self, doc: Document) -> list[int]:
        """Positions of the servers with more GPUs down than they have (an error of the jobs' check)."""
        if self._overdrawn is None:
            self._overdrawn = {i: None for i, n in enumerate(doc.nodes) if gpus_down(n) > n.accelerator_count}
        return sorted(self._overdrawn)

    def unusable(self, doc: Document) -> dict[str, str]:
        """network_reach.unusable_servers of the design, found again only after an edit that can change it."""
        if self._unusable is None:
            if self._reach is None:
                self._reach = ServerReach(doc, self._ends, self._columns)
                self._ends = self._columns = None  # the reach keeps them
            self._unusable = self._reach.unusable(doc)
        return self._unusable

    @property
    def reach(self) -> ServerReach | None:
        """The design's cables and NICs as read for the unusable servers (None: not read yet)."""
        return self._reach

    @reach.setter
    def reach(self, reach: ServerReach) -> None:
        """Take `reach` (of this design, followed from the tallies before an edit) rather than reading it."""
        self._reach, self._ends, self._columns, self._unusable = reach, None, None, None

    def server_edited(self, doc: Document, position: int, field: str) -> None:
        """The server at `position` had `field` (its state or GPUs down) edited."""
        node = doc.nodes[position]
        if self._up is not None:
            up = gpus_up(node)
            self._gpus_up += up - self._up[position]
            self._up[position] = up
        if self._overdrawn is not None:
            if gpus_down(node) > node.accelerator_count:
                self._overdrawn[position] = None
            else:
                self._overdrawn.pop(position, None)
        if field == "state":  # a server marked down is skipped, and it can cut others off no more
            self._unusable = None

    def link_edited(self, doc: Document, position: int, field: str) -> None:
        """The link at `position` had `field` (a value, not its ends or kind) edited: the unusable
        servers follow its state."""
        if field == "state":
            self._unusable = None
            if self._reach is not None:
                self._reach.link_state(position, doc.links[position].state)

    def links_reshaped(self, ends, columns: LinkColumns) -> None:
        """Links were added, removed, re-pointed or given another kind or count: the unusable servers are
        found again, from these ends and columns (the servers' figures stand)."""
        self._ends, self._columns = ends, columns
        self._reach = self._unusable = None

    def server_resized(self, doc: Document, position: int) -> None:
        """The server at `position` has another GPU count or accelerator (its role as it was): the
        figures moved by its delta."""
        node = doc.nodes[position]
        old_gpus, old_part = self._gpus[position], self._parts[position]
        if node.role == "compute":
            self.num_gpus += node.accelerator_count - old_gpus
        for counts, old, new in ((self._gpu_counts, old_gpus, node.accelerator_count),
                                 (self._part_counts, old_part, node.accelerator)):
            counts[old] -= 1
            if not counts[old]:
                del counts[old]
            counts[new] += 1
        self._gpus[position], self._parts[position] = node.accelerator_count, node.accelerator
        self.one_server = max(self._gpu_counts, default=0)
        self.accelerators = frozenset(self._part_counts)
        self.server_edited(doc, position, "accelerator_count")
        self._unusable = None  # a server with more GPUs than its NICs reach, or fewer
        if self._reach is not None:
            self._reach.server_resized(position, node)

    def racks_changed(self, doc: Document) -> None:
        """Racks were added, removed or renamed (the servers' and switches' places alone changed)."""
        self.rack_ids = frozenset(r.id for r in doc.racks)

    def devices_renamed(self, doc: Document) -> None:
        """Servers or switches were renamed, their cables re-pointed to the same ports: the figures and
        the cables' roles stand; the servers' ids and the answers that name servers, switches and
        cables are made again."""
        self.node_ids = frozenset(n.id for n in doc.nodes)
        self._unusable = None
        if self._reach is not None:
            self._reach.devices_renamed()

    def link_renamed(self) -> None:
        """A link's id changed: the unusable servers' reasons name cables by id."""
        self._unusable = None

    def switch_edited(self, doc: Document, position: int, field: str) -> None:
        """The switch at `position` had `field` (its state) edited."""
        if field == "state":
            self._unusable = None
            if self._reach is not None:
                self._reach.switch_state(position, doc.switches[position].state)
