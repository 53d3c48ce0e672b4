"""Two design choices the Advisor offers beside its other what-ifs:

  * the pipeline split: Megatron's uneven splits for the plan's PP x VP (splits.py), e.g.
    "decoder_last_pipeline_num_layers=6" when the loss stage is the bottleneck;
  * the NVLink domain size: the same servers and scale-out fabric with the largest NVLink
    domain the accelerator's catalog entry allows (GB200: NVL72 instead of 4-GPU trays),
    never another accelerator.

Both return Advice objects (advice.py); whatif.advise evaluates them with the same engine.
"""
from __future__ import annotations

import dataclasses

from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.elements import NVLINK_SWITCH, split_endpoint
from ..model.job import Parallelism, resolve_workload
from . import fabric_edits as fx
from .advice import Advice
from .splits import Split, loss_stage_extra_chunks, splits_for


def split_candidates(doc: Document, plan: dict, catalog: Catalog | None = None) -> list:
    """Every split splits.py offers for the plan's PP x VP that differs from the plan's own; the
    even split too when the plan is uneven and the layers divide."""
    from ..engine import flops as F
    par = doc.spec.parallelism or Parallelism()
    pp, vp = plan["pp"], plan["vp"]
    if pp <= 1 or doc.spec.workload is None:
        return []
    catalog = catalog or default_catalog()
    w = resolve_workload(doc.spec.workload, catalog.presets())
    current = Split.of(par)
    # the Advisor tries every uneven shape, whether or not the loss stage looks heavy: the engine says
    out = []
    for split in splits_for(w.num_layers, pp, vp, loss_layers=max(1.0 * vp, loss_stage_extra_chunks(F.ModelShape.of(w)))):
        if split == current:
            continue
        keys = split.parallelism_keys()
        new = dataclasses.replace(par, data_parallel_size=None, **keys)
        sets = [f"parallelism.{k}={_value(v)}" for k, v in keys.items()
                if v != getattr(par, k) and not (v is None and getattr(par, k) in (None, ""))]
        title = split.label() if not split.even else "even pipeline split"
        ident = "split-" + ("even" if split.even else "-".join(f"{k.split('_')[0]}{_value(v)}"
                                                            for k, v in split.megatron_keys().items()))
        spec = dataclasses.replace(doc.spec, parallelism=new)
        out.append(Advice(ident, title, "parallelism",
                          "Megatron's uneven pipeline split: lighter first/last stages or the embedding/loss "
                          "counted as a layer", Document(spec, doc.metadata), True, set=sets))
    return out


def _value(v) -> str:
    return "null" if v is None else str(v).lower() if isinstance(v, bool) else str(v)


def domain_sizes(doc: Document) -> dict[str, int]:
    """GPUs per NVLink domain, by domain (a server without one is its own domain)."""
    sizes: dict[str, int] = {}
    for node in doc.nodes:
        key = node.nvlink_domain or f"\0{node.id}"
        sizes[key] = sizes.get(key, 0) + node.accelerator_count
    return sizes


def with_nvlink_domains(doc: Document, domain_gpus: int, catalog: Catalog | None = None) -> Document:
    """A copy whose servers, in file order, share NVLink domains of `domain_gpus` GPUs (whole
    servers); NotApplicable when the parts do not allow it.

    A design the generator drew is generated again with the same parameters and
    --nvlink-domain-gpus (its NVLink switch trays and racks come with it, and are priced); any
    other design keeps its scale-out fabric and racks, its servers relabelled (and NVLink switch
    trays of the old domains left out: they would be cabled across the new ones)."""
    catalog = catalog or default_catalog()
    if not doc.nodes:
        raise fx.NotApplicable("the design has no servers")
    kinds = {(n.accelerator, n.accelerator_count) for n in doc.nodes}
    if len(kinds) > 1:
        raise fx.NotApplicable("the servers differ (accelerator or GPUs per server): one domain size does not fit all")
    name, per_node = kinds.pop()
    canonical = catalog.resolve("accelerators", name)
    if canonical is None:
        raise fx.NotApplicable(f"unknown accelerator {name!r}")
    most = max(catalog.accelerators[canonical].scale_up_domain_max, per_node)
    if domain_gpus % per_node or domain_gpus > most:
        raise fx.NotApplicable(f"{canonical} NVLink domains hold whole {per_node}-GPU servers up to {most} GPUs, "
                               f"not {domain_gpus}")
    regenerated = _regenerated(doc, domain_gpus, catalog)
    if regenerated is not None:
        return regenerated
    out = fx.detached_copy(doc)
    trays = domain_gpus // per_node
    for i, node in enumerate(out.nodes):
        node.nvlink_domain = f"nvl{i // trays}" if trays > 1 else None
    old_trays = {s.id for s in out.switches if s.fabric == NVLINK_SWITCH}
    if old_trays:
        spec = dataclasses.replace(
            out.spec, switches=[s for s in out.switches if s.id not in old_trays],
            links=[link for link in out.links
                   if split_endpoint(link.a)[0] not in old_trays and split_endpoint(link.b)[0] not in old_trays])
        out = Document(spec, out.metadata)
    return out


def _scale_out(doc: Document) -> tuple:
    """What the generator decides besides the domains: servers, scale-out switches and links."""
    return ([n.id for n in doc.nodes], sum(1 for s in doc.switches if s.fabric != NVLINK_SWITCH),
            sum(1 for link in doc.links if link.kind != "nvlink"))


def _regenerated(doc: Document, domain_gpus: int, catalog: Catalog) -> Document | None:
    """The design generated again with NVLink domains of `domain_gpus`, or None when it does not
    look like the generator's (other servers, switches or links than the generator draws)."""
    from ..generate.fat_tree import FatTreeError, generate_fat_tree

    try:
        params = fx.fabric_parameters(doc)
        params.pop("nvlink_domain_gpus", None)
        out = generate_fat_tree(len(doc.nodes), catalog=catalog, name=doc.metadata.name,
                                nvlink_domain_gpus=domain_gpus, **params)
    except (fx.NotApplicable, FatTreeError):
        return None
    if _scale_out(out) != _scale_out(doc):
        return None
    for node, src in zip(out.nodes, doc.nodes):  # the servers' own settings (as fabric_edits.extended)
        node.scale_up, node.scale_up_gbps = src.scale_up, src.scale_up_gbps
        node.gpus_per_nic, node.gpudirect_rdma = src.gpus_per_nic, src.gpudirect_rdma
    out.spec.workload, out.spec.parallelism = doc.spec.workload, doc.spec.parallelism
    out.spec.calibration = dict(doc.spec.calibration)
    out.spec.prices = doc.spec.prices
    return Document(out.spec, doc.metadata)


def domain_candidates(doc: Document, catalog: Catalog | None = None) -> list:
    """The largest NVLink domain the servers' accelerator allows, when the design uses a smaller one."""
    catalog = catalog or default_catalog()
    if not doc.nodes:
        return []
    node = doc.nodes[0]
    canonical = catalog.resolve("accelerators", node.accelerator)
    if canonical is None:
        return []
    per_node = node.accelerator_count
    most = catalog.accelerators[canonical].scale_up_domain_max // per_node * per_node
    now = max(domain_sizes(doc).values())
    if most <= max(now, per_node):  # an HGX part: the server is the largest domain there is
        return []
    was = f"{per_node}-GPU servers" if now <= per_node else f"NVL{now}"
    title = f"NVL{most} instead of {was}"
    description = (f"the same {canonical} servers with {most // per_node} servers per NVLink domain ({most} GPUs, "
                   "with its NVLink switch trays where the design is the generator's): TP, EP, CP and DP groups "
                   "inside a domain use NVLink")
    try:
        new = with_nvlink_domains(doc, most, catalog)
    except fx.NotApplicable as exc:
        return [Advice(f"nvlink-domain-{most}", title, "hardware", description, None, False, error=str(exc))]
    return [Advice(f"nvlink-domain-{most}", title, "hardware", description, new, False)]


def split_change(doc: Document, pp: int, vp: int, catalog: Catalog | None = None) -> dict | None:
    """The split keys to change when the plan moves to PP x VP: none when the file's own split
    still works there, else those of the first split splits.py offers (the even one where the
    layers divide); None when Megatron accepts no split of the layers over PP x VP."""
    from .splits import stage_layer_counts

    par = doc.spec.parallelism or Parallelism()
    if doc.spec.workload is None or pp <= 1:
        return {}
    layers = resolve_workload(doc.spec.workload, (catalog or default_catalog()).presets()).num_layers
    current = Split.of(par)
    if stage_layer_counts(layers, pp, vp, current) is not None:
        return {}
    offered = splits_for(layers, pp, vp)
    if not offered:
        return None
    return {k: v for k, v in offered[0].parallelism_keys().items() if v != getattr(par, k)}


def vp_choices(doc: Document, pp: int, most: int = 8) -> list[int]:
    """Virtual stages 2..most for which some split of the layers over PP x VP is accepted."""
    return [v for v in range(2, most + 1) if split_change(doc, pp, v) is not None]
