#!/usr/bin/env bash
# Build the one-directory desktop app, dist/designer/, from a fresh virtual environment, then
# smoke-test the frozen binary: it must open an example, evaluate it and write a screenshot.
#
#   packaging/build.sh            (from anywhere; PYTHON=python3.12 picks another interpreter)
#
# build/venv        the fresh venv: the project (non-editable) and PyInstaller, nothing else
# build/pyinstaller PyInstaller's work files
# dist/designer/    the app: dist/designer/designer-gui [FILE] [--screenshot OUT.png]
# build/frozen-shot.png, build/frozen-firstrun.png   the smoke tests' screenshots
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
PYINSTALLER_SPEC="${PYINSTALLER_SPEC:-pyinstaller>=6.10,<7}"
VENV="build/venv"
APP="dist/designer/designer-gui"
EXAMPLE="resources/examples/h100-64gpu-infiniband.yaml"

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

command -v "$PYTHON" >/dev/null || die "$PYTHON not found (set PYTHON=...)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "$PYTHON is older than Python 3.11"
start=$SECONDS

step "fresh virtual environment in $VENV ($("$PYTHON" --version))"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip

step "installing the project (non-editable) and $PYINSTALLER_SPEC"
"$VENV/bin/python" -m pip install --quiet . "$PYINSTALLER_SPEC"
"$VENV/bin/python" -m pip list --format=freeze | grep -iE '^(designer|pyinstaller|pyside6|pyqtgraph|numpy|pyyaml)' || true
rm -rf build/lib build/bdist.*  # setuptools' leftovers from building the wheel

step "PyInstaller: packaging/designer.spec -> dist/designer/"
rm -rf dist/designer
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/designer.spec
[[ -x "$APP" ]] || die "PyInstaller wrote no $APP"
for f in resources/catalog/accelerators.yaml "$EXAMPLE" resources/icons/designer-gui.png; do
    [[ -f "dist/designer/_internal/$f" ]] || die "the bundle lacks _internal/$f"
done

# A PNG of at least 20 KB whose header says WIDTHxHEIGHT.
check_png() {
    "$VENV/bin/python" - "$1" "$2" <<'EOF'
import struct, sys
path, size = sys.argv[1], tuple(int(v) for v in sys.argv[2].split("x"))
data = open(path, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(f"{path} is not a PNG")
got = struct.unpack(">II", data[16:24])
if got != size:
    sys.exit(f"{path} is {got[0]}x{got[1]}, expected {size[0]}x{size[1]}")
if len(data) < 20_000:
    sys.exit(f"{path} is only {len(data)} bytes: an empty window?")
print(f"{path}: {got[0]}x{got[1]}, {len(data) // 1024} KiB")
EOF
}

# Run the frozen app headless; show its output when it fails.
smoke() {
    local out="$1"; shift
    local log="${out%.png}.log"
    rm -f "$out"
    if ! QT_QPA_PLATFORM=offscreen timeout 300 "$APP" "$@" --screenshot "$out" --size 1600x1000 >"$log" 2>&1; then
        cat "$log" >&2
        die "the frozen app failed: $APP $* --screenshot $out"
    fi
    if grep -E 'Traceback|Error|Warning|QPainter' "$log" >&2; then
        die "the frozen app printed errors or warnings (see $log)"
    fi
    check_png "$out" 1600x1000 || die "bad screenshot $out"
}

step "smoke test: $APP $EXAMPLE --screenshot build/frozen-shot.png"
smoke build/frozen-shot.png "$EXAMPLE"
step "smoke test: $APP (no file: the built-in example and the first-run hint)"
smoke build/frozen-firstrun.png

step "done in $((SECONDS - start)) s: dist/designer/ is $(du -sh dist/designer | cut -f1)"
echo "run it: $ROOT/$APP [FILE]"
