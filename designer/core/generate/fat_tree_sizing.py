"""The arithmetic of a fat-tree: the ports of a leaf up and down, the most servers a number of tiers,
a radix and an oversubscription hold, how servers and cables spread over leaves, spines, cores and
pods (`FatTreeLayout`), and the message that says what to change when they do not fit."""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..model.elements import MAX_GBPS, MIN_GBPS, NETWORK_KINDS


# Radices that exist as products, offered in error messages when more ports are needed.
COMMON_RADICES = (32, 36, 40, 48, 64, 128, 256, 512)
# Oversubscriptions offered in error messages.
OVERSUBSCRIPTION_CHOICES = (1.5, 2, 3, 4, 6, 8)


class FatTreeError(ValueError):
    """The request cannot be built; the message says what to change."""


# ---- arithmetic of the tree ---------------------------------------------------------------------

def ratio_of(oversubscription) -> Fraction:
    try:
        value = float(oversubscription)
    except (TypeError, ValueError):
        raise FatTreeError(f"oversubscription must be a number, got {oversubscription!r}; "
                           "use e.g. --oversubscription 1 (non-blocking) or 2") from None
    if not math.isfinite(value) or value <= 0:
        raise FatTreeError(f"oversubscription must be above 0, got {oversubscription!r}; "
                           "use --oversubscription 1 for a non-blocking fabric")
    # Exact arithmetic, so that ceil(m / r) is exactly m at 1:1 and 1.1 means 11/10.
    return Fraction(value).limit_denominator(1000)


def ratio_text(r: Fraction) -> str:
    return f"{float(r):g}:1"


def _leaf_down(radix: int, r: Fraction) -> int:
    """d = floor(radix * r / (r + 1))."""
    return (radix * r.numerator) // (r.numerator + r.denominator)


def _up_links(m: int, r: Fraction) -> int:
    """ceil(m / r): up-links of a leaf with m NIC ports attached."""
    return -(-m * r.denominator // r.numerator)


def _one_tier_allowed(rail: bool, nics: int) -> bool:
    # Rails on a single switch would be one switch per rail, not connected to each other.
    return not rail or nics == 1


def _max_nodes(tiers: int, radix: int, r: Fraction, nics: int, rail: bool) -> int:
    """The most servers a fat-tree of these tiers can hold."""
    d = _leaf_down(radix, r)
    half = radix // 2
    if tiers == 1:
        return radix // nics if _one_tier_allowed(rail, nics) else 0
    if tiers == 2:  # at most `radix` leaves, so that every spine takes a cable from every leaf
        return (radix // nics) * d if rail else radix * (d // nics)
    # 3 tiers: at most radix/2 leaves per pod, at most `radix` pods
    return radix * (half // nics) * d if rail else radix * half * (d // nics)


def _min_radix(tiers: int, nodes: int, r: Fraction, nics: int, rail: bool, start: int) -> int | None:
    """The smallest radix >= start that holds `nodes` (capacity grows with the radix)."""
    hi = max(start, 2)
    while _max_nodes(tiers, hi, r, nics, rail) < nodes:
        hi *= 2
        if hi > 1 << 24:
            return None
    lo = start
    while lo < hi:
        mid = (lo + hi) // 2
        if _max_nodes(tiers, mid, r, nics, rail) >= nodes:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _suggest_radix(need: int, catalog_radices=()) -> int:
    choices = sorted(set(COMMON_RADICES) | set(catalog_radices))
    return next((c for c in choices if c >= need), need)


def _suggest_ratio(tiers: int, nodes: int, radix: int, r: Fraction, nics: int, rail: bool) -> float | None:
    for choice in OVERSUBSCRIPTION_CHOICES:
        if choice > r and _max_nodes(tiers, radix, ratio_of(choice), nics, rail) >= nodes:
            return choice
    return None


def _deal_loads(counts: list[int], uppers: int) -> tuple[list[int], int]:
    """Loads of `uppers` switches when each lower one spreads its cables over all of them.

    Each lower switch gives every upper one count // uppers cables and the remainder to the
    next uppers in turn (the turn goes on from where the previous lower switch stopped), so
    the loads differ by at most one. Returns (loads, number of bundles).
    """
    diff = [0] * (uppers + 1)
    base_total = offset = bundles = 0
    for c in counts:
        base, extra = divmod(c, uppers)
        base_total += base
        bundles += uppers if base else extra
        if extra:
            end = offset + extra
            diff[offset] += 1
            if end <= uppers:
                diff[end] -= 1
            else:
                diff[uppers] -= 1
                diff[0] += 1
                diff[end - uppers] -= 1
            offset = end % uppers
    loads, run = [], base_total
    for j in range(uppers):
        run += diff[j]
        loads.append(run)
    return loads, bundles


def _even(total: int, parts: int) -> list[int]:
    """`total` split into `parts` sizes that differ by at most one, larger first."""
    base, extra = divmod(total, parts)
    return [base + 1] * extra + [base] * (parts - extra)


@dataclass
class FatTreeLayout:
    """Everything the builder needs, computed without creating any element."""

    tiers: int
    rail: bool
    radix: int
    ratio: Fraction
    down: int  # leaf ports facing servers
    nodes: int
    nics: int
    group_sizes: list[int]  # servers per leaf group (a group is served by 1 leaf, or 1 per rail)
    pods: list[tuple[int, int]]  # [first group, end group) of each pod (one block below 3 tiers)
    leaf_sizes: list[list[int]]  # per pod, per leaf (rail-major): NIC ports attached
    leaf_ups: list[list[int]]  # per pod, per leaf: up-links
    spines_per_pod: int  # 2 tiers: all spines (one block)
    spine_loads: list[list[int]]  # per pod, per spine: down cables (= up cables in 3 tiers)
    cores_per_group: int
    max_nodes: int
    links: int = 0
    cables: int = 0

    @property
    def leaves_per_group(self) -> int:
        return self.nics if self.rail else 1

    def pod_nodes(self, p: int) -> int:
        g0, g1 = self.pods[p]
        return sum(self.group_sizes[g0:g1])

    def pod_switches(self, p: int) -> int:
        return len(self.leaf_sizes[p]) + (self.spines_per_pod if self.tiers > 1 else 0)

    @property
    def num_leaves(self) -> int:
        return sum(len(s) for s in self.leaf_sizes)

    @property
    def num_spines(self) -> int:
        return self.spines_per_pod * len(self.pods) if self.tiers > 1 else 0

    @property
    def num_cores(self) -> int:
        return self.cores_per_group * self.spines_per_pod if self.tiers == 3 else 0


def check_numbers(nodes, gpus_per_node, nics_per_node, nic_gbps, fabric, tiers, switch_radix) -> None:
    def whole(value, flag, minimum):
        if isinstance(value, bool) or not hasattr(value, "__index__") or value < minimum:
            raise FatTreeError(f"{flag.lstrip('-').replace('-', ' ')} must be a whole number >= {minimum}, "
                               f"got {value!r}; use {flag} {max(minimum, 1)} or more")

    whole(nodes, "--nodes", 1)
    whole(gpus_per_node, "--gpus-per-node", 1)
    whole(nics_per_node, "--nics-per-node", 1)
    whole(switch_radix, "--switch-radix", 2)
    try:
        gbps_ok = float(nic_gbps) > 0 and math.isfinite(float(nic_gbps))
    except (TypeError, ValueError):
        gbps_ok = False
    if not gbps_ok:
        raise FatTreeError(f"NIC speed must be a positive number of Gb/s, got {nic_gbps!r}; use e.g. --nic-gbps 400")
    if not MIN_GBPS <= float(nic_gbps) <= MAX_GBPS:  # what a design file may hold: the file must validate
        raise FatTreeError(f"NIC speed must be between {MIN_GBPS:g} and {MAX_GBPS:,.0f} Gb/s per port, "
                           f"got {float(nic_gbps):,.6g}; use e.g. --nic-gbps 400")
    if fabric not in NETWORK_KINDS:
        raise FatTreeError(f"unknown fabric {fabric!r}; use --fabric infiniband or --fabric ethernet")
    if tiers is not None and tiers not in (2, 3):
        raise FatTreeError(f"a fat-tree has 2 or 3 tiers, got {tiers!r}; use --tiers 2 or --tiers 3 "
                           "(or leave --tiers out to choose automatically)")


def lay_out(nodes, nics, tiers, radix, r: Fraction, rail: bool, catalog_radices=()) -> FatTreeLayout:
    d = _leaf_down(radix, r)
    "rail-optimized" if rail else "non-rail-optimized"
    if d < 1:
        raise FatTreeError(f"at {ratio_text(r)} a radix-{radix} leaf has no port left for servers; "
                           "use a larger --oversubscription (1 is non-blocking) or --switch-radix")
    if not rail and d < nics and not (tiers is None and nodes * nics <= radix):
        raise FatTreeError(f"a server's {nics} NICs must share one leaf when not rail-optimized, but a "
                           f"radix-{radix} leaf at {ratio_text(r)} has only {d} ports for servers; use "
                           f"--rail-optimized, --switch-radix {_suggest_radix(2 * nics, catalog_radices)} "
                           f"or fewer --nics-per-node")
    if tiers is None:
        if _one_tier_allowed(rail, nics) and nodes * nics <= radix:
            tiers = 1
        elif nodes <= _max_nodes(2, radix, r, nics, rail):
            tiers = 2
        else:
            tiers = 3
    max_nodes = _max_nodes(tiers, radix, r, nics, rail)
    if nodes > max_nodes:
        raise FatTreeError(_too_big_message(nodes, nics, tiers, radix, r, rail, max_nodes, catalog_radices))

    # Leaf groups: servers that share a leaf (or, rail-optimized, one leaf per rail).
    if tiers == 1:
        cap = nodes
    else:
        cap = d if rail else d // nics
    n_groups = -(-nodes // cap)
    group_sizes = _even(nodes, n_groups)
    lpg = nics if rail else 1
    if tiers == 3:
        groups_per_pod = (radix // 2) // lpg
        n_pods = -(-n_groups // groups_per_pod)
        pod_group_counts = _even(n_groups, n_pods)
    else:
        pod_group_counts = [n_groups]
    pods, g = [], 0
    for count in pod_group_counts:
        pods.append((g, g + count))
        g += count

    per_port = 1 if rail else nics
    leaf_sizes, leaf_ups = [], []
    for g0, g1 in pods:
        sizes = [group_sizes[gi] * per_port for gi in range(g0, g1)] * lpg  # rail-major
        leaf_sizes.append(sizes)
        leaf_ups.append([_up_links(m, r) for m in sizes] if tiers > 1 else [0] * len(sizes))

    lay = FatTreeLayout(tiers, rail, radix, r, d, nodes, nics, group_sizes, pods, leaf_sizes, leaf_ups,
                  0, [], 0, max_nodes)
    links = nodes * nics
    cables = links
    if tiers == 1:
        lay.links, lay.cables = links, cables
        return lay
    spine_down_ports = radix if tiers == 2 else radix // 2
    spines = max(-(-sum(ups) // spine_down_ports) for ups in leaf_ups)
    lay.spines_per_pod = spines
    for ups in leaf_ups:
        loads, bundles = _deal_loads(ups, spines)
        lay.spine_loads.append(loads)
        links += bundles
        cables += sum(ups)
    if tiers == 3:
        # Spine j of every pod sends as many cables up as it has down, to core group j.
        cores = max(-(-sum(loads[j] for loads in lay.spine_loads) // radix) for j in range(spines))
        lay.cores_per_group = cores
        for j in range(spines):
            ups = [loads[j] for loads in lay.spine_loads]
            _, bundles = _deal_loads(ups, cores)
            links += bundles
            cables += sum(ups)
    lay.links, lay.cables = links, cables
    return lay


def _too_big_message(nodes, nics, tiers, radix, r, rail, max_nodes, catalog_radices) -> str:
    ports = nodes * nics
    kind = "rail-optimized " if rail else ""
    if tiers == 2:
        text = (f"{nodes:,} servers ({ports:,} NIC ports) do not fit in 2 tiers: a {kind}2-tier fat-tree of "
                f"radix {radix} at {ratio_text(r)} holds at most {max_nodes:,} servers; use")
        options = []
        if nodes <= _max_nodes(3, radix, r, nics, rail):
            options.append("--tiers 3")
    else:
        need = _min_radix(3, nodes, r, nics, rail, radix + 1)
        need_text = f"radix >= {need}" if need else "a larger radix"
        text = (f"{ports:,} NIC ports need 3 tiers of {need_text} at {ratio_text(r)} ({kind}radix {radix} "
                f"holds at most {max_nodes:,} servers of {nics} NICs); use")
        options = []
    need = _min_radix(tiers, nodes, r, nics, rail, radix + 1)
    if need:
        hint = f" ({tiers} tiers need radix >= {need})" if tiers == 2 else ""
        options.append(f"--switch-radix {_suggest_radix(need, catalog_radices)}{hint}")
    ratio = _suggest_ratio(tiers, nodes, radix, r, nics, rail)
    if ratio is not None:
        options.append(f"--oversubscription {ratio:g}")
    if rail and nodes <= _max_nodes(tiers, radix, r, nics, False):
        options.append("--no-rail-optimized")
    if not options:
        options.append("fewer --nodes")
    return f"{text} {', '.join(options[:-1]) + ' or ' if len(options) > 1 else ''}{options[-1]}"


def count_text(n: int, one: str, more: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (more or one + 's')}"
