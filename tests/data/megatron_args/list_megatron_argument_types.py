"""Write every argument of Megatron-LM's pretrain_gpt.py parser with its type, as JSON, read
statically from a checkout (no torch needed): each literal `add_argument('--flag', ...)` of
megatron/training/arguments.py with its type, nargs, choices and action, and each argument
ArgumentGroupFactory derives from a config dataclass (megatron/training/argument_utils.py: the
field's annotation gives the type, Literal the choices, list nargs '+', a bool store_true, or
--no-/--disable- store_false when it defaults to True).

    python list_megatron_argument_types.py /path/to/Megatron-LM > megatron_argument_types.json
    python list_megatron_argument_types.py /path/to/Megatron-LM --names  # the flags alone, one a line
                                     # (designer/core/io/importers/megatron_flag_list.py holds them)

Types Designer cannot name (a function of Megatron's own, an enum) are written as "text": the test
that parses an export with this table then accepts any value there, as Megatron's parser would
before its own converter runs.
"""
import ast
import json
import subprocess
import sys
from pathlib import Path

root = Path(sys.argv[1])
tree = ast.parse((root / "megatron/training/arguments.py").read_text())
PLAIN = {"int": "int", "float": "float", "str": "str"}


def const(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


arguments = {}

for node in ast.walk(tree):
    if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
        continue
    names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
             and a.value.startswith("--")]
    if not names:
        continue
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    action = const(kw["action"]) if "action" in kw else None
    entry = {"names": sorted(names)}
    if action in ("store_true", "store_false", "store_const", "count") or (
            "action" in kw and action is None):  # argparse.BooleanOptionalAction and the like
        entry["type"] = "flag"
    else:
        t = kw.get("type")
        entry["type"] = PLAIN.get(ast.unparse(t), "text") if t is not None else "str"
        if "nargs" in kw:
            entry["nargs"] = const(kw["nargs"])
        if "choices" in kw and const(kw["choices"]) is not None:
            entry["choices"] = [str(c) for c in const(kw["choices"])]
    for n in names:
        arguments[n] = entry

classes = {}
for path in (root / "megatron").rglob("*.py"):
    try:
        mod = ast.parse(path.read_text())
    except (SyntaxError, UnicodeDecodeError):
        continue
    for n in mod.body:
        if isinstance(n, ast.ClassDef):
            classes.setdefault(n.name, n)


def fields(name, seen=()):
    out = []
    for base in classes[name].bases:
        if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
            out += fields(base.id, seen + (name,))
    for st in classes[name].body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            out = [f for f in out if f[0] != st.target.id]
            out.append((st.target.id, st))
    return out


def annotation_type(ann: ast.AST) -> dict:
    text = ast.unparse(ann).replace(" ", "")
    for wrapper in ("Optional[", "typing.Optional["):
        if text.startswith(wrapper):
            return annotation_type(ast.parse(text[len(wrapper):-1], mode="eval").body)
    if text.endswith("|None"):
        return annotation_type(ast.parse(text[:-5], mode="eval").body)
    if text.startswith(("Literal[", "typing.Literal[")):
        choices = const(ast.parse(text[text.index("["):], mode="eval").body)
        choices = choices if isinstance(choices, list) else [choices]
        return {"type": PLAIN.get(type(choices[0]).__name__, "text"), "choices": [str(c) for c in choices]}
    if text.startswith(("list[", "List[")):
        inner = annotation_type(ast.parse(text[5:-1], mode="eval").body)
        return {**inner, "nargs": "+"}
    if text == "bool":
        return {"type": "flag"}
    return {"type": PLAIN.get(text, "text")}


def factory_exclude(call):
    for k in call.keywords:
        if k.arg == "exclude":
            if isinstance(k.value, ast.Name):
                found = None
                for node in ast.walk(tree):
                    if (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == k.value.id for t in node.targets)
                            and node.lineno < call.lineno):
                        found = const(node.value)
                return set(found or [])
            return set(const(k.value) or [])
    return set()


for node in ast.walk(tree):
    if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ArgumentGroupFactory"):
        continue
    exclude = factory_exclude(node)
    for name, st in fields(node.args[0].id):
        if name in exclude:
            continue
        meta_names, init, default = None, True, None
        value = st.value
        if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "field":
            for k in value.keywords:
                if k.arg == "init" and const(k.value) is False:
                    init = False
                if k.arg == "default":
                    default = const(k.value)
                if k.arg == "metadata" and isinstance(k.value, ast.Dict):
                    for k1, v1 in zip(k.value.keys, k.value.values):
                        if const(k1) == "argparse_meta" and isinstance(v1, ast.Dict):
                            for k2, v2 in zip(v1.keys, v1.values):
                                if const(k2) == "arg_names":
                                    meta_names = const(v2)
        elif value is not None:
            default = const(value)
        if not init:
            continue
        entry = annotation_type(st.annotation)
        dashed = name.replace("_", "-")
        if meta_names:
            names = list(meta_names)
        elif entry["type"] == "flag" and default is True:
            names = ["--no-" + dashed, "--disable-" + dashed]
        else:
            names = ["--" + dashed]
        entry = {"names": sorted(names), **entry}
        for n in names:
            arguments.setdefault(n, entry)

if "--names" in sys.argv[2:]:
    print("\n".join(sorted(arguments)))
    sys.exit(0)
commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
unique = {tuple(e["names"]): e for e in arguments.values()}
print(json.dumps({"megatron_lm_commit": commit, "source": "megatron/training/arguments.py and the config "
                  "dataclasses ArgumentGroupFactory turns into flags",
                  "arguments": sorted(unique.values(), key=lambda e: e["names"][0])}, indent=1))
