"""Regenerate what the README and the user guide show, so that it stays true.

    python docs/make_docs.py            # both: the generated text blocks and the screenshots
    python docs/make_docs.py --text     # README/guide blocks: CLI output, file excerpt, accuracy table
    python docs/make_docs.py --images   # docs/images/*.png, rendered headless (offscreen Qt)
    python docs/make_docs.py --reference  # docs/reference/: the command line and the file format

A generated block sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` in
README.md or docs/guide.md; everything else in those files is written by hand. The accuracy
table runs every published case of tests/validation/data through the public CLI, exactly as
tests/validation does.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
IMAGES = DOCS / "images"
EXAMPLE = "resources/examples/h100-64gpu-infiniband.yaml"
ROCE = "resources/examples/h100-roce-2to1-ethernet.yaml"
A100 = "resources/examples/a100-1024gpu-rail-infiniband.yaml"

# The CLI tour: (block name, command as a user types it, lines of output to keep or None for all)
CLI_TOUR = [
    ("cli-evaluate", f"designer evaluate {EXAMPLE}", None),
    ("cli-advise", f"designer advise {ROCE}", None),
    ("cli-search", f"designer search {A100} --top 5", None),
    ("cli-scale", f"designer scale {EXAMPLE} --gpus 16,32,64,128,256,512", None),
    ("cli-nccl", f"designer nccl {EXAMPLE} --op all_reduce --num-gpus 8 --min-bytes 1M --max-bytes 1G", None),
]


def run_cli(args: list[str]) -> tuple[int, str, str]:
    from designer.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def console_block(command: str, keep: int | None) -> str:
    code, out, err = run_cli(shlex.split(command)[1:])
    if code != 0:
        raise SystemExit(f"make_docs: `{command}` failed ({code}): {err}")
    lines = out.rstrip("\n").split("\n")
    if keep is not None and len(lines) > keep:
        lines = lines[:keep] + ["..."]
    return "```console\n$ " + command + "\n" + "\n".join(lines) + "\n```"


def file_excerpt() -> str:
    """The start of a real example and its job, as saved by Designer."""
    text = (ROOT / EXAMPLE).read_text().split("\n")
    out, section, shown = [], None, {}
    for line in text:
        m = re.match(r"^  (\w+):", line)
        if m:
            section = m.group(1)
        if re.match(r"^ *- ", line) and section in ("racks", "nodes", "switches", "links"):
            shown[section] = shown.get(section, 0) + 1
            if shown[section] == 3:
                out.append(line[:line.index("-")] + "# ...")
            if shown[section] >= 3:
                continue
        out.append(line)
    return "```yaml\n" + "\n".join(out).rstrip() + "\n```"


# ---- the accuracy table -----------------------------------------------------------------------

def accuracy_table(modern: bool = False) -> str:
    # the published cases run exactly as tests/validation runs them
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.validation.cases import CASES_FILE, MODERN_CASES_FILE, generate_args, load_cases, set_args

    source = MODERN_CASES_FILE if modern else CASES_FILE
    if not source.exists():
        raise SystemExit(f"make_docs: {source} is missing (the published cases belong in tests/validation/data)")
    cases = load_cases(source)["training"]
    rows, errors, normal = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            path = Path(tmp) / f"{case['id']}.yaml"
            code, _, err = run_cli(generate_args(case["cluster"], path))
            assert code == 0, err
            code, out, err = run_cli(["evaluate", str(path), *set_args(case), "--json"])
            assert code == 0, err
            r = json.loads(out)
            e = r["step_time_s"] / case["step_time_s"] - 1
            errors.append(abs(e))
            if case.get("tolerance", "normal") == "normal":
                normal.append(abs(e))
            p = r["plan"]
            plan = f"TP {p['tp']} PP {p['pp']} DP {p['dp']}" + (f" CP {p['cp']}" if p.get("cp", 1) > 1 else "") + (
                f" EP {p['ep']}" if p.get("ep", 1) > 1 else "")
            tolerance = f" | {case.get('tolerance', 'normal')}" if modern else ""
            rows.append(f"| {case['id']} | {r['num_gpus']:,} x {p['accelerator'].split('-')[0]} | "
                        f"{plan}{tolerance} | {case['step_time_s']:.2f} | "
                        f"{r['step_time_s']:.2f} | {e:+.1%} |")
    if modern:
        head = ["| case | GPUs | plan | tolerance | measured s | predicted s | error |",
                "|---|---|---|---|---|---|---|"]
        summary = (f"Median absolute error **{statistics.median(errors):.1%}**, worst **{max(errors):.1%}** over "
                   f"{len(errors)} runs of 2024-26 (none refused); the {len(normal)} normal-tolerance runs: median "
                   f"**{statistics.median(normal):.1%}**, worst **{max(normal):.1%}**.")
    else:
        head = ["| case | GPUs | plan | measured s | predicted s | error |", "|---|---|---|---|---|---|"]
        summary = (f"Median absolute error **{statistics.median(errors):.1%}**, worst **{max(errors):.1%}**, over "
                   f"{len(errors)} published runs (one calibration per accelerator kind, none per case).")
    return "\n".join([summary, "", *head, *rows])


# ---- blocks in files --------------------------------------------------------------------------

def replace_block(text: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- generated:{re.escape(name)} -->\n)(.*?)(<!-- /generated:{re.escape(name)} -->)",
                         re.S)
    if not pattern.search(text):
        raise SystemExit(f"make_docs: no block `{name}` (<!-- generated:{name} --> ... <!-- /generated:{name} -->)")
    return pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(3), text)


def blocks_in(text: str) -> list[str]:
    return re.findall(r"<!-- generated:([\w-]+) -->", text)


def make_text(only: set[str] | None = None) -> dict[str, str]:
    """Every generated block's body by name (computed, not yet written)."""
    makers = {name: (lambda c=command, k=keep: console_block(c, k)) for name, command, keep in CLI_TOUR}
    makers["file-excerpt"] = file_excerpt
    makers["accuracy"] = accuracy_table
    makers["accuracy-modern"] = lambda: accuracy_table(modern=True)
    return {name: make() for name, make in makers.items() if only is None or name in only}


def write_text() -> None:
    os.chdir(ROOT)  # commands name files relative to the checkout, as the README does
    bodies = make_text()
    for path in (ROOT / "README.md", DOCS / "guide.md"):
        if not path.exists():
            continue
        text = path.read_text()
        for name in blocks_in(text):
            if name not in bodies:
                raise SystemExit(f"make_docs: {path.name} has an unknown block `{name}`")
            text = replace_block(text, name, bodies[name])
        from designer.core.io import atomic_write_text

        atomic_write_text(path, text)
        print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)


# ---- the reference pages: generated from the parser and the schema -------------------------------
REFERENCE = DOCS / "reference"
HELP_WIDTH = "100"  # argparse wraps at the terminal's width; the page must not depend on it


def _subparsers(parser: argparse.ArgumentParser):
    for action in parser._actions:  # argparse has no public way to list sub-commands
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def cli_reference() -> str:
    """Every command's `--help`, as `designer COMMAND --help` prints it."""
    from designer.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        parser = build_parser()
        parts = ["# Command reference", "",
                 "Generated by `python docs/make_docs.py --reference` from the command line's own parser:",
                 "each section is what `designer COMMAND --help` prints. How to use the commands together:",
                 "[the user guide](../guide.md), section 9.", "",
                 "```text", parser.format_help().rstrip(), "```", ""]
        for name, sub in _subparsers(parser):
            nested = list(_subparsers(sub))
            for full, command in [(name, sub)] + [(f"{name} {n}", c) for n, c in nested]:
                parts += [f"## designer {full}", "", "```text", command.format_help().rstrip(), "```", ""]
        return "\n".join(parts)
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _type_words(spec: dict) -> str:
    kinds = spec.get("type", "")
    kinds = [k for k in (kinds if isinstance(kinds, list) else [kinds]) if k and k != "null"]
    if "enum" in spec:
        return " \\| ".join(f"`{v}`" for v in spec["enum"])
    if "$ref" in spec:
        return spec["$ref"].rsplit("/", 1)[-1]
    if kinds == ["array"] and isinstance(spec.get("items"), dict):
        return f"list of {_type_words(spec['items'])}"
    return ", ".join(kinds) or "any"


def file_format_reference() -> str:
    """Every key of the cluster file, from `designer schema` (the JSON Schema the loader enforces)."""
    from designer.core.io.editor_schema import json_schema

    schema = json_schema()
    parts = ["# File format reference", "",
             "Generated by `python docs/make_docs.py --reference` from the file format's schema (`designer schema`",
             "prints it as JSON Schema for editors). A file is `apiVersion: designer/v1`, `kind: Cluster` (or",
             "`Scenario`: a job only), `metadata` and `spec`. Units are in the key names; every number has the",
             "range shown, and a key not listed here is an error. How to write one: [the user guide](../guide.md).",
             ""]
    for name, definition in schema["definitions"].items():
        props = definition.get("properties", {})
        if not props:
            continue
        required = set(definition.get("required", []))
        parts += [f"## {name}", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        for key, spec in props.items():
            default = "required" if key in required else (f"`{json.dumps(spec['default'])}`" if "default" in spec else "")
            meaning = spec.get("description", "").replace("|", "\\|").replace("\n", " ")
            parts.append(f"| `{key}` | {_type_words(spec)} | {default} | {meaning} |")
        parts.append("")
    return "\n".join(parts)


def make_reference() -> dict[Path, str]:
    return {REFERENCE / "cli.md": cli_reference(), REFERENCE / "file-format.md": file_format_reference()}


def write_reference() -> None:
    from designer.core.io import atomic_write_text

    REFERENCE.mkdir(exist_ok=True)
    for path, text in make_reference().items():
        atomic_write_text(path, text)
        print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--text", action="store_true", help="only the generated text blocks")
    parser.add_argument("--images", action="store_true", help="only the screenshots")
    parser.add_argument("--reference", action="store_true", help="only docs/reference/ (command line, file format)")
    parser.add_argument("--out", default=str(IMAGES), help="where the screenshots go (default docs/images)")
    args = parser.parse_args(argv)
    both = not args.text and not args.images and not args.reference
    if args.text or both:
        write_text()
    if args.reference or both:
        write_reference()
    if args.images or both:
        sys.path.insert(0, str(DOCS))
        from screenshots import render_all  # Qt only when asked for pictures

        for path in render_all(Path(args.out)):
            print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
