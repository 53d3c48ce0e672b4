"""`designer catalog [--json]`: the known accelerators, NICs, switches and model presets."""
from __future__ import annotations

import json
import sys

from ..core.problems import EXIT_OK
from .common import EPILOG


def register(subparsers) -> None:
    p = subparsers.add_parser("catalog", help="known accelerators, NICs, switches, model presets and systems", epilog=EPILOG)
    p.add_argument("--json", action="store_true", help="machine-readable, with every figure's source")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.generate.systems import default_systems
    from ..core.io.files import as_plain
    from ..core.model.catalog import default_catalog

    from ..core.engine.constants import accelerator_constants

    cat = default_catalog()
    # the share of the best GEMM each part holds under its power limit (the engine's, from the die's power model)
    clocks = {name: accelerator_constants(a, None, cat).sustained_clock_factor for name, a in cat.accelerators.items()}
    if args.json:
        out = {kind: {name: as_plain(item) for name, item in getattr(cat, kind).items()}
               for kind in ("accelerators", "nics", "switches", "models")}
        for name, item in out["accelerators"].items():
            item["sustained_clock_factor"] = round(clocks[name], 4)
        out["systems"] = {name: as_plain(item) for name, item in default_systems().items()}
        json.dump(out, sys.stdout, indent=2)
        print()
        return EXIT_OK
    print("Accelerators (dense TFLOP/s; sustained: the BF16 GEMM rate held under the power limit; "
          "scale-up per GPU per direction)")
    print(f"  {'name':18} {'aliases':16} {'bf16':>6} {'fp8':>6} {'best GEMM':>9} {'TDP W':>6} {'sustained':>9} "
          f"{'HBM GiB':>8} {'HBM TB/s':>8} {'scale-up':>14}")
    for a in cat.accelerators.values():
        print(f"  {a.name:18} {','.join(a.aliases)[:16]:16} {a.peak_tflops.get('bf16', 0):>6g} "
              f"{a.peak_tflops.get('fp8', 0):>6g} {a.best_gemm_tflops:>9g} {a.tdp_w or 0:>6g} "
              f"{clocks[a.name] * a.best_gemm_tflops:>9.0f} {a.hbm_gib:>8g} {a.hbm_tbps:>8g} "
              f"{a.scale_up_gbps:>7g} Gb/s {a.scale_up}")
    print("\nNICs")
    for n in cat.nics.values():
        print(f"  {n.name:25} {n.kind:11} {n.gbps:>5g} Gb/s  {n.transport:10}  aliases: {', '.join(n.aliases)}")
    print("\nSwitches")
    for s in cat.switches.values():
        routing = "" if s.kind == "nvlink" else f"  {s.routing}"
        print(f"  {s.name:24} {s.kind:11} {s.radix:>3} x {s.port_gbps:g} Gb/s  {s.latency_us:g} us{routing}"
              f"{'  SHARP' if s.sharp else ''}")
    print("\nModel presets")
    for m in cat.models.values():
        v = m.values
        moe = f", {v['num_experts']} experts top-{v.get('moe_router_topk', 2)}" if v.get("num_experts") else ""
        print(f"  {m.name:16} {v.get('num_layers', '?')} layers, h {v.get('hidden_size', '?')}, "
              f"{v.get('num_attention_heads', '?')} heads, seq {v.get('seq_length', '?')}{moe}")
    print("\nSystems (designer generate fat-tree --system NAME; --gpu alone takes its accelerator's)")
    for name, system in default_systems().items():
        v = system.values
        domain = f", NVL{v['nvlink_domain_gpus']}" if v.get("nvlink_domain_gpus") else ""
        print(f"  {name:14} {v['gpu']:16} {v['gpus_per_node']} GPUs{domain}, {v['nics_per_node']} x {v['nic_gbps']:g} "
              f"Gb/s {v['fabric']}, radix {v['switch_radix']}")
    print("\nEvery figure's source: designer catalog --json (the 'sources' of each entry).")
    return EXIT_OK
