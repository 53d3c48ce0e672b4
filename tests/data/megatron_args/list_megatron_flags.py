"""List every command-line flag of Megatron-LM's pretrain_gpt.py parser, read statically from a
checkout (no torch needed): the literal '--flag' strings of megatron/training/arguments.py, and
the flags ArgumentGroupFactory derives from the config dataclasses it is given (field name with
dashes; a bool defaulting to True as --no-NAME and --disable-NAME; `arg_names` in a field's
argparse_meta wins; excluded and init=False fields skipped), as argument_utils.py does.

    python list_megatron_flags.py /path/to/Megatron-LM > megatron_flags.txt
"""
import ast
import sys
from pathlib import Path

root = Path(sys.argv[1])
args_src = (root / "megatron/training/arguments.py").read_text()
tree = ast.parse(args_src)
flags = set()

# literal flags of add_argument(...) calls
for node in ast.walk(tree):
    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
        for a in node.args:
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--"):
                flags.add(a.value)

# classes by name across megatron/
classes = {}
for path in (root / "megatron").rglob("*.py"):
    try:
        mod = ast.parse(path.read_text())
    except (SyntaxError, UnicodeDecodeError):
        continue
    for n in mod.body:
        if isinstance(n, ast.ClassDef):
            classes.setdefault(n.name, n)


def const(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


def fields(name, seen=()):
    cls = classes[name]
    out = []
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
            out += fields(base.id, seen + (name,))
    for st in cls.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            out = [f for f in out if f[0] != st.target.id]
            out.append((st.target.id, st))
    return out


def factory_exclude(call):
    for kw in call.keywords:
        if kw.arg == "exclude":
            if isinstance(kw.value, ast.Name):  # exclude = [...] assigned earlier in the function
                for node in ast.walk(tree):
                    if (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == kw.value.id for t in node.targets)
                            and node.lineno < call.lineno):
                        found = const(node.value)
                return set(found or [])
            return set(const(kw.value) or [])
    return set()


for node in ast.walk(tree):
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ArgumentGroupFactory":
        cls_name = node.args[0].id
        exclude = factory_exclude(node)
        for name, st in fields(cls_name):
            if name in exclude:
                continue
            value = st.value
            meta_names, init, default = None, True, None
            if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "field":
                for kw in value.keywords:
                    if kw.arg == "init" and const(kw.value) is False:
                        init = False
                    if kw.arg == "default":
                        default = const(kw.value)
                    if kw.arg == "metadata" and isinstance(kw.value, ast.Dict):
                        for k, v in zip(kw.value.keys, kw.value.values):
                            if const(k) == "argparse_meta" and isinstance(v, ast.Dict):
                                for k2, v2 in zip(v.keys, v.values):
                                    if const(k2) == "arg_names":
                                        meta_names = const(v2)
            elif value is not None:
                default = const(value)
            if not init:
                continue
            ann = ast.unparse(st.annotation)
            dashed = name.replace("_", "-")
            if meta_names:
                flags.update(meta_names)
            elif ann == "bool" and default is True:
                flags.update({"--no-" + dashed, "--disable-" + dashed})
            else:
                flags.add("--" + dashed)

print("\n".join(sorted(flags)))
