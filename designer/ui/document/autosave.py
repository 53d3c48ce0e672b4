"""Crash recovery: unsaved designs are written to a recovery folder every minute.

`Autosaver` asks its `snapshot` callable for (document name, YAML text) on a timer and writes
the text atomically to `<recovery dir>/<safe name>.recovery.yaml`, with a sidecar
`<safe name>.recovery.json` that records the original file, the time and the process id.
After a successful save or a clean close the window calls `discard()`. At start-up
`pending_recoveries()` lists what a crashed session left behind; a recovered file is
`adopt()`ed, not deleted: it stays until the user saves or a newer autosave replaces it, so a
second crash soon after a recovery loses nothing.

A timed write never raises: it writes what it can (a NaN or an infinity in the design is written
as YAML .nan / .inf, which recovery reads back) and reports a failure through `failed`.

The document name may be a file path with a folder ("/designs/pod.yaml": the original file,
shown as "pod.yaml") or a bare name ("untitled": never saved). A snapshot may also return a third
item, the original path, when the name is not one.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, QStandardPaths, QTimer, Signal

from ...core.io.files import atomic_write_text

ENV_DIR = "DESIGNER_RECOVERY_DIR"
SUFFIX = ".recovery.yaml"
SIDECAR_SUFFIX = ".recovery.json"
MAX_NAME_CHARS = 80

Snapshot = Callable[[], "tuple[str, str] | tuple[str, str, str | None] | None"]


def recovery_dir() -> Path:
    """$DESIGNER_RECOVERY_DIR, else <app local data>/recovery; created if missing."""
    env = os.environ.get(ENV_DIR)
    if env:
        folder = Path(env)
    else:
        base = QStandardPaths.writableLocation(QStandardPaths.AppLocalDataLocation)
        if not base:  # no writable location known on this system
            base = str(Path.home() / ".local" / "share" / "Designer")
        folder = Path(base) / "recovery"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def safe_name(name: str) -> str:
    """A file name from a document name or path: letters, digits, '.', '_' and '-' only."""
    stem = Path(name).name if _looks_like_path(name) else name
    for ext in (".yaml", ".yml"):
        if stem.lower().endswith(ext):
            stem = stem[: -len(ext)]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._")[:MAX_NAME_CHARS]
    return stem or "untitled"


def _looks_like_path(name: str) -> bool:
    return os.sep in name or (os.altsep is not None and os.altsep in name)


@dataclass(frozen=True)
class RecoveryFile:
    path: Path  # the .recovery.yaml
    original_path: str | None  # the file the design was opened from or saved to; None if never saved
    saved_at: datetime  # when the recovery file was written (aware, local time zone)
    name: str  # the document's name, for a "recover ...?" prompt
    pid: int | None = None  # the process that wrote it

    @property
    def sidecar(self) -> Path:
        return _sidecar(self.path)

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name[: -len(SUFFIX)] + SIDECAR_SUFFIX)


class Autosaver(QObject):
    """Writes `snapshot()` to the recovery folder every `interval_ms` (0 or less: only on demand)."""

    saved = Signal(str)  # path of the recovery file just written
    failed = Signal(str)  # why a timed write failed (the timer keeps running)

    def __init__(self, snapshot: Snapshot, interval_ms: int = 60_000, directory: str | os.PathLike | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._snapshot = snapshot
        self._directory = Path(directory) if directory is not None else None
        self._written: set[Path] = set()  # this session's recovery files
        self._last: tuple[Path, str, str | None] | None = None  # what was last written, to skip rewrites
        self.timer = QTimer(self)
        self.timer.setInterval(max(0, int(interval_ms)))
        self.timer.timeout.connect(self._on_timeout)
        if interval_ms > 0:
            self.timer.start()

    @property
    def directory(self) -> Path:
        if self._directory is not None:
            self._directory.mkdir(parents=True, exist_ok=True)
            return self._directory
        return recovery_dir()

    def start(self) -> None:
        if self.timer.interval() > 0:
            self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def write_now(self) -> str | None:
        """Write the snapshot now; its path, or None when there are no unsaved changes.

        An unchanged snapshot is not written again (the path is returned, `saved` is not
        emitted). OSError propagates; the timer reports it through `failed` instead.
        """
        snap = self._snapshot()
        if snap is None:
            return None
        name, text, *rest = snap
        original = rest[0] if rest else (str(Path(name).absolute()) if _looks_like_path(name) else None)
        path = self.directory / (safe_name(name) + SUFFIX)
        if self._last == (path, text, original) and path.exists():
            return str(path)
        atomic_write_text(path, text)
        self._written.add(path)
        meta = {
            "name": Path(name).name if _looks_like_path(name) else name,
            "original_path": original,
            "saved_at": datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds"),
            "pid": os.getpid(),
            "recovery_file": path.name,
        }
        atomic_write_text(_sidecar(path), json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        # A renamed document (Save As) leaves its older recovery file stale.
        for old in self._written - {path}:
            _remove(old)
        self._written = {path}
        self._last = (path, text, original)
        self.saved.emit(str(path))
        return str(path)

    def adopt(self, rf: "RecoveryFile") -> None:
        """Make a recovered file this session's own: it is kept until a save (`discard`) or a newer
        write replaces it, and its sidecar names this process, so no other window offers it."""
        path = Path(rf.path)
        self._written.add(path)
        try:
            meta = json.loads(_sidecar(path).read_text(encoding="utf-8"))
            if not isinstance(meta, dict):
                meta = {}
        except (OSError, ValueError):
            meta = {}
        meta.update({"name": rf.name, "original_path": rf.original_path, "pid": os.getpid(),
                     "saved_at": rf.saved_at.isoformat(timespec="seconds"), "recovery_file": path.name})
        try:
            atomic_write_text(_sidecar(path), json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        except OSError as exc:
            self.failed.emit(f"cannot update the recovery file's record: {exc}")

    def discard(self) -> None:
        """Remove this session's recovery files: after a successful save or a clean close."""
        for path in self._written:
            _remove(path)
        self._written.clear()
        self._last = None

    def _on_timeout(self) -> None:
        try:
            self.write_now()
        except OSError as exc:
            self.failed.emit(f"cannot write the recovery file: {exc}")
        except Exception as exc:  # noqa: BLE001 - a timer slot must never raise; say why and go on
            self.failed.emit(f"cannot write the recovery file: {type(exc).__name__}: {exc}")


def _remove(path: Path) -> None:
    for p in (path, _sidecar(path)):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def pending_recoveries(directory: str | os.PathLike | None = None) -> list[RecoveryFile]:
    """Every recovery file in the folder, newest first."""
    folder = Path(directory) if directory is not None else recovery_dir()
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob("*" + SUFFIX):
        if not path.is_file():
            continue
        meta = {}
        try:
            meta = json.loads(_sidecar(path).read_text(encoding="utf-8"))
            if not isinstance(meta, dict):
                meta = {}
        except (OSError, ValueError):
            pass  # no or broken sidecar: the YAML alone is still worth offering
        saved_at = None
        if isinstance(meta.get("saved_at"), str):
            try:
                saved_at = datetime.fromisoformat(meta["saved_at"])
            except ValueError:
                pass
        if saved_at is None:
            try:
                saved_at = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).astimezone()
            except OSError:
                continue
        if saved_at.tzinfo is None:
            saved_at = saved_at.astimezone()
        original = meta.get("original_path")
        name = meta.get("name")
        pid = meta.get("pid")
        found.append(RecoveryFile(
            path=path,
            original_path=original if isinstance(original, str) else None,
            saved_at=saved_at,
            name=name if isinstance(name, str) and name else path.name[: -len(SUFFIX)],
            pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        ))
    found.sort(key=lambda rf: rf.saved_at, reverse=True)
    return found


def remove_recovery(rf: RecoveryFile) -> None:
    """Delete a recovery file and its sidecar (after recovering it or declining to)."""
    _remove(Path(rf.path))
