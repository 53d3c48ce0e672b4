"""The design-review report: one evaluated design as a PDF (`designer report`).

Sections: summary (headline numbers), cluster (with pictures of the rack canvas and the logical
fabric view), job (model and plan), step-time breakdown (table, stacked bar and the step's
timeline), memory per GPU, bottlenecks, collectives, pipeline stages, most utilized links,
the catalog figures of the accelerator, the calibration constants in force and the warnings.
Numbers that the CLI's `evaluate` table also prints use the same format (step time and
breakdown with 3 decimals, shares and MFU as percentages with 1 decimal). The pictures come from
the caller as PNG (designer.ui.common.report_pictures draws them; core draws no pictures); the pages are
written by reportlab (pdf.py).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import os
from collections import Counter

from ..analysis.link_load import link_load, seconds_text, share_text
from ..engine.constants import AcceleratorConstants, EngineConstants
from ..engine.evaluate import Evaluation
from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.elements import split_endpoint
from .pdf import PdfDocument, text_width
from .report_layout import (
    ACCENT, CATEGORY_COLORS, CATEGORY_MEANING, Column, FOOTER_Y, KEY_EFFICIENCIES, LEFT, Layout,
    MEMORY_COLORS, MEMORY_MEANING, MUTED, NO_PICTURES, PAGE_H, PAGE_W, RIGHT, RULE, ReportPictures,
    WARN, WARN_FILL, WIDTH, fit, short_source, _bytes, _g, _int, _pct, _ratio, _s3,
)


# ---- the cluster's shape ---------------------------------------------------------------------

def _leaf_oversubscription(doc: Document) -> dict[str, tuple[float, float]]:
    """Per switch tier: (min, max) of down:up bandwidth over the switches that have up-links."""
    tier_rank = {"leaf": 0, "spine": 1, "core": 2}
    tier_of = {s.id: s.tier for s in doc.switches}
    nodes = {n.id for n in doc.nodes}
    down: dict[str, float] = {}
    up: dict[str, float] = {}
    for link in doc.links:
        a, _ = split_endpoint(link.a)
        b, _ = split_endpoint(link.b)
        bw = link.bandwidth_gbps * link.count
        for me, other in ((a, b), (b, a)):
            if me not in tier_of:
                continue
            if other in nodes:
                down[me] = down.get(me, 0.0) + bw
            elif other in tier_of:
                if tier_rank.get(tier_of[other], 0) > tier_rank.get(tier_of[me], 0):
                    up[me] = up.get(me, 0.0) + bw
                elif tier_rank.get(tier_of[other], 0) < tier_rank.get(tier_of[me], 0):
                    down[me] = down.get(me, 0.0) + bw
    out: dict[str, tuple[float, float]] = {}
    for tier in ("leaf", "spine", "core"):
        ratios = [down.get(s.id, 0.0) / up[s.id] for s in doc.switches
                  if s.tier == tier and up.get(s.id, 0) > 0 and down.get(s.id, 0) > 0]
        if ratios:
            out[tier] = (min(ratios), max(ratios))
    return out


def _kinds(counter: Counter, what: str) -> str:
    """'a' when every item is the same, else 'a (3 servers); b (1 server)'."""
    if not counter:
        return "none"
    if len(counter) == 1:
        return next(iter(counter))
    return "; ".join(f"{k} ({_int(v)} {what})" for k, v in counter.most_common())


def _cluster_rows(doc: Document, result: Evaluation, catalog: Catalog) -> tuple[list, list]:
    c = doc.counts()
    by_tier = Counter(s.tier for s in doc.switches)
    tiers = [t for t in ("leaf", "spine", "core") if by_tier.get(t)]
    switch_text = _int(c["switches"])
    if by_tier:
        switch_text += " (" + ", ".join(f"{by_tier[t]} {t}" for t in tiers) + ")"
    link_kinds = Counter()
    for link in doc.links:
        link_kinds[link.kind] += link.count
    accel = Counter()
    for n in doc.nodes:
        name = catalog.resolve("accelerators", n.accelerator) or n.accelerator
        accel[name] += n.accelerator_count
    gpus_used = result.num_gpus
    size_rows = [
        ("Racks", _int(c["racks"])),
        ("Servers", _int(c["nodes"])),
        ("GPUs", _int(c["gpus"]) + ("" if gpus_used == c["gpus"] else f" ({_int(gpus_used)} used by the job)")),
        ("Accelerators", ", ".join(f"{_int(v)} x {k}" for k, v in accel.most_common()) or "none"),
        ("Switches", switch_text),
        ("Links", f"{_int(c['links'])} links, {_int(c['cables'])} cables"),
        ("Cables by kind", ", ".join(f"{_int(v)} {k}" for k, v in link_kinds.most_common()) or "none"),
    ]
    # servers: scale-up and NICs
    scale_up = Counter()
    nics = Counter()
    for n in doc.nodes:
        try:
            acc = catalog.accelerator(n.accelerator)
            su = n.scale_up_gbps or acc.scale_up_gbps
        except KeyError:
            su = n.scale_up_gbps or 0
        scale_up[f"{n.scale_up} {su:g} Gb/s per GPU"] += 1
        gbps, kind, model = n.nic_gbps, n.nic_kind, n.nic_model
        if model and catalog.resolve("nics", model):
            nic = catalog.nic(model)
            gbps, kind, model = nic.gbps, nic.kind, nic.name
        label = f"{n.nic_count} x {gbps:g} Gb/s {kind}" + (f" ({model})" if model else "")
        if n.gpus_per_nic > 1:
            label += f", {n.gpus_per_nic} GPUs per NIC"
        if not n.gpudirect_rdma:
            label += ", no GPUDirect RDMA"
        nics[label] += 1
    switch_models = Counter()
    for s in doc.switches:
        model = s.model or "generic"
        switch_models[f"{s.tier}: {model}, {s.radix} x {s.port_gbps:g} Gb/s" + (", SHARP" if s.sharp else "")] += 1
    fabrics = sorted({s.fabric for s in doc.switches})
    rails = sorted({s.rail for s in doc.switches if s.rail is not None})
    over = _leaf_oversubscription(doc)
    over_text = []
    for tier, (lo, hi) in over.items():
        ratio = _ratio(lo) if abs(hi - lo) < 1e-9 else f"{_ratio(lo)} to {_ratio(hi)}"
        blocking = " (non-blocking)" if hi <= 1.0 + 1e-9 else ""
        over_text.append(f"{tier} {ratio}{blocking}")
    stragglers = sum(1 for n in doc.nodes if n.slowdown > 1 or any(g > 1 for g in n.gpu_slowdown))
    degraded = sum(1 for link in doc.links if link.slowdown > 1)
    fabric_rows = [
        ("Scale-up", _kinds(scale_up, "servers")),
        ("NICs per server", _kinds(nics, "servers")),
        ("Scale-out fabric", ", ".join(fabrics) or "none (single server)"),
        ("Tiers", f"{len(tiers)} ({', '.join(tiers)})" if tiers else "none"),
        ("Rail-optimized", f"yes, {len(rails)} rails" if rails else "no"),
        ("Oversubscription (down:up)", "; ".join(over_text) if over_text else "not derivable (no up-links)"),
        ("Switch models", "; ".join(f"{_int(v)} x {k}" for k, v in switch_models.most_common()) or "none"),
    ]
    if stragglers or degraded:
        fabric_rows.append(("Degraded parts", f"{stragglers} slow server{'s' if stragglers != 1 else ''}, "
                                              f"{degraded} slowed link{'s' if degraded != 1 else ''}"))
    return size_rows, fabric_rows


def _job_rows(doc: Document, result: Evaluation, catalog: Catalog) -> tuple[list, list]:
    from ..engine import flops as F
    from ..model.job import Parallelism, resolve_workload

    from ..model.jobs import document_jobs

    first = document_jobs(doc)[0]  # with several jobs: the first one's (the Jobs section lists them all)
    workload, parallelism = first.workload, first.parallelism
    w = resolve_workload(workload, catalog.presets())
    m = F.ModelShape.of(w)
    counts = F.parameter_count(m)
    params = counts["embedding"] + counts["output"] + counts["layers"]
    layers = _int(m.layers) + (f" ({m.dense_layers} dense, {m.moe_layers} MoE)" if m.experts else "")
    model = [
        ("Preset", workload.preset or "(explicit keys)"),
        ("Parameters", f"{params / 1e9:.2f} B" + (f" ({counts['experts'] / 1e9:.2f} B in experts)" if m.experts else "")),
        ("Layers", layers),
        ("Hidden size", _int(m.h)),
        ("FFN hidden size", _int(m.f) + (" (SwiGLU)" if m.phi == 3 else "")),
        ("Attention heads", f"{m.heads} (head dim {m.head_dim})"),
        ("KV groups", f"{m.groups}" + (" (MHA)" if m.groups == m.heads else " (GQA)")),
        ("Sequence length", _int(m.s)),
        ("Vocabulary", _int(m.vocab) + (", untied output" if m.untied else ", tied embeddings")),
        ("Experts", f"{m.experts}, top-{m.topk}, expert FFN {_int(m.f_expert)}"
         + (f", shared {_int(m.f_shared)}" if m.f_shared else "") if m.experts else "none (dense)"),
        ("Global batch", f"{_int(m.global_batch)} samples, {_int(m.global_batch * m.s)} tokens"),
        ("Micro-batch", _int(m.micro_batch)),
        ("Precision", m.precision),
    ]
    p = result.plan
    par = parallelism or Parallelism()
    zero = par.zero_stage
    if zero:
        optimizer = f"ZeRO stage {zero}" + (" (FSDP)" if zero >= 3 else "")
    elif par.use_distributed_optimizer:
        optimizer = "distributed optimizer (ZeRO-1)"
    else:
        optimizer = "replicated (no sharding)"
    overlaps = [name for name, on in (("grad reduce", par.overlap_grad_reduce),
                                      ("param gather", par.overlap_param_gather),
                                      ("TP comm", par.tp_comm_overlap)) if on]
    plan = [
        ("GPUs", f"{_int(result.num_gpus)} x {p['accelerator']}"),
        ("TP / PP / CP", f"{p['tp']} / {p['pp']} / {p['cp']}"),
        ("EP / expert TP", f"{p['ep']} / {p['etp']}"),
        ("DP", str(p["dp"])),
        ("Schedule", p["schedule"]),
        ("Virtual stages", f"{p['vp']} per stage" if p["vp"] > 1 else "1 (not interleaved)"),
        ("Micro-batches", f"{p['num_microbatches']} per step per replica"),
        ("Sequence parallel", "yes" if par.sequence_parallel else "no"),
        ("Recompute", par.recompute_granularity),
        ("Optimizer sharding", optimizer),
        ("Overlaps", ", ".join(overlaps) if overlaps else "none"),
        ("Attention backend", par.attention_backend),
        ("Rank order", p["rank_order"] + " (fastest first)"),
    ]
    return model, plan


# ---- the report ------------------------------------------------------------------------------

def _summary_sentences(result: Evaluation, hbm_gib: float) -> list[str]:
    b = result.breakdown_s
    step = result.step_time_s or 1.0
    compute = b["compute"] + b["recompute"]
    comm_keys = [k for k in b if k.endswith("_comm")]
    comm = sum(b[k] for k in comm_keys)
    waits = b["bubble"] + b["imbalance_wait"]
    groups = {"compute": compute, "communication": comm, "pipeline bubble and waits": waits,
              "the optimizer step": b["optimizer"]}
    main = max(groups, key=groups.get)
    out = [f"The step is dominated by {main}: {_pct(groups[main] / step)} of {_s3(result.step_time_s)} s "
           f"(compute incl. recompute {_pct(compute / step)}, exposed communication {_pct(comm / step)}, "
           f"bubble and waits {_pct(waits / step)})."]
    if comm > 0:
        worst = max(comm_keys, key=lambda k: b[k])
        where = next((x["resource"] for x in result.bottlenecks if x["kind"] == worst), "")
        out.append(f"The largest exposed communication is {worst} ({_s3(b[worst])} s, {_pct(b[worst] / step)})"
                   + (f", limited by {where}." if where else "."))
    hidden = sum(result.hidden_comm_s.values())
    if hidden > 0:
        out.append(f"{_s3(hidden)} s of communication is hidden behind compute.")
    mem = result.memory_gib_per_gpu
    if result.fits_in_memory:
        out.append(f"Memory: {mem['total']:.1f} GiB of {hbm_gib:g} GiB per GPU ({_pct(mem['total'] / hbm_gib)}): fits.")
    else:
        out.append(f"Memory: DOES NOT FIT. {result.memory_reason}")
    if result.warnings:
        out.append(f"{len(result.warnings)} warning(s), listed at the end of this report.")
    return out


def _headline(lay: Layout, result: Evaluation, peak: float) -> None:
    result.plan
    boxes = [
        ("step time", f"{_s3(result.step_time_s)} s", "one optimizer step"),
        ("tokens / s", f"{result.tokens_per_s:.0f}", f"on {_int(result.num_gpus)} GPUs"),
        ("model TFLOP/s", f"{result.model_tflops_per_gpu:.1f}", f"per GPU (peak {peak:g})"),
        ("MFU", _pct(result.mfu), "model FLOPs / peak"),
        ("HFU", _pct(result.hfu), "incl. recompute"),
    ]
    gutter = 8.0
    bw = (WIDTH - gutter * (len(boxes) - 1)) / len(boxes)
    h = 54.0
    lay.ensure(h + 10)
    top = lay.y - 2
    for i, (label, value, sub) in enumerate(boxes):
        x = LEFT + i * (bw + gutter)
        lay.pdf.rect(x, top - h, bw, h, fill=(0.95, 0.965, 0.98), stroke=RULE, line_width=0.6)
        lay.pdf.rect(x, top - 3, bw, 3, fill=ACCENT)
        lay.pdf.text(x + 7, top - 15, fit(label.upper(), bw - 14, 7, True), size=7, bold=True, color=MUTED)
        size = 17.0
        while size > 9 and text_width(value, size, "Helvetica-Bold") > bw - 14:
            size -= 1
        lay.pdf.text(x + 7, top - 35, value, size=size, bold=True, color=ACCENT)
        lay.pdf.text(x + 7, top - 47, fit(sub, bw - 14, 6.8), size=6.8, color=MUTED)
    lay.y = top - h - 12


def _title_block(lay: Layout, doc: Document, result: Evaluation, source_name: str, when: _dt.datetime,
                 version: str) -> None:
    pdf = lay.pdf
    band_bottom = PAGE_H - 92
    pdf.rect(0, band_bottom, PAGE_W, 92, fill=ACCENT)
    pdf.text(LEFT, PAGE_H - 34, "DESIGN REVIEW  -  TRAINING-STEP PREDICTION", size=8, bold=True,
             color=(0.75, 0.83, 0.93))
    name = doc.metadata.name or "untitled"
    size = 22.0
    while size > 12 and text_width(name, size, "Helvetica-Bold") > WIDTH:
        size -= 1
    pdf.text(LEFT, PAGE_H - 62, fit(name, WIDTH, size, True), size=size, bold=True, color=(1, 1, 1))
    p = result.plan
    sub = (f"{_int(result.num_gpus)} x {p['accelerator']}  |  TP {p['tp']} PP {p['pp']} CP {p['cp']} EP {p['ep']} "
           f"DP {p['dp']}  |  {p['schedule']}")
    pdf.text(LEFT, PAGE_H - 80, fit(sub, WIDTH, 9), size=9, color=(0.85, 0.9, 0.96))
    lay.y = band_bottom - 12
    rows = [
        ("Design", name),
        ("Description", doc.metadata.description or "(none)"),
        ("File", source_name or "(not saved)"),
        ("Date", when.strftime("%Y-%m-%d %H:%M %Z").strip()),
        ("Tool", f"designer {version} (engine time {result.engine_time_s * 1000:.0f} ms)"),
    ]
    lay.table([Column("", 0.16), Column("", 0.84)], [list(r) for r in rows], size=8.5, header=False,
              zebra=False, label_column=True)


def build_report(doc: Document, result: Evaluation, path: str | os.PathLike, source_name: str = "",
                 catalog: Catalog | None = None, when: _dt.datetime | None = None, comparison=None,
                 pictures: ReportPictures = NO_PICTURES) -> int:
    """Write the design-review PDF of `result` (an evaluation of `doc`) to `path`; the page count.
    `comparison` (designer.core.analysis.compare.Comparison, this design as A) adds a section on both;
    `pictures`: the canvas, the logical view and the timeline as the caller rendered them."""
    pdf = render_report(doc, result, source_name, catalog, when, comparison=comparison, pictures=pictures)
    pdf.save(path)
    return len(pdf.pages)


def render_report(doc: Document, result: Evaluation, source_name: str = "", catalog: Catalog | None = None,
                  when: _dt.datetime | None = None, comparison=None,
                  pictures: ReportPictures = NO_PICTURES) -> PdfDocument:
    """The report as a PdfDocument (not yet written)."""
    from ... import __version__

    catalog = catalog or default_catalog()
    when = when or _dt.datetime.now().astimezone()
    name = doc.metadata.name or "untitled"
    pdf = PdfDocument(title=f"Design review: {name}", producer=f"designer {__version__}",
                      subject="Training-step prediction", creation_date=when)
    lay = Layout(pdf, f"Design review: {name}")
    lay.new_page()
    acc = catalog.accelerator(result.plan["accelerator"])
    precision = result.plan["precision"]
    peak = acc.peak_tflops.get(precision, 0.0)

    _title_block(lay, doc, result, source_name, when, __version__)

    # 1 summary
    lay.heading("Summary", keep=120)
    _headline(lay, result, peak)
    lay.bullets(_summary_sentences(result, acc.hbm_gib))

    if comparison is not None:  # the slide for the meeting: right after the summary
        from .report_compare import comparison_section

        comparison_section(lay, comparison)

    # 2 cluster
    lay.heading("Cluster", keep=160)
    size_rows, fabric_rows = _cluster_rows(doc, result, catalog)
    lay.kv_panels([("Size", size_rows), ("Servers and fabric", fabric_rows)])
    _pictures(lay, pictures, ("canvas", "logical"))

    _jobs_section(lay, result)

    # 3 job
    lay.heading("Job" if len(result.jobs) < 2 else f"Job {result.jobs[0].name}", keep=200)
    model_rows, plan_rows = _job_rows(doc, result, catalog)
    lay.kv_panels([("Model and batch (resolved)", model_rows), ("Parallelism plan", plan_rows)])

    # 4 breakdown
    _breakdown_section(lay, result, pictures)

    # 5 memory
    _memory_section(lay, result, acc)

    # 6 bottlenecks
    _bottlenecks_section(lay, result)

    # 7 collectives
    _collectives_section(lay, result)

    # 8 pipeline stages
    _stages_section(lay, result)

    # 9 links: by class (symmetric links loaded alike are one row with their count)
    _links_section(lay, doc, result)

    # 10 catalog figures
    _catalog_section(lay, acc)

    # 11 calibration
    lay.heading("Calibration constants in force", keep=120)
    _calibration(lay, doc, result, acc, catalog)

    # 12 warnings
    _warnings_section(lay, result)

    _footers(pdf, name, __version__)
    return pdf


def _jobs_section(lay: Layout, result: Evaluation) -> None:
    """The jobs sharing the fabric, each alone and shared (docs/jobs.md); only with several jobs."""
    if len(result.jobs) < 2:
        return
    lay.heading("Jobs on the shared fabric", keep=120)
    rows = []
    for job in result.jobs:
        who = ", ".join(f"{r['job']} {r['share']:+.1%} ({r['resource']})" for r in job.interference
                        if r["share"] >= 0.0005) or "-"
        rows.append([job.name, f"{job.result.num_gpus:,}", _s3(job.alone.step_time_s), _s3(job.result.step_time_s),
                     f"{job.slowdown_vs_alone:+.1%}", who])
    lay.table([Column("job", 0.18), Column("GPUs", 0.08, "right"), Column("alone (s)", 0.11, "right"),
               Column("shared (s)", 0.11, "right"), Column("slower", 0.09, "right"),
               Column("slowed by", 0.43)], rows)
    lay.paragraph("The sections below describe the first job.", size=8.5, color=MUTED)


def _breakdown_section(lay: Layout, result: Evaluation, pictures: ReportPictures) -> None:
    """Where the step goes on the critical device, by category, and the timeline picture."""
    step = result.step_time_s
    lay.heading("Step-time breakdown (critical path)", keep=200)
    lay.paragraph(f"Where the {_s3(step)} s of one step go on the critical device, by category; the shares "
                  f"add up to the step time. Communication hidden behind compute is listed apart and not "
                  f"part of the step.", size=8.5, color=MUTED)
    b = result.breakdown_s
    segments = [(k, v, CATEGORY_COLORS.get(k, "#999999")) for k, v in b.items()]
    lay.stacked_bar(segments, step, height=24)
    lay.legend([(f"{k} {_pct(v / step if step else 0)}", CATEGORY_COLORS.get(k, "#999999"))
                for k, v in b.items() if v > 0])
    rows, swatches = [], []
    for key, value in b.items():
        share = value / step if step else 0
        hid = result.hidden_comm_s.get(key, 0.0)
        rows.append([key, _s3(value), _pct(share), _s3(hid) if hid > 0 else "", CATEGORY_MEANING.get(key, "")])
        swatches.append(CATEGORY_COLORS.get(key, "#999999"))
    total_hidden = sum(result.hidden_comm_s.values())
    rows.append(["step time", _s3(step), _pct(1.0 if step else 0), _s3(total_hidden) if total_hidden else "",
                 "the sum of the above"])
    swatches.append(None)
    lay.table([Column("category", 0.19), Column("seconds", 0.1, "right"), Column("share", 0.09, "right"),
               Column("hidden (s)", 0.1, "right"), Column("what it is", 0.52)], rows, swatches=swatches,
              bold_rows={len(rows) - 1})
    _pictures(lay, pictures, ("timeline",))


def _memory_section(lay: Layout, result: Evaluation, acc) -> None:
    """Memory per GPU against the accelerator's HBM."""
    lay.heading("Memory per GPU", keep=170)
    mem = result.memory_gib_per_gpu
    hbm = acc.hbm_gib
    parts = [k for k in ("params", "grads", "optimizer", "activations", "temporaries") if k in mem]
    if mem["total"] <= hbm:
        caption = f"Bar width = the {hbm:g} GiB of HBM of one {acc.name}; shares are of the memory in use."
        extra = [("free HBM", (0.97, 0.97, 0.97))]
    else:
        caption = (f"Bar width = the {mem['total']:.1f} GiB needed; the red mark is where the {hbm:g} GiB of HBM "
                   f"of one {acc.name} ends.")
        extra = []
    lay.stacked_bar([(k, mem[k], MEMORY_COLORS[k]) for k in parts], mem["total"], height=18, capacity=hbm,
                    caption=caption)
    lay.legend([(k, MEMORY_COLORS[k]) for k in parts] + extra)
    rows = [[k, f"{mem[k]:.1f}", _pct(mem[k] / hbm), MEMORY_MEANING[k]] for k in parts]
    rows.append(["total", f"{mem['total']:.1f}", _pct(mem["total"] / hbm), "the most loaded pipeline stage"])
    rows.append(["HBM capacity", f"{hbm:g}", "100.0%", f"{acc.name} device memory, as the driver reports it"])
    head = hbm - mem["total"]
    rows.append(["headroom" if head >= 0 else "over by", f"{abs(head):.1f}", _pct(abs(head) / hbm),
                 "fits" if result.fits_in_memory else "DOES NOT FIT"])
    lay.table([Column("item", 0.2), Column("GiB", 0.1, "right"), Column("of HBM", 0.1, "right"),
               Column("what it is", 0.6)], rows, swatches=[MEMORY_COLORS[k] for k in parts] + [None] * 3,
              bold_rows={len(parts), len(rows) - 1},
              row_colors={} if result.fits_in_memory else {len(rows) - 1: WARN_FILL})
    if not result.fits_in_memory and result.memory_reason:
        lay.paragraph(result.memory_reason, size=8.5, color=WARN)


def _bottlenecks_section(lay: Layout, result: Evaluation) -> None:
    """The resources that add the most to the step."""
    step = result.step_time_s
    lay.heading("Top bottlenecks", keep=80)
    if result.bottlenecks:
        rows = []
        for i, x in enumerate(result.bottlenecks, 1):
            coll = x.get("collective", "")
            if coll and x.get("algorithm"):
                coll += f" ({x['algorithm']})"
            rows.append([str(i), x["resource"], x["kind"], coll or "-", _s3(x["exposed_s"]),
                         _pct(x["exposed_s"] / step if step else 0), _pct(x["utilization"])])
        lay.table([Column("#", 0.04, "right"), Column("resource", 0.32), Column("kind", 0.13),
                   Column("collective", 0.19), Column("exposed s", 0.11, "right"), Column("of step", 0.1, "right"),
                   Column("utilization", 0.11, "right")], rows)
        lay.paragraph("Exposed: the time this category adds to the step. Utilization: the share of the "
                      "resource's capacity the collective uses while it runs (compute: its share of the step).",
                      size=7.5, color=MUTED)
    else:
        lay.paragraph("No bottleneck was identified.", size=9)


def _collectives_section(lay: Layout, result: Evaluation) -> None:
    """One call of each collective as costed."""
    lay.heading("Collectives", keep=80)
    if result.collectives:
        rows = [[key, c["algorithm"], c["protocol"], f"{c['time_s'] * 1e3:.3f}", f"{c['latency_s'] * 1e3:.3f}",
                 f"{c['bandwidth_s'] * 1e3:.3f}", c.get("bottleneck") or "-"]
                for key, c in result.collectives.items()]
        lay.table([Column("group:primitive", 0.19), Column("algorithm", 0.1), Column("protocol", 0.09),
                   Column("time ms", 0.1, "right"), Column("latency ms", 0.11, "right"),
                   Column("bandwidth ms", 0.135, "right"), Column("bottleneck", 0.275)], rows)
        lay.paragraph("One call of each collective as costed (the largest message of that kind); time = latency "
                      "+ bandwidth term.", size=7.5, color=MUTED)
    else:
        lay.paragraph("The job runs no collectives (a single GPU).", size=9)


def _stages_section(lay: Layout, result: Evaluation) -> None:
    """Each pipeline stage's compute (only with several stages)."""
    if len(result.stages) < 2:
        return
    lay.heading("Pipeline stages", keep=80)
    rows = [[str(s["stage"]), str(s["layers"]), _s3(s["forward_s"]), _s3(s["backward_s"]), _s3(s["busy_s"]),
             _s3(s["end_s"])] for s in result.stages]
    lay.table([Column("stage", 0.1, "right"), Column("layers", 0.1, "right"),
               Column("forward s per micro-batch", 0.2, "right"), Column("backward s per micro-batch", 0.2, "right"),
               Column("busy s", 0.2, "right"), Column("last compute ends s", 0.2, "right")], rows)


def _links_section(lay: Layout, doc: Document, result: Evaluation) -> None:
    """The busiest scale-out links, by class of links loaded alike."""
    lay.heading("Most utilized links", keep=80)
    analysis = link_load(result, doc) if result.link_load else None
    classes = analysis.classes() if analysis is not None else []
    busy = [c for c in classes if c.busy_share_of_step > 0][:10]
    if busy:
        rows = []
        for c in busy:
            answer = analysis.answer(c.members[0])
            phase = answer.phase
            in_phase = f"{share_text(phase.share)} of {phase.name} ({seconds_text(phase.phase_s)})" if phase else "-"
            verdict = ", ".join(f"bottleneck of {p.name}" + (" (critical path)" if p.critical else "")
                                for p in answer.bottleneck_of) or "-"
            kinds = ", ".join(f"{k.replace('_comm', '')} {_bytes(v)}" for k, v in
                              sorted(answer.bytes_by_kind.items(), key=lambda kv: -kv[1]))
            rows.append([c.label, c.cable, share_text(c.busy_share_of_step), in_phase, verdict,
                         _bytes(answer.bytes_per_step), kinds])
        lay.table([Column("links (each)", 0.19), Column("cable", 0.15), Column("busy of step", 0.08, "right"),
                   Column("busy of its phase", 0.16, "right"), Column("verdict", 0.16),
                   Column("bytes / step", 0.09, "right"), Column("traffic by kind", 0.17)], rows)
        lay.paragraph(f"Links of one tier and cable with the same load (within 1 %) are one row, with each member's "
                      f"figures; {len(busy)} of {_int(len(classes))} classes, {_int(len(doc.links))} links. A phase is "
                      "the time one kind of traffic takes in the step (exposed + hidden); a link as busy as the "
                      "phase's busiest and busy for half of it is its bottleneck, on the critical path when part of "
                      "the phase is exposed.", size=7.5, color=MUTED)
    else:
        lay.paragraph("No traffic crosses the scale-out links.", size=9)


def _catalog_section(lay: Layout, acc) -> None:
    """The accelerator's catalog figures with their sources."""
    lay.heading(f"Catalog figures: {acc.name}", keep=120)
    src = acc.sources
    rows = []
    first = True
    for prec, value in acc.peak_tflops.items():
        rows.append([f"peak TFLOP/s {prec}", f"{value:g}", short_source(src.get("peak_tflops", "")) if first
                     else "(as above)"])
        first = False
    rows += [
        ["best GEMM TFLOP/s (bf16)", f"{acc.best_gemm_tflops:g}", short_source(src.get("best_gemm_tflops", ""))],
        ["HBM GiB", f"{acc.hbm_gib:g}", short_source(src.get("hbm_gib", ""))],
        ["HBM TB/s", f"{acc.hbm_tbps:g}", short_source(src.get("hbm_tbps", ""))],
        [f"scale-up Gb/s ({acc.scale_up})", f"{acc.scale_up_gbps:g}", short_source(src.get("scale_up_gbps", ""))],
    ]
    lay.table([Column("figure", 0.25), Column("value", 0.1, "right"), Column("source (shortened)", 0.65)], rows,
              size=7.8)
    lay.paragraph("Full sources: designer catalog --json.", size=7.5, color=MUTED)


def _warnings_section(lay: Layout, result: Evaluation) -> None:
    """The evaluation's warnings."""
    lay.heading("Warnings", keep=30)
    if result.warnings:
        lay.bullets(result.warnings, color=WARN)
    else:
        lay.paragraph("None.", size=9)


def _pictures(lay: Layout, pictures: ReportPictures, keys: tuple[str, ...]) -> None:
    """The pictures of `keys` the caller made; where one is missing, a line that says why."""
    for key in keys:
        figure = pictures.get(key)
        if figure is not None:
            lay.picture(figure)
    if not all(pictures.get(k) for k in keys):
        names = {"canvas": "canvas", "logical": "logical fabric view", "timeline": "timeline"}
        absent = ", ".join(names[k] for k in keys if pictures.get(k) is None)
        lay.paragraph(f"Picture of the {absent} not included: {pictures.missing or 'not rendered'}.", size=8,
                      color=MUTED)


def _calibration(lay: Layout, doc: Document, result: Evaluation, acc, catalog: Catalog) -> None:
    ac = result.constants.get("accelerator") or AcceleratorConstants()
    k = result.constants.get("engine") or EngineConstants()
    cal = doc.spec.calibration or {}
    file_acc: dict = {}
    for name, values in (cal.get("accelerators") or {}).items():
        if catalog.resolve("accelerators", name) == acc.name:
            file_acc.update(values or {})
    base_ac = AcceleratorConstants()
    rows = []
    for f in dataclasses.fields(AcceleratorConstants):
        value = getattr(ac, f.name)
        by = "this design" if f.name in file_acc else ("catalog" if f.name in acc.calibration else "default")
        rows.append([f.name, _g(value), _g(getattr(base_ac, f.name)), by, short_source(f.metadata.get("doc", ""), 110)])
    lay.subheading(f"Accelerator constants ({acc.name}), all")
    lay.table([Column("constant", 0.3), Column("value", 0.09, "right"), Column("default", 0.09, "right"),
               Column("set by", 0.1), Column("meaning", 0.42)], rows, size=7.5)
    base = EngineConstants()
    rows = []
    for f in dataclasses.fields(EngineConstants):
        value, default = getattr(k, f.name), getattr(base, f.name)
        if value == default and f.name not in KEY_EFFICIENCIES:
            continue
        by = "this design" if f.name in cal else "default"
        rows.append([f.name, _g(value), _g(default), by, short_source(f.metadata.get("doc", ""), 110)])
    changed = sum(1 for r in rows if r[3] != "default")
    lay.subheading(f"Engine constants: the key efficiencies and those changed from the defaults ({changed} changed)")
    lay.table([Column("constant", 0.3), Column("value", 0.09, "right"), Column("default", 0.09, "right"),
               Column("set by", 0.1), Column("meaning", 0.42)], rows, size=7.5)
    lay.paragraph("Every constant with its source: docs and designer/core/engine/constants.py; override one with "
                  "--set calibration.NAME=VALUE or the file's calibration mapping.", size=7.5, color=MUTED)


def _footers(pdf: PdfDocument, name: str, version: str) -> None:
    n = len(pdf.pages)
    for i, page in enumerate(pdf.pages, 1):
        pdf.line(LEFT, FOOTER_Y + 10, RIGHT, FOOTER_Y + 10, width=0.5, color=RULE, page=page)
        pdf.text(LEFT, FOOTER_Y, f"designer {version}", size=7.5, color=MUTED, page=page)
        pdf.text(PAGE_W / 2, FOOTER_Y, fit(name, WIDTH * 0.5, 7.5), size=7.5, color=MUTED, align="center", page=page)
        pdf.text(RIGHT, FOOTER_Y, f"page {i} of {n}", size=7.5, color=MUTED, align="right", page=page)
