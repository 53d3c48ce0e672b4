"""`designer cost`: the bill of materials, capex, power and $ per million tokens of a design.

The logic is designer/core/analysis/cost.py; this module prints it (docs/cost.md).
"""
from __future__ import annotations

from .core.analysis.cost import CostEstimate


def _usd(value: float) -> str:
    if value >= 1e6:
        return f"${value / 1e6:,.2f}M"
    return f"${value:,.0f}"


def format_cost(estimate: CostEstimate, name: str) -> str:
    e = estimate
    lines = [f"{name}: bill of materials", "",
             f"  {'part':34} {'where':40} {'count':>7} {'unit $':>10} {'subtotal':>12} {'kW':>8}"]
    for b in e.bom:
        part = b.part + (" (estimate)" if b.estimate else "")
        lines.append(f"  {part[:34]:34} {b.detail[:40]:40} {b.count:7,} {b.unit_price_usd:10,.0f} "
                     f"{_usd(b.subtotal_usd):>12} {b.power_w / 1000:8.1f}")
    lines += ["",
              f"  capex              {_usd(e.capex_usd):>12}",
              f"  fabric             {_usd(e.fabric_capex_usd):>12}  ({e.fabric_share:.1%} of capex: NICs, switches, "
              "optics, cables)",
              f"  power (IT)         {e.power_kw:12,.1f} kW  (facility {e.facility_power_kw:,.1f} kW at PUE {e.pue:g})",
              f"  cost per hour      {_usd(e.usd_per_hour):>12}  (capex over {e.amortisation_years:g} years + energy "
              f"at ${e.usd_per_kwh:g}/kWh)"]
    if e.tokens_per_s:
        lines += [f"  tokens/s           {e.tokens_per_s:12,.0f}  (the job's predicted throughput)",
                  f"  tokens/s per MW    {e.tokens_per_s_per_mw:12,.0f}  (per MW of IT power)",
                  f"  $ per M tokens     {e.usd_per_million_tokens:12,.4f}"]
    else:
        lines.append("  (no job in the file: add workload and parallelism for tokens/s per MW and $ per M tokens)")
    for note in e.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)
