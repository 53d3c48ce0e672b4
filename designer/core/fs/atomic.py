"""Atomic file writes: a crash or a full disk leaves the old file or the new one, whole, never half
of one; the temporary files that killed saves leave behind are swept on the next save."""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write `text` to `path` so that a crash leaves either the old or the new file, whole."""
    atomic_write_bytes(path, text.encode("utf-8"))


# A save's temporary file: ".<target name>.<writer pid>.<random><TEMP_SUFFIX>" beside the target.
# A save killed midway leaves one behind; the next save of that target removes it when its writer
# is gone or it is older than STALE_TEMP_S (no save of a design takes that long).
TEMP_SUFFIX = ".designer-tmp"
STALE_TEMP_S = 60.0
_LEGACY_TEMP = re.compile(r"^[a-z0-9_]{8}\.tmp$")  # what mkstemp left before the pid was in the name


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Temporary file in the same folder, fsync, rename over the target, fsync the folder."""
    from pathlib import Path  # here: only a save needs it (reading a design uses os.path)

    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    with _suppress():  # tidying up must never stop a save
        sweep_stale_temps(target)
    import tempfile  # here: only a save needs it (a few ms of every start)

    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            _write_all(fh, data)
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            os.chmod(tmp_name, target.stat().st_mode & 0o7777)
        else:
            os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, target)
    except BaseException:
        with _suppress():
            os.unlink(tmp_name)
        raise
    with _suppress():
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def sweep_stale_temps(target: str | os.PathLike, now_s: float | None = None) -> list[Path]:
    """Remove the temporary files that killed saves of `target` left; the paths removed."""
    import time
    from pathlib import Path

    from .pids import pid_alive

    target = Path(target)
    folder = target.parent if str(target.parent) else Path(".")
    prefix = f".{target.name}."
    now_s = time.time() if now_s is None else now_s
    removed = []
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if not name.startswith(prefix) or not entry.is_file(follow_symlinks=False):
                continue
            rest = name[len(prefix):]
            if rest.endswith(TEMP_SUFFIX):
                pid_text = rest.split(".", 1)[0]
                writer_gone = pid_text.isdigit() and int(pid_text) != os.getpid() and not pid_alive(int(pid_text))
            elif _LEGACY_TEMP.match(rest):
                writer_gone = False  # no pid in the name: only its age tells
            else:
                continue
            try:
                old = now_s - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_S
                if writer_gone or old:
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
            except FileNotFoundError:
                continue  # its writer finished (renamed it) meanwhile
    return removed


def _write_all(fh, data: bytes) -> None:
    """Separate so that tests can inject a failure in the middle of a write."""
    chunk = 1 << 20
    for start in range(0, len(data), chunk):
        fh.write(data[start:start + chunk])


class _suppress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return exc[0] is not None and issubclass(exc[0], OSError)
