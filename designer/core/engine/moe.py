"""The routed part of an MoE layer as it runs: how many token rows the busiest GPU of an
expert-parallel (EP) group gets, what the capacity factor drops or pads, and the rows its grouped
expert GEMM really computes.

The all-to-all of each MoE layer synchronizes the EP group, so the layer takes as long as the GPU
with the most routed rows. Two things spread the rows:

- sampling: a micro-batch has a finite number of tokens, each choosing top-k distinct experts
  (what Megatron's --moe-router-force-load-balancing gives: random router logits, RandomSTE in
  megatron/core/transformer/moe/router.py): a GPU holding E/ep of the E experts gets a
  hypergeometric share of each token's k choices;
- a trained router's preferences: some experts are systematically more popular. The spread left
  by an auxiliary loss or by DeepSeek's bias balancing is taken from the published per-expert
  maximal violation (Wang et al., "Auxiliary-Loss-Free Load Balancing Strategy for
  Mixture-of-Experts", arXiv:2408.15664, MaxVio_global: 0.72 with an auxiliary loss, 0.04 with
  bias balancing, 64 experts) as a per-expert coefficient of variation.

The busiest of ep GPUs is the mean plus the expected maximum of ep standard normals (Blom's
approximation) times the spread. A capacity factor (Megatron --moe-expert-capacity-factor) caps
each expert at that multiple of its mean and drops the rest; with
--moe-pad-expert-input-to-capacity every expert computes exactly its capacity.

The grouped GEMM computes each local expert's rows in tiles of `gemm_tile_m` rows (CUTLASS and
DeepGEMM grouped GEMMs align every group to the tile: DeepGEMM's contiguous layout pads each
expert to 128 rows): an expert with M rows costs ceil(M / tile) tiles, about half a tile of waste
per expert, a whole tile for an expert with only a few tokens.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..by_name import FieldValues, Frozen

BALANCE_MODES = ("forced", "aux_loss", "bias", "none")


class ExpertLoad:
    """Routed rows of one MoE layer for one micro-batch, on the busiest GPU of the EP group."""

    load_factor: float  # busiest GPU's routed rows / the group's mean (after the capacity factor)
    dropped_share: float  # share of the routed rows the capacity factor drops
    rows_per_expert: float  # rows of one local expert on the busiest GPU
    padded_rows_per_expert: float  # rows its grouped GEMM computes (whole tiles)

    __slots__ = ("load_factor", "dropped_share", "rows_per_expert", "padded_rows_per_expert")

    def __init__(self, load_factor: float, dropped_share: float, rows_per_expert: float,
                 padded_rows_per_expert: float) -> None:
        self.load_factor = load_factor
        self.dropped_share = dropped_share
        self.rows_per_expert = rows_per_expert
        self.padded_rows_per_expert = padded_rows_per_expert

    @property
    def gemm_factor(self) -> float:
        """Expert GEMM rows on the busiest GPU / the balanced, unpadded mean."""
        mean = self.rows_per_expert / self.load_factor if self.load_factor > 0 else 0.0
        return self.padded_rows_per_expert / mean if mean > 0 else 1.0


def _standard_normal():
    """Normal(0, 1). `statistics` is imported here, not with the engine: with the fractions, decimal
    and random modules it brings it costs every command ~3 ms of start-up, and only MoE layers use it."""
    from statistics import NormalDist

    return NormalDist()


def expected_max_of_normals(n: int) -> float:
    """E[max of n independent standard normals], Blom's approximation Phi^-1((n - 0.375) / (n + 0.25)):
    0.56 for 2, 1.42 for 8, 2.34 for 64 (exact: 0.56, 1.42, 2.41)."""
    if n <= 1:
        return 0.0
    return _standard_normal().inv_cdf((n - 0.375) / (n + 0.25))


def expert_load_cv(mode: str, k) -> float:
    """Per-expert coefficient of variation of a router's systematic load (beyond sampling)."""
    if mode == "forced":
        return 0.0
    if mode == "bias":
        return k.moe_expert_load_cv_bias
    return k.moe_expert_load_cv_aux_loss  # aux_loss, and none (at least as uneven)


def rank_load_cv(experts: int, topk: int, ep: int, group_tokens: float, expert_cv: float) -> float:
    """Coefficient of variation of one EP GPU's routed rows in one micro-batch.

    Sampling: each of the group's tokens picks topk of the experts at random; a GPU holding
    experts/ep of them gets a hypergeometric count of each token's picks, variance
    topk (1/ep)(1 - 1/ep)(E - topk)/(E - 1) per token. Preference: the GPU's share is the mean of
    its experts' loads, drawn without replacement from the E experts' spread."""
    if ep <= 1 or experts <= 1 or topk <= 0 or group_tokens <= 0:
        return 0.0
    p = 1.0 / ep
    mean = group_tokens * topk * p
    var = group_tokens * topk * p * (1 - p) * max(0, experts - topk) / (experts - 1)
    local = experts / ep
    systematic = expert_cv ** 2 / local * (experts - local) / (experts - 1) if local < experts else 0.0
    return math.sqrt(var / mean ** 2 + systematic)


def dropped_share(capacity_factor: float, cv: float) -> float:
    """Share of the rows an expert of load ~ Normal(1, cv) drops above `capacity_factor` x its mean:
    E[(X - c)+] = cv phi(d) - (c - 1)(1 - Phi(d)), d = (c - 1) / cv."""
    if cv <= 0:
        return max(0.0, 1.0 - capacity_factor)
    d = (capacity_factor - 1.0) / cv
    normal = _standard_normal()
    return max(0.0, cv * normal.pdf(d) - (capacity_factor - 1.0) * (1.0 - normal.cdf(d)))


def expert_load(experts: int, topk: int, ep: int, rows_per_gpu: float, group_tokens: float, local_experts: int,
                mode: str, capacity_factor: float | None, pad_to_capacity: bool, tile_m: int, k) -> ExpertLoad:
    """The busiest EP GPU's routed rows and what its grouped GEMM computes.

    `rows_per_gpu`: the group's mean routed rows per GPU (tokens x top-k spread over the GPUs);
    `group_tokens`: tokens the EP group routes together in one micro-batch; `tile_m`: the grouped
    GEMM's row tile."""
    if experts <= 0 or rows_per_gpu <= 0:
        return ExpertLoad(1.0, 0.0, 0.0, 0.0)
    cv = rank_load_cv(experts, topk, ep, group_tokens, expert_load_cv(mode, k))
    factor = 1.0 + expected_max_of_normals(ep) * cv
    dropped = 0.0
    if capacity_factor:
        # one expert's load from one source GPU: its router spread and the sampling of ~mean rows
        mean_rows = group_tokens / max(1, ep) * topk / experts
        expert_cv = math.sqrt(expert_load_cv(mode, k) ** 2 + (1.0 / mean_rows if mean_rows > 0 else 0.0))
        if pad_to_capacity:
            factor = capacity_factor
        else:
            dropped = dropped_share(capacity_factor, expert_cv)
            factor = min(factor, capacity_factor)  # no GPU computes more than its experts' capacity
    local = max(1, local_experts)
    rows = rows_per_gpu * factor / local
    tile = max(1, tile_m)
    padded = 0.0 if rows <= 0 else max(float(tile), rows + tile / 2.0) if not pad_to_capacity else \
        math.ceil(rows / tile) * tile
    return ExpertLoad(factor, dropped, rows, padded)


def ep_overlap_share(num_microbatches: int, pp: int, vp: int, schedule: str = "1f1b") -> float:
    """Share of the micro-batch forwards Megatron's combined 1F1B schedule (--overlap-moe-expert-
    parallel-comm; megatron/core/pipeline_parallel/combined_1f1b.py) runs together with another
    micro-batch's backward, each hiding the other's all-to-all. The forwards of the warm-up (and
    the backwards of the cool-down) run alone: one without pipelining (the first forward, the last
    backward), pp - rank - 1 + 1 with 1F1B, and (pp - rank - 1) x 2 + (vp - 1) x pp + 1 virtual
    micro-batches with the interleaved schedule (Megatron's warm-up count with the overlap on),
    averaged over the stages. DualPipe (DeepSeek-V3 report section 3.2.1) overlaps a forward chunk
    with a backward chunk in its main steps only: a rank of half-rank h pairs
    2 (n/2 - pp + h + 1) + (pp/2 - h - 1) = n - 1.5 pp + h + 1 of its n forwards (deepseek-ai/DualPipe
    dualpipe.py, steps 4 and 5), n - 1.25 pp + 0.75 on average over the ranks."""
    n = max(1, num_microbatches)
    if schedule == "dualpipe":
        return max(0.0, min(1.0, (n - 1.25 * pp + 0.75) / n)) if pp > 1 else (n - 1.0) / n
    total = n * max(1, vp)
    if pp <= 1:
        alone = 1.0
    elif vp > 1:
        alone = (pp - 1) + (vp - 1) * pp + 1.0
    else:
        alone = (pp - 1) / 2.0 + 1.0
    return max(0.0, 1.0 - min(alone, total) / total)


def domains_reached(topk: int, domains: float, groups: int = 0, group_topk: int = 0) -> float:
    """Expected scale-up domains (NVLink domains, else servers) one token's top-k experts sit in,
    with the experts spread evenly over `domains`. Free routing: D (1 - (1 - 1/D)^k). Group-limited
    routing (DeepSeek-V3's node-limited routing, technical report section 2.1.2: each token's experts
    come from at most M of the G groups, one group per node; Megatron --moe-router-num-groups,
    --moe-router-group-topk): M distinct groups drawn from G, G/D of them per domain, reach
    D (1 - C(G - G/D, M) / C(G, M)) domains; with more domains than groups (a group over D/G domains)
    the k experts spread over the M D/G domains of the M groups; never more than free routing reaches."""
    if domains <= 1 or topk <= 0:
        return 1.0
    d = float(domains)
    free = d * (1.0 - (1.0 - 1.0 / d) ** topk)
    if groups <= 1 or not group_topk or group_topk >= groups:
        return free
    if groups < d:  # each group spans d / groups domains: the k experts spread over M of them
        span = group_topk * d / groups
        return min(free, span * (1.0 - (1.0 - 1.0 / span) ** topk))
    per_domain = groups / d
    miss = 1.0
    for i in range(group_topk):  # P(none of the M groups in a given domain), without replacement
        miss *= max(0.0, (groups - per_domain - i) / (groups - i))
    return min(free, d * (1.0 - miss))


def ranks_reached(topk: int, experts: int, ranks: int) -> float:
    """Expected distinct GPUs of an EP group of `ranks` holding one token's top-k experts, E/ranks
    experts each: ranks (1 - C(E - E/ranks, k) / C(E, k)). DeepEP and HybridEP send a token once
    to each such GPU (DeepEP's get_dispatch_layout: is_token_in_rank), which copies it to its local
    experts; Megatron's alltoall dispatcher sends one copy per expert (k per token)."""
    if ranks <= 1 or topk <= 0 or experts <= 0:
        return 1.0
    local = experts / ranks
    miss = 1.0
    for i in range(min(topk, experts)):
        miss *= max(0.0, (experts - local - i) / (experts - i))
    return ranks * (1.0 - miss)


FLEX_BACKENDS = ("deepep", "hybridep")
HYBRIDEP_REFERENCE_RANKS = 8  # the ranks hybridep_*_GBps_per_sm were measured on (B200, one server)


# Its __init__, __eq__ and __hash__ written, frozen through core/by_name.Frozen: dataclass would compile
# five methods at every start.
@dataclass(repr=False, init=False, eq=False)
class FlexPath(Frozen):
    """Where Megatron's flex dispatcher sends one EP group's tokens, per backend.

    DeepEP's normal kernels (github deepseek-ai/DeepEP) reach at most `deepep_max_nvl_peers` GPUs of
    one server over NVLink and send everything else by RDMA to the same-index GPU of each other server,
    which forwards it over NVLink: its units are servers of up to 8 GPUs, and inside an NVLink domain
    larger than a server (GB200 NVL72) the traffic between servers still goes over the NICs. HybridEP
    (DeepEP's hybrid-ep branch, Megatron fused_a2a.py) dedups over whole NVLink domains with TMA
    copies: one NVL72 rack is one unit. Both send a token once per remote unit and once per
    destination GPU inside it."""

    backend: str = "deepep"
    units: float = 1.0  # dedup units the EP group spans (DeepEP: RDMA ranks; HybridEP: NVLink domains)
    gpus_per_unit: float = 1.0
    rdma_inside_domain: bool = False  # DeepEP crossing the servers of one NVLink domain over the NICs
    nvlink_Bps: float = 0.0  # one GPU's NVLink rate per direction (after efficiency)
    nic_Bps: float = 0.0  # one GPU's NIC rate per direction (after efficiency)
    num_sms: int | None = None  # the job's --moe-flex-dispatcher-num-sms (None: the backend's default)

    def __init__(self, backend: str = "deepep", units: float = 1.0, gpus_per_unit: float = 1.0,
                 rdma_inside_domain: bool = False, nvlink_Bps: float = 0.0, nic_Bps: float = 0.0,
                 num_sms: int | None = None) -> None:
        vars(self).update(backend=backend, units=units, gpus_per_unit=gpus_per_unit,
                          rdma_inside_domain=rdma_inside_domain, nvlink_Bps=nvlink_Bps, nic_Bps=nic_Bps,
                          num_sms=num_sms)

    def __eq__(self, other):
        return _FLEX_PATH_VALUES.equal(self, other)

    def __hash__(self):
        return _FLEX_PATH_VALUES.hash(self)

    def sms(self, k) -> int:
        """SMs the backend's kernels occupy while they run."""
        if self.num_sms:
            return self.num_sms
        return k.hybridep_num_sms if self.backend == "hybridep" else k.deepep_num_sms

    def sm_rate_Bps(self, k, combine: bool, ranks: float = HYBRIDEP_REFERENCE_RANKS) -> float:
        """The most the backend's SMs copy per second (its kernels are SM-bound below the link rate).
        HybridEP's TMA copies stop gaining from SMs past about 16 (hybridep_*_max_GBps: its 32-SM rate
        is its 16-SM one), and its rate falls as the GPUs of one NVLink domain it exchanges among
        (`ranks`) grow past the 8 its rates were measured on (hybridep_*_rank_falloff per doubling)."""
        per_sm = {("deepep", False): k.deepep_dispatch_GBps_per_sm, ("deepep", True): k.deepep_combine_GBps_per_sm,
                  ("hybridep", False): k.hybridep_dispatch_GBps_per_sm,
                  ("hybridep", True): k.hybridep_combine_GBps_per_sm}[(self.backend, combine)]
        rate = self.sms(k) * per_sm * 1e9
        if self.backend == "hybridep":
            rate = min(rate, (k.hybridep_combine_max_GBps if combine else k.hybridep_dispatch_max_GBps) * 1e9)
            if ranks > HYBRIDEP_REFERENCE_RANKS:
                falloff = k.hybridep_combine_rank_falloff if combine else k.hybridep_dispatch_rank_falloff
                rate /= 1.0 + falloff * math.log2(ranks / HYBRIDEP_REFERENCE_RANKS)
        return rate

    def domain_ranks(self, ep: int) -> float:
        """GPUs of one NVLink domain the backend exchanges among: the whole EP group inside one unit,
        else the GPUs of the group in each unit."""
        return float(ep) if self.units <= 1 else self.gpus_per_unit


_FLEX_PATH_VALUES = FieldValues(FlexPath)  # its __eq__ and __hash__


def flex_pass_s(path: FlexPath, k, ep: int, experts: int, topk: int, router_groups: tuple[int, int],
                copy_bytes: float, a2a, combine: bool) -> float:
    """Seconds of one flex dispatch (or combine) pass. `copy_bytes`: one copy of the busiest rank's
    tokens on the wire; `a2a(bytes)`: the EP group's all-to-all of that many bytes per rank.

    - across units, a token crosses the network once per remote unit it reaches (domains_reached),
      then is forwarded over NVLink to each GPU there holding one of its experts;
    - inside one unit it goes once to each destination GPU (ranks_reached);
    - DeepEP inside an NVLink domain of several servers: the cross-server part over the NICs;
    - never faster than the backend's SMs copy (sm_rate_Bps)."""
    if ep <= 1 or copy_bytes <= 0:
        return 0.0
    ranks = ranks_reached(topk, experts, ep)
    if path.units <= 1:
        t = a2a(copy_bytes * ranks)
    else:
        reached = domains_reached(topk, path.units, *router_groups)
        t = a2a(copy_bytes * reached)
        g = max(1.0, path.gpus_per_unit)
        if path.nvlink_Bps > 0:  # the forwarding leg: every copy but the rail GPU's own crosses NVLink
            t = max(t, copy_bytes * ranks * (g - 1) / g / path.nvlink_Bps)
        if path.rdma_inside_domain and path.nic_Bps > 0:
            t = max(t, copy_bytes * reached * (path.units - 1) / path.units / path.nic_Bps)
    # the backends' measured rates count every copy a GPU receives, its own included
    return max(t, copy_bytes * ranks / path.sm_rate_Bps(k, combine, path.domain_ranks(ep)))


def wire_bytes(dtype: str | None) -> float:
    """Bytes per hidden element an all-to-all sends in Megatron's --moe-dispatch-fwd-dtype /
    --moe-combine-bwd-dtype: BF16 2; MXFP8 1 plus one E8M0 scale per 32 values (OCP MX spec)."""
    return 1.0 + 1.0 / 32 if dtype == "mxfp8" else 2.0
