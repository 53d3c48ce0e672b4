"""Before `make run`: are the system libraries Qt's xcb platform plugin loads present?

On a stock Debian/Ubuntu machine PySide6 starts, then aborts with "Could not load the Qt platform
plugin xcb" because libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1 and friends are missing.
This asks the dynamic linker (ldd) which shared objects of the plugin are "not found" and prints
the exact apt-get command instead. Exit 0 when everything is there (or the check does not
apply: not Linux, another Qt platform chosen, no ldd), 1 with the command otherwise.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# Debian names a library package after its soname: libxcb-icccm.so.4 -> libxcb-icccm4,
# libxkbcommon-x11.so.0 -> libxkbcommon-x11-0 (a dash when the name ends in a digit).
# These few break the rule.
SONAME_PACKAGE_EXCEPTIONS = {
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libGLX.so.0": "libglx0",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
    "libpng16.so.16": "libpng16-16",
}

NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)


def package_for(soname: str) -> str:
    """The Debian package that ships a shared object, by Debian's library naming policy."""
    if soname in SONAME_PACKAGE_EXCEPTIONS:
        return SONAME_PACKAGE_EXCEPTIONS[soname]
    match = re.match(r"^(lib[^.]+)\.so\.(\d+)", soname)
    if not match:
        return soname
    name, version = match.group(1).lower(), match.group(2)
    return f"{name}-{version}" if name[-1].isdigit() else f"{name}{version}"


def missing_libraries(ldd_output: str) -> list[str]:
    """Sonames that ldd reports as not found, each once, in order."""
    return list(dict.fromkeys(NOT_FOUND.findall(ldd_output)))


def xcb_plugin() -> Path | None:
    try:
        import PySide6
    except ImportError:
        return None
    path = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return path if path.exists() else None


def main() -> int:
    platform = os.environ.get("QT_QPA_PLATFORM", "xcb")
    if not sys.platform.startswith("linux") or not platform.startswith("xcb"):
        return 0
    plugin, ldd = xcb_plugin(), shutil.which("ldd")
    if plugin is None or ldd is None:
        return 0
    output = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, check=False).stdout
    missing = missing_libraries(output)
    if missing:
        packages = sorted(dict.fromkeys(package_for(s) for s in missing))
        print("Designer's window needs system libraries that Qt's xcb plugin cannot find:\n  "
              + ", ".join(missing)
              + "\nInstall them (Debian/Ubuntu), then run `make run` again:\n"
              + f"  sudo apt-get install -y {' '.join(packages)}", file=sys.stderr)
        return 1
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        print("No display: DISPLAY is not set. Run Designer in a desktop session, or headless with\n"
              "  QT_QPA_PLATFORM=offscreen designer-gui FILE --screenshot out.png", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
