"""Alike failures as one row: 13 leaves that each stop the same jobs are one line "13 leaf switches
(leaf0, leaf1, leaf2 ...), each down: stops a, b", not 13 (the CLI's `designer failures` and
`designer advise`, and the Advisor's "What if it fails" table, all show these groups)."""
from __future__ import annotations

from dataclasses import dataclass, field

# the collection of each kind of element, for the `--set <collection>[id].state=down` that reproduces it
_COLLECTION = {"switch": "switches", "server": "nodes", "link": "links"}


@dataclass
class FailureGroup:
    """Failures of the same kind with the same effect on the jobs, listed as one line."""
    kind: str  # "spine switch", "server", "leaf-spine link", ...
    effect: str  # "stops a, b" or "a +16.9%, b +0.2%" or "costs nothing"
    lost_gpu_share: float  # of the first member (the others: the same to 0.01 %)
    members: list = field(default_factory=list)  # the Failures, in ranking order

    @property
    def elements(self) -> list[str]:
        return [m.element for m in self.members]

    @property
    def stopped(self) -> list[str]:
        return list(self.members[0].stopped) if self.members else []

    @property
    def who(self) -> str:
        """ "spine switch spine0", "4 spine switches (spine0, spine1, spine2 ...), each", "3 x server (...), each"."""
        ids = self.elements
        if len(ids) == 1:
            return f"{self.kind} {ids[0]}"
        listed = f"({', '.join(ids[:3])}{' ...' if len(ids) > 3 else ''}), each"
        return f"{len(ids)} {self.kind}es {listed}" if self.kind.endswith("switch") else \
            f"{len(ids)} x {self.kind} {listed}"

    @property
    def text(self) -> str:
        return f"{self.who} down: {self.effect}"

    def set_argument(self, element: str | None = None) -> str:
        """The `--set` that marks one member down (`designer evaluate FILE --set ...`)."""
        element = element or self.elements[0]
        collection = _COLLECTION.get(self.kind.split()[-1], "switches")
        return f"{collection}[{element}].state=down"

    def as_json(self) -> dict:
        first = self.members[0]
        return {"kind": self.kind, "elements": self.elements, "effect": self.effect,
                "lost_gpu_share": self.lost_gpu_share, "stopped": list(first.stopped),
                "slowdown": dict(first.slowdown), "reason": first.reason, "text": self.text}


def group_failures(ranked) -> list[FailureGroup]:
    """`rank_failures`'s list as groups of alike failures (same kind, same effect, same lost share
    to 0.01 %), costliest first; inside a group, members keep their ranking order."""
    groups: dict[tuple, FailureGroup] = {}
    for f in ranked:
        effect = f.text.split(" down: ", 1)[1]
        share = round(f.lost_gpu_share, 4)
        key = (f.kind, effect, share)
        if key not in groups:
            groups[key] = FailureGroup(f.kind, effect, f.lost_gpu_share)
        groups[key].members.append(f)
    return sorted(groups.values(), key=lambda g: -g.lost_gpu_share)
