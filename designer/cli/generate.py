"""`designer generate fat-tree -o FILE --nodes N (--gpu G | --system S) ...`: a generated cluster design."""
from __future__ import annotations

from ..core.problems import EXIT_DATAERR, EXIT_OK, EXIT_USAGE
from .common import EPILOG, err, plural, positive_float, positive_int, save_validated


def system_name(value: str) -> str:
    """--system's value, checked against the systems file only when the option is given (reading
    that file at every start cost each command, `designer evaluate` too, about 15 ms)."""
    import argparse

    from ..core.generate.systems import default_systems

    if value not in default_systems():
        raise argparse.ArgumentTypeError(f"unknown system {value!r} (choose from {', '.join(sorted(default_systems()))}; "
                                         "designer catalog lists them)")
    return value


def register(subparsers) -> None:
    p = subparsers.add_parser("generate", help="generate a cluster design", epilog=EPILOG)
    generators = p.add_subparsers(dest="generator", metavar="GENERATOR")
    g = generators.add_parser("fat-tree", help="folded-Clos (fat-tree) fabric, rail-optimized or not", epilog=EPILOG)
    g.add_argument("-o", "--output", required=True, help="the YAML file to write")
    g.add_argument("--nodes", required=True, type=positive_int, help="servers")
    g.add_argument("--system", type=system_name, default=None,
                   help="a vendor system (server, NVLink domain, NICs, switch) the other options start from; "
                        "designer catalog lists them")
    g.add_argument("--gpu", help="accelerator model (A100, H100, H200, B200, GB200, MI300X, ...); the options left "
                                 "out follow its system (GB200: 4-GPU trays in NVL72 domains)")
    g.add_argument("--gpus-per-node", type=positive_int, default=None, help="default: the system's (8 for HGX)")
    g.add_argument("--nvlink-domain-gpus", type=positive_int, default=None,
                   help="GPUs per NVLink domain, a whole number of servers (72 for GB200 NVL72); default: the "
                        "system's, else one server")
    g.add_argument("--nics-per-node", type=positive_int, default=None, help="default: the system's (one per GPU)")
    g.add_argument("--nic-gbps", type=positive_float, default=None,
                   help="NIC and switch port line rate; default: the system's (400)")
    g.add_argument("--fabric", choices=("infiniband", "ethernet"), default=None, help="default: the system's")
    g.add_argument("--nic-model", default=None,
                   help="catalog NIC (designer catalog), e.g. EFA-v4-400G; default: the catalog's NIC of that kind and speed")
    g.add_argument("--switch-model", default=None,
                   help="catalog switch for every leaf, spine and core (designer catalog), e.g. Tomahawk5-800GbE or "
                        "Jericho3AI-800GbE; its ports split to the NICs' speed (800G as 2 x 400G); default: the "
                        "catalog's switch of the fabric and speed")
    g.add_argument("--routing", choices=("ecmp", "static", "adaptive", "scheduled"), default=None,
                   help="how every switch spreads flows over its up-links (static: InfiniBand without adaptive "
                        "routing); default: the switch model's (InfiniBand adaptive, Ethernet ECMP)")
    g.add_argument("--tiers", type=int, choices=(2, 3), default=None, help="default: the fewest that fit")
    g.add_argument("--switch-radix", type=positive_int, default=None, help="ports per switch; default: the system's")
    g.add_argument("--oversubscription", type=positive_float, default=1.0,
                   help="leaf down:up ratio R (2 = 2:1)")
    g.add_argument("--rail-optimized", dest="rail_optimized", action="store_true", default=None,
                   help="NIC i of every server to leaf group i (default)")
    g.add_argument("--no-rail-optimized", dest="rail_optimized", action="store_false",
                   help="all NICs of a server to the same leaf")
    g.set_defaults(func=run)


def run(args) -> int:
    from ..core.generate import FatTreeError, generate_fat_tree
    from ..core.generate.systems import SYSTEM_OPTIONS, options_for
    from .progress import Progress

    with Progress("generate") as progress:
        progress.phase(f"building {args.nodes:,} servers and their fabric")
        options = options_for({key: getattr(args, key) for key in SYSTEM_OPTIONS}, args.system)
        if "gpu" not in options:
            progress.clear()
            err("designer generate: give the accelerator: --gpu H100 (or a whole system: --system dgx-h100; "
                "designer catalog lists them)")
            return EXIT_USAGE
        try:
            if args.switch_model and args.switch_radix is None:
                options.pop("switch_radix", None)  # the named switch's ports, not the system's default
                options["switch_radix"] = None
            doc = generate_fat_tree(nodes=args.nodes, tiers=args.tiers, oversubscription=args.oversubscription,
                                    routing=args.routing, switch_model=args.switch_model, **options)
        except FatTreeError as exc:
            progress.clear()
            err(f"designer generate: {exc}")
            return EXIT_DATAERR
        progress.phase(f"checking and writing {args.output}")
        save_validated(doc, args.output, what="the generated design")
    c = doc.counts()
    err(f"wrote {args.output}: {c['nodes']} servers, {c['gpus']} GPUs, {plural(c['switches'], 'switch', 'switches')}, "
        f"{c['links']} links ({c['cables']} cables), {c['racks']} racks")
    return EXIT_OK
